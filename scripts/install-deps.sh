#!/usr/bin/env bash
# Installs the Debian packages sileme-notifier builds, runs and tests with (only what is missing).
# Usage: scripts/install-deps.sh          (as root, or with sudo available)
set -euo pipefail

packages=(
  pkg-config libpq-dev libcurl4-openssl-dev libsystemd-dev   # build: libpq, libcurl, libsystemd
  postgresql-15 postgresql-client-15                         # tests and demo: a throwaway PostgreSQL
  python3-aiosmtpd openssl swaks                             # tests and demo: a real SMTP server, TLS
  systemd                                                    # journald, journalctl, systemd-analyze
  chromium fonts-wqy-microhei                                # tests: render the HTML report headless, with a CJK font
  python3-psycopg2 time                                      # bench/bench.py (CI runs it small)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Installing the postgresql packages must not start the distribution's own cluster on port 5432.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  trap '$sudo rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
