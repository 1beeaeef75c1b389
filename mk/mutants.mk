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
