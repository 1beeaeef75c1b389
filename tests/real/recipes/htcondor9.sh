#!/bin/bash
# tests/real/recipes/htcondor9.sh - HTCondor 9.0.19 (the last series with
# grid type `boinc`; 10.0 removed it) built from its public repository,
# and a personal pool on 127.0.0.1 whose grid manager drives boinc_gahp
# through the 9.0 BOINC_* commands.  Run as root from the repository root
# (tests/real/setup_real.sh calls it for `make check-real`).
#
#   tests/real/recipes/htcondor9.sh [PHASE...]
#
# Phases: source deps configure build install config start (the default,
# in that order), stop, status, emu, emu_stop; condor_pool.sh says what
# each does.  `config` also installs GAHP_BIN as PREFIX/libexec/boinc_gahp
# behind a wrapper that gives it a debug log; `emu` starts build/boinc_emu
# as the pool's test project and writes its authenticator to
# ~CONDOR_USER/emu.auth, `emu_stop` stops it.
#
# Settings (environment, default in brackets):
#   HTC_TAG [V9_0_19]  HTC_URL [https://github.com/htcondor/htcondor.git]
#   HTC_MIRROR      a local clone of HTCondor with HTC_TAG: used instead of
#                   fetching from HTC_URL
#   HTC_GIT_CACHE   [/opt/htcondor-git] bare repository the tag is fetched into
#   SRC_DIR [/opt/htcondor-src]  BUILD_DIR [/opt/htcondor-build]
#   PREFIX [/opt/condor9]  LOCAL_DIR [/var/lib/condor9]
#   CONDOR_USER [htcgrid]  COLLECTOR_PORT [29618]  SCHEDD_NAME [htc9]
#   JOBS [2]  GAHP_BIN [$PWD/build/boinc_gahp]
#   EMU_BIN [$PWD/build/boinc_emu]  EMU_PORT [18480]
#   EMU_DIR [/var/lib/boinc-emu-htc]  EMU_RUN_SECONDS [20]
# Building takes about 20 minutes on 2 shared cores (most of it make).
set -euo pipefail

RECIPE=htcondor9.sh
PHASE_LIST="source deps configure build install config start stop status emu emu_stop"
HTC_TAG=${HTC_TAG:-V9_0_19}
HTC_MIRROR=${HTC_MIRROR:-}
SRC_DIR=${SRC_DIR:-/opt/htcondor-src}
BUILD_DIR=${BUILD_DIR:-/opt/htcondor-build}
PREFIX=${PREFIX:-/opt/condor9}
LOCAL_DIR=${LOCAL_DIR:-/var/lib/condor9}
CONDOR_USER=${CONDOR_USER:-htcgrid}
COLLECTOR_PORT=${COLLECTOR_PORT:-29618}
SCHEDD_NAME=${SCHEDD_NAME:-htc9}
DAEMONS=${DAEMONS:-MASTER, COLLECTOR, SCHEDD}
GAHP_BIN=${GAHP_BIN:-$PWD/build/boinc_gahp}
EMU_BIN=${EMU_BIN:-$PWD/build/boinc_emu}
EMU_PORT=${EMU_PORT:-18480}
EMU_DIR=${EMU_DIR:-/var/lib/boinc-emu-htc}
EMU_RUN_SECONDS=${EMU_RUN_SECONDS:-20}

PACKAGES=(build-essential cmake git pkg-config libssl-dev libpcre3-dev libkrb5-dev
          uuid-dev zlib1g-dev libexpat1-dev libcurl4-openssl-dev libboost-dev
          libsqlite3-dev libltdl-dev libsystemd-dev python3)
TARGETS=(condor_master condor_collector condor_schedd condor_gridmanager condor_submit
         condor_q condor_rm condor_config_val condor_status condor_procd condor_version
         condor_on condor_history condor_qedit)
