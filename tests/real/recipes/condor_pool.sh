# tests/real/recipes/condor_pool.sh - the phases both HTCondor recipes share
# (htcondor9.sh, htcondor25.sh set the series' settings, then source this
# file and call pool_main "$@").  A personal pool: condor_master +
# condor_collector + condor_schedd on 127.0.0.1, run by a non-root user who
# also submits the jobs; the schedd starts the real condor_gridmanager,
# which starts the GAHP named by BOINC_GAHP.
#
# Phases (pool_main's default: source deps configure build install config
# start; also stop, status):
#   source     exports the pinned tag into SRC_DIR unless a tree of that
#              series is there (lib.sh get_source: HTC_MIRROR or a fetch
#              of the tag into HTC_GIT_CACHE)
#   deps       the Debian packages the series needs
#   configure  CMake (marker $BUILD_DIR/.phase-configure)
#   build      make -jJOBS of only the targets the pool needs (marker
#              $BUILD_DIR/.phase-build; skipped while the marker and every
#              target are there: remove the marker to rebuild)
#   install    copies what was built into PREFIX (identical files are left
#              alone, changed ones renamed into place: safe with the pool up)
#   config     the pool user, LOCAL_DIR, PREFIX/etc/condor_config,
#              PREFIX/condor.sh (marker .phase-config)
#   start      condor_master as the pool user, then waits for condor_q
#   stop       SIGTERM to condor_master, waits up to 60 s for it to exit
#   status     condor_version, the daemons, the queue
# An existing export is used as it is, so a tree exported by an earlier
# version of these recipes is not exported again; markers have the same
# names as theirs.

# shellcheck shell=bash
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HTC_URL=${HTC_URL:-https://github.com/htcondor/htcondor.git}
HTC_GIT_CACHE=${HTC_GIT_CACHE:-/opt/htcondor-git}
JOBS=${JOBS:-2}

marker() { mkdir -p "$BUILD_DIR"; touch "$BUILD_DIR/.phase-$1"; }
marked() { [ -e "$BUILD_DIR/.phase-$1" ]; }

phase_source() {
    if have_tree; then rlog "source: $SRC_DIR holds the $HTC_TAG tree already"; return; fi
    # The one file left out is a large unit-test data file that no target
    # built here uses; some mirrors lack its blob, and git archive stops
    # at a missing blob.
    get_source "$HTC_URL" HTC_MIRROR "$HTC_TAG" "$HTC_GIT_CACHE" "$SRC_DIR" \
        src/classad/parse_classad_testdata.hpp
    have_tree || rdie "$SRC_DIR does not look like HTCondor $HTC_TAG after the export"
}

phase_deps() { apt_missing "${PACKAGES[@]}"; }

phase_configure() {
    if marked configure && [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
        rlog "configure: done before"; return
    fi
    mkdir -p "$BUILD_DIR"
    rm -f "$BUILD_DIR/CMakeCache.txt"
    # Common to both series: Debian's libraries only (PROPER=ON: nothing
    # is downloaded), and _DEBUG=ON so that HTCondor's CMake keeps the
    # Debug build type we ask for (it forces RelWithDebInfo, -O2 -g,
    # otherwise): at -O0 -g1 the build takes about half the time, and the
    # pool's speed does not matter.  The RPATH ($ORIGIN/../lib) is kept.
    (cd "$BUILD_DIR" && env PATH="$CLEAN_PATH" nice -n 19 cmake "$SRC_DIR" \
        -D_DEBUG=ON -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
        -DCMAKE_INSTALL_PREFIX="$PREFIX" -DPROPER=ON -DCMAKE_SKIP_RPATH=OFF \
        -DWANT_MAN_PAGES=OFF -DENABLE_JAVA_TESTS=OFF -DBUILD_TESTING=OFF \
        -DWITH_KRB5=ON -DWITH_CURL=ON "${CMAKE_FLAGS[@]}") \
        > "$BUILD_DIR/configure.log" 2>&1 ||
        { tail -40 "$BUILD_DIR/configure.log"; rdie "cmake failed (log $BUILD_DIR/configure.log)"; }
    marker configure
    rlog "configure: ok (log $BUILD_DIR/configure.log)"
}

built() {  # the path of target $1 in the build tree, or nothing
    find "$BUILD_DIR/src" -type f -name "$1" -perm -u+x 2>/dev/null | head -1
}

phase_build() {
    local t
    if marked build; then
        for t in "${TARGETS[@]}"; do [ -n "$(built "$t")" ] || break; done
        if [ -n "$(built "$t")" ]; then rlog "build: done before"; return; fi
    fi
    [ -f "$BUILD_DIR/build.log" ] && mv -f "$BUILD_DIR/build.log" "$BUILD_DIR/build.log.1"
    # only the targets the pool needs: all of HTCondor takes hours on 2 cores
    (cd "$BUILD_DIR" && env PATH="$CLEAN_PATH" nice -n 19 make -j"$JOBS" "${TARGETS[@]}") \
        > "$BUILD_DIR/build.log" 2>&1 ||
        { grep -n -m20 'error' "$BUILD_DIR/build.log" || true; tail -30 "$BUILD_DIR/build.log"
          rdie "make failed (log $BUILD_DIR/build.log)"; }
    marker build
    rlog "build: ok (log $BUILD_DIR/build.log)"
}

destination() {  # where target $1 goes under PREFIX
    case $1 in
        condor_master|condor_collector|condor_schedd|condor_gridmanager|condor_procd|condor_on)
            echo sbin ;;
        condor_job_router) echo libexec ;;   # JOB_ROUTER's default: $(LIBEXEC)/condor_job_router
        *) echo bin ;;
    esac
}

