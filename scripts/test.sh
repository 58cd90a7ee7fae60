#!/usr/bin/env bash
# Sets everything up and runs the whole test suite (real mosquitto, gpsd via gpsfake, SQLite
# files, the agent binary). Every server a test starts is stopped by PID when it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
KEEPALIVE_SETUP_TESTS=1 scripts/setup.sh
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
# Tests drive the built binary; build it first so `swift test` finds it.
export KEEPALIVE_BIN="$PWD/.build/debug/keepalive"
# The .deb takes a release build: make it before the tests, not while timing-sensitive ones run.
DEB_DIR=$(mktemp -d)
trap 'rm -rf "$DEB_DIR"' EXIT
KEEPALIVE_DEB=$(deploy/package-deb.sh "$DEB_DIR" | tail -1)
export KEEPALIVE_DEB
if [ "$#" -gt 0 ]; then
  swift test "$@"
else
  # The fleet's tests run three ejabberd nodes, PostgreSQL and Home Assistant for minutes: run
  # beside the rest they starve its gpsfake and broker timings on a 2-core machine, so they get
  # the machine to themselves, after it (docs/testing.md). So does the day page's browser test
  # (PageTests: Chromium, and a draw time it measures against its 1 s budget).
  swift test --skip FleetTests --skip PageTests
  swift test --skip-build --filter FleetTests
  swift test --skip-build --filter PageTests
fi
