# mk/real.mk - `make check-real`: the real HTCondor 9.0.19 and 25.0.13 grid
# managers and a real BOINC 8.3 server in our own loop
# (doc/real-systems.md).  Included by the Makefile.  Not part of `make
# check` or CI: the first run fetches the pinned sources and builds the
# three systems (about 50 minutes on 2 shared cores), later runs take
# 30-40 min of scenarios.  Runs as root.
#
#   make check-real [HTC_MIRROR=DIR] [BOINC_MIRROR=DIR] [REAL_ARGS=...]
#
# REAL_ARGS goes to pytest as is (default tests/real), e.g.
# REAL_ARGS='tests/real -k "not 1000"' to leave
# out the 1,000-job comparisons, or a file name to run one group.
#
# 1. builds build/boinc_gahp and build/boinc_emu;
# 2. tests/real/setup_real.sh sets up whatever of the systems is missing
#    with the recipes in tests/real/recipes/ (sources from the public
#    upstream repositories at pinned tags/commits, or from the local
#    clones HTC_MIRROR and BOINC_MIRROR; caches under /opt and /var/lib),
#    starts the services that are not running, installs the fresh
#    build/boinc_gahp into both pools and restarts the pool's emulator;
# 3. runs the scenarios in tests/real with Debian's python3.

HTC_MIRROR   ?=
BOINC_MIRROR ?=
REAL_ARGS    ?= tests/real

.PHONY: check-real
check-real:
	$(MAKE) deps
	$(MAKE) all
	HTC_MIRROR="$(HTC_MIRROR)" BOINC_MIRROR="$(BOINC_MIRROR)" tests/real/setup_real.sh
	/usr/bin/python3 -m pytest -q -p no:cacheprovider --import-mode=importlib $(REAL_ARGS)
