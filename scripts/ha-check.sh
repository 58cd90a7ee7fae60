#!/usr/bin/env bash
# Home Assistant's own view of the agent (docs/contract.md, "Home Assistant"): a real mosquitto,
# the agent fed by real recordings, and a real Home Assistant 2024.3.3 reading the agent's MQTT
# discovery; asserts through HA's registries and state machine (scripts/homeassistant/ha_check.py).
# Makes the Python venv once, in ~/.cache/keepalive/ (about 700 MB, 1-3 minutes from PyPI).
# Usage: scripts/ha-check.sh [--keep]      (KEEPALIVE_BIN: the agent binary, default .build/debug/keepalive)
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in mosquitto gpsfake; do
  command -v "$tool" >/dev/null 2>&1 || { scripts/setup.sh; break; }
done
bin=${KEEPALIVE_BIN:-$PWD/.build/debug/keepalive}
if [ ! -x "$bin" ]; then
  if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
  swift build --product keepalive
fi
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the checkout
python=$(scripts/python-venv.sh scripts/homeassistant/requirements.txt homeassistant)
exec "$python" scripts/homeassistant/ha_check.py --agent "$bin" "$@"
