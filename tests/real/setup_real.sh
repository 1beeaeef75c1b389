#!/bin/bash
# tests/real/setup_real.sh - bring up what `make check-real` needs, by
# calling the recipes in ../shared/real/ (this script builds nothing itself):
#
#   1. HTCondor 9.0.19 personal pool (setup-htcondor.sh, every default phase;
#      each skips what is done; `config` installs build/boinc_gahp into the
#      pool), condor_master started if it is not running;
#   2. boinc_emu for the pool (setup-htcondor.sh emu_stop + emu: always the
#      freshly built emulator);
#   3. the real BOINC 8.3 server (boinc-server/setup.sh): the whole recipe if
#      the project does not exist yet, else only the services that are not
#      running (mariadb, apache, the project's daemons, the crunching client);
#   4. https in front of that project (tests/real/setup_tls.sh: mod_ssl on
#      127.0.0.1:18443 with a test CA's certificate).
#
# The two builds run one after the other, niced.  Caches live outside the
# checkout (/opt/htcondor-*, /opt/condor9, /var/lib/condor9, /opt/boinc-src,
# /opt/boinc-projects, /var/lib/rs-boinc-*).  Run from the repository root.
#
# Environment: HTC_MIRROR, BOINC_MIRROR (bare git mirrors), SHARED_REAL
# (default ../shared/real), BOINC_SRC (/opt/boinc-src), BOINC_COMMIT (c5c6cb79).
set -euo pipefail

HTC_MIRROR=${HTC_MIRROR:-/work/.mirror/htcondor+htcondor/repo}
BOINC_MIRROR=${BOINC_MIRROR:-/work/.mirror/BOINC+boinc/repo}
SHARED_REAL=${SHARED_REAL:-../shared/real}
BOINC_SRC=${BOINC_SRC:-/opt/boinc-src}
BOINC_COMMIT=${BOINC_COMMIT:-c5c6cb79}
HTC_SRC=/opt/htcondor-src
PROJECT_ROOT=/opt/boinc-projects/rstest
RS_STATE=/var/lib/rs-boinc-state
HTC_SETUP=$SHARED_REAL/htcondor/setup-htcondor.sh
RS_SETUP=$SHARED_REAL/boinc-server/setup.sh

