#!/bin/bash
# tests/real/setup_real.sh - bring up what `make check-real` needs, with the
# recipes in tests/real/recipes/ (each phase of each recipe skips what is
# done, so only the first run builds):
#
#   1. HTCondor 9.0.19 personal pool (recipes/htcondor9.sh, every default
#      phase; `config` installs build/boinc_gahp into the pool);
#   2. boinc_emu for the pool (htcondor9.sh emu_stop + emu: always the
#      freshly built emulator);
#   3. HTCondor 25.0.13 personal pool (recipes/htcondor25.sh) whose
#      BOINC_GAHP is build/boinc_gahp;
#   4. the real BOINC 8.3 server (recipes/boinc_server.sh): the whole recipe
#      if the project does not exist yet, else only the services that are
#      not running (mariadb, apache, the project's daemons, the client);
#   5. https in front of that project (tests/real/setup_tls.sh: mod_ssl on
#      127.0.0.1:18443 with a test CA's certificate).
#
# Sources come from the public upstream repositories at pinned tags and
# commits (fetched once into /opt/htcondor-git and /opt/boinc-git), or
# from local clones named by HTC_MIRROR and BOINC_MIRROR.  The builds run
# one after the other, niced.  Caches live outside the checkout
# (/opt/htcondor-*, /opt/condor9, /opt/condor25, /var/lib/condor9,
# /var/lib/condor25, /opt/boinc-src, /opt/boinc-projects,
# /var/lib/rs-boinc-*, /opt/peer).  Run from the repository root, as root.
#
# Environment: HTC_MIRROR, BOINC_MIRROR (local git clones, optional),
# BOINC_SRC (/opt/boinc-src), BOINC_COMMIT (the recipe's pinned commit).
set -euo pipefail

BOINC_SRC=${BOINC_SRC:-/opt/boinc-src}
PROJECT_ROOT=/opt/boinc-projects/rstest
RS_STATE=/var/lib/rs-boinc-state
RECIPES=tests/real/recipes
HTC_SETUP=$RECIPES/htcondor9.sh
HTC25_SETUP=$RECIPES/htcondor25.sh
RS_SETUP=$RECIPES/boinc_server.sh
export HTC_MIRROR=${HTC_MIRROR:-} BOINC_MIRROR=${BOINC_MIRROR:-}
[ -z "${BOINC_COMMIT:-}" ] || export BOINC_COMMIT

log() { printf '[%s] check-real setup: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
die() { printf 'check-real setup: %s\n' "$*" >&2; exit 2; }
# Services must not belong to make's process group (they would die with
# it): every step that may start one runs in its own session.
detached() { setsid -w "$@" < /dev/null; }
mask() { sed -E 's/(authenticator[=:] *)[^ ]+/\1XXXXXXXX/g'; }

[ "$(id -u)" = 0 ] || die "must run as root (it creates the pool users and starts services)"
{ [ -x "$HTC_SETUP" ] && [ -x "$HTC25_SETUP" ] && [ -x "$RS_SETUP" ]; } ||
    die "run from the repository root: no $RECIPES/"
{ [ -x build/boinc_gahp ] && [ -x build/boinc_emu ]; } || die "build first (make all)"

t0=$SECONDS
# ---------------------------------------------------------------- HTCondor
log "HTCondor 9.0.19 pool ($HTC_SETUP; the first run fetches and builds for ~20 min)"
detached nice -n 19 "$HTC_SETUP" > /tmp/check-real-htcondor.log 2>&1 ||
    { tail -30 /tmp/check-real-htcondor.log; die "$HTC_SETUP failed (log /tmp/check-real-htcondor.log)"; }
cmp -s build/boinc_gahp /opt/condor9/libexec/boinc_gahp ||
    die "build/boinc_gahp is not the pool's /opt/condor9/libexec/boinc_gahp after the config phase"
log "pool up, build/boinc_gahp installed as /opt/condor9/libexec/boinc_gahp ($((SECONDS - t0)) s)"

# the emulator as a project of the pool: always the fresh build
detached "$HTC_SETUP" emu_stop > /dev/null 2>&1 || true
for _ in $(seq 1 50); do
    pid=$(cat /var/lib/boinc-emu-htc.pid 2>/dev/null || true)
    { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; } || break
    sleep 0.2
done
detached "$HTC_SETUP" emu > /tmp/check-real-emu.log 2>&1 ||
    { cat /tmp/check-real-emu.log; die "$HTC_SETUP emu failed"; }
log "boinc_emu on 127.0.0.1:18480 (fresh build)"

# ---------------------------------------------------------------- HTCondor 25.0
# The second pool (issue 32): HTCondor 25.0.13, whose grid manager drives
# build/boinc_gahp through grid_resource = batch boinc.  The first run
# builds (~14 min), then each phase skips what is done; `config` rewrites
# the pool's configuration (BOINC_GAHP, the probe interval the 9.0 pool
# has), so the pool is stopped first and started with it.
t25=$SECONDS
log "HTCondor 25.0.13 pool ($HTC25_SETUP; the first run fetches and builds for ~14 min)"
detached "$HTC25_SETUP" stop > /tmp/check-real-htcondor25.log 2>&1 || true
for _ in $(seq 1 100); do
    pgrep -u htcgrid25 -x condor_master > /dev/null 2>&1 || break
    sleep 0.2
done
detached env GAHP_BIN="$PWD/build/boinc_gahp" JOB_PROBE_INTERVAL=5 nice -n 19 "$HTC25_SETUP" \
    >> /tmp/check-real-htcondor25.log 2>&1 ||
    { tail -30 /tmp/check-real-htcondor25.log; die "$HTC25_SETUP failed (log /tmp/check-real-htcondor25.log)"; }
cmp -s build/boinc_gahp /opt/condor25/libexec/boinc_gahp ||
    die "build/boinc_gahp is not the 25.0 pool's /opt/condor25/libexec/boinc_gahp"
log "25.0 pool up, BOINC_GAHP = /opt/condor25/libexec/boinc_gahp ($((SECONDS - t25)) s)"

# ---------------------------------------------------------------- BOINC server
t1=$SECONDS
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ ! -s "$RS_STATE/config.txt" ] || [ ! -x "$PROJECT_ROOT/bin/start" ] ||
   [ ! -x "$BOINC_SRC/sched/transitioner" ] || [ ! -x /opt/peer/boinc_gahp ]; then
    log "BOINC 8.3 server: the whole recipe ($RS_SETUP; the first run fetches and builds for ~12 min)"
    # (the recipe prints the new authenticator: masked in our log)
    detached nice -n 19 "$RS_SETUP" "$BOINC_SRC" 2>&1 | mask > /tmp/check-real-boinc.log ||
        { tail -30 /tmp/check-real-boinc.log; die "$RS_SETUP failed (log /tmp/check-real-boinc.log)"; }
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
