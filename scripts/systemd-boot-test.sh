#!/usr/bin/env bash
# systemd-boot-test.sh — the shipped systemd/sileme-notifier.service under a real systemd (252).
#
# Boots /lib/systemd/systemd as PID 1 of new PID, mount, UTS, IPC and cgroup namespaces (the
# recipe for booting a whole systemd in a private PID namespace, plus more isolation: private /dev, copy-on-write
# /etc and /usr/local, read-only /sys and /proc/sys, the test's own cgroup subtree; see
# scripts/systemd-boot-test/ns-init.sh), with every unit enabled on this machine and every static
# unit that would touch the kernel, devices, clock or terminals masked. It installs the daemon in
# it the way the unit's header says (binary in /usr/local/bin, migrations in
# /usr/local/share/sileme-notifier, the user from the shipped sysusers file, /etc/sileme-notifier
# with notifier.conf, the CA and the two secrets, the unit in /etc/systemd/system, enabled), adds
# one drop-in, /run/systemd/system/sileme-notifier.service.d/50-boot-test.conf, that changes
# WatchdogSec=60 to 4s and nothing else, starts it and checks:
#   1 readiness (Type=notify, `systemctl start` returns 0, active/running)   2 StatusText "next run"
#   3 the catch-up run's mail reaches the SMTP server   4 watchdog pings (NRestarts=0 after 10 s)
#   5 journal fields (run_finished, SYSLOG_IDENTIFIER)   6 reload of an edited notifier.conf
#   7 stop (exit 0, Result=success)
# The network is shared: the daemon reaches the test servers on 127.0.0.1 over TCP.
#
# Usage (as root; scripts/test.sh sets these from scripts/testenv/testenv.sh):
#   SILEME_TEST_DATABASE_URL     superuser URI of a PostgreSQL on 127.0.0.1 (a database
#                                sn_boot_<random> is created there and dropped at the end)
#   SILEME_TEST_PG_PORT          its port
#   SILEME_TEST_SMTP_STARTTLS_PORT, SILEME_TEST_SMTP_USER, SILEME_TEST_SMTP_PASSWORD,
#   SILEME_TEST_SMTP_CA          the STARTTLS test server, its AUTH and its certificate
#   SILEME_TEST_MAILDIR          where it records accepted mail (deliveries.jsonl)
#   SILEME_BIN                   optional: the executable (default .build/debug/sileme-notifier);
#                                migrations from the resource bundle beside it, or MIGRATIONS_DIR
#   SILEME_BOOT_HOLD=SECONDS     optional, for debugging: keep the namespace that long before
#                                cleaning up (nsenter -t PID -p -m journalctl ...; PID is printed)
#
#   scripts/systemd-boot-test.sh
#
# Prints one PASS:/FAIL: line per check and the timings; exits 0 only if every check passed
# (1: a check failed, 2: it could not run). Bounded: every wait has a timeout; a run takes ~15 s
# and at most two minutes. Nothing is kept outside /var/lib/sileme-boot-test.XXXXXX (the
# namespace replaces /tmp, /var/tmp and /run). On every exit path it powers the namespaced
# systemd off (SIGKILL of the namespace as a fallback), removes its cgroups, drops the database
# and removes the state directory; if this script is killed outright, the namespace dies with it
# (parent-death signal) and the next run removes the other leftovers.
set -euo pipefail

readonly REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly NS_INIT=$REPO/scripts/systemd-boot-test/ns-init.sh
readonly NS_STATE_PREFIX=sileme-boot-test
readonly NS_OWNER=systemd-boot-test.sh
readonly UNIT=sileme-notifier.service
readonly PY=/usr/bin/python3 # Debian's
readonly ZONE=Asia/Shanghai
readonly WATCHDOG_SEC=4
# Seconds for everything up to the cleanup (which takes at most ~45 s more, normally 1 s).
readonly BUDGET=70
readonly START=$SECONDS

# wait_until, cap, ns/nst, the cgroups, the masks, boot_namespace and the cleanup helpers.
# shellcheck source=systemd-boot-test/namespace.sh
. "$REPO/scripts/systemd-boot-test/namespace.sh"


# --- preconditions -------------------------------------------------------------------------

