#!/usr/bin/env bash
# Installs the Debian packages sileme-notifier builds, runs and tests with (only what is missing),
# then checks every capability the scripts and tests use, naming the package that gives it.
#
#   scripts/install-deps.sh            install what is missing, then check (as root, or with sudo)
#   scripts/install-deps.sh --check    only check; exit 1 naming each missing package
#
# A capability a tool only *recommends* is not installed by --no-install-recommends (swaks without
# libnet-ssleay-perl has no TLS), so each such package is named here and each capability checked.
set -euo pipefail

packages=(
  pkg-config libpq-dev libcurl4-openssl-dev libsystemd-dev   # build: libpq, libcurl, libsystemd
  libssl-dev                                                 # build: libcrypto (HMAC-SHA256 of the webhook signatures)
  postgresql-15 postgresql-client-15                         # tests and demo: a throwaway PostgreSQL, pgbench
  postgresql-15-partman                                      # tests: check_ins partitioned by month with pg_partman
  pgbouncer                                                  # tests: the notifier through a connection pooler
  python3-aiosmtpd openssl                                   # tests and demo: a real SMTP server, TLS certificates
  python3                                                    # tests: the webhook receiver (http.server, ssl, hmac)
  swaks libnet-ssleay-perl jq                                # the SMTP harness's self-test: swaks with TLS, jq
  systemd                                                    # journald, journalctl, systemd-analyze, a booted systemd
  util-linux mount                                           # runuser, unshare, nsenter, flock, setpriv, mount
  chromium fonts-wqy-microhei                                # tests: render the HTML report and the acknowledgement page headless, with a CJK font
  curl                                                       # tests: the acknowledgement page's requests (GET, POST, headers)
  wrk                                                        # bench/ack-page.py: the page's requests per second
  python3-psycopg2 time                                      # bench/bench.py (CI runs it small)
  python3-prometheus-client                                  # tests: parse the metrics file independently
  dpkg-dev binutils gzip lintian man-db                      # scripts/package.sh and its test: dpkg-shlibdeps, strip, lintian, man
  dovecot-imapd dovecot-pop3d                                # tests: a private IMAP and POP3 server holding bounce reports (never the system's)
  postfix                                                    # tests and scripts/bounces: a private Postfix as the relay that bounces (never the system's)
  spamassassin                                               # tests: every kind of mail scored with its local rules (never spamd, never the network)
)
# Postfix's package asks how the machine sends mail; the tests and scripts/bounces/postfix-dsn.sh
# start private instances with configurations of their own (`postfix -c DIR`), so the system's
# Postfix is left unconfigured ("No configuration"): it never runs, and nothing listens on port 25.

# capability CHECK-COMMAND PACKAGE WHAT: one line per capability the scripts use.
failures=()
capability() {
  local check=$1 package=$2 what=$3
  if ! bash -c "$check" >/dev/null 2>&1; then
    failures+=("$what: missing (apt-get install $package)")
  fi
}

