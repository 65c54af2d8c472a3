#!/usr/bin/env bash
# The test command: installs what it needs, builds, starts the real servers (PostgreSQL 15, SMTP
# servers with STARTTLS/implicit TLS/AUTH, journald), runs every test, and stops what it started.
#
#   scripts/test.sh                 all tests (unit and integration)
#   scripts/test.sh --filter Rule   passes its arguments on to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
swift build --build-tests

state=$(mktemp -d /tmp/sileme-test.XXXXXX)
cleanup() { scripts/testenv/testenv.sh stop "$state" >/dev/null 2>&1 || true; rm -rf "$state"; }
trap cleanup EXIT
scripts/testenv/testenv.sh start "$state" >&2
# shellcheck disable=SC1091
. "$state/env.sh"
# The harness checks itself first: every SMTP mode and failure injection answers as the tests expect.
if ! bash scripts/testenv/smtp_selftest.sh "$state" >"$state/smtp-selftest.log" 2>&1; then
  echo "test.sh: the SMTP test servers failed their self-test:" >&2
  grep -E 'FAIL|\*\*\*' "$state/smtp-selftest.log" | head -40 >&2 || tail -40 "$state/smtp-selftest.log" >&2
  exit 1
fi

# The integration suites fail (rather than skip) if the servers are missing.
export SILEME_REQUIRE_SERVERS=1

# The whole log is kept; on a failure its failed tests and their issues are printed again at the
# end, so that the last lines of a long run (all a CI summary may show) name what failed.
set +e
swift test "$@" 2>&1 | tee "$state/swift-test.log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "test.sh: swift test failed ($status); what failed:" >&2
  grep -E '✘|recorded an issue|Expectation failed|error:|Fatal error|Caught error' "$state/swift-test.log" \
    | grep -v 'passed after' | tail -60 >&2 || true
  exit "$status"
fi

# The systemd units: `systemd-analyze verify`, the security score (at most 1.5), the catalog.
bash scripts/check-units.sh

# The benchmark, small (20,000 users, debug build): its own checks fail the run when the due set,
# the dry run and the real run disagree, or when the dry run's peak RSS at 20,000 listed users is
# over 1.5x that at 1,000 (bench/history/dry-run-memory.md), or a real run's at 20,000 users
# over 1.2x that at 1,000 (bench/history/memory-flat.md); its other figures are only
# printed here (CI gates no speed).
if [ $# -eq 0 ]; then
  /usr/bin/python3 bench/bench.py --users 20000 --repeat 1 --sample 2000 --pgbench-seconds 2 \
    --binary "$PWD/.build/debug/sileme-notifier"
fi

# The service unit under a real systemd (booted in a private PID and mount namespace): start,
# READY, StatusText, the watchdog, the journal, reload and stop. Only without a filter.
if [ $# -eq 0 ]; then
  SILEME_BIN="$PWD/.build/debug/sileme-notifier" bash scripts/systemd-boot-test.sh
fi

# The Debian package (scripts/package.sh, a release build in .build-release): lintian, then dpkg -i
# into the machine's root seen copy-on-write in the same kind of namespace with the Swift toolchain
# hidden, enable --now and the mail, the idle memory, an upgrade keeping the edited conffile, purge.
# Only without a filter.
if [ $# -eq 0 ]; then
  bash scripts/package-test.sh
fi