require_test_env systemd-sysusers
BIN=${SILEME_BIN:-$REPO/.build/debug/sileme-notifier}
[[ -x "$BIN" ]] || die "$BIN not found (swift build, or set SILEME_BIN)"
MIGRATIONS=${MIGRATIONS_DIR:-$(dirname "$BIN")/sileme-notifier_Store.resources/Migrations}
[[ -f "$MIGRATIONS/001_app_tables.sql" ]] || die "no migrations in $MIGRATIONS (set MIGRATIONS_DIR)"
[[ -r "$SILEME_TEST_SMTP_CA" ]] || die "$SILEME_TEST_SMTP_CA not readable"
[[ -f "$NS_INIT" ]] || die "$NS_INIT missing"

# --- state and cleanup -----------------------------------------------------------------------

RUN_ID=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
DB=sn_boot_$RUN_ID
DOMAIN=sn-boot-$RUN_ID.example.com
STATE=""
DB_CREATED=0
UNSHARE_PID=""
NS_PID=""
CG_DIRS=()


cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    if [[ -n "${SILEME_BOOT_HOLD:-}" && -n "$NS_PID" ]] && alive "$NS_PID"; then
        log "holding the namespace for $SILEME_BOOT_HOLD s: nsenter -t $NS_PID -p -m bash"
        sleep "$SILEME_BOOT_HOLD"
    fi
    stop_namespace
    remove_cgroups "${CG_DIRS[@]}"
    if ((DB_CREATED)); then drop_database "$DB" || log "warning: could not drop database $DB"; fi
    if [[ -n "$STATE" && -d "$STATE" ]]; then remove_state "$STATE"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

reap_stale_runs
STATE=$(mktemp -d -p /var/lib sileme-boot-test.XXXXXX)
mkdir -p "$STATE/ns" "$STATE/install"
echo "$$" >"$STATE/owner"
echo "$DB" >"$STATE/database"

# --- database ------------------------------------------------------------------------------------

psql_admin() { timeout 20 "$PSQL" "$SILEME_TEST_DATABASE_URL" -qAtX -v ON_ERROR_STOP=1 "$@"; }
DB_URL=$("$PY" -c 'import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' \
    "$SILEME_TEST_DATABASE_URL" "$DB")
psql_db() { timeout 20 "$PSQL" "$DB_URL" -qAtX -v ON_ERROR_STOP=1 "$@"; }

