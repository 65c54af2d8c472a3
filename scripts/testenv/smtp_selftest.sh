#!/usr/bin/env bash
# smtp_selftest.sh — checks the SMTP test servers of testenv.sh with swaks.
#
#   smtp_selftest.sh STATE_DIR   use the environment `testenv.sh start STATE_DIR`
#                                brought up (reads STATE_DIR/env.sh)
#   smtp_selftest.sh             start a throw-away environment, check, stop it
#
# Sends through each mode (STARTTLS + AUTH LOGIN, implicit TLS + AUTH PLAIN,
# plain), checks that the servers refuse what they must (no STARTTLS, no AUTH,
# wrong password, STARTTLS on the plain server), and drives the failure
# injection (perm550, temp451once, temp451always, data554, slow1, a mixed
# envelope). Every outcome is checked three ways: swaks's exit code, the
# deliveries.jsonl / events.jsonl lines, and the stored .eml bytes.
# Prints one line per check; exits 1 if any failed.

set -euo pipefail

readonly SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly TESTENV="$SCRIPT_DIR/testenv.sh"

OWN_STATE=""
if (($# == 0)); then
    OWN_STATE=$(mktemp -d /tmp/sileme-selftest.XXXXXX)
    trap '"$TESTENV" stop "$OWN_STATE" || true; rm -rf "$OWN_STATE"' EXIT
    "$TESTENV" start "$OWN_STATE"
    STATE=$OWN_STATE
elif (($# == 1)); then
    STATE=$1
else
    sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
fi
[[ -f "$STATE/env.sh" ]] || { echo "selftest: $STATE/env.sh missing (run testenv.sh start first)" >&2; exit 1; }
# shellcheck disable=SC1091
. "$STATE/env.sh"

MD=$SILEME_TEST_MAILDIR
WORK=$(mktemp -d /tmp/sileme-selftest-work.XXXXXX)
if [[ -n "$OWN_STATE" ]]; then
    trap 'rm -rf "$WORK"; "$TESTENV" stop "$OWN_STATE" || true; rm -rf "$OWN_STATE"' EXIT
else
    trap 'rm -rf "$WORK"' EXIT
fi
RUN="$(date +%s)$$"   # makes every address unique to this run
FAILURES=0

pass() { printf 'ok    %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; FAILURES=$((FAILURES + 1)); }

# check DESCRIPTION ACTUAL EXPECTED
check() {
    if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi
}

addr() { printf '%s-%s@example.test' "$1" "$RUN"; }

# message NAME TO: writes $WORK/NAME.eml (the message, CRLF, with lines that
# start with a dot) and $WORK/NAME.wire (the same dot-stuffed, ending in the
# final "." — swaks --no-data-fixup sends it as is and adds the last CRLF).
message() {
    local name=$1 to=$2
    printf 'From: <selftest@example.test>\r\nTo: <%s>\r\nSubject: selftest %s\r\nMessage-ID: <%s.%s@selftest.example.test>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nline one\r\n.a line with a leading dot\r\n..two dots\r\nlast line\r\n' \
        "$to" "$name" "$name" "$RUN" >"$WORK/$name.eml"
    sed 's/^\./../' "$WORK/$name.eml" >"$WORK/$name.wire"
    printf '.' >>"$WORK/$name.wire"
}

# send NAME EXPECTED_RC PORT TO SWAKS_ARGS...: one swaks run, its exit code checked.
send() {
    local name=$1 expected=$2 port=$3 to=$4 rc=0
    shift 4
    [[ -f "$WORK/$name.wire" ]] || message "$name" "${to%%,*}"
    swaks --server "$SILEME_TEST_SMTP_HOST" --port "$port" --from selftest@example.test --to "$to" \
        --helo selftest.localhost --timeout 20 --no-data-fixup --data "@$WORK/$name.wire" "$@" \
        >"$WORK/$name.$expected.log" 2>&1 || rc=$?
    if [[ "$rc" == "$expected" ]]; then
        pass "$name: swaks exit $rc"
    else
        fail "$name: swaks exit $rc, expected $expected"
        sed 's/^/      | /' "$WORK/$name.$expected.log" | tail -15
    fi
}

# events ADDRESS: "rcpt:451 rcpt:250 data:250" for that address.
events() {
    jq -r --arg a "$1" 'select(.address == $a) | "\(.event):\(.code)"' "$MD/events.jsonl" | paste -sd' ' -
}

# delivery ADDRESS: the deliveries.jsonl lines that include ADDRESS.
delivery() {
    jq -c --arg a "$1" 'select(.rcpt_tos | index($a))' "$MD/deliveries.jsonl"
}

# check_delivered NAME ADDRESS MODE TLS AUTH_USER: exactly one delivery, with
# the right mode, TLS, AUTH user, Message-ID, and the .eml equal to the message.
check_delivered() {
    local name=$1 to=$2 mode=$3 tls=$4 user=$5 d file
    d=$(delivery "$to")
    check "$name: one delivery" "$(printf '%s' "$d" | grep -c . || true)" 1
    [[ -n "$d" ]] || return 0
    check "$name: mode/tls/auth_user" "$(jq -r '"\(.mode) \(.tls) \(.auth_user)"' <<<"$d")" "$mode $tls $user"
    check "$name: message_id" "$(jq -r .message_id <<<"$d")" "<$name.$RUN@selftest.example.test>"
    check "$name: mail_from" "$(jq -r .mail_from <<<"$d")" selftest@example.test
    file=$(jq -r .file <<<"$d")
    if cmp -s "$MD/$file" "$WORK/$name.eml"; then
        pass "$name: $file is the message, byte for byte"
    else
        fail "$name: $MD/$file differs from the message sent"
    fi
}

TLS_VERIFY=(--tls-verify --tls-ca-path "$SILEME_TEST_SMTP_CA")
AUTH=(--auth-user "$SILEME_TEST_SMTP_USER" --auth-password "$SILEME_TEST_SMTP_PASSWORD")
STARTTLS=$SILEME_TEST_SMTP_STARTTLS_PORT
SMTPS=$SILEME_TEST_SMTP_TLS_PORT
PLAIN=$SILEME_TEST_SMTP_PLAIN_PORT

echo "== delivery through each mode"
to=$(addr ok-starttls)
send ok-starttls 0 "$STARTTLS" "$to" --tls "${TLS_VERIFY[@]}" --auth LOGIN "${AUTH[@]}"
check_delivered ok-starttls "$to" starttls true sileme
check "ok-starttls: events" "$(events "$to")" "rcpt:250 data:250"

to=$(addr ok-tls)
send ok-tls 0 "$SMTPS" "$to" --tls-on-connect "${TLS_VERIFY[@]}" --auth PLAIN "${AUTH[@]}"
check_delivered ok-tls "$to" tls true sileme

to=$(addr ok-plain)
send ok-plain 0 "$PLAIN" "$to"
check_delivered ok-plain "$to" plain false null

echo "== refusals"
to=$(addr refused)
send no-starttls 23 "$STARTTLS" "$to"  # MAIL before STARTTLS: 530
grep -q '^<\*\* *530 Must issue a STARTTLS command first' "$WORK/no-starttls.23.log" &&
    pass "no-starttls: 530 Must issue a STARTTLS command first" || fail "no-starttls: no 530 reply"
send no-auth-starttls 23 "$STARTTLS" "$to" --tls "${TLS_VERIFY[@]}"  # MAIL without AUTH: 530
send no-auth-tls 23 "$SMTPS" "$to" --tls-on-connect "${TLS_VERIFY[@]}"
grep -q '530 5.7.0 Authentication required' "$WORK/no-auth-tls.23.log" &&
    pass "no-auth-tls: 530 5.7.0 Authentication required" || fail "no-auth-tls: no 530 reply"
send bad-password 28 "$STARTTLS" "$to" --tls "${TLS_VERIFY[@]}" --auth LOGIN \
    --auth-user "$SILEME_TEST_SMTP_USER" --auth-password wrong
send plain-no-tls 29 "$PLAIN" "$to" --tls  # STARTTLS not offered by the plain server
check "refusals: nothing delivered or even reached RCPT" "$(events "$to")$(delivery "$to")" ""

echo "== failure injection"
to=$(addr perm550)
send perm550 24 "$STARTTLS" "$to" --tls "${TLS_VERIFY[@]}" --auth LOGIN "${AUTH[@]}"
grep -q "550 5.1.1 <$to>: Recipient address rejected: mailbox unavailable" "$WORK/perm550.24.log" &&
    pass "perm550: 550 5.1.1 reply text" || fail "perm550: 550 reply text missing"
check "perm550: events" "$(events "$to")" "rcpt:550"
check "perm550: no delivery" "$(delivery "$to")" ""

to=$(addr TEMP451Once) # matching is case-insensitive
send temp451once 24 "$SMTPS" "$to" --tls-on-connect "${TLS_VERIFY[@]}" --auth PLAIN "${AUTH[@]}"
grep -q '451 4.3.0 Temporary failure, try again' "$WORK/temp451once.24.log" &&
    pass "temp451once: first try 451 4.3.0" || fail "temp451once: 451 reply text missing"
check "temp451once: no delivery after the first try" "$(delivery "$to")" ""
send temp451once 0 "$SMTPS" "$to" --tls-on-connect "${TLS_VERIFY[@]}" --auth PLAIN "${AUTH[@]}"
check "temp451once: events" "$(events "$to")" "rcpt:451 rcpt:250 data:250"
check_delivered temp451once "$to" tls true sileme

to=$(addr temp451always)
send temp451always 24 "$PLAIN" "$to"
send temp451always 24 "$PLAIN" "$to"
check "temp451always: events" "$(events "$to")" "rcpt:451 rcpt:451"

to=$(addr data554)
send data554 26 "$STARTTLS" "$to" --tls "${TLS_VERIFY[@]}" --auth LOGIN "${AUTH[@]}"
grep -q '554 5.6.0 Message rejected: content refused' "$WORK/data554.26.log" &&
    pass "data554: 554 5.6.0 reply text" || fail "data554: 554 reply text missing"
check "data554: events" "$(events "$to")" "rcpt:250 data:554"
check "data554: no delivery" "$(delivery "$to")" ""

to=$(addr slow1)
start=$(date +%s%N)
send slow1 0 "$PLAIN" "$to"
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
if ((elapsed_ms >= 1000)); then pass "slow1: took ${elapsed_ms} ms (>= 1000)"; else fail "slow1: took ${elapsed_ms} ms, expected >= 1000"; fi
check_delivered slow1 "$to" plain false null

good=$(addr mixed-ok)
bad=$(addr mixed-perm550)
message mixed "$good"
send mixed 0 "$STARTTLS" "$good,$bad" --tls "${TLS_VERIFY[@]}" --auth LOGIN "${AUTH[@]}"
check "mixed: events of the good address" "$(events "$good")" "rcpt:250 data:250"
check "mixed: events of the bad address" "$(events "$bad")" "rcpt:550"
check "mixed: rcpt_tos" "$(delivery "$good" | jq -c .rcpt_tos)" "[\"$good\"]"

echo "== servers still up"
for port in "$STARTTLS" "$SMTPS" "$PLAIN"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then pass "port $port accepts"; else fail "port $port closed"; fi
done

if ((FAILURES > 0)); then
    echo "smtp selftest: $FAILURES check(s) FAILED"
    exit 1
fi
echo "smtp selftest: all checks passed"
