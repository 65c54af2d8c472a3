#!/usr/bin/env bash
# Regenerates the Postfix DSNs of the bounce corpus (Tests/SilemeNotifierTests/Fixtures/bounces/postfix-*.eml)
# with a real, private Postfix acting as the relay a real service sends through:
#
#   scripts/bounces/postfix-dsn.sh [OUTPUT_DIR]     (as root; default: the fixtures folder)
#
# What happens, as in production: a message is submitted over SMTP with a VERP envelope
# sender (bounces+TAG@notify.sileme.test); Postfix answers 250, then relays it to the contact's
# domain, which transport_maps routes to a local SMTP server (scripts/testenv/smtp_server.py)
# answering 550 (gone.example) or 451 (slow.example). Postfix's bounce(8) then writes its RFC 3464
# report to the envelope sender, which this same Postfix delivers with virtual(8) into a Maildir
# (recipient_delimiter = +, so bounces+TAG@ lands in bounces' Maildir with X-Original-To and
# Delivered-To kept). The reports are copied out, one per case:
#   postfix-permanent-550.eml    5.1.1, Action: failed, the returned message in full
#   postfix-permanent-headers.eml  the same with DSN RET=HDRS (only text/rfc822-headers returned)
#   postfix-delayed-451.eml      a delay warning (Action: delayed, 4.3.0), delay_warning_time = 1s
#
# The instance is private: its own config and queue in a temporary directory, `postfix -c DIR`,
# listening on 127.0.0.1 only, on free ports; the system's Postfix (port 25) is never used or
# started. Needs Debian's postfix (no system instance needs to run: see scripts/install-deps.sh's
# note) and python3-aiosmtpd.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/Tests/SilemeNotifierTests/Fixtures/bounces}
command -v /usr/sbin/postfix >/dev/null || { echo "postfix-dsn.sh: needs Debian's postfix (apt-get install postfix)" >&2; exit 1; }
/usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null || { echo "postfix-dsn.sh: needs python3-aiosmtpd" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "postfix-dsn.sh: run as root (Postfix's master starts as root)" >&2; exit 1; }

work=$(mktemp -d /tmp/postfix-dsn.XXXXXX)
chmod 755 "$work"
conf=$work/etc
mkdir -p "$conf" "$work/mail" "$work/sink" "$work/queue" "$work/data"
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
relay_port=$(free_port)
sink_port=$(free_port)
vuid=$(id -u nobody); vgid=$(id -g nobody)
chown "$vuid:$vgid" "$work/mail"
chown postfix "$work/data"

sink_pid=
cleanup() {
  /usr/sbin/postfix -c "$conf" stop >/dev/null 2>&1 || true
  [ -n "$sink_pid" ] && kill "$sink_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

cat >"$conf/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $work/queue
data_directory = $work/data
maillog_file = $work/maillog
maillog_file_prefixes = $work
mail_owner = postfix
setgid_group = postdrop
myhostname = relay.sileme.test
mydomain = sileme.test
myorigin = \$myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
smtpd_tls_security_level = none
smtp_tls_security_level = none
smtp_dns_support_level = disabled
disable_dns_lookups = yes
recipient_delimiter = +
# The bounce address's domain: delivered here into Maildirs (a trailing / in the map).
virtual_mailbox_domains = notify.sileme.test
virtual_mailbox_base = $work/mail
virtual_mailbox_maps = texthash:$conf/vmailbox
virtual_uid_maps = static:$vuid
virtual_gid_maps = static:$vgid
# The contacts' domains: relayed to the local sink, which refuses them.
transport_maps = texthash:$conf/transport
# Retry fast, warn of a delay at once, give up on the deferred one after a minute.
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
delay_warning_time = 1s
maximal_queue_lifetime = 1h
bounce_queue_lifetime = 1h
notify_classes =
EOF
cat >"$conf/master.cf" <<EOF
127.0.0.1:$relay_port inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
virtual   unix  -       n       n       -       -       virtual
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
EOF
echo "bounces@notify.sileme.test bounces/" >"$conf/vmailbox"
printf 'gone.example smtp:[127.0.0.1]:%s\nslow.example smtp:[127.0.0.1]:%s\n' "$sink_port" "$sink_port" >"$conf/transport"

/usr/bin/python3 "$repo/scripts/testenv/smtp_server.py" --host 127.0.0.1 --port "$sink_port" --mode plain \
  --maildir "$work/sink" --pidfile "$work/sink.pid" >"$work/sink.log" 2>&1 &
sink_pid=$!
for _ in $(seq 50); do [ -s "$work/sink.pid" ] && break; sleep 0.1; done

/usr/sbin/postfix -c "$conf" check || { cat "$work/maillog" >&2 2>/dev/null; exit 1; }
/usr/sbin/postfix -c "$conf" start
for _ in $(seq 50); do /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $relay_port), 1)" 2>/dev/null && break; sleep 0.2; done