# A snapshot of the executable (the build directory may be rebuilt meanwhile), used throughout.
inst=$STATE/install
install -m 0755 "$BIN" "$inst/sileme-notifier"
mkdir -p "$inst/migrations"
cp "$MIGRATIONS"/*.sql "$inst/migrations/"

psql_admin -c "CREATE DATABASE $DB" >/dev/null
DB_CREATED=1
env -u SILEME_CONFIG DATABASE_URL="$DB_URL" MIGRATIONS_DIR="$inst/migrations" \
    timeout 30 "$inst/sileme-notifier" migrate >"$STATE/migrate.log" 2>&1 ||
    { cat "$STATE/migrate.log" >&2; die "sileme-notifier migrate failed"; }

# The daily time: a few seconds ago in the zone, so the daemon's catch-up runs at once; its date
# D is the run date (= today in the zone, except in the seconds around midnight, where D keeps
# the user due), and the user's last check-in D - 3 makes two missed days: due.
fire_epoch=$(($(date +%s) - 5))
NOTIFY_TIME=$(TZ=$ZONE date -d "@$fire_epoch" +%H:%M:%S)
RUN_DATE=$(TZ=$ZONE date -d "@$fire_epoch" +%F)
USER_ID=$(psql_db -c "
    WITH u AS (INSERT INTO users (name, emergency_email) VALUES ('开机测试', 'contact@$DOMAIN') RETURNING id),
         c AS (INSERT INTO check_ins (user_id, check_in_date) SELECT id, DATE '$RUN_DATE' - 3 FROM u)
    SELECT id FROM u")

# --- what gets installed in the namespace ------------------------------------------------------

# A snapshot: the repository's files may change while the test runs.
cp "$REPO/systemd/sileme-notifier.service" "$REPO/systemd/sileme-notifier.sysusers" "$inst/"
cp "$SILEME_TEST_SMTP_CA" "$inst/smtp-ca.pem"
printf '%s' "$SILEME_TEST_SMTP_PASSWORD" >"$inst/smtp-password"
printf '%s' "$DB_URL" >"$inst/database-url"
chmod 0600 "$inst/smtp-password" "$inst/database-url"
cat >"$inst/notifier.conf" <<EOF
# Written by scripts/systemd-boot-test.sh. The secrets come from the LoadCredential= files.
SMTP_HOST=${SILEME_TEST_SMTP_HOST:-127.0.0.1}
SMTP_PORT=$SILEME_TEST_SMTP_STARTTLS_PORT
SMTP_TLS=starttls
SMTP_USER=$SILEME_TEST_SMTP_USER
SMTP_CA_FILE=/etc/sileme-notifier/smtp-ca.pem
SMTP_TIMEOUT_SECONDS=10
FROM_EMAIL=noreply@sileme.app
NOTIFY_TIME=$NOTIFY_TIME
NOTIFY_TIME_ZONE=$ZONE
EOF
# The only change to the shipped unit: a short watchdog, so that it is exercised in seconds.
cat >"$inst/50-boot-test.conf" <<EOF
# scripts/systemd-boot-test.sh: exercise the watchdog within seconds (the unit says 60).
[Service]
WatchdogSec=${WATCHDOG_SEC}s
EOF

# --- units that must not start in the namespace ---------------------------------------------------
# Everything enabled on this machine (it is not ours to start: the Debian PostgreSQL cluster, apt
# timers, ...), SysV scripts of the runlevels, and the static units of sysinit/basic/multi-user
# that would touch the kernel, devices, the clock, terminals or the real /var. And the daemon's own
# units, in case this machine has them installed: nothing of a real installation may run in the
# namespace (it would mail real people); the install step below unmasks sileme-notifier.service
# only, after replacing its files with the test's (write_masks: systemd-boot-test/namespace.sh).
write_masks

# (setup_cgroups: scripts/systemd-boot-test/namespace.sh)
setup_cgroups || die "cannot create the test's cgroups under /sys/fs/cgroup"

# --- boot ------------------------------------------------------------------------------------------

log "state $STATE, database $DB, run date $RUN_DATE, NOTIFY_TIME $NOTIFY_TIME $ZONE"
boot_namespace

# --- install, as the unit's header says -------------------------------------------------------------

ns /bin/bash -euo pipefail -s -- "$inst" >"$STATE/install.log" 2>&1 <<'EOF' ||
src=$1
for dir in /etc /usr/local; do
    [[ $(findmnt -n -o FSTYPE --target "$dir") == overlay ]] ||
        { echo "refusing to install: $dir is not the test's overlay" >&2; exit 1; }
done
# Whatever this machine may have of a real installation is hidden (whiteouts in the overlay).
rm -rf /etc/sileme-notifier /etc/systemd/system/sileme-notifier.service.d \
    /usr/local/lib/systemd/system/sileme-notifier.service.d
rm -f /run/systemd/system.control/sileme-notifier.service
install -m 0755 "$src/sileme-notifier" /usr/local/bin/
install -d /usr/local/share/sileme-notifier/migrations
install -m 0644 "$src"/migrations/*.sql /usr/local/share/sileme-notifier/migrations/
install -D -m 0644 "$src/sileme-notifier.sysusers" /usr/local/lib/sysusers.d/sileme-notifier.conf
systemd-sysusers /usr/local/lib/sysusers.d/sileme-notifier.conf
install -d -m 0750 -g sileme-notifier /etc/sileme-notifier
install -m 0640 -g sileme-notifier "$src/notifier.conf" /etc/sileme-notifier/notifier.conf
install -m 0640 -g sileme-notifier "$src/smtp-ca.pem" /etc/sileme-notifier/smtp-ca.pem
install -m 0600 "$src/smtp-password" /etc/sileme-notifier/smtp-password
install -m 0600 "$src/database-url" /etc/sileme-notifier/database-url
install -m 0644 "$src/sileme-notifier.service" /etc/systemd/system/
install -D -m 0644 "$src/50-boot-test.conf" /run/systemd/system/sileme-notifier.service.d/50-boot-test.conf
# enable (WantedBy=multi-user.target, the README's `enable --now`) also keeps the unit loaded once
# stopped, so that `systemctl show` still reports how it ended instead of a garbage-collected unit.
systemctl daemon-reload
systemctl enable sileme-notifier.service 2>&1
getent passwd sileme-notifier
EOF
    { sed 's/^/    /' "$STATE/install.log" >&2; boot_failed "installing the daemon in the namespace failed"; }
info "installed: $(tail -n1 "$STATE/install.log")"
info "unit: systemd/sileme-notifier.service as shipped (sha256 $(sha256sum <"$inst/sileme-notifier.service" | cut -c1-12)), enabled; drop-in: $(grep -v '^#' "$inst/50-boot-test.conf" | tr '\n' ' ')"

# --- helpers for the checks --------------------------------------------------------------------------

prop() { nst 10 systemctl show --property="$1" --value "$UNIT" 2>/dev/null; }
journal_json() { nst 15 journalctl -u "$UNIT" -o json --no-pager 2>/dev/null; }

# journal_has FIELD=VALUE... : an entry of the unit has all these fields (MESSAGE~TEXT: contains).
journal_has() {
    journal_json | "$PY" -c '
import json, sys
conds = sys.argv[1:]
def val(e, k):
    v = e.get(k)
    if isinstance(v, list) and v and all(isinstance(x, int) for x in v):
        v = bytes(v).decode("utf-8", "replace")
    return v if isinstance(v, str) else ("" if v is None else str(v))
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    ok = True
    for c in conds:
        if "~" in c and "=" not in c.split("~")[0]:
            k, t = c.split("~", 1); ok = ok and t in val(e, k)
        else:
            k, t = c.split("=", 1); ok = ok and val(e, k) == t
    if ok:
        print(" ".join("%s=%s" % (k, val(e, k)) for k in ("NOTIFIER_EVENT", "RUN_DATE", "DUE", "SENT", "FAILED", "EXIT_STATUS", "MESSAGE") if k in e))
        sys.exit(0)
sys.exit(1)' "$@"
}

show_unit_log() {
    log "journal of $UNIT in the namespace (last 25 lines):"
    nst 10 journalctl -u "$UNIT" -n 25 --no-pager -o short-monotonic 2>&1 | sed 's/^/    /' >&2 || true
}

mail_line=""
mail_arrived() {
    mail_line=$("$PY" - "$SILEME_TEST_MAILDIR/deliveries.jsonl" "$DOMAIN" <<'EOF'
import json, sys
try:
    lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
except FileNotFoundError:
    sys.exit(1)
for line in lines:
    try: d = json.loads(line)
    except ValueError: continue
    if any(r.lower().endswith("@" + sys.argv[2]) for r in d.get("rcpt_tos", [])):
        print("from %s to %s, tls=%s auth=%s, %s bytes" % (d.get("mail_from"), ",".join(d["rcpt_tos"]), d.get("tls"), d.get("auth_user"), d.get("size")))
        sys.exit(0)
sys.exit(1)
EOF
    )
}

# --- 1. start: Type=notify readiness, active/running ---------------------------------------------------

start_t0=$(now_ms)
start_rc=0
nst "$(cap 20)" systemctl start "$UNIT" >"$STATE/start.log" 2>&1 || start_rc=$?
start_ms=$(ms_since "$start_t0")
is_running() { [[ "$(prop ActiveState)/$(prop SubState)" == active/running ]]; }
wait_until 20 is_running || true
active=$(prop ActiveState)/$(prop SubState)
svc_type=$(prop Type)
fragment=$(prop FragmentPath)
dropins=$(prop DropInPaths)
if ((start_rc == 0)) && [[ "$active" == active/running && "$svc_type" == notify &&
    "$fragment" == /etc/systemd/system/$UNIT && "$dropins" == "/run/systemd/system/$UNIT.d/50-boot-test.conf" ]]; then
    pass "1 start: systemctl start returned 0 after READY=1 (Type=$svc_type), $active; $fragment + $dropins"
else
    fail "1 start: systemctl start rc=$start_rc ($(tr '\n' ' ' <"$STATE/start.log")), Type=$svc_type, state $active, result $(prop Result); unit $fragment, drop-ins: $dropins"
    show_unit_log
    exit 1
fi
MAIN_PID=$(prop MainPID)
exec_start_us=$(prop ExecMainStartTimestampMonotonic)
active_enter_us=$(prop ActiveEnterTimestampMonotonic)
ready_ms=$(((${active_enter_us:-0} - ${exec_start_us:-0}) / 1000))
info "readiness latency: systemctl start took $(secs "$start_ms"); exec to READY=1 $(secs "$ready_ms")"

# --- 3. the due mail, from the catch-up run --------------------------------------------------------------

mail_t0=$(now_ms)
mail_ms=""
if wait_until 20 mail_arrived; then
    mail_ms=$(ms_since "$start_t0")
    pass "3 mail: the due user's mail reached the SMTP server $(secs "$mail_ms") after systemctl start ($mail_line)"
else
    fail "3 mail: nothing for @$DOMAIN in $SILEME_TEST_MAILDIR/deliveries.jsonl after $(secs "$(ms_since "$mail_t0")")"
    show_unit_log
fi

# --- 2. status text -----------------------------------------------------------------------------------------

status=""
has_next_run() { status=$(prop StatusText); [[ "$status" == *"next run"* && "$status" != *"running for"* ]]; }
if wait_until 10 has_next_run; then
    pass "2 status: StatusText=\"$status\""
else
    fail "2 status: StatusText=\"$status\" has no \"next run\""
fi

# --- 4. watchdog ------------------------------------------------------------------------------------------------

wd_usec=$(prop WatchdogUSec)
mono_us() { "$PY" -c 'import time; print(int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6))'; }
wd_first=$(prop WatchdogTimestampMonotonic)
sleep "$(cap 10)"
wd_last=$(prop WatchdogTimestampMonotonic)
wd_first=${wd_first:-0} wd_last=${wd_last:-0}
wd_age_ms=$((($(mono_us) - wd_last) / 1000))
restarts=$(prop NRestarts)
active=$(prop ActiveState)/$(prop SubState)
pid_now=$(prop MainPID)
if [[ "$wd_usec" == "${WATCHDOG_SEC}s" && "$restarts" == 0 && "$active" == active/running && "$pid_now" == "$MAIN_PID" ]] &&
    ((wd_last > wd_first && wd_age_ms < WATCHDOG_SEC * 1000)); then
    pass "4 watchdog: WatchdogUSec=$wd_usec, 10 s later NRestarts=0, $active, same MainPID; last WATCHDOG=1 ${wd_age_ms} ms ago"
else
    fail "4 watchdog: WatchdogUSec=$wd_usec NRestarts=$restarts $active MainPID $MAIN_PID->$pid_now, last ping ${wd_age_ms} ms ago (first $wd_first, last $wd_last)"
    show_unit_log
fi
rss=$(nst 5 awk '/^(VmRSS|VmHWM):/ {printf "%s %s %s  ", $1, $2, $3}' "/proc/$MAIN_PID/status" 2>/dev/null || true)
info "memory of MainPID $MAIN_PID, settled (after the run and 10 s idle): ${rss:-unavailable}"

# --- 5. journal fields ---------------------------------------------------------------------------------------------

if entry=$(journal_has SYSLOG_IDENTIFIER=sileme-notifier NOTIFIER_EVENT=run_finished "RUN_DATE=$RUN_DATE"); then
    pass "5 journal: -u $UNIT has SYSLOG_IDENTIFIER=sileme-notifier $entry"
    sent_entry=$(journal_has NOTIFIER_EVENT=notification_sent "USER_ID=$USER_ID") &&
        info "and notification_sent for user $USER_ID"
else
    fail "5 journal: no run_finished entry with SYSLOG_IDENTIFIER=sileme-notifier for $RUN_DATE in journalctl -u $UNIT"
    show_unit_log
fi

# --- 6. reload: an edited notifier.conf takes effect without a restart -------------------------------------------

new_epoch=$((fire_epoch + 1))
new_time=$(TZ=$ZONE date -d "@$new_epoch" +%H:%M:%S)
if [[ "${new_time:6:2}" == 00 ]]; then new_shown=${new_time:0:5}; else new_shown=$new_time; fi
reload_ok=1
sed "s/^NOTIFY_TIME=.*/NOTIFY_TIME=$new_time/" "$inst/notifier.conf" >"$inst/notifier-edited.conf"
nst 10 install -m 0640 -g sileme-notifier "$inst/notifier-edited.conf" /etc/sileme-notifier/notifier.conf || reload_ok=0
reload_t0=$(now_ms)
reload_rc=0
nst "$(cap 15)" systemctl reload "$UNIT" >"$STATE/reload.log" 2>&1 || reload_rc=$?
reload_ms=$(ms_since "$reload_t0")
reloaded() { journal_has "MESSAGE~configuration reloaded" >/dev/null; }
new_status() { status=$(prop StatusText); [[ "$status" == *"next run"*"$new_shown"* ]]; }
wait_until 10 reloaded || reload_ok=0
wait_until 5 new_status || reload_ok=0
active=$(prop ActiveState)/$(prop SubState)
pid_now=$(prop MainPID)
if ((reload_ok && reload_rc == 0)) && [[ "$active" == active/running && "$pid_now" == "$MAIN_PID" ]]; then
    pass "6 reload: systemctl reload returned 0 in $(secs "$reload_ms"), \"configuration reloaded\" logged, same MainPID, $active, StatusText=\"$status\""
