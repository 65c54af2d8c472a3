#!/usr/bin/env bash
# Checks the systemd integration files in systemd/ without a running systemd and without touching
# the machine's systemd state (everything happens in temporary directories):
#
#   1. `systemd-analyze verify` of sileme-notifier.service, sileme-notifier-run.service and
#      sileme-notifier-run.timer: any warning or error about them fails.
#   2. `systemd-analyze security --offline=true` of both services: the overall exposure must be at
#      most MAX_EXPOSURE (default 1.5; lower is better).
#   3. The journal catalog parses (`journalctl --update-catalog` into a temporary root) and has
#      exactly the expected MESSAGE_IDs (and every one the program's NotifierEvent.swift uses).
#   4. The sysusers.d file parses (`systemd-sysusers --dry-run` against a temporary root).
#
# Usage: scripts/check-units.sh          (Debian 12, package systemd; as root or not)
#        MAX_EXPOSURE=1.2 scripts/check-units.sh
set -euo pipefail
cd "$(dirname "$0")/.."

max_exposure=${MAX_EXPOSURE:-1.5}
units_dir=$PWD/systemd
services=(sileme-notifier.service sileme-notifier-run.service)
units=("${services[@]}" sileme-notifier-run.timer)
binary=/usr/local/bin/sileme-notifier
# The MESSAGE_IDs of docs/interfaces.md's events (run_failed, alerts_held, contact_undeliverable, relay_failover and canary_lost too); the catalog must have exactly these.
declare -A expected_ids=(
  [b5114b477a7847da8a32aee24ab6a236]=run_started
  [4fb505200f49472eb5538283f7de1a2b]=run_finished
  [9210aefff7ae4cdcb2a59b85313eba44]=notification_sent
  [ce86ef5e801347caaa6f2e50266c0468]=notification_failed
  [e07c7725ec0f42bea29914801a2ebf54]=notification_skipped
  [3d1f7c0e6a2b4c59a8e1d2f3b4c5d6e7]=run_failed
  [ba186e0e0bf34c279a00ad43509e5af0]=alerts_held
  [6c0a3e5f2b7d4e18a9c1f0d2e3b4a5c6]=acknowledgement_recorded
  [a6463324a233427b991a95d572da1d85]=contact_undeliverable
  [f8de42a154c84d4cb3843c94a08de370]=relay_failover
  [2fa0dc6eef704a3d832e8c9e93d38780]=canary_lost
)

for tool in systemd-analyze journalctl systemd-sysusers; do
  command -v "$tool" >/dev/null || { echo "check-units: $tool not found (apt-get install systemd)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/check-units.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
ok()   { printf 'check-units: %-8s OK    %s\n' "$1" "$2"; }
fail() { printf 'check-units: %-8s FAIL  %s\n' "$1" "$2"; failed=1; }

# --- 1. verify ---------------------------------------------------------------------------------
# verify insists that ExecStart='s binary exists and is executable. When sileme-notifier is not
# installed, verify copies of the units in which only that path is replaced by a stub executable;
# every other line (and every other command: /bin/kill, /bin/sh) is checked as written.
verify_dir=$units_dir
note="installed $binary"
if [ ! -x "$binary" ]; then
  verify_dir=$work/units
  mkdir -p "$verify_dir" "$work/bin"
  printf '#!/bin/sh\nexit 0\n' >"$work/bin/sileme-notifier"
  chmod 0755 "$work/bin/sileme-notifier"
  for u in "${units[@]}"; do
    sed "s#$binary\\b#$work/bin/sileme-notifier#g" "$units_dir/$u" >"$verify_dir/$u"
  done
  note="$binary not installed: copies with ExecStart= pointing at a stub"
fi
verify_paths=()
for u in "${units[@]}"; do verify_paths+=("$verify_dir/$u"); done
# --recursive-errors=no: exit non-zero on warnings about our units, not about the host's units our
# dependencies pull in. Run from the work directory so nothing relative leaks in.
set +e
verify_out=$(cd "$work" && systemd-analyze verify --recursive-errors=no --man=no "${verify_paths[@]}" 2>&1)
verify_rc=$?
set -e
ours=$(grep -E 'sileme-notifier' <<<"$verify_out" || true)
if [ "$verify_rc" -ne 0 ] || [ -n "$ours" ]; then
  fail verify "systemd-analyze verify (exit $verify_rc):"
  sed 's/^/    /' <<<"${ours:-$verify_out}"
else
  ok verify "${units[*]} ($note)"
fi

# --- 2. security -------------------------------------------------------------------------------
for s in "${services[@]}"; do
  out=$(cd "$work" && systemd-analyze security --offline=true --no-pager "$units_dir/$s" 2>&1) || true
  score=$(sed -n 's/^.*Overall exposure level for [^:]*: \([0-9][0-9]*\(\.[0-9]*\)\?\).*$/\1/p' <<<"$out")
  if [ -z "$score" ]; then
    fail security "$s: no overall exposure level in the output:"
    sed 's/^/    /' <<<"$out" | tail -n 20
  elif awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s + 0 <= m + 0) }'; then
    ok security "$s exposure $score (max $max_exposure)"
  else
    fail security "$s exposure $score > max $max_exposure; exposed:"
    grep '✗' <<<"$out" | sed 's/^/    /'
  fi