phase_install() {
    # not `make install`: it would build every target first
    mkdir -p "$PREFIX"/{bin,sbin,lib,libexec,etc}
    local t f lib
    for t in "${TARGETS[@]}"; do
        f=$(built "$t")
        [ -n "$f" ] || rdie "install: $t was not built (run the build phase)"
        replace_file "$f" "$PREFIX/$(destination "$t")/$t"
    done
    # The tools look at argv[0]: condor_hold and condor_release are
    # condor_rm; condor_off, condor_restart, condor_reconfig condor_on.
    for t in condor_hold condor_release; do ln -sfn condor_rm "$PREFIX/bin/$t"; done
    for t in condor_off condor_restart condor_reconfig; do ln -sfn condor_on "$PREFIX/sbin/$t"; done
    # HTCondor's own shared libraries (libcondor_utils_*, libclassad*)
    while IFS= read -r lib; do
        if [ -L "$lib" ]; then
            ln -sfn "$(readlink "$lib")" "$PREFIX/lib/$(basename "$lib")"
        else
            replace_file "$lib" "$PREFIX/lib/$(basename "$lib")"
        fi
    done < <(find "$BUILD_DIR/src" -maxdepth 3 -name 'lib*.so*' \( -type f -o -type l \) \
                  -not -path '*/_deps/*')
    local bad=0
    for f in "$PREFIX"/bin/* "$PREFIX"/sbin/* "$PREFIX"/libexec/condor_*; do
        [ -f "$f" ] || continue
        if LD_LIBRARY_PATH="$PREFIX/lib" ldd "$f" 2>/dev/null | grep -q 'not found'; then
            rlog "install: $f has unresolved libraries"; bad=1
        fi
    done
    [ $bad = 0 ] || rdie "install: unresolved libraries (see above)"
    marker install
    rlog "install: ok -> $PREFIX"
}

pool_home() { getent passwd "$CONDOR_USER" | cut -d: -f6; }

# the lines both series' configurations share; pool_config_extra adds the
# series' own (grid manager, GAHP)
write_condor_config() {
    cat <<EOF
# A personal HTCondor $HTC_TAG pool for boinc_gahp's check-real,
# written by tests/real/recipes/$RECIPE.  Loopback only.
RELEASE_DIR = $PREFIX
LOCAL_DIR = $LOCAL_DIR
BIN = \$(RELEASE_DIR)/bin
SBIN = \$(RELEASE_DIR)/sbin
LIB = \$(RELEASE_DIR)/lib
LIBEXEC = \$(RELEASE_DIR)/libexec
LOG = \$(LOCAL_DIR)/log
SPOOL = \$(LOCAL_DIR)/spool
EXECUTE = \$(LOCAL_DIR)/execute
LOCK = \$(LOCAL_DIR)/lock
RUN = \$(LOCAL_DIR)/run
LOCAL_CONFIG_FILE =
LOCAL_CONFIG_DIR =

CONDOR_HOST = 127.0.0.1
NETWORK_INTERFACE = 127.0.0.1
BIND_ALL_INTERFACES = False
ENABLE_IPV6 = False
COLLECTOR_HOST = 127.0.0.1:$COLLECTOR_PORT
USE_SHARED_PORT = False
DAEMON_LIST = $DAEMONS
# A name with '@' is taken as it is; a bare one is first looked up as a
# host name (get_daemon_name.cpp, build_valid_daemon_name) by every tool
# and daemon that locates the local schedd: condor_job_router does it for
# each job it routes or finalizes, and on a machine whose resolver is
# unreachable a lookup can stall 5 s (the router's "Saw slow DNS query").
# The schedd's Name is the same either way: $SCHEDD_NAME@<host>.
SCHEDD_NAME = $SCHEDD_NAME@\$(FULL_HOSTNAME)
CONDOR_ADMIN =
MAIL = /bin/true
UID_DOMAIN = localdomain
FILESYSTEM_DOMAIN = localdomain

# host-based security, 127.0.0.1 only
ALLOW_READ = 127.0.0.1
ALLOW_WRITE = 127.0.0.1
ALLOW_ADMINISTRATOR = 127.0.0.1
ALLOW_DAEMON = 127.0.0.1
ALLOW_NEGOTIATOR = 127.0.0.1
ALLOW_CONFIG = 127.0.0.1
SEC_DEFAULT_AUTHENTICATION = OPTIONAL
SEC_DEFAULT_AUTHENTICATION_METHODS = FS, CLAIMTOBE
SEC_CLIENT_AUTHENTICATION_METHODS = FS, CLAIMTOBE

SCHEDD_DEBUG = D_FULLDEBUG
MAX_SCHEDD_LOG = 100000000
SCHEDD_INTERVAL = 10
GRIDMANAGER_DEBUG = D_FULLDEBUG
MAX_GRIDMANAGER_LOG = 500000000
MAX_NUM_GRIDMANAGER_LOG = 5
EOF
    pool_config_extra
}

phase_config() {
    id "$CONDOR_USER" > /dev/null 2>&1 || useradd -m -s /bin/bash "$CONDOR_USER"
    local home; home=$(pool_home)
    mkdir -p "$PREFIX"/{bin,sbin,lib,libexec,etc} "$LOCAL_DIR"/{log,spool,execute,lock,run}
    chown -R "$CONDOR_USER": "$LOCAL_DIR"
    chmod 0755 "$LOCAL_DIR"
    pool_install_gahp
    write_condor_config > "$PREFIX/etc/condor_config.new"
    mv -f "$PREFIX/etc/condor_config.new" "$PREFIX/etc/condor_config"
    {
        echo "export CONDOR_CONFIG=$PREFIX/etc/condor_config"
        echo "export PATH=$PREFIX/bin:$PREFIX/sbin:\$PATH"
        echo "export LD_LIBRARY_PATH=$PREFIX/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    } > "$PREFIX/condor.sh"
    chmod 0644 "$PREFIX/etc/condor_config" "$PREFIX/condor.sh"
    grep -qF "$PREFIX/condor.sh" "$home/.bashrc" 2>/dev/null || echo ". $PREFIX/condor.sh" >> "$home/.bashrc"
    marker config
    rlog "config: $PREFIX/etc/condor_config (user $CONDOR_USER, collector 127.0.0.1:$COLLECTOR_PORT)"
}

as_pool_user() { su - "$CONDOR_USER" -c ". $PREFIX/condor.sh; $*"; }
master_pid() { cat "$LOCAL_DIR/run/master.pid" 2>/dev/null || true; }
master_alive() { local p; p=$(master_pid); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

phase_start() {
    if master_alive; then rlog "start: condor_master runs (pid $(master_pid))"; return; fi
    as_pool_user "condor_master -pidfile $LOCAL_DIR/run/master.pid"
    local _
    for _ in $(seq 1 60); do
        if as_pool_user "condor_q -totals" > /dev/null 2>&1; then
            rlog "start: the schedd answers (condor_master pid $(master_pid))"; return
        fi
        sleep 1
    done
    rdie "start: the schedd did not answer within 60 s (logs in $LOCAL_DIR/log)"
}

phase_stop() {
    if ! master_alive; then rlog "stop: not running"; return; fi
    local pid _; pid=$(master_pid)
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then rlog "stop: condor_master $pid still runs after 60 s"
    else rlog "stop: condor_master $pid exited"; fi
}

phase_status() {
    as_pool_user "condor_version; condor_status -any -af MyType Name; condor_q -totals"
}

pool_main() {
    local phases=("$@") p t0
    [ ${#phases[@]} -gt 0 ] || phases=(source deps configure build install config start)
    for p in "${phases[@]}"; do
        declare -F "phase_$p" > /dev/null || rdie "no phase '$p' (phases: $PHASE_LIST)"
        t0=$SECONDS
        rlog "phase $p"
        "phase_$p"
        rlog "phase $p took $((SECONDS - t0)) s"
    done
}
