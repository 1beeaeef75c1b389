#!/bin/bash
# tests/real/recipes/boinc_server.sh - a real BOINC 8.3 project server on
# 127.0.0.1 (Apache + PHP, MariaDB, the project's daemons) built from
# BOINC's public repository at a pinned commit, with the `uppercase` app
# (BOINC's example app uc2), a submitter account with remote job
# submission rights, Debian's boinc-client attached and crunching, and
# BOINC's sample GAHP (samples/condor/boinc_gahp, the "peer" of
# `make bench`) in PEER_DIR.  Debian 12, as root.
#
#   tests/real/recipes/boinc_server.sh [BOINC_SRC [PHASE...]]
#
# BOINC_SRC [/opt/boinc-src]: the source tree (exported by `source`).
# Phases (default: all, in this order):
#   source    exports BOINC_COMMIT into BOINC_SRC unless tools/make_project
#             is there (BOINC_MIRROR, or a fetch of the commit into
#             BOINC_GIT_CACHE)
#   packages  the Debian packages that are missing
#   build     patches the transitioner (below), configures and builds the
#             server, the sample GAHP and uc2
#   mariadb   MariaDB on 127.0.0.1, the DB user
#   project   make_project from scratch (drops the database!), the
#             uppercase app, daemons, settings (below)
#   apache    Apache on 127.0.0.1:PORT, PHP upload limits
#   account   the submitter account; URL and authenticator to STATE_DIR
#   daemons   (re)starts the project's daemons
#   client    a fresh boinc-client attached to the project, and a loop that
#             asks it to contact the project every 10 s
#   peer      copies the sample GAHP to PEER_DIR/boinc_gahp
#
# Settings (environment, default in brackets):
#   BOINC_COMMIT [c5c6cb79b9aa4747d80d066e3627c22f2c124144] ("8.3.0")
#   BOINC_URL [https://github.com/BOINC/boinc.git]
#   BOINC_MIRROR     a local clone of BOINC with BOINC_COMMIT: used instead
#                    of fetching from BOINC_URL
#   BOINC_GIT_CACHE  [/opt/boinc-git]
#   PORT [18181]  PROJECT [rstest]  PROJECTS_DIR [/opt/boinc-projects]
#   CLIENT_DIR [/var/lib/rs-boinc-client]  GUI_PORT [31418]
#   DB_USER [boincadm]  DB_PASS [boincadm-pw]  PEER_DIR [/opt/peer]
#   STATE_DIR [/var/lib/rs-boinc-state]
#   PHP_MAX_FILE_UPLOADS [1000]  PHP_POST_MAX [256M]  PHP_UPLOAD_MAX [256M]
#     (Debian's stock values are 20, 8M and 2M; set them and run `apache`
#     to get a stock server's upload limits)
# Building BOINC takes about 12 minutes on 2 shared cores; every other
# phase takes seconds.
set -euo pipefail

