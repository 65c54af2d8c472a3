#!/usr/bin/env bash
# The main job on a local default: installs what it needs, builds sileme-notifier, starts a
# throwaway PostgreSQL with sample users (the design doc's scenario among them) and a local SMTP
# sink, shows the dry-run report, runs `--run-now`, and prints the mails that were sent.
#
#   scripts/demo.sh           run it, then stop the servers
#   scripts/demo.sh --keep    leave the servers running (stop: scripts/testenv/testenv.sh stop /tmp/sileme-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
keep=false
[ "${1:-}" = "--keep" ] && keep=true

scripts/install-deps.sh
swift build
bin=.build/debug/sileme-notifier

state=/tmp/sileme-demo
scripts/testenv/testenv.sh stop "$state" >/dev/null 2>&1 || true
rm -rf "$state"
$keep || trap 'scripts/testenv/testenv.sh stop "$state" >/dev/null 2>&1 || true' EXIT
scripts/testenv/testenv.sh start "$state" 2>/dev/null
# shellcheck disable=SC1091
. "$state/env.sh"

psql -q "$SILEME_TEST_DATABASE_URL" -c "CREATE DATABASE sileme"
export DATABASE_URL="postgresql://postgres@127.0.0.1:$SILEME_TEST_PG_PORT/sileme"
export SMTP_HOST=localhost SMTP_PORT=$SILEME_TEST_SMTP_STARTTLS_PORT SMTP_TLS=starttls \
       SMTP_USER=$SILEME_TEST_SMTP_USER SMTP_PASSWORD=$SILEME_TEST_SMTP_PASSWORD SMTP_CA_FILE=$SILEME_TEST_SMTP_CA \
       FROM_EMAIL=noreply@sileme.app FROM_NAME=一键打卡团队 TEMPLATE_DIR=config/templates

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
step "sileme-notifier migrate"
$bin migrate
psql -q "$DATABASE_URL" -f config/sample-data.sql

step "sileme-notifier check"
$bin check

step "sileme-notifier --run-now --dry-run   (who would be mailed and why; writes nothing)"
$bin --run-now --dry-run

step "sileme-notifier --run-now"
status=0
$bin --run-now || status=$?
echo "exit status: $status"

step "Mails the local SMTP sink received ($SILEME_TEST_MAILDIR)"
/usr/bin/python3 - "$SILEME_TEST_MAILDIR" <<'PY'
import email, email.policy, json, os, sys
maildir = sys.argv[1]
with open(os.path.join(maildir, "deliveries.jsonl")) as f:
    for line in f:
        d = json.loads(line)
        if not d.get("file") or not d["rcpt_tos"][0].endswith("@example.com"):
            continue
        with open(os.path.join(maildir, d["file"]), "rb") as m:
            msg = email.message_from_bytes(m.read(), policy=email.policy.default)
        print("-" * 72)
        for h in ("From", "To", "Subject", "Date", "Message-ID"):
            print(f"{h}: {msg[h]}")
        print()
        print(msg.get_body(preferencelist=("plain",)).get_content().rstrip())
print("-" * 72)
PY

step "notification_logs"
psql "$DATABASE_URL" -c "SELECT u.name, l.notification_date, l.consecutive_miss_days AS m, l.status, l.email_sent, l.attempts, l.last_error
                         FROM notification_logs l JOIN users u ON u.id = l.user_id ORDER BY l.notification_date, u.name"
$keep && echo "servers left running; stop with: scripts/testenv/testenv.sh stop $state"
exit 0