else
    fail "6 reload: rc=$reload_rc ($(tr '\n' ' ' <"$STATE/reload.log")), reloaded-in-journal=$(reloaded && echo yes || echo no), $active, MainPID $MAIN_PID->$pid_now, StatusText=\"$status\" (expected $new_shown)"
    show_unit_log
fi

# --- 7. stop ---------------------------------------------------------------------------------------------------------

stop_t0=$(now_ms)
stop_rc=0
nst "$(cap 25)" systemctl stop "$UNIT" >"$STATE/stop.log" 2>&1 || stop_rc=$?
stop_ms=$(ms_since "$stop_t0")
result=$(prop Result)
main_code=$(prop ExecMainCode)
main_status=$(prop ExecMainStatus)
active=$(prop ActiveState)
stopped_log=$(journal_has NOTIFIER_EVENT=daemon_stopped) || stopped_log=""
# ExecMainCode 1 = CLD_EXITED: it exited by itself (with ExecMainStatus), not killed by a signal.
if ((stop_rc == 0)) && [[ "$result" == success && "$main_code" == 1 && "$main_status" == 0 && "$active" == inactive && -n "$stopped_log" ]]; then
    pass "7 stop: systemctl stop returned 0 in $(secs "$stop_ms"), Result=success, exited with status 0 (ExecMainCode=1), $active; daemon logged \"daemon stopped\""
