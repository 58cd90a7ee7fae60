#!/usr/bin/env bash
# The fault-injection suite (issue "Proof"): broker outages, SIGKILLs during ingest, gpsd and
# bridge failures, a full disk, a clock far off, fuzzed input — real processes throughout.
# Slow (about 10 minutes): not part of scripts/test.sh. Prints a table of figures at the end.
#
# Usage: scripts/faults.sh [--filter NAME]   (e.g. --filter KillFaults)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
export KEEPALIVE_BIN="$PWD/.build/debug/keepalive"
figures=$(mktemp)
trap 'rm -f "$figures"' EXIT
filter='^FaultTests\.'
if [ "${1:-}" = "--filter" ] && [ -n "${2:-}" ]; then filter="^FaultTests\.$2"; fi
status=0
KEEPALIVE_FAULTS=1 KEEPALIVE_FIGURES_FILE="$figures" swift test --filter "$filter" || status=$?
echo
echo "| scenario | figures |"
echo "|---|---|"
cat "$figures"
exit $status
