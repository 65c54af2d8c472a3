#!/bin/bash
# What choosing and rendering each contact's language costs --run-now (docs/languages.md).
#
#   bench/languages.sh URL BINARY DATE [ROUNDS]
#
# URL is a kept bench cluster's database (`bench/bench.sh --keep` prints it; its run date's mails
# already sent, so DATE is the day after, which every copy sends alike). Each round runs, on a fresh
# copy of the database each time, one `--run-now --date DATE` to an outbox with every user's and
# contact's language NULL (the default, zh-Hans: no words formatted), then with all of them `en`
# (English templates: counts and dates written by Foundation), and prints the peak RSS, the wall
# and user time, and the mails.
set -euo pipefail
url=$1 binary=$2 date=$3 rounds=${4:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
base=${url##*/} server=${url%/*}
export FROM_EMAIL=noreply@sileme.app SMTP_HOST=127.0.0.1 SMTP_PORT=25 SMTP_TLS=none \
       MIGRATIONS_DIR="$root/Sources/Store/Migrations" MAIL_TRANSPORT=outbox SMTP_CONNECTIONS=4 INTAKE_DROP_RATIO=0
unset SMTP_USER SMTP_PASSWORD NOTIFY_SOCKET SILEME_CONFIG
copy="${base}_languages"
for round in $(seq 1 "$rounds"); do
  for language in none en; do
    psql -qAt "$server/postgres" -c "DROP DATABASE IF EXISTS $copy" -c "CREATE DATABASE $copy TEMPLATE $base" >/dev/null 2>&1
    if [[ $language != none ]]; then
      psql -qAt "$server/$copy" -c "UPDATE users SET language = '$language'" -c "UPDATE emergency_contacts SET language = '$language'" >/dev/null
    fi
    psql -qAt "$server/$copy" -c "VACUUM ANALYZE" >/dev/null
    outbox=$(mktemp -d /dev/shm/sileme-languages-XXXX)
    times=$(mktemp)
    DATABASE_URL="$server/$copy" OUTBOX_DIR=$outbox /usr/bin/time -f "%M kB, %e s, %U s user" -o "$times" \
      "$binary" --run-now --date "$date" >/dev/null 2>&1
    echo "round $round, language $language: $(cat "$times"), $(find "$outbox" -type f | wc -l) mails"
    rm -rf "$outbox" "$times"
  done
done
psql -qAt "$server/postgres" -c "DROP DATABASE IF EXISTS $copy" >/dev/null 2>&1
