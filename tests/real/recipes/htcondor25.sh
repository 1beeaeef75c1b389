#!/bin/bash
# tests/real/recipes/htcondor25.sh - HTCondor 25.0.13 (the 25.0 LTS series)
# built from its public repository, and a personal pool on 127.0.0.1 whose
# grid manager drives the GAHP named by BOINC_GAHP for
# `grid_resource = batch boinc` (the BLAH commands).  Run as root from the
# repository root (tests/real/setup_real.sh calls it for `make check-real`).
#
#   tests/real/recipes/htcondor25.sh [PHASE...]
#
# Phases: source deps configure build install config start (the default,
# in that order), stop, status; condor_pool.sh says what each does.  The
# build includes condor_job_router (installed as PREFIX/libexec/
# condor_job_router, where JOB_ROUTER points by default), so that
# DAEMONS="MASTER, COLLECTOR, SCHEDD, JOB_ROUTER" gives a pool with the
# job router; check-real runs without it.
#
# Settings (environment, default in brackets):
#   HTC_TAG [v25.0.13]  HTC_URL [https://github.com/htcondor/htcondor.git]
#   HTC_MIRROR      a local clone of HTCondor with HTC_TAG: used instead of
#                   fetching from HTC_URL
#   HTC_GIT_CACHE   [/opt/htcondor-git] bare repository the tag is fetched into
#   SRC_DIR [/opt/htcondor25-src]  BUILD_DIR [/opt/htcondor25-build]
#   PREFIX [/opt/condor25]  LOCAL_DIR [/var/lib/condor25]
#   CONDOR_USER [htcgrid25]  COLLECTOR_PORT [29625]  SCHEDD_NAME [htc25]
#   DAEMONS [MASTER, COLLECTOR, SCHEDD]  JOBS [2]
#   BOINC_GAHP_BIN [$PREFIX/libexec/boinc_gahp]  what BOINC_GAHP names
#   GAHP_BIN [$PWD/build/boinc_gahp]  installed as BOINC_GAHP_BIN by
#                   `config` when BOINC_GAHP_BIN is the default
#   JOB_PROBE_INTERVAL [10]  GRIDMANAGER_JOB_PROBE_INTERVAL in seconds;
#                   "default" leaves HTCondor's (60 s for grid type batch)
# Building takes about 14 minutes on 2 shared cores (54 under load 9-15).
set -euo pipefail

RECIPE=htcondor25.sh
PHASE_LIST="source deps configure build install config start stop status"
HTC_TAG=${HTC_TAG:-v25.0.13}
HTC_MIRROR=${HTC_MIRROR:-}
SRC_DIR=${SRC_DIR:-/opt/htcondor25-src}
BUILD_DIR=${BUILD_DIR:-/opt/htcondor25-build}
PREFIX=${PREFIX:-/opt/condor25}
LOCAL_DIR=${LOCAL_DIR:-/var/lib/condor25}
CONDOR_USER=${CONDOR_USER:-htcgrid25}
COLLECTOR_PORT=${COLLECTOR_PORT:-29625}
SCHEDD_NAME=${SCHEDD_NAME:-htc25}
DAEMONS=${DAEMONS:-MASTER, COLLECTOR, SCHEDD}
BOINC_GAHP_BIN=${BOINC_GAHP_BIN:-$PREFIX/libexec/boinc_gahp}
GAHP_BIN=${GAHP_BIN:-$PWD/build/boinc_gahp}
JOB_PROBE_INTERVAL=${JOB_PROBE_INTERVAL:-10}

# 25.0 uses PCRE2 (9.0 PCRE1) and no longer Boost
PACKAGES=(build-essential cmake git pkg-config libssl-dev libpcre2-dev libkrb5-dev
          uuid-dev zlib1g-dev libexpat1-dev libcurl4-openssl-dev libsqlite3-dev
          libsystemd-dev python3)
TARGETS=(condor_master condor_collector condor_schedd condor_gridmanager condor_submit
         condor_q condor_rm condor_config_val condor_status condor_procd condor_version
         condor_on condor_history condor_qedit condor_job_router)
# 25.0's option names (many of 9.0's are gone).  The python bindings are on
# by default and would need Python's development files: off.  gcc 12
# compiles 25.0 without extra flags (the project sets C++20 itself).
CMAKE_FLAGS=(-DWITH_SCITOKENS=OFF -DWITH_MUNGE=OFF -DWITH_VOMS=OFF -DWITH_LIBVIRT=OFF
    -DWITH_BLAHP=OFF -DWITH_GANGLIA=OFF
    -DWITH_PYTHON_BINDINGS=OFF -DWITH_PYTHON_BINDINGS_V2=OFF -DWITH_PYTHON_BINDINGS_V3=OFF
    -DWANT_PYTHON3_BINDINGS=OFF -DWANT_PYTHON_WHEELS=OFF
    -DHAVE_BOINC=OFF -DHAVE_BACKFILL=OFF -DHAVE_KBDD=OFF -DHAVE_HIBERNATION=OFF
    -DHAVE_SSH_TO_JOB=OFF)

# shellcheck source=SCRIPTDIR/condor_pool.sh
. "$(dirname "${BASH_SOURCE[0]}")/condor_pool.sh"

have_tree() {
    [ -f "$SRC_DIR/src/condor_gridmanager/infnbatchjob.cpp" ] &&
        grep -q 'set(VERSION "25\.0' "$SRC_DIR/CMakeLists.txt"
}

pool_install_gahp() {
    if [ "$BOINC_GAHP_BIN" = "$PREFIX/libexec/boinc_gahp" ] && [ -x "$GAHP_BIN" ]; then
        # install unlinks first: a running GAHP keeps its old inode
        cmp -s "$GAHP_BIN" "$BOINC_GAHP_BIN" || install -m 0755 "$GAHP_BIN" "$BOINC_GAHP_BIN"
    fi
    [ -x "$BOINC_GAHP_BIN" ] || rlog "config: no $BOINC_GAHP_BIN yet: batch boinc jobs will be held"
}

pool_config_extra() {
    echo
    echo "# grid_resource = batch boinc: the grid manager starts BOINC_GAHP"
    echo "BOINC_GAHP = $BOINC_GAHP_BIN"
    if [ "$JOB_PROBE_INTERVAL" = default ]; then
        echo "# GRIDMANAGER_JOB_PROBE_INTERVAL: HTCondor's default"
    else
        echo "GRIDMANAGER_JOB_PROBE_INTERVAL = $JOB_PROBE_INTERVAL"
    fi
}

pool_main "$@"
