#!/usr/bin/env bash
# The benchmark (see bench/bench.py): installs what it needs, builds a release binary, runs.
#   bench/bench.sh                       1,000,000 users (about 10 minutes on 2 cores)
#   bench/bench.sh --users 100000        smaller, to see how each figure grows
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh   # includes python3-psycopg2 and time
swift build -c release >&2
exec /usr/bin/python3 bench/bench.py "$@"