done

# --- 3. catalog --------------------------------------------------------------------------------
catalog=$units_dir/sileme-notifier.catalog
root=$work/catalog-root
mkdir -p "$root/usr/lib/systemd/catalog"
cp "$catalog" "$root/usr/lib/systemd/catalog/"
if ! cat_err=$(journalctl --root="$root" --update-catalog 2>&1) || [ -n "$cat_err" ]; then
  fail catalog "journalctl --update-catalog rejected $catalog:"
  sed 's/^/    /' <<<"$cat_err"
elif ! list_out=$(journalctl --root="$root" --list-catalog --no-pager 2>&1); then
  # journalctl 252 aborts here when an ID has a translation but no untranslated entry.
  fail catalog "journalctl --list-catalog failed on $catalog (every ID needs an untranslated entry):"
  sed 's/^/    /' <<<"$list_out"
else
  listed=$(awk '{ print $1 }' <<<"$list_out" | sort)
  want=$(printf '%s\n' "${!expected_ids[@]}" | sort)
  # Every MESSAGE_ID the program itself uses needs an entry too.
  events=Sources/Systemd/NotifierEvent.swift
  used=""
  [ -f "$events" ] && used=$(grep -oE '"[0-9a-f]{32}"' "$events" | tr -d '"' | sort -u)
  missing_used=$(comm -23 <(printf '%s\n' $used | sed '/^$/d') <(printf '%s\n' "$listed"))
  # The same ID twice for one language is accepted by journalctl (one silently wins): refuse it.
  dups=$(grep -E '^-- [0-9a-f]{32}' "$catalog" | sort | uniq -d)
  no_subject=""
  for id in $listed; do
    journalctl --root="$root" --dump-catalog --no-pager "$id" | grep -q '^Subject: .' || no_subject+=" $id"
  done
  if [ "$listed" != "$want" ] || [ -n "$missing_used" ] || [ -n "$dups" ] || [ -n "$no_subject" ]; then
    fail catalog "$catalog:"
    missing=$(comm -23 <(echo "$want") <(echo "$listed") | tr '\n' ' ')
    extra=$(comm -13 <(echo "$want") <(echo "$listed") | tr '\n' ' ')
    [ -z "${missing// }" ] || echo "    expected but missing: $missing"
    [ -z "${extra// }" ] || echo "    not expected: $extra"
    [ -z "$missing_used" ] || echo "    used in $events but not in the catalog:" $missing_used
    [ -z "$dups" ] || echo "    duplicate entries: $dups"
    [ -z "$no_subject" ] || echo "    entries without a Subject:$no_subject"
  else
    langs=$(grep -oE '^-- [0-9a-f]{32} [A-Za-z_]+' "$catalog" | awk '{ print $3 }' | sort -u | tr '\n' ' ')
    ok catalog "$(wc -l <<<"$listed") entries (${expected_ids[*]}), translations: ${langs:-none}"
  fi
fi

# --- 4. sysusers -------------------------------------------------------------------------------
sysusers=$units_dir/sileme-notifier.sysusers
mkdir -p "$work/sysusers-root/etc"
if sys_out=$(systemd-sysusers --root="$work/sysusers-root" --dry-run "$sysusers" 2>&1) \
   && grep -q "Creating user 'sileme-notifier'" <<<"$sys_out"; then
  ok sysusers "$(basename "$sysusers") creates user and group sileme-notifier"
else
  fail sysusers "systemd-sysusers --dry-run $sysusers:"
  sed 's/^/    /' <<<"$sys_out"
fi

if [ "$failed" -ne 0 ]; then
  echo "check-units: FAILED" >&2
  exit 1
fi
echo "check-units: all checks passed"
