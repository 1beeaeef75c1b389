# mk/real.mk - `make check-real`: the real HTCondor 9.0.19 grid manager and
# a real BOINC 8.3 server in our own loop (doc/real-systems.md).  Included
# by the Makefile.  Not part of `make check` or CI: the first run builds
# both systems (about 35 minutes on 2 cores), later runs take 30-40 min of
# scenarios.  Runs as root.
#
#   make check-real [HTC_MIRROR=...] [BOINC_MIRROR=...] [SHARED_REAL=...]
#
# 1. builds build/boinc_gahp and build/boinc_emu;
# 2. tests/real/setup_real.sh sets up whatever of the two systems is
#    missing by calling ../shared/real/ (cached under /opt and /var/lib),
#    starts the services that are not running, installs the fresh
#    build/boinc_gahp into the pool and restarts the pool's emulator;
# 3. runs the scenarios in tests/real with Debian's python3.

HTC_MIRROR   ?= /work/.mirror/htcondor+htcondor/repo
BOINC_MIRROR ?= /work/.mirror/BOINC+boinc/repo
SHARED_REAL  ?= ../shared/real

.PHONY: check-real
check-real:
	$(MAKE) deps
	$(MAKE) all
	HTC_MIRROR=$(HTC_MIRROR) BOINC_MIRROR=$(BOINC_MIRROR) SHARED_REAL=$(SHARED_REAL) \
	  tests/real/setup_real.sh
	/usr/bin/python3 -m pytest -q -p no:cacheprovider --import-mode=importlib tests/real