else
    fail "7 stop: rc=$stop_rc in $(secs "$stop_ms"), Result=$result ExecMainCode=$main_code ExecMainStatus=$main_status ActiveState=$active, daemon_stopped in journal: ${stopped_log:-no}"
    show_unit_log
fi

if ((FAILED == 0)); then
    # A clean run leaves no trace of trouble in the unit's journal either.
    if journal_has "MESSAGE~Watchdog timeout" >/dev/null; then
        fail "journal: systemd reported a watchdog timeout"
    fi
fi

# Anything that reached the journal through stdout/stderr or syslog(3) rather than the daemon's
# journal logger: messages of the libraries (libdispatch, libpq, libcurl).
stray=$(journal_json | "$PY" -c '
import collections, json, sys
seen = collections.Counter()
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("_TRANSPORT") in ("stdout", "syslog") and isinstance(e.get("MESSAGE"), str):
        seen[e["MESSAGE"].split(": pqc=")[0]] += 1
print("; ".join("%s (%dx)" % kv for kv in seen.items()))' 2>/dev/null || true)
[[ -n "$stray" ]] && info "logged by the daemon's libraries (stderr/syslog): $stray"

# --- summary -----------------------------------------------------------------------------------------------------------

printf 'timings: boot %s, systemctl start %s (exec->READY=1 %s), start->mail %s, reload %s, stop %s, total %d s before cleanup\n' \
    "$(secs "$boot_ms")" "$(secs "$start_ms")" "$(secs "$ready_ms")" "$([[ -n "$mail_ms" ]] && secs "$mail_ms" || echo n/a)" \
    "$(secs "$reload_ms")" "$(secs "$stop_ms")" $((SECONDS - START))
if ((FAILED == 0)); then
    printf 'systemd-boot-test: all %d checks passed\n' "$PASSED"
    exit 0
fi
printf 'systemd-boot-test: %d failed, %d passed\n' "$FAILED" "$PASSED"
exit 1
