#!/usr/bin/env bash
# testenv.sh — real servers for sileme-notifier's integration tests.
#
#   testenv.sh start  STATE_DIR   start everything, write STATE_DIR/env.sh
#   testenv.sh stop   STATE_DIR   stop exactly what `start` started (idempotent)
#   testenv.sh status STATE_DIR   show what is running (exit 0 = all up, 3 = not)
#
# `start` brings up, all on 127.0.0.1 and free ports:
#   - PostgreSQL 15 (initdb as the `postgres` user, trust auth, fsync=off,
#     max_connections=200, unix socket in STATE_DIR/pg/run, TLS with the test certificate);
#   - a self-signed certificate for localhost / 127.0.0.1 in STATE_DIR/tls;
#   - three SMTP test servers (smtp_server.py: starttls, tls, plain) sharing
#     STATE_DIR/maildir, AUTH sileme / smtp-test-secret;
#   - journald: reuses a journald already serving /run/systemd/journal/socket,
#     else starts /lib/systemd/systemd-journald standalone (volatile storage,
#     no rate limit), shared by all STATE_DIRs started meanwhile; the last
#     `stop` stops it and removes what it created under /run.
# Then it writes STATE_DIR/env.sh (SILEME_TEST_* variables) for the tests:
#
#   scripts/testenv/testenv.sh start /tmp/sileme-test
#   . /tmp/sileme-test/env.sh && swift test
#   scripts/testenv/testenv.sh stop /tmp/sileme-test && rm -rf /tmp/sileme-test
#
# Sourced instead of executed, it defines `testenv start|stop|status DIR`, which
# runs this script and, after `start`, also sources DIR/env.sh into the shell.
#
# Needs root (PostgreSQL runs as `postgres` via runuser; journald needs /run).
# Pids are in STATE_DIR/pids/*.pid, logs in STATE_DIR/logs/.

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    # Sourced: only define the wrapper; strict mode stays inside the script.
    _TESTENV_SH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
    testenv() {
        bash "$_TESTENV_SH" "$@" || return
        if [[ "${1:-}" == start && -f "${2:-}/env.sh" ]]; then
            # shellcheck disable=SC1091
            . "$2/env.sh"
        fi
    }
    return 0
fi

set -euo pipefail

readonly SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SMTP_SERVER="$SCRIPT_DIR/smtp_server.py"
readonly PY=/usr/bin/python3                        # Debian's, which has aiosmtpd
readonly PG_BIN=/usr/lib/postgresql/15/bin
readonly JOURNALD=/lib/systemd/systemd-journald
readonly JOURNAL_DIR=/run/systemd/journal
readonly JOURNAL_SOCKET=$JOURNAL_DIR/socket
readonly JOURNALD_DROPIN_DIR=/run/systemd/journald.conf.d
readonly JOURNALD_DROPIN=$JOURNALD_DROPIN_DIR/50-sileme-testenv.conf
readonly JOURNALD_REG=/run/sileme-testenv-journald   # see the journald section
readonly JOURNALD_LOCK=/run  # flock'ed, never written to: serialises journald sharing
readonly SMTP_USER=sileme
readonly SMTP_PASSWORD=smtp-test-secret
readonly SMTP_MODES=(starttls tls plain)

