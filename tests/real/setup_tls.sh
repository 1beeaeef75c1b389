#!/bin/bash
# tests/real/setup_tls.sh - https in front of the real BOINC project of
# `make check-real` (issue 28; doc/real-systems.md, "https"): Apache's
# mod_ssl serves the same project on https://127.0.0.1:$TLS_PORT/, with a
# certificate of a test CA made here.  Called by setup_real.sh once the
# project answers over http; idempotent (a second run changes nothing and
# does not reload Apache).  Listens on 127.0.0.1 only.
#
#   setup_tls.sh [certs] [apache]      both phases when none is named
#
# certs:  $TLS_DIR/ca.pem + ca.key (the test CA, made once) and
#         server.pem + server.key for IP 127.0.0.1 (made again when missing,
#         not signed by ca.pem, or expiring within 30 days)
# apache: a2enmod ssl; /etc/apache2/sites-available/$SITE.conf with
#         `Listen 127.0.0.1:$TLS_PORT` and a <VirtualHost> that serves the
#         project (the project's Alias lines are server-wide, so the vhost
#         inherits them); enabled, checked with configtest, Apache reloaded
#         when something changed; then a ping over https with ca.pem.
#         Writes the project's https URL to $TLS_DIR/url.
set -euo pipefail

RS_STATE=${RS_STATE:-/var/lib/rs-boinc-state}
TLS_DIR=${TLS_DIR:-$RS_STATE/tls}
TLS_PORT=${TLS_PORT:-18443}
SITE=${SITE:-rstest-tls}
SITE_FILE=/etc/apache2/sites-available/$SITE.conf

log() { echo "[$(date +%H:%M:%S)] setup_tls: $*"; }
die() { echo "setup_tls: $*" >&2; exit 1; }

ssl() { openssl "$@" > /dev/null 2>&1; }

# The server certificate is good when it exists, chains to ca.pem, names
# IP 127.0.0.1 and lasts 30 more days.  (Outputs are captured, never piped
# into `grep -q`: under pipefail its early exit can fail the pipeline.)
server_cert_good() {
    [ -s "$TLS_DIR/server.pem" ] && [ -s "$TLS_DIR/server.key" ] &&
        ssl verify -CAfile "$TLS_DIR/ca.pem" "$TLS_DIR/server.pem" &&
        ssl x509 -in "$TLS_DIR/server.pem" -noout -checkend $((30 * 86400)) || return 1
    local san
    san=$(openssl x509 -in "$TLS_DIR/server.pem" -noout -ext subjectAltName 2>/dev/null) || return 1
    [[ $san == *"IP Address:127.0.0.1"* ]]
}

phase_certs() {
    install -d -m 0755 "$TLS_DIR"
    # umask 077: the keys are root's alone (Apache reads them as root)
    local old_umask
    old_umask=$(umask)
    umask 077
    if [ ! -s "$TLS_DIR/ca.pem" ] || [ ! -s "$TLS_DIR/ca.key" ] ||
       ! ssl x509 -in "$TLS_DIR/ca.pem" -noout -checkend $((30 * 86400)); then
        log "making the test CA in $TLS_DIR"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TLS_DIR/ca.key" \
            -out "$TLS_DIR/ca.pem" -days 3650 -subj "/CN=boinc_gahp check-real test CA" \
            -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
        rm -f "$TLS_DIR/server.pem"         # signed by the old CA
    fi
    if ! server_cert_good; then
        log "making the server certificate for 127.0.0.1"
        printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n%s\n' \
            'extendedKeyUsage=serverAuth' > "$TLS_DIR/server.ext"
        openssl req -newkey rsa:2048 -nodes -keyout "$TLS_DIR/server.key" \
            -out "$TLS_DIR/server.csr" -subj "/CN=127.0.0.1" 2>/dev/null
        openssl x509 -req -in "$TLS_DIR/server.csr" -CA "$TLS_DIR/ca.pem" \
            -CAkey "$TLS_DIR/ca.key" -CAcreateserial -out "$TLS_DIR/server.pem" \
            -days 825 -extfile "$TLS_DIR/server.ext" 2>/dev/null
        server_cert_good || die "the new server certificate does not verify"
        touch "$TLS_DIR/.changed"           # the apache phase reloads
    fi
    umask "$old_umask"
    chmod 0644 "$TLS_DIR/ca.pem"            # tests and their GAHPs read it
}