check_capabilities() {
  failures=()
  capability 'pkg-config --exists libpq libcurl libsystemd' 'pkg-config libpq-dev libcurl4-openssl-dev libsystemd-dev' \
    'the C libraries to build against (pkg-config libpq libcurl libsystemd)'
  capability 'pkg-config --exists libcrypto && test -f "$(pkg-config --variable=includedir libcrypto)/openssl/hmac.h"' libssl-dev \
    "OpenSSL's libcrypto to build against (pkg-config libcrypto, openssl/hmac.h)"
  capability 'test -x /usr/lib/postgresql/15/bin/initdb && test -x /usr/lib/postgresql/15/bin/pg_ctl' postgresql-15 \
    'PostgreSQL 15 server (initdb, pg_ctl)'
  capability 'test -x /usr/lib/postgresql/15/bin/pgbench' postgresql-15 'pgbench'
  capability 'test -f /usr/share/postgresql/15/extension/pg_partman.control' postgresql-15-partman \
    'pg_partman for PostgreSQL 15 (the partitioned check_ins tests)'
  capability 'command -v psql && command -v pg_dump' postgresql-client-15 'psql and pg_dump'
  capability 'test -x /usr/sbin/pgbouncer' pgbouncer 'PgBouncer (the connection-pooler tests)'
  capability '/usr/bin/python3 -c "import aiosmtpd.controller, aiosmtpd.smtp"' python3-aiosmtpd \
    'the SMTP test servers (aiosmtpd for /usr/bin/python3)'
  capability '/usr/bin/python3 -c "import ssl; ssl.create_default_context()"' python3 'TLS in /usr/bin/python3'
  capability '/usr/bin/python3 -c "import http.server, hmac, hashlib, base64, ssl; ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)"' python3 \
    'the webhook test receiver (http.server, hmac, hashlib, base64 and a TLS server in /usr/bin/python3)'
  capability 'command -v openssl' openssl 'openssl (test certificates)'
  capability 'command -v swaks' swaks 'swaks (the SMTP harness self-test)'
  capability 'swaks --support 2>&1 | grep -qx "=== TLS supported"' libnet-ssleay-perl 'swaks with TLS (STARTTLS and implicit TLS)'
  capability 'swaks --support 2>&1 | grep -qx "=== Basic AUTH supported"' swaks 'swaks with AUTH PLAIN and LOGIN'
  capability 'command -v jq' jq 'jq (the SMTP harness self-test and the journal probe)'
  capability 'test -x /lib/systemd/systemd-journald && command -v journalctl && command -v systemd-analyze && test -x /lib/systemd/systemd' \
    systemd 'journald, journalctl, systemd-analyze and systemd as PID 1'
  capability 'command -v runuser && command -v unshare && command -v nsenter && command -v flock && command -v setpriv' \
    util-linux 'runuser, unshare, nsenter, flock, setpriv'
  capability 'command -v mount && command -v umount' mount 'mount and umount (tmpfs for the outbox and systemd tests)'
  capability 'command -v chromium || command -v chromium-browser' chromium 'headless Chromium (the HTML report and acknowledgement page screenshots)'
  capability 'command -v curl' curl 'curl (the acknowledgement page tests)'
  capability 'command -v wrk' wrk 'wrk (bench/ack-page.py)'
  capability 'test -n "$(find /usr/share/fonts -path "*wqy*" -name "*.tt*" 2>/dev/null | head -1)"' fonts-wqy-microhei \
    'a CJK font for the HTML report screenshot'
  capability '/usr/bin/python3 -c "import psycopg2"' python3-psycopg2 'psycopg2 for bench/bench.py'
  capability '/usr/bin/python3 -c "from prometheus_client.parser import text_string_to_metric_families"' python3-prometheus-client \
    "Prometheus' text parser (the metrics file test)"
  capability 'test -x /usr/lib/postgresql/15/bin/pg_basebackup' postgresql-client-15 'pg_basebackup (the hot-standby test)'
  capability 'test -x /usr/bin/time' time '/usr/bin/time (peak memory in bench/bench.py)'
  capability 'command -v dpkg-shlibdeps && command -v dpkg-deb' dpkg-dev 'dpkg-shlibdeps and dpkg-deb (scripts/package.sh)'
  capability 'command -v strip && command -v readelf' binutils 'strip and readelf (scripts/package.sh)'
  capability 'command -v gzip' gzip 'gzip (the packaged man page and changelog)'
  capability 'command -v lintian' lintian 'lintian (the package test)'
  capability 'command -v man' man-db 'man (the package test reads the packaged man page)'
  capability 'test -x /usr/sbin/dovecot && test -x /usr/lib/dovecot/imap' dovecot-imapd \
    'Dovecot with IMAP (the bounce mailbox tests start a private instance)'
  capability 'test -x /usr/lib/dovecot/pop3' dovecot-pop3d 'Dovecot with POP3 (the bounce mailbox tests)'
  capability 'test -x /usr/sbin/postfix && test -x /usr/lib/postfix/sbin/master && test -x /usr/lib/postfix/sbin/virtual && getent passwd postfix && getent group postdrop' \
    postfix 'Postfix with virtual(8), its user and group (the relay test and scripts/bounces/postfix-dsn.sh start a private instance)'
  capability 'command -v spamassassin && test -f /usr/share/spamassassin/50_scores.cf && perl -MMail::SpamAssassin -e 1' spamassassin \
    'SpamAssassin with its rules (the mail acceptance test scores every kind of mail with spamassassin -L)'
  if [ ${#failures[@]} -gt 0 ]; then
    echo "install-deps: this machine lacks what the tests use:" >&2
    printf '  - %s\n' "${failures[@]}" >&2
    return 1
  fi
}

if [ "${1:-}" = "--check" ]; then
  check_capabilities
  exit
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Installing the postgresql and pgbouncer packages must not start the distribution's own services.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
    trap '$sudo rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  if printf '%s\n' "${missing[@]}" | grep -qx postfix; then
    printf 'postfix postfix/main_mailer_type select No configuration\n' | $sudo debconf-set-selections
  fi
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

check_capabilities
