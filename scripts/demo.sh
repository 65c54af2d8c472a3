#!/usr/bin/env bash
# The main job on a local default: installs what it needs, builds sileme-notifier, starts a
# throwaway PostgreSQL with sample users (the design doc's scenario among them) and a local SMTP
# sink, shows the dry-run report, runs `--run-now`, and prints the mails that were sent.
#
#   scripts/demo.sh           run it, then stop the servers
#   scripts/demo.sh --keep    leave the servers running (stop: scripts/testenv/testenv.sh stop /tmp/sileme-demo)
#   scripts/demo.sh --outbox  write the mails as files into /tmp/sileme-demo/outbox/new (MAIL_TRANSPORT=outbox)
#                             instead of sending them to the SMTP sink
# SILEME_DEMO_STATE=DIR uses DIR instead of /tmp/sileme-demo.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=false
outbox=false
for arg in "$@"; do
  case "$arg" in
    --keep) keep=true ;;
    --outbox) outbox=true ;;
    *) echo "usage: scripts/demo.sh [--keep] [--outbox]" >&2; exit 64 ;;
  esac
done

scripts/install-deps.sh
swift build
bin=.build/debug/sileme-notifier

state=${SILEME_DEMO_STATE:-/tmp/sileme-demo}
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
if $outbox; then
  mkdir -p "$state/outbox"
  export MAIL_TRANSPORT=outbox OUTBOX_DIR="$state/outbox"
fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
step "sileme-notifier migrate"
$bin migrate
psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -f config/sample-data.sql

step "sileme-notifier check"
$bin check

step "sileme-notifier --run-now --dry-run   (who would be mailed and why; writes nothing)"
$bin --run-now --dry-run

step "sileme-notifier --run-now"
status=0
$bin --run-now || status=$?
echo "exit status: $status"

if $outbox; then step "Mails written to the outbox ($OUTBOX_DIR/new)"; else step "Mails the local SMTP sink received ($SILEME_TEST_MAILDIR)"; fi
/usr/bin/python3 - "$SILEME_TEST_MAILDIR" "${OUTBOX_DIR:-}" <<'PY'
import email, email.policy, json, os, sys
maildir, outbox = sys.argv[1], sys.argv[2]
if outbox:
    files = [os.path.join(outbox, "new", n) for n in sorted(os.listdir(os.path.join(outbox, "new")))]
else:
    files = []
    with open(os.path.join(maildir, "deliveries.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            if d.get("file") and d["rcpt_tos"][0].endswith("@example.com"):
                files.append(os.path.join(maildir, d["file"]))
for path in files:
    with open(path, "rb") as m:
        msg = email.message_from_bytes(m.read(), policy=email.policy.default)
    print("-" * 72)
    for h in ("From", "To", "Subject", "Date", "Message-ID"):
        print(f"{h}: {msg[h]}")
    print()
    print(msg.get_body(preferencelist=("plain",)).get_content().rstrip())
print("-" * 72)
PY

step "notification_logs"
psql "$DATABASE_URL" -c "SELECT u.name, l.notification_date, l.kind, l.consecutive_miss_days AS m, l.status, l.email_sent, l.attempts, l.last_error
                         FROM notification_logs l JOIN users u ON u.id = l.user_id ORDER BY l.notification_date, l.kind, u.name"
$keep && echo "servers left running; stop with: scripts/testenv/testenv.sh stop $state"
exit 0
