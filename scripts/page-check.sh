#!/usr/bin/env bash
# The day page in a real browser (docs/contract.md, "The page"): headless Chromium and Selenium
# against a real mosquitto serving the built page (web/build.sh), the agent, and a replayed past
# day with a walk (scripts/page/page_check.py lists what it asserts), on the plain listener and on
# the shipped TLS listener (scripts/page/tls_check.py). Screenshots and the measured figures go to
# .build/page-check/. Uses Debian's python3 packages (not a venv): python3-selenium, python3-gpxpy,
# python3-paho-mqtt, with chromium, chromium-driver, openssl and xmllint (scripts/setup.sh).
# With --fleet: the same page served by an ejabberd node configured as the fleet's, with the
# read-only viewer account, and the real `keepalive archive` with a PostgreSQL of its own
# (scripts/page/fleet_page_check.py; as root, as the fleet tests).
# Usage: scripts/page-check.sh [--out DIR | --fleet]   (KEEPALIVE_BIN: the agent binary, default .build/debug/keepalive)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${KEEPALIVE_BIN:-$PWD/.build/debug/keepalive}
if [ ! -x "$bin" ]; then
  if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
  swift build --product keepalive
fi
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the checkout
# Debian's interpreter, whatever python3 is first on PATH: the packages above are installed for it.
if [ "${1:-}" = "--fleet" ]; then
  exec /usr/bin/python3 scripts/page/fleet_page_check.py --agent "$bin"
fi
exec /usr/bin/python3 scripts/page/page_check.py --agent "$bin" "$@"