# The site file's text.
site_text() {
    cat <<EOF
# boinc_gahp make check-real: the BOINC project over https on 127.0.0.1
# only (tests/real/setup_tls.sh writes this file; edits are overwritten).
Listen 127.0.0.1:$TLS_PORT
<VirtualHost 127.0.0.1:$TLS_PORT>
    ServerName 127.0.0.1
    SSLEngine on
    SSLCertificateFile $TLS_DIR/server.pem
    SSLCertificateKeyFile $TLS_DIR/server.key
</VirtualHost>
EOF
}

https_url() {
    local url
    url=$(head -1 "$RS_STATE/config.txt")
    # http://127.0.0.1:PORT/PROJECT/ -> https://127.0.0.1:TLS_PORT/PROJECT/
    printf 'https://127.0.0.1:%s/%s\n' "$TLS_PORT" "${url#http://*/}"
}

phase_apache() {
    command -v a2enmod > /dev/null || die "no Apache (a2enmod): run the BOINC server's setup first"
    [ -s "$RS_STATE/config.txt" ] || die "no $RS_STATE/config.txt: the project is not set up"
    [ -s "$TLS_DIR/server.pem" ] || die "no certificate: run the certs phase first"
    local changed=0
    if [ -e "$TLS_DIR/.changed" ]; then
        changed=1
    fi
    if [ ! -e /etc/apache2/mods-enabled/ssl.load ]; then
        log "a2enmod ssl"
        a2enmod -q ssl > /dev/null
        changed=1
    fi
    if ! site_text | cmp -s - "$SITE_FILE"; then
        log "writing $SITE_FILE (127.0.0.1:$TLS_PORT)"
        site_text > "$SITE_FILE"
        changed=1
    fi
    if [ ! -e "/etc/apache2/sites-enabled/$SITE.conf" ]; then
        a2ensite -q "$SITE" > /dev/null
        changed=1
    fi
    # never anything but 127.0.0.1: every Listen of the configuration
    local listens
    listens=$(grep -rhs '^[[:space:]]*Listen' /etc/apache2/ports.conf /etc/apache2/sites-enabled/ \
                  /etc/apache2/conf-enabled/ /etc/apache2/mods-enabled/ || true)
    if printf '%s\n' "$listens" | grep -v -e '^$' -e 'Listen[[:space:]]\+127\.0\.0\.1:' > /dev/null; then
        die "an Apache Listen directive is not on 127.0.0.1: $listens"
    fi
    apache2ctl configtest > /dev/null 2>&1 || { apache2ctl configtest; die "apache configtest failed"; }
    if [ "$changed" = 1 ]; then
        if /etc/init.d/apache2 status > /dev/null 2>&1; then
            log "reloading apache"
            /etc/init.d/apache2 reload > /dev/null
        else
            log "starting apache"
            # its own session: Apache must outlive make (as setup_real.sh)
            setsid -w /etc/init.d/apache2 start > /dev/null 2>&1 < /dev/null
        fi
        rm -f "$TLS_DIR/.changed"
    fi
    https_url > "$TLS_DIR/url"
    local url reply tries=0
    url=$(cat "$TLS_DIR/url")
    # a reload is graceful: the new listener may take a moment
    until reply=$(curl -sf --noproxy 127.0.0.1 --cacert "$TLS_DIR/ca.pem" \
                      "${url}submit_rpc_handler.php" --form-string 'request=<ping> </ping>') &&
          [[ $reply == *"<success>1</success>"* ]]; do
        tries=$((tries + 1))
        [ "$tries" -lt 20 ] || die "the project does not answer a ping at $url"
        sleep 0.5
    done
    log "project over https at $url (CA $TLS_DIR/ca.pem)"
}

PHASES=${*:-certs apache}
for p in $PHASES; do
    case $p in
        certs) phase_certs ;;
        apache) phase_apache ;;
        *) die "unknown phase $p (certs, apache)" ;;
    esac
done