# 9.0's optional parts that need a download or a library we do not use,
# off (the grid type boinc itself is always compiled; WITH_BOINC is BOINC's
# own GAHP as an external).  gcc 12 needs -fcommon and a lenient C++ mode
# for some 9.0 sources; HTCondor's CMake adds -std=c++11 itself.
CMAKE_FLAGS=(-DUW_BUILD=OFF -DWITH_BOINC=OFF -DWITH_GLOBUS=OFF -DWITH_VOMS=OFF
    -DWITH_CREAM=OFF -DWITH_MUNGE=OFF -DWITH_SCITOKENS=OFF -DWITH_PYTHON_BINDINGS=OFF
    -DWITH_LIBCGROUP=OFF -DWITH_BLAHP=OFF -DWITH_LIBVIRT=OFF -DWITH_LIBXML2=OFF
    -DWITH_UNICOREGAHP=OFF -DWITH_QPID=OFF -DWITH_GANGLIA=OFF -DWITH_HADOOP=OFF
    -DWITH_BOSCO=OFF -DWITH_CAMPUSFACTORY=OFF -DWITH_PLUMAGE=OFF -DWITH_CLUSTER_RA=OFF
    -DHAVE_BOINC=OFF -DHAVE_BACKFILL=OFF -DHAVE_KBDD=OFF -DWANT_CONTRIB=OFF
    "-DCMAKE_INSTALL_RPATH=$PREFIX/lib;$PREFIX/lib/condor"
    "-DCMAKE_C_FLAGS=-fcommon -Wno-error"
    "-DCMAKE_CXX_FLAGS=-fpermissive -Wno-error -Wno-deprecated-declarations")

# shellcheck source=SCRIPTDIR/condor_pool.sh
. "$(dirname "${BASH_SOURCE[0]}")/condor_pool.sh"

have_tree() { [ -f "$SRC_DIR/src/condor_gridmanager/boincjob.cpp" ]; }

pool_install_gahp() {
    # HTCondor starts the GAHP with no arguments: the wrapper adds a log
    # file in the pool user's home and debug logging.
    cat > "$PREFIX/libexec/boinc_gahp_wrapper" <<EOF
#!/bin/sh
# started by condor_gridmanager as the job owner, with no arguments
BOINC_GAHP_LOG_FILE="\$HOME/.local/state/boinc_gahp/boinc_gahp.log"
BOINC_GAHP_LOG_LEVEL=\${BOINC_GAHP_LOG_LEVEL:-debug}
export BOINC_GAHP_LOG_FILE BOINC_GAHP_LOG_LEVEL
mkdir -p "\$HOME/.local/state/boinc_gahp"
exec $PREFIX/libexec/boinc_gahp "\$@"
EOF
    chmod 0755 "$PREFIX/libexec/boinc_gahp_wrapper"
    if [ -x "$GAHP_BIN" ]; then
        # install unlinks first: a running GAHP keeps its old inode
        cmp -s "$GAHP_BIN" "$PREFIX/libexec/boinc_gahp" ||
            install -m 0755 "$GAHP_BIN" "$PREFIX/libexec/boinc_gahp"
    else
        rlog "config: no $GAHP_BIN (make all first); the pool has no GAHP yet"
    fi
}

pool_config_extra() {
    cat <<'EOF'

# grid_resource = boinc <url>: the grid manager starts BOINC_GAHP
BOINC_GAHP = $(LIBEXEC)/boinc_gahp_wrapper
GRIDMANAGER_JOB_PROBE_INTERVAL = 5
GRIDMANAGER_CHECKPROXY_INTERVAL = 600
EOF
}

phase_emu() {
    local pidfile=$EMU_DIR.pid
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        rlog "emu: runs (pid $(cat "$pidfile"))"
    else
        [ -x "$EMU_BIN" ] || rdie "emu: no $EMU_BIN (make all first)"
        mkdir -p "$EMU_DIR"
        printf '<emu_config>\n  <run_seconds>%s</run_seconds>\n</emu_config>\n' \
            "$EMU_RUN_SECONDS" > "$EMU_DIR.conf"
        nohup "$EMU_BIN" --state-dir "$EMU_DIR" --port "$EMU_PORT" --clock real \
            --config "$EMU_DIR.conf" > "$EMU_DIR.out" 2> "$EMU_DIR.err" < /dev/null &
        echo $! > "$pidfile"
        sleep 1
        kill -0 "$(cat "$pidfile")" 2>/dev/null || { cat "$EMU_DIR.err" >&2; rdie "emu: boinc_emu exited"; }
        rlog "emu: boinc_emu pid $(cat "$pidfile") on 127.0.0.1:$EMU_PORT"
    fi
    # the emulator prints one JSON line with its authenticator on stdout
    local auth home
    auth=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["authenticator"])' "$EMU_DIR.out")
    home=$(pool_home)
    (umask 077; printf '%s\n' "$auth" > "$home/emu.auth")
    chown "$CONDOR_USER": "$home/emu.auth"
    rlog "emu: project http://127.0.0.1:$EMU_PORT/emu/, authenticator in $home/emu.auth"
}

phase_emu_stop() {
    local pidfile=$EMU_DIR.pid
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        kill -TERM "$(cat "$pidfile")"
        rlog "emu_stop: SIGTERM to $(cat "$pidfile")"
    else
        rlog "emu_stop: not running"
    fi
}

pool_main "$@"
