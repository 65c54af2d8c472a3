#!/usr/bin/env bash
# The benchmark (see bench/bench.py): installs what it needs, builds a release binary, runs.
#   bench/bench.sh                       1,000,000 users (about 7–10 minutes on 2 cores)
#   bench/bench.sh --users 100000        smaller, to see how each figure grows
#   bench/bench.sh all-clear [--analyze] the all-clear latency (bench/all_clear.py, about 4 minutes)
#   bench/bench.sh webhooks [--users N]  webhook events/s vs a bare generator (bench/webhooks.py)
#   bench/bench.sh user-time [--users N] each user's own time: 40 zones x 96 times (bench/user-time.py)
#   bench/bench.sh day [--users N]       the daemon's day of 192 instants end to end vs the single run (bench/day.py)
#   bench/bench.sh intake [--users N]    the intake guard: per run, per minute, per fold (bench/intake.py)
#   bench/bench.sh slots                 the daemon's schedule computations over 3,840 and 7,680 slots (bench/slots)
#   bench/bench.sh bounces [--reports N] 10,000 reports in a Maildir read and applied; an empty mailbox polled (bench/bounces.py)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = slots ]; then
  (cd bench/slots && swift build -c release >&2 && exec .build/release/SlotsBench ../zones.txt)
  exit
fi
scripts/install-deps.sh   # includes python3-psycopg2, time, pgbouncer
swift build -c release >&2
if [ "${1:-}" = all-clear ]; then
  shift
  exec /usr/bin/python3 bench/all_clear.py "$@"
fi
if [ "${1:-}" = webhooks ]; then
  shift
  exec /usr/bin/python3 bench/webhooks.py "$@"
fi
if [ "${1:-}" = user-time ]; then
  shift
  exec /usr/bin/python3 bench/user-time.py "$@"
fi
if [ "${1:-}" = day ]; then
  shift
  exec /usr/bin/python3 bench/day.py "$@"
fi
if [ "${1:-}" = intake ]; then
  shift
  exec /usr/bin/python3 bench/intake.py "$@"
fi
if [ "${1:-}" = bounces ]; then
  shift
  exec /usr/bin/python3 bench/bounces.py "$@"
fi
exec /usr/bin/python3 bench/bench.py "$@"