# submit TAG RECIPIENT RET: one message as the notifier writes one, through the relay over SMTP.
submit() {
  /usr/bin/python3 - "$relay_port" "$1" "$2" "$3" <<'PY'
import smtplib, sys
port, tag, rcpt, ret = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
message = (
    "From: =?UTF-8?B?5LqG5LmI6YCa55+l?= <noreply@notify.sileme.test>\r\n"
    f"To: {rcpt}\r\n"
    "Subject: =?UTF-8?B?W+S6huS5iF0g546L5bCP5piO5bey57uPIDMg5aSp5rKh5pyJ562+5Yiw?=\r\n"
    "Date: Fri, 27 Nov 2026 10:00:00 +0000\r\n"
    f"Message-ID: <{tag}.alert@notify.sileme.test>\r\n"
    "MIME-Version: 1.0\r\n"
    "Content-Type: text/plain; charset=UTF-8\r\n"
    "Content-Transfer-Encoding: base64\r\n"
    "Auto-Submitted: auto-generated\r\n"
    "\r\n"
    "546L5bCP5piO5bey57uPIDMg5aSp5rKh5pyJ562+5Yiw44CCCg==\r\n"
)
with smtplib.SMTP("127.0.0.1", port, local_hostname="notifier.sileme.test") as smtp:
    smtp.ehlo()
    options = ["RET=" + ret] if ret else []
    smtp.sendmail(f"bounces+{tag}@notify.sileme.test", [rcpt], message.encode(), mail_options=options,
                  rcpt_options=["NOTIFY=FAILURE,DELAY"] if ret else [])
PY
}

# wait_for COUNT: until the bounces Maildir holds COUNT messages (at most 60 s).
wait_for() {
  for _ in $(seq 300); do
    [ "$(find "$work/mail/bounces/new" -type f 2>/dev/null | wc -l)" -ge "$1" ] && return 0
    sleep 0.2
  done
  echo "postfix-dsn.sh: no report after 60 s; the log:" >&2; cat "$work/maillog" >&2; exit 1
}

# take NAME: the one new report, copied out under NAME (the tags are fixed, so reruns differ only
# in dates, queue ids and Postfix's boundary).
take() {
  local file
  file=$(find "$work/mail/bounces/new" -type f | head -1)
  cp "$file" "$out/$1"
  rm "$file"
  echo "wrote $out/$1"
}

mkdir -p "$out"
submit 7k3mq2xw9d8f1a perm550@gone.example ""
wait_for 1; take postfix-permanent-550.eml
submit 4hb2n6t0c1p9vz perm550@gone.example HDRS
wait_for 1; take postfix-permanent-headers.eml
submit 9x1c5r8m2k7q3e temp451always@slow.example ""
wait_for 1; take postfix-delayed-451.eml
/usr/sbin/postsuper -c "$conf" -d ALL >/dev/null 2>&1 || true