log() { printf '[%s] check-real setup: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { printf 'check-real setup: %s\n' "$*" >&2; exit 2; }
# Services must not belong to make's process group (they would die with
# it): every step that may start one runs in its own session.
detached() { setsid -w "$@" < /dev/null; }
mask() { sed -E 's/(authenticator[=:] *)[^ ]+/\1XXXXXXXX/g'; }

[ "$(id -u)" = 0 ] || die "must run as root (it creates the pool user and starts services)"
[ -x "$HTC_SETUP" ] && [ -x "$RS_SETUP" ] ||
    die "the recipes are missing: $HTC_SETUP, $RS_SETUP (shared/ must be beside the checkout, or set SHARED_REAL)"
[ -x build/boinc_gahp ] && [ -x build/boinc_emu ] || die "build first (make all)"

need_mirror() {  # $1 mirror, $2 github name
    [ -d "$1" ] && git -C "$1" rev-parse --git-dir >/dev/null 2>&1 && return
    die "no git mirror of github:$2 at $1.
  Get one with the search library's fetch tool (fetch github:$2), which puts
  it under /work/.mirror/, or point ${3} at an existing bare mirror."
}

t0=$SECONDS
# ---------------------------------------------------------------- HTCondor
if [ ! -f "$HTC_SRC/src/condor_gridmanager/boincjob.cpp" ]; then
    need_mirror "$HTC_MIRROR" htcondor/htcondor HTC_MIRROR
fi
log "HTCondor 9.0.19 pool (setup-htcondor.sh; the first run builds for ~20 min)"
detached env MIRROR="$HTC_MIRROR" nice -n 19 "$HTC_SETUP" > /tmp/check-real-htcondor.log 2>&1 ||
    { tail -30 /tmp/check-real-htcondor.log; die "setup-htcondor.sh failed (log /tmp/check-real-htcondor.log)"; }
cmp -s build/boinc_gahp /opt/condor9/libexec/boinc_gahp ||
    die "build/boinc_gahp is not the pool's /opt/condor9/libexec/boinc_gahp after the config phase"
log "pool up, build/boinc_gahp installed as /opt/condor9/libexec/boinc_gahp ($((SECONDS - t0)) s)"

# the emulator as a project of the pool: always the fresh build
detached "$HTC_SETUP" emu_stop > /dev/null 2>&1 || true
for _ in $(seq 1 50); do
    pid=$(cat /var/lib/boinc-emu-htc.pid 2>/dev/null || true)
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
done
detached "$HTC_SETUP" emu > /tmp/check-real-emu.log 2>&1 ||
    { cat /tmp/check-real-emu.log; die "setup-htcondor.sh emu failed"; }
log "boinc_emu on 127.0.0.1:18480 (fresh build)"

# ---------------------------------------------------------------- HTCondor 25.0
# The second pool (issue 32): HTCondor 25.0.13, whose grid manager drives
# build/boinc_gahp through grid_resource = batch boinc.  Its recipe builds
# once (~13 min), then each phase skips what is done; `config` rewrites
# the pool's configuration (BOINC_GAHP, the probe interval the 9.0 pool
# has), so the pool is stopped first and started with it.
HTC25_SETUP=$SHARED_REAL/htcondor25/setup-htcondor25.sh
if [ -x "$HTC25_SETUP" ]; then
    t25=$SECONDS
    mkdir -p /opt/condor25/libexec
    # install unlinks first: a running GAHP keeps its old inode
    install -m 0755 build/boinc_gahp /opt/condor25/libexec/boinc_gahp
    log "HTCondor 25.0.13 pool (setup-htcondor25.sh; the first run builds for ~13 min)"
    detached "$HTC25_SETUP" stop > /tmp/check-real-htcondor25.log 2>&1 || true
    for _ in $(seq 1 100); do
        pgrep -u htcgrid25 -x condor_master > /dev/null 2>&1 || break
        sleep 0.2
    done
    detached env MIRROR="$HTC_MIRROR" BOINC_GAHP_BIN=/opt/condor25/libexec/boinc_gahp \
        JOB_PROBE_INTERVAL=5 nice -n 19 "$HTC25_SETUP" >> /tmp/check-real-htcondor25.log 2>&1 ||
        { tail -30 /tmp/check-real-htcondor25.log; die "setup-htcondor25.sh failed (log /tmp/check-real-htcondor25.log)"; }
    cmp -s build/boinc_gahp /opt/condor25/libexec/boinc_gahp ||
        die "build/boinc_gahp is not the 25.0 pool's /opt/condor25/libexec/boinc_gahp"
    log "25.0 pool up, BOINC_GAHP = /opt/condor25/libexec/boinc_gahp ($((SECONDS - t25)) s)"
else
    log "no $HTC25_SETUP: the 25.0 scenarios will be skipped"
fi

# ---------------------------------------------------------------- BOINC server
t1=$SECONDS
if [ ! -f "$BOINC_SRC/tools/make_project" ]; then
    need_mirror "$BOINC_MIRROR" BOINC/boinc BOINC_MIRROR
    log "exporting BOINC $BOINC_COMMIT to $BOINC_SRC"
    mkdir -p "$BOINC_SRC"
    git -C "$BOINC_MIRROR" archive "$BOINC_COMMIT" | tar -x -C "$BOINC_SRC"
fi
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ ! -s "$RS_STATE/config.txt" ] || [ ! -x "$PROJECT_ROOT/bin/start" ] ||
   [ ! -x "$BOINC_SRC/sched/transitioner" ] || [ ! -x /opt/peer/boinc_gahp ]; then
    log "BOINC 8.3 server: the whole recipe (setup.sh; the first run builds for ~12 min)"
    # (the recipe prints the new authenticator: masked in our log)
    rs_recipe() { detached nice -n 19 "$RS_SETUP" "$BOINC_SRC" 2>&1 | mask >> /tmp/check-real-boinc.log; }
    rs_failed() { tail -30 /tmp/check-real-boinc.log; die "boinc-server/setup.sh failed (log /tmp/check-real-boinc.log)"; }
    : > /tmp/check-real-boinc.log
    if ! rs_recipe; then
        # The recipe's `make -j2` can lose a race in BOINC's own makefiles:
        # lib/Makefile's all-am builds libboinc.la and, for crypt_prog, also
        # `../lib/libboinc.la` (a different target name whose recipe is
        # `cd ../lib; make libboinc.la`), so two makes compile and link the
        # same library at once (seen on a fresh machine: every libboinc
        # object compiled twice, then `libtool: error:
        # 'libboinc_la-procinfo_unix.lo' is not a valid libtool object`).
        # If the build did not finish, finish it with a serial make (the
        # recipe's configure has run) and run the recipe once more: its
        # make -j2 then has nothing left to do.
        [ -f "$BOINC_SRC/Makefile" ] && [ ! -x "$BOINC_SRC/sched/transitioner" ] || rs_failed
        log "BOINC's make -j2 failed (a race in its makefiles?): finishing the build with a serial make"
        detached nice -n 19 make -C "$BOINC_SRC" >> /tmp/check-real-boinc.log 2>&1 || rs_failed
        log "BOINC built; the whole recipe once more"
        rs_recipe || rs_failed
    fi