RECIPE=boinc_server.sh
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ALL_PHASES="source packages build mariadb project apache account daemons client peer"
BOINC_SRC=${1:-/opt/boinc-src}
[ $# -gt 0 ] && shift
PHASES=" ${*:-$ALL_PHASES} "
BOINC_COMMIT=${BOINC_COMMIT:-c5c6cb79b9aa4747d80d066e3627c22f2c124144}
BOINC_URL=${BOINC_URL:-https://github.com/BOINC/boinc.git}
BOINC_MIRROR=${BOINC_MIRROR:-}
BOINC_GIT_CACHE=${BOINC_GIT_CACHE:-/opt/boinc-git}
PORT=${PORT:-18181}
PROJECT=${PROJECT:-rstest}
PROJECTS_DIR=${PROJECTS_DIR:-/opt/boinc-projects}
PROJECT_ROOT=$PROJECTS_DIR/$PROJECT
CLIENT_DIR=${CLIENT_DIR:-/var/lib/rs-boinc-client}
GUI_PORT=${GUI_PORT:-31418}
DB_USER=${DB_USER:-boincadm}
DB_PASS=${DB_PASS:-boincadm-pw}
PEER_DIR=${PEER_DIR:-/opt/peer}
STATE_DIR=${STATE_DIR:-/var/lib/rs-boinc-state}
PHP_MAX_FILE_UPLOADS=${PHP_MAX_FILE_UPLOADS:-1000}
PHP_POST_MAX=${PHP_POST_MAX:-256M}
PHP_UPLOAD_MAX=${PHP_UPLOAD_MAX:-256M}
URL=http://127.0.0.1:$PORT/$PROJECT/
PHP_INI=/etc/php/8.2/apache2/conf.d/99-boinc-test.ini

for p in $PHASES; do
    [[ " $ALL_PHASES " == *" $p "* ]] || rdie "no phase '$p' (phases: $ALL_PHASES)"
done
want() { [[ $PHASES == *" $1 "* ]]; }

# make_project and BOINC's python tools need Debian's python3 (MySQLdb),
# not another python3 earlier on PATH (/usr/local/bin's, a pyenv shim's).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/sbin:/usr/local/bin USER=${USER:-root}
# Nothing the project's programs start may reach beyond loopback: a dead
# proxy for everything else (apt and the source fetch run without it).
LOOPBACK_ONLY=(http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9
    HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
    no_proxy=127.0.0.1 NO_PROXY=127.0.0.1)
export "${LOOPBACK_ONLY[@]}"
online() { (unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY; "$@"); }
mkdir -p "$STATE_DIR"
sql() { mysql -u"$DB_USER" -p"$DB_PASS" -h127.0.0.1 "$@"; }
as_www() { (cd "$PROJECT_ROOT" && su -s /bin/sh www-data -c "USER=www-data $*"); }
ping_project() {
    curl -sf --noproxy 127.0.0.1 "${URL}submit_rpc_handler.php" \
        --form-string 'request=<ping> </ping>' | grep -q '<success>1</success>'
}

# ---------------------------------------------------------------- source
if want source; then
    if [ -f "$BOINC_SRC/tools/make_project" ]; then
        rlog "source: $BOINC_SRC holds a BOINC tree already"
    else
        # git must reach the upstream URL: no dead proxy for it
        online get_source "$BOINC_URL" BOINC_MIRROR "$BOINC_COMMIT" "$BOINC_GIT_CACHE" "$BOINC_SRC" ||
            rdie "source: no BOINC tree in $BOINC_SRC"
        [ -f "$BOINC_SRC/tools/make_project" ] ||
            rdie "source: $BOINC_COMMIT gave no BOINC tree in $BOINC_SRC (no tools/make_project)"
    fi
fi
BOINC_SRC=$(realpath "$BOINC_SRC")

# ---------------------------------------------------------------- packages
if want packages; then
    # apt must not start services as it installs them (Apache would
    # listen on *:80): Debian's policy-rc.d hook, "exit 101" = refused.
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    # nlohmann-json3-dev: the server's configure needs it; python3-mysqldb
    # and python-is-python3: make_project (#!/usr/bin/env python).
    online apt_missing build-essential autoconf automake libtool m4 make pkg-config git \
        libssl-dev libcurl4-openssl-dev zlib1g-dev nlohmann-json3-dev \
        default-libmysqlclient-dev libmariadb-dev-compat mariadb-server mariadb-client \
        apache2 libapache2-mod-php php php-cli php-mysql php-xml php-gd php-curl php-mbstring \
        python3 python-is-python3 python3-mysqldb python3-pymysql boinc-client curl
fi

# ---------------------------------------------------------------- build
if want build; then
    cd "$BOINC_SRC"
    # The transitioner reads a job's results from a join of workunit and
    # result that has no ORDER BY, and assumes that the rows of one job are
    # adjacent.  MariaDB 10.11 interleaved them: the transitioner then saw
    # one result of a job that had two, tried to create the missing one
    # again, failed on the duplicate name and quit, at every restart.
    # Ordering by workunit id makes the rows of a job adjacent.
    if ! grep -q 'ORDER BY wu.id' db/boinc_db.cpp; then
        [ "$(grep -c 'transitioner_flags<>%d "$' db/boinc_db.cpp)" = 1 ] ||
            rdie "build: db/boinc_db.cpp is not the expected source (the transitioner query changed)"
        sed -i '/transitioner_flags<>%d "$/a\            "ORDER BY wu.id "' db/boinc_db.cpp
        rm -f sched/transitioner        # make does not relink it by itself
        rlog "build: transitioner query ordered by workunit id"
    fi
    if [ ! -f Makefile ]; then
        [ -x configure ] || ./_autosetup
        ./configure --disable-client --disable-manager --enable-server \
            --disable-fcgi --enable-libraries
    fi
    # BOINC's own makefiles can race under -j: lib/'s all-am builds
    # libboinc.la while another make, for crypt_prog, builds
    # ../lib/libboinc.la, the same library under another name ("... is not
    # a valid libtool object").  A serial make finishes what -j2 left.
    nice -n 19 make -j"${JOBS:-2}" || { rlog "build: make -j failed; once more, serially"; nice -n 19 make; }
    nice -n 19 make -C samples/condor boinc_gahp     # the sample GAHP, on lib/libboinc.a
    # uc2 upper-cases `in` into `out`; --early_exit exits 246 after 30
    # characters, --run_slow sleeps 1 s a character, --cpu_time N burns N
    # CPU seconds (20 by default)
    nice -n 19 make -C samples/example_app uc2
    { [ -x sched/transitioner ] && [ -x samples/condor/boinc_gahp ] && [ -x samples/example_app/uc2 ]; } ||
        rdie "build: something was not built"
fi

# ---------------------------------------------------------------- mariadb
if want mariadb; then
    sed -i 's/^bind-address.*/bind-address            = 127.0.0.1/' \
        /etc/mysql/mariadb.conf.d/50-server.cnf
    /etc/init.d/mariadb status > /dev/null 2>&1 || /etc/init.d/mariadb start
    for h in localhost 127.0.0.1; do
        mysql -e "CREATE USER IF NOT EXISTS '$DB_USER'@'$h' IDENTIFIED BY '$DB_PASS';
                  GRANT ALL ON *.* TO '$DB_USER'@'$h';"
    done
    mysql -e "FLUSH PRIVILEGES;"
    rlog "mariadb: on 127.0.0.1, user $DB_USER"
fi

# ---------------------------------------------------------------- project
if want project; then
    [ -x "$PROJECT_ROOT/bin/stop" ] && { as_www bin/stop || true; }
    mkdir -p "$PROJECTS_DIR"
    (cd "$BOINC_SRC/tools" && ./make_project --no_query --delete_prev_inst --drop_db_first \
        --srcdir "$BOINC_SRC" --url_base "http://127.0.0.1:$PORT/" \
        --project_host "$(hostname -s)" --project_root "$PROJECT_ROOT" \
        --db_user "$DB_USER" --db_passwd "$DB_PASS" --db_host 127.0.0.1 \
        "$PROJECT" "boinc_gahp check-real project")
    cd "$PROJECT_ROOT"
    # make_project leaves out batch_file_assoc, which job_file.php uses for
    # uploads with a batch id.  BOINC's schema_condor.sql makes it; its
    # last statement (an index make_project made) fails, hence --force.
    sql --force "$PROJECT" < "$BOINC_SRC/db/schema_condor.sql" || true
    sql "$PROJECT" -e 'DESCRIBE batch_file_assoc' > /dev/null
    # PHP 8: libxml_disable_entity_loader(true) also keeps
    # simplexml_load_file() from reading the app's templates (submit_batch:
    # "couldn't parse input template file"): call it on PHP 7 only.
    sed -i 's/^\(\s*\)@libxml_disable_entity_loader(true);/\1if (PHP_VERSION_ID < 80000) @libxml_disable_entity_loader(true);/' \
        html/inc/util_basic.inc
    grep -q 'PHP_VERSION_ID < 80000' html/inc/util_basic.inc || rdie "project: util_basic.inc not patched"
    # the uppercase app: one input opened as `in`, one output `out`; one
    # instance, two at most, one error allowed
    cat > templates/uppercase_in <<'EOF'
<input_template>
    <file_info>
        <number>0</number>
    </file_info>
    <workunit>
        <file_ref>
            <file_number>0</file_number>
            <open_name>in</open_name>
            <copy_file/>
        </file_ref>
        <target_nresults>1</target_nresults>
        <min_quorum>1</min_quorum>
        <max_error_results>1</max_error_results>
        <max_total_results>2</max_total_results>
        <max_success_results>1</max_success_results>
        <rsc_fpops_est>1e9</rsc_fpops_est>
        <rsc_fpops_bound>1e13</rsc_fpops_bound>
        <rsc_memory_bound>1e8</rsc_memory_bound>
        <rsc_disk_bound>1e8</rsc_disk_bound>
        <delay_bound>600</delay_bound>
    </workunit>
</input_template>
EOF
    cat > templates/uppercase_out <<'EOF'
<output_template>
    <file_info>
        <name><OUTFILE_0/></name>
        <generated_locally/>
        <upload_when_present/>
        <max_nbytes>5000000</max_nbytes>
        <url><UPLOAD_URL/></url>
    </file_info>
    <result>
        <file_ref>
            <file_name><OUTFILE_0/></file_name>
            <open_name>out</open_name>
        </file_ref>
    </result>
</output_template>
EOF
    grep -q '<name>uppercase</name>' project.xml ||
        sed -i 's|</boinc>|    <app>\n        <name>uppercase</name>\n        <user_friendly_name>uppercase</user_friendly_name>\n    </app>\n</boinc>|' project.xml
    bin/xadd
    appdir=apps/uppercase/1.0/x86_64-pc-linux-gnu
    mkdir -p "$appdir"
    cp "$BOINC_SRC/samples/example_app/uc2" "$appdir/uppercase_1.0_x86_64-pc-linux-gnu"
    bin/update_versions --noconfirm
    # config.xml: a validator and an assimilator for uppercase beside
    # make_project's daemons; outputs kept 48 h (remote submission fetches
    # them after assimilation, and the stock file_deleter removes them at
    # once: get_output.php then says "no such file"); a host may ask for
    # work again at once.
    daemons=""
    for d in 'sample_trivial_validator -d 3 --app uppercase' 'sample_dummy_assimilator -d 3 --app uppercase'; do
        grep -qF "$d" config.xml || daemons="$daemons    <daemon>\n      <cmd>$d</cmd>\n    </daemon>\n"
    done
    [ -z "$daemons" ] || sed -i "0,\|</daemons>|s||$daemons  </daemons>|" config.xml
    grep -q '<delete_delay_hours>' config.xml ||
        sed -i '0,\|</config>|s||    <delete_delay_hours>48</delete_delay_hours>\n  </config>|' config.xml
    sed -i 's|<min_sendwork_interval>[0-9]*</min_sendwork_interval>|<min_sendwork_interval>0</min_sendwork_interval>|' config.xml
    { grep -q 'sample_dummy_assimilator -d 3 --app uppercase' config.xml && grep -q '<delete_delay_hours>48' config.xml; } ||
        rdie "project: config.xml not as expected"
    chown -R www-data:www-data "$PROJECT_ROOT"
    rlog "project: $PROJECT_ROOT"
fi

# ---------------------------------------------------------------- apache
if want apache; then
    echo "Listen 127.0.0.1:$PORT" > /etc/apache2/ports.conf
    echo "ServerName 127.0.0.1" > /etc/apache2/conf-available/servername.conf
    a2enconf -q servername
    a2dissite -q 000-default > /dev/null 2>&1 || true
    a2enmod -q cgi php8.2 > /dev/null
    # mod_logio is built into Debian's apache2 (a2enmod says "Module logio
    # does not exist"); elsewhere it is a module to enable
    a2enmod -q logio > /dev/null 2>&1 || true
    printf 'post_max_size = %s\nupload_max_filesize = %s\nmax_file_uploads = %s\nmemory_limit = 512M\n' \
        "$PHP_POST_MAX" "$PHP_UPLOAD_MAX" "$PHP_MAX_FILE_UPLOADS" > "$PHP_INI"
    cp "$PROJECT_ROOT/$PROJECT.httpd.conf" "/etc/apache2/sites-available/$PROJECT.conf"
    # bytes received and sent per request (mod_logio): tests read how much
    # job_file.php received
    # shellcheck disable=SC2016  # Apache's variable, not the shell's
    printf '%s\n' 'LogFormat "%h %{%s}t \"%r\" %>s %I %O %D" rs_io' \
        'CustomLog ${APACHE_LOG_DIR}/rs_io.log rs_io' > /etc/apache2/conf-available/rs-io-log.conf
    a2enconf -q rs-io-log
    a2ensite -q "$PROJECT"
    apache2ctl configtest
    if /etc/init.d/apache2 status > /dev/null 2>&1; then /etc/init.d/apache2 restart
    else /etc/init.d/apache2 start; fi
    sleep 1
    ping_project || rdie "apache: the project does not answer a ping at $URL"
    rlog "apache: $URL (PHP: $PHP_MAX_FILE_UPLOADS files, $PHP_POST_MAX a request)"
fi

# ---------------------------------------------------------------- account
if want account; then
    email=submitter@example.invalid
    hash=$(printf '%s' "submitter-pw$email" | md5sum | cut -d' ' -f1)
    auth_of() { sed -n 's:.*<authenticator>\(.*\)</authenticator>.*:\1:p'; }
    auth=$(curl -s --noproxy 127.0.0.1 \
        "${URL}create_account.php?email_addr=$email&passwd_hash=$hash&user_name=submitter" | auth_of)
    [ -n "$auth" ] || auth=$(curl -s --noproxy 127.0.0.1 \
        "${URL}lookup_account.php?email_addr=$email&passwd_hash=$hash" | auth_of)
    [ -n "$auth" ] || rdie "account: the project gave no authenticator for $email"
    # remote job submission rights: submit and manage every app
    sql "$PROJECT" -e "INSERT IGNORE INTO user_submit (user_id, quota, logical_start_time,
            submit_all, manage_all, max_jobs_in_progress)
        SELECT id, 0, 0, 1, 1, 0 FROM user WHERE authenticator='$auth';"
    (umask 077
     printf '%s\n' "$auth" > "$STATE_DIR/authenticator"
     printf '%s\n%s\n' "$URL" "$auth" > "$STATE_DIR/config.txt")
    rlog "account: $email; URL and authenticator in $STATE_DIR/config.txt"
fi

# ---------------------------------------------------------------- daemons
if want daemons; then
    as_www bin/stop > /dev/null 2>&1 || true
    as_www bin/start
    sleep 2
    as_www bin/status || true
fi

# ---------------------------------------------------------------- client
if want client; then
    # a fresh client each time: the project and its host ids may be new
    for f in kicker client; do
        if [ -s "$STATE_DIR/$f.pid" ] && kill -0 "$(cat "$STATE_DIR/$f.pid")" 2>/dev/null; then
            kill "$(cat "$STATE_DIR/$f.pid")"
        fi
    done
    sleep 3
    rm -rf "$CLIENT_DIR"
    mkdir -p "$CLIENT_DIR"
    cat > "$CLIENT_DIR/cc_config.xml" <<'EOF'
<cc_config>
  <options>
    <report_results_immediately>1</report_results_immediately>
    <dont_contact_ref_site>1</dont_contact_ref_site>
    <skip_cpu_benchmarks>1</skip_cpu_benchmarks>
    <allow_multiple_clients>1</allow_multiple_clients>
    <proxy_info>
      <use_http_proxy/>
      <http_server_name>127.0.0.1</http_server_name>
      <http_server_port>9</http_server_port>
      <no_proxy>127.0.0.1</no_proxy>
    </proxy_info>
  </options>
</cc_config>
EOF
    # crunch always, whatever the machine does; ask for little work at a time
    cat > "$CLIENT_DIR/global_prefs_override.xml" <<'EOF'
<global_preferences>
  <run_on_batteries>1</run_on_batteries>
  <run_if_user_active>1</run_if_user_active>
  <run_gpu_if_user_active>1</run_gpu_if_user_active>
  <idle_time_to_run>0</idle_time_to_run>
  <max_ncpus_pct>100</max_ncpus_pct>
  <cpu_usage_limit>100</cpu_usage_limit>
  <suspend_cpu_usage>0</suspend_cpu_usage>
  <work_buf_min_days>0.01</work_buf_min_days>
  <work_buf_additional_days>0.01</work_buf_additional_days>
  <disk_max_used_gb>10</disk_max_used_gb>
  <disk_max_used_pct>90</disk_max_used_pct>
  <disk_min_free_gb>0.1</disk_min_free_gb>
</global_preferences>
EOF
    : > "$CLIENT_DIR/gui_rpc_auth.cfg"
    # started from the script itself, not a subshell: run inside one, the
    # recipe was left waiting on the client when it had nothing else to do
    # (seen at its first run)
    back=$PWD
    cd "$CLIENT_DIR"
    setsid /usr/bin/boinc --dir "$CLIENT_DIR" --gui_rpc_port "$GUI_PORT" \
        --allow_multiple_clients >> "$CLIENT_DIR/client.log" 2>&1 < /dev/null &
    echo $! > "$STATE_DIR/client.pid"
    cd "$back"
    sleep 4
    bc=(boinccmd --host "127.0.0.1:$GUI_PORT")
    "${bc[@]}" --set_run_mode always
    "${bc[@]}" --set_network_mode always
    "${bc[@]}" --project_attach "$URL" "$(cat "$STATE_DIR/authenticator")" || true
    # after an RPC that got no work the client waits longer and longer:
    # ask it to contact the project every 10 s so that new jobs go at once
    setsid bash -c "while sleep 10; do boinccmd --host 127.0.0.1:$GUI_PORT --project '$URL' update > /dev/null 2>&1; done" \
        < /dev/null > /dev/null 2>&1 &
    echo $! > "$STATE_DIR/kicker.pid"
    rlog "client: $CLIENT_DIR, GUI RPC 127.0.0.1:$GUI_PORT, attached"
fi

# ---------------------------------------------------------------- peer
if want peer; then
    [ -x "$BOINC_SRC/samples/condor/boinc_gahp" ] || rdie "peer: no sample GAHP (run the build phase)"
    mkdir -p "$PEER_DIR"
    # beside it, then renamed: a running peer keeps its binary busy
    cp "$BOINC_SRC/samples/condor/boinc_gahp" "$PEER_DIR/.boinc_gahp.new"
    mv -f "$PEER_DIR/.boinc_gahp.new" "$PEER_DIR/boinc_gahp"
    [ -f "$STATE_DIR/config.txt" ] && install -m 0600 "$STATE_DIR/config.txt" "$PEER_DIR/config.txt"
    touch "$PEER_DIR/READY"
    rlog "peer: $PEER_DIR/boinc_gahp"
fi
rlog "done: project $URL"
