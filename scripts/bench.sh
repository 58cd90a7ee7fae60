#!/usr/bin/env bash
# The benchmark suite: every figure next to a baseline measured in the same run, one table.
# Builds the release agent and keepalive-bench. The first run generates a 365-day store in
# ~/.cache/keepalive-bench (about 6 GB, minutes) and lets the agent publish its aggregates.
#
# Usage: scripts/bench.sh [ingest|e2e|dayread|outbox|query|steady|backlogquery]...   (ingest includes e2e)
# KEEPALIVE_BENCH_BASELINE_COMMIT=<commit>: backlogquery also runs the release agent of that commit
# (exported to ~/.cache/keepalive-bench/baseline-<commit> and built there) and prints both side by side.
# KEEPALIVE_BENCH_SLOW_CORE=1: backlogquery and steady run the agent on one core at a 25 % quota.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
swift build -c release --product keepalive
# The agent as deploy/package-deb.sh packages it (Swift runtime linked in): what runs on a Pi.
scripts/build-static.sh
# The benchmarks are a package of their own (Benchmarks/Package.swift), depending on this one.
# The RSS floor is linked as the agent is.
# shellcheck disable=SC2046
swift build --package-path Benchmarks -c release --static-swift-stdlib --product keepalive-rss-floor --scratch-path Benchmarks/.build-static \
  $(scripts/build-static.sh --link-flags)
swift build --package-path Benchmarks -c release --product keepalive-bench
if [ -n "${KEEPALIVE_BENCH_BASELINE_COMMIT:-}" ]; then
  baseline="$HOME/.cache/keepalive-bench/baseline-$KEEPALIVE_BENCH_BASELINE_COMMIT"
  if [ ! -x "$baseline/.build/release/keepalive" ]; then
    mkdir -p "$baseline"
    git archive "$KEEPALIVE_BENCH_BASELINE_COMMIT" | tar -x -C "$baseline"
    swift build --package-path "$baseline" -c release --product keepalive
  fi
  export KEEPALIVE_BENCH_BASELINE_AGENT="$baseline/.build/release/keepalive"
fi
Benchmarks/.build/release/keepalive-bench "$@"