else
    /etc/init.d/mariadb status > /dev/null 2>&1 ||
        { log "starting mariadb"; detached /etc/init.d/mariadb start > /dev/null 2>&1; }
    /etc/init.d/apache2 status > /dev/null 2>&1 ||
        { log "starting apache"; detached /etc/init.d/apache2 start > /dev/null 2>&1; }
    # raised PHP limits (a run interrupted in the stock-limit test may have left stock ones)
    if ! grep -q '^max_file_uploads = 1000' /etc/php/8.2/apache2/conf.d/99-boinc-test.ini 2>/dev/null; then
        log "apache: the recipe's raised PHP limits"
        detached "$RS_SETUP" "$BOINC_SRC" apache > /tmp/check-real-boinc.log 2>&1
    fi
    if ! pgrep -x feeder > /dev/null || ! pgrep -x transitioner > /dev/null ||
       ! pgrep -f 'sample_trivial_validator' > /dev/null || ! pgrep -f 'sample_dummy_assimilator' > /dev/null ||
       ! pgrep -x file_deleter > /dev/null; then
        log "starting the project's daemons"
        detached "$RS_SETUP" "$BOINC_SRC" daemons > /tmp/check-real-boinc.log 2>&1
    fi
    if ! alive "$RS_STATE/client.pid" || ! alive "$RS_STATE/kicker.pid"; then
        log "starting the crunching client"
        detached "$RS_SETUP" "$BOINC_SRC" client > /tmp/check-real-boinc.log 2>&1
    fi
fi
curl -sf --noproxy 127.0.0.1 "$(head -1 "$RS_STATE/config.txt")submit_rpc_handler.php" \
    --form-string 'request=<ping> </ping>' | grep -q '<success>1</success>' ||
    die "the real BOINC server does not answer a ping"
# The project's daily quota per host (config.xml's daily_result_quota)
# counts every job the crunching client took today, so earlier runs of
# the same day (a 2,000-job benchmark, a few check-real runs) can use it
# up: the scheduler then sends no task ("Daily job limit (N) has been
# reached") and every real-server job waits until the test gives up.
# Likewise, jobs that earlier runs left unsent (a benchmark's batches are
# never retired) come first from the feeder: 18,816 of them starved this
# run's jobs once.  This is our own test project: its host's counters of
# the day start again at 0, and every job not finished now (nothing of
# this run exists yet) is cancelled as BOINC's cancel_jobs does
# (workunits WU_ERROR_CANCELLED for the transitioner, so that no replica
# of a lost task is made; unsent results 'didn't need').
db_field() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$PROJECT_ROOT/config.xml" | head -1; }
MYSQL_PWD=$(db_field db_passwd) mysql -h "$(db_field db_host)" -u "$(db_field db_user)" \
    "$(db_field db_name)" -e "UPDATE host_app_version SET n_jobs_today = 0;
        UPDATE host SET nresults_today = 0;
        UPDATE workunit SET error_mask = error_mask | 16, transition_time = $(date +%s)
            WHERE canonical_resultid = 0 AND (error_mask & 16) = 0;
        UPDATE result SET server_state = 5, outcome = 5 WHERE server_state = 2" ||
    die "cannot reset the test project's daily counters and leftover jobs"
log "real BOINC server up at $(head -1 "$RS_STATE/config.txt") ($((SECONDS - t1)) s)"

# ---------------------------------------------------------------- https
# The same project over https: Apache's mod_ssl on 127.0.0.1:18443 with a
# certificate of a test CA in $RS_STATE/tls (tests/real/setup_tls.sh;
# idempotent), for tests/real/test_06_https.py.
RS_STATE=$RS_STATE detached tests/real/setup_tls.sh || die "tests/real/setup_tls.sh failed"
log "set-up took $((SECONDS - t0)) s"
