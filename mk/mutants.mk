# mk/mutants.mk - mutation testing of the safety nets (issue 29;
# doc/testing.md, "Mutation testing"): tests/mutants/run.py applies each
# planted defect of tests/mutants/mutants.py to a scratch copy of the tree,
# rebuilds it and runs the nets that should catch it, and ends with
# `mutants: K of N killed` (exit status 0 only when K = N).  Long: not part
# of `make check`; run it before a change to the journal, the submit
# engine, fetch and outputs, recovery or the protocol loop is finished.
# MUTANTS=NAME[,NAME] runs only the mutants whose names contain one of them.

check-mutants: all
	/usr/bin/python3 tests/mutants/run.py $(if $(MUTANTS),--only "$(MUTANTS)")

.PHONY: check-mutants

# Sampled mutation (issue 42; doc/testing.md, "Sampled mutation"):
# tests/mutants/sample.py plants N machine-made mutants per module of src/
# (MODULES, comma-separated folders or files), picked from SEED, runs each
# module's nets (tests/mutants/nets.txt) and reports the kill rate per
# module with the surviving diffs.  Exit status 0 whatever the rate, unless
# MIN_RATE (per cent) is given.  FULL=1 also runs make check-suites for the
# survivors.  The default (3 modules x 10, about 15-25 min here) fits a
# developer's hour; CI does not run it.
SEED    ?= 1
N       ?= 10
MODULES ?= src/wire,src/base,src/journal
check-mutants-sampled: all
	/usr/bin/python3 tests/mutants/sample.py --seed "$(SEED)" --n "$(N)" --modules "$(MODULES)" \
	  $(if $(FULL),--full) $(if $(MIN_RATE),--min-rate $(MIN_RATE)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) \
	  $(if $(ONLY),--only "$(ONLY)")

.PHONY: check-mutants-sampled