log() { printf 'testenv: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

# --- process helpers ------------------------------------------------------

# alive PID: the process exists and is not a zombie.
alive() {
    local pid=$1 state
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    state=$(sed -e 's/^.*) //' -e 's/ .*//' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

# cmdline_has PID TEXT: the process's command line contains TEXT (guards
# against killing a recycled pid).
cmdline_has() {
    local cmdline
    cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
    [[ "$cmdline" == *"$2"* ]]
}

# wait_gone PID SECONDS: 0 once the process is gone, 1 on timeout.
wait_gone() {
    local pid=$1 i
    for ((i = 0; i < $2 * 10; i++)); do
        alive "$pid" || return 0
        sleep 0.1
    done
    return 1
}

# stop_pidfile PIDFILE TEXT: TERM (then KILL) the pid in PIDFILE if it is alive
# and its command line contains TEXT; remove PIDFILE.
stop_pidfile() {
    local pidfile=$1 text=$2 pid
    [[ -f "$pidfile" ]] || return 0
    pid=$(<"$pidfile")
    if alive "$pid" && cmdline_has "$pid" "$text"; then
        log "stopping $(basename "$pidfile" .pid) (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        if ! wait_gone "$pid" 10; then
            log "$(basename "$pidfile" .pid) did not stop on TERM, sending KILL"
            kill -KILL "$pid" 2>/dev/null || true
            wait_gone "$pid" 5 || log "warning: pid $pid is still there"
        fi
    fi
    rm -f "$pidfile"
}

# spawn LOG PIDFILE CMD...: run CMD detached (new session, stdin /dev/null,
# stdout and stderr appended to LOG) and write its exact pid to PIDFILE.
spawn() {
    "$PY" - "$@" <<'EOF'
import os, sys
log, pidfile, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    os.setsid()
    os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # e.g. the flock fd: not for daemons
    try:
        os.execv(argv[0], argv)
    except OSError as error:
        os.write(2, ("exec %s: %s\n" % (argv[0], error)).encode())
    os._exit(127)
with open(pidfile + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.replace(pidfile + ".tmp", pidfile)
EOF
}

# free_ports N: N distinct free TCP ports on 127.0.0.1.
free_ports() {
    "$PY" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# --- PostgreSQL -----------------------------------------------------------

start_postgres() {
    local port=$1 pg=$STATE/pg
    local sockdir=$pg/run
    local sockpath="$sockdir/.s.PGSQL.$port"
    ((${#sockpath} < 108)) || die "STATE_DIR too long for a unix socket path: $sockpath"

    mkdir -p "$pg" "$sockdir"
    chown -R postgres:postgres "$pg"
    chmod 700 "$pg"
    chmod 755 "$sockdir"
    runuser -u postgres -- test -w "$pg" ||
        die "user postgres cannot reach $pg (make every parent directory traversable: chmod o+x)"

    log "initdb $pg/data"
    (cd / && runuser -u postgres -- "$PG_BIN/initdb" -D "$pg/data" -U postgres -A trust \
        -E UTF8 --no-locale --no-sync --no-instructions) >"$STATE/logs/initdb.log" 2>&1 ||
        { tail -20 "$STATE/logs/initdb.log" >&2; die "initdb failed"; }
    # initdb -A trust covers local, host 127.0.0.1/32 and ::1/128.
    cat >>"$pg/data/postgresql.conf" <<EOF

# --- sileme testenv ---
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sockdir'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
# TLS with the test certificate (CN=localhost, SAN localhost and 127.0.0.1), so that clients can
# be tested with sslmode=verify-full; plain connections keep working (trust on the host lines).
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
EOF
    install -o postgres -g postgres -m 0644 "$STATE/tls/cert.pem" "$pg/data/server.crt"
    install -o postgres -g postgres -m 0600 "$STATE/tls/key.pem" "$pg/data/server.key"

    log "starting PostgreSQL on 127.0.0.1:$port"
    (cd / && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pg/data" -l "$pg/postgresql.log" \
        -w -t 60 start) >"$STATE/logs/pg_ctl.log" 2>&1 ||
        { tail -20 "$pg/postgresql.log" >&2 || true; die "pg_ctl start failed"; }
    head -n1 "$pg/data/postmaster.pid" >"$STATE/pids/postgres.pid"

    local i
    for ((i = 0; i < 300; i++)); do
        "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -t 1 && return 0
        sleep 0.1
    done
    die "PostgreSQL not ready on 127.0.0.1:$port"
}

stop_postgres() {
    local data=$STATE/pg/data pidfile=$STATE/pids/postgres.pid pid
    if [[ -f "$data/postmaster.pid" ]]; then
        log "stopping PostgreSQL"
        (cd / && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t 30 stop) \
            >>"$STATE/logs/pg_ctl.log" 2>&1 || true
    fi
    # Fallback when pg_ctl could not do it (data directory gone, timeout...).
    if [[ -f "$pidfile" ]]; then
        pid=$(<"$pidfile")
        if alive "$pid" && cmdline_has "$pid" "$data"; then
            log "PostgreSQL (pid $pid) still running, sending QUIT"
            kill -QUIT "$pid" 2>/dev/null || true
            wait_gone "$pid" 10 || kill -KILL "$pid" 2>/dev/null || true
            wait_gone "$pid" 5 || true
        fi
        rm -f "$pidfile"
    fi
}

# --- TLS and SMTP ---------------------------------------------------------

make_certificate() {
    local tls=$STATE/tls
    mkdir -p "$tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -keyout "$tls/key.pem" -out "$tls/cert.pem" >"$STATE/logs/openssl.log" 2>&1 ||
        { cat "$STATE/logs/openssl.log" >&2; die "openssl req failed"; }
    chmod 600 "$tls/key.pem"
}

# smtp_probe MODE PORT PID: wait until the server answers as MODE should
# (banner; TLS verified against our certificate for 127.0.0.1; AUTH offered
# under TLS; no STARTTLS in plain mode).
smtp_probe() {
    "$PY" - "$@" "$STATE/tls/cert.pem" <<'EOF'
import os, smtplib, ssl, sys, time
mode, port, pid, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
deadline = time.monotonic() + 15
while True:
    try:
        if mode == "tls":
            s = smtplib.SMTP_SSL("127.0.0.1", port, context=ctx, timeout=3)
        else:
            s = smtplib.SMTP("127.0.0.1", port, timeout=3)
        s.ehlo("probe.localhost")
        if mode == "starttls":
            assert s.has_extn("starttls"), "STARTTLS not offered"
            assert not s.has_extn("auth"), "AUTH offered before TLS"
            s.starttls(context=ctx)
            s.ehlo("probe.localhost")
        if mode == "plain":
            assert not s.has_extn("starttls"), "STARTTLS offered in plain mode"
        else:
            assert s.has_extn("auth"), "AUTH not offered under TLS"
        s.quit()
        sys.exit(0)
    except (ConnectionRefusedError, smtplib.SMTPServerDisconnected, TimeoutError) as error:
        last = error
    except (AssertionError, ssl.SSLError, smtplib.SMTPException) as error:
        sys.exit("smtp %s: %r" % (mode, error))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("smtp %s: server exited" % mode)
    if time.monotonic() > deadline:
        sys.exit("smtp %s: not answering on port %d: %r" % (mode, port, last))
    time.sleep(0.1)
EOF
}

start_smtp() {
    local mode=$1 port=$2
    local pidfile=$STATE/pids/smtp-$mode.pid
    log "starting SMTP ($mode) on 127.0.0.1:$port"
    spawn "$STATE/logs/smtp-$mode.log" "$pidfile" "$PY" "$SMTP_SERVER" \
        --host 127.0.0.1 --port "$port" --mode "$mode" \
        --cert "$STATE/tls/cert.pem" --key "$STATE/tls/key.pem" \
        --auth "$SMTP_USER:$SMTP_PASSWORD" --maildir "$STATE/maildir"
}

# --- journald ---------------------------------------------------------------
#
# There is one journal socket per machine, so a journald started here is shared
# by every STATE_DIR started while it runs. The registry JOURNALD_REG records
# its pid, the paths it created under /run and one file per STATE_DIR using it;
# the last `stop` stops it and removes those paths. A journald that testenv did
# not start (a real systemd machine) is only reused, never stopped. Registry
# changes are serialised with flock.

# with_journald_lock CMD...: run CMD holding the registry lock. (Daemons must
# not inherit the lock's descriptor: spawn closes it.)
with_journald_lock() {
    local lockfd
    exec {lockfd}<"$JOURNALD_LOCK"
    if ! flock -w 60 "$lockfd"; then
        exec {lockfd}<&-
        log "warning: journald registry lock (flock on $JOURNALD_LOCK) still busy after 60 s, see /proc/locks"
        return 1
    fi
    local rc=0
    "$@" || rc=$?
    exec {lockfd}<&-
    return $rc
}

# journal_alive: something receives datagrams on the journal socket.
journal_alive() {
    "$PY" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(sys.argv[1])' "$JOURNAL_SOCKET" 2>/dev/null
}

# testenv_journald_pid: pid of the journald testenv started, if it still runs.
testenv_journald_pid() {
    local pid
    pid=$(cat "$JOURNALD_REG/pid" 2>/dev/null) || return 1
    alive "$pid" && cmdline_has "$pid" systemd-journald && echo "$pid"
}

# user_key: this STATE_DIR's file name in the registry.
user_key() { printf '%s' "$STATE" | sha1sum | cut -c1-16; }

# record_created PATH: if PATH does not exist yet, note its topmost missing
# ancestor in the registry, to be removed when the journald stops.
record_created() {
    local path=$1 top=""
    while [[ ! -e "$path" ]]; do
        top=$path
        path=$(dirname "$path")
    done
    if [[ -n "$top" ]]; then echo "$top" >>"$JOURNALD_REG/created"; fi
}

# journal_probe: write a unique entry through the native protocol (as
# sd_journal_sendv does) and read it back with journalctl.
journal_probe() {
    local token since i
    token=$(</proc/sys/kernel/random/uuid)
    since=$(date +%s)
    printf 'MESSAGE=sileme testenv journal probe %s\nSILEME_TESTENV_PROBE=%s\n' "$token" "$token" |
        logger --journald || return 1
    for ((i = 0; i < 50; i++)); do
        if journalctl -o json --no-pager --since "@$((since - 1))" "SILEME_TESTENV_PROBE=$token" 2>/dev/null |
            jq -e --arg t "$token" 'select(.SILEME_TESTENV_PROBE == $t)' >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# join_journald: register this STATE_DIR as a user of testenv's journald PID.
join_journald() {
    echo "$STATE" >"$JOURNALD_REG/users/$(user_key)"
    echo "$1" >"$STATE/pids/journald.pid"
}

# spawn_journald: start journald standalone; its pid in the registry.
spawn_journald() {
    # A registry left by a journald that is gone: keep its list of created paths.
    rm -rf "$JOURNALD_REG/users" "$JOURNALD_REG/pid"
    mkdir -p "$JOURNALD_REG/users"
    [[ -f "$JOURNALD_REG/created" ]] || echo "$JOURNALD_REG" >"$JOURNALD_REG/created"
    record_created "$JOURNAL_DIR"
    record_created "/run/log/journal/$(cat /etc/machine-id 2>/dev/null || echo none)"
    record_created "$JOURNALD_DROPIN_DIR"
    mkdir -p "$JOURNAL_DIR" "$JOURNALD_DROPIN_DIR"
    # Volatile: keep test entries out of /var/log/journal. No rate limit:
    # benchmarks log a lot. No kernel messages or forwarding: less noise.
    cat >"$JOURNALD_DROPIN" <<'EOF'
# Written by sileme-notifier scripts/testenv/testenv.sh; removed at once.
[Journal]
Storage=volatile
RateLimitIntervalSec=0
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
EOF
    spawn "$JOURNALD_REG/journald.log" "$JOURNALD_REG/pid" "$JOURNALD"
    local pid i
    pid=$(<"$JOURNALD_REG/pid")
    for ((i = 0; i < 100; i++)); do
        journal_alive && break
        alive "$pid" || break
        sleep 0.1
    done
    # journald has read its configuration by now: remove the drop-in at once,
    # so nothing of ours lingers in /run/systemd/journald.conf.d.
    rm -f "$JOURNALD_DROPIN"
    rmdir "$JOURNALD_DROPIN_DIR" 2>/dev/null || true
    if journal_alive; then
        join_journald "$pid"
    else
        log "warning: journald did not come up:"
        sed 's/^/    /' "$JOURNALD_REG/journald.log" >&2 || true
        release_journald_locked
        return 1
    fi
}

start_journald_locked() {
    local pid
    if pid=$(testenv_journald_pid); then
        log "journald: sharing the one testenv started (pid $pid)"
        join_journald "$pid"
    elif journal_alive; then
        log "journald: reusing the one already serving $JOURNAL_SOCKET (not ours, left alone)"
        touch "$STATE/journald.reused"
    elif [[ -x "$JOURNALD" ]]; then
        log "journald: starting $JOURNALD standalone"
        spawn_journald || return 0
    else
        log "warning: no journald running and $JOURNALD missing: journal tests disabled"
        return 0
    fi
    if journal_probe; then
        log "journald: probe entry written and read back"
        JOURNAL_OK=1
    else
        log "warning: journald probe entry not found with journalctl: journal tests disabled"
        release_journald_locked
    fi
}

# release_journald_locked: this STATE_DIR stops using the journald; the last
# user stops it and removes what was created for it.
release_journald_locked() {
    rm -f "$STATE/journald.reused" "$STATE/pids/journald.pid" "$JOURNALD_REG/users/$(user_key)"
    [[ -d "$JOURNALD_REG" ]] || return 0
    # Forget users whose STATE_DIR was deleted without `stop`.
    local f user users=0 pid path
    for f in "$JOURNALD_REG"/users/*; do
        [[ -f "$f" ]] || continue
        user=$(<"$f")
        if [[ -f "$user/pids/journald.pid" ]]; then users=$((users + 1)); else rm -f "$f"; fi
    done
    if ((users > 0)); then
        log "journald: still used by $users other STATE_DIR(s), left running"
        return 0
    fi
    if pid=$(testenv_journald_pid); then
        log "stopping journald (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        wait_gone "$pid" 10 || { kill -KILL "$pid" 2>/dev/null || true; wait_gone "$pid" 5 || true; }
    fi
    if journal_alive; then
        # Some other journald serves the socket now: its /run paths are not ours.
        log "journald: the journal socket is served by another journald, /run left as it is"
    elif [[ -f "$JOURNALD_REG/created" ]]; then
        # Most recent first; never anything outside /run, whatever the file says.
        tac "$JOURNALD_REG/created" | while read -r path; do
            if [[ "$path" == /run/?* && "$path" != *..* ]]; then rm -rf -- "$path"; fi
        done
    fi
    rm -rf "$JOURNALD_REG"
}

start_journald() { with_journald_lock start_journald_locked; }
stop_journald() { with_journald_lock release_journald_locked; }

# --- env.sh -----------------------------------------------------------------

write_env() {
    local pg_port=$1 starttls_port=$2 tls_port=$3 plain_port=$4 env=$STATE/env.sh
    {
        echo "# Written by scripts/testenv/testenv.sh start; source it before the integration tests."
        printf 'export %s=%q\n' \
            SILEME_TEST_DATABASE_URL "postgresql://postgres@127.0.0.1:$pg_port/postgres" \
            SILEME_TEST_PG_BIN "$PG_BIN" \
            SILEME_TEST_PG_PORT "$pg_port" \
            SILEME_TEST_SMTP_HOST 127.0.0.1 \
            SILEME_TEST_SMTP_STARTTLS_PORT "$starttls_port" \
            SILEME_TEST_SMTP_TLS_PORT "$tls_port" \
            SILEME_TEST_SMTP_PLAIN_PORT "$plain_port" \
            SILEME_TEST_SMTP_USER "$SMTP_USER" \
            SILEME_TEST_SMTP_PASSWORD "$SMTP_PASSWORD" \
            SILEME_TEST_SMTP_CA "$STATE/tls/cert.pem" \
            SILEME_TEST_MAILDIR "$STATE/maildir" \
            SILEME_TEST_STATE_DIR "$STATE"
        if [[ "$JOURNAL_OK" == 1 ]]; then printf 'export SILEME_TEST_JOURNAL=1\n'; fi
    } >"$env.tmp"
    mv "$env.tmp" "$env"
}

# --- subcommands ------------------------------------------------------------

cmd_start() {
    [[ $EUID -eq 0 ]] || die "must run as root"
    local f
    for f in "$STATE"/pids/*.pid; do
        if [[ -f "$f" ]] && alive "$(<"$f")"; then die "$STATE is already started (run stop first)"; fi
    done
    # Stale files of an earlier run in the same STATE_DIR: clean them first.
    cmd_stop 2>/dev/null
    rm -rf "$STATE/pg" "$STATE/tls" "$STATE/maildir" "$STATE/pids" "$STATE/env.sh"

    mkdir -p "$STATE" "$STATE/pids" "$STATE/logs" "$STATE/maildir"
    chmod a+x "$STATE" # the postgres user must traverse it
    JOURNAL_OK=0

    # If anything below fails or we are interrupted, stop what was already started.
    trap 'rc=$?; if ((rc != 0)); then log "start failed, stopping what was started"; cmd_stop; fi' EXIT
    trap 'exit 130' INT TERM HUP

    local ports pg_port starttls_port tls_port plain_port
    ports=$(free_ports 4)
    read -r pg_port starttls_port tls_port plain_port <<<"$ports"

    make_certificate
    start_postgres "$pg_port"
    start_smtp starttls "$starttls_port"
    start_smtp tls "$tls_port"
    start_smtp plain "$plain_port"
    local mode port
    for mode in "${SMTP_MODES[@]}"; do
        case $mode in starttls) port=$starttls_port ;; tls) port=$tls_port ;; plain) port=$plain_port ;; esac
        smtp_probe "$mode" "$port" "$(<"$STATE/pids/smtp-$mode.pid")" ||
            { tail -20 "$STATE/logs/smtp-$mode.log" >&2; die "SMTP server ($mode) not working"; }
    done
    start_journald || true
    write_env "$pg_port" "$starttls_port" "$tls_port" "$plain_port"
    trap - EXIT INT TERM HUP
    log "ready: . $STATE/env.sh"
}

cmd_stop() {
    [[ -d "$STATE" ]] || return 0
    local mode
    for mode in "${SMTP_MODES[@]}"; do
        stop_pidfile "$STATE/pids/smtp-$mode.pid" "--maildir $STATE/maildir"
    done
    stop_postgres
    stop_journald || log "warning: journald left as it is"
    rm -f "$STATE/env.sh"
}

cmd_status() {
    [[ -d "$STATE" ]] || { echo "$STATE: not started"; return 3; }
    local all=0 f name pid
    shopt -s nullglob
    local pidfiles=("$STATE"/pids/*.pid)
    ((${#pidfiles[@]} > 0)) || { echo "$STATE: nothing running"; return 3; }
    for f in "${pidfiles[@]}"; do
        name=$(basename "$f" .pid)
        pid=$(<"$f")
        if alive "$pid"; then
            printf '%-14s pid %-8s running\n' "$name" "$pid"
        else
            printf '%-14s pid %-8s NOT RUNNING\n' "$name" "$pid"
            all=3
        fi
    done
    if [[ -f "$STATE/journald.reused" ]]; then
        printf '%-14s %s\n' journald "reused (not started by testenv)"
    elif [[ -f "$STATE/pids/journald.pid" ]]; then
        printf '%-14s %s\n' journald "started by testenv, shared by $(find "$JOURNALD_REG/users" -type f 2>/dev/null | wc -l) STATE_DIR(s)"
    fi
    if [[ -f "$STATE/env.sh" ]]; then
        (
            # shellcheck disable=SC1091
            . "$STATE/env.sh"
            if "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$SILEME_TEST_PG_PORT" -t 2; then
                echo "postgres       accepting on 127.0.0.1:$SILEME_TEST_PG_PORT"
            else
                echo "postgres       NOT accepting on 127.0.0.1:$SILEME_TEST_PG_PORT"
            fi
            echo "smtp           starttls :$SILEME_TEST_SMTP_STARTTLS_PORT  tls :$SILEME_TEST_SMTP_TLS_PORT  plain :$SILEME_TEST_SMTP_PLAIN_PORT"
            if [[ "${SILEME_TEST_JOURNAL:-}" == 1 ]]; then
                echo "journal        usable (SILEME_TEST_JOURNAL=1)"
            else
                echo "journal        not usable"
            fi
        )
    else
        echo "env.sh         missing"
        all=3
    fi
    return $all
}

main() {
    (($# == 2)) || usage
    local cmd=$1
    [[ -n "$2" ]] || usage
    STATE=$(realpath -m -- "$2")
    [[ "$STATE" =~ ^/[A-Za-z0-9._+@/-]+$ && "$STATE" != / ]] ||
        die "STATE_DIR must be a plain path (letters, digits, . _ + @ / -): $STATE"
    [[ ! -e "$STATE" || -d "$STATE" ]] || die "$STATE exists and is not a directory"
    case $cmd in
        start) cmd_start ;;
        stop) cmd_stop ;;
        status) cmd_status ;;
        *) usage ;;
    esac
}

main "$@"
