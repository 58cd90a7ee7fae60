#!/usr/bin/env bash
# Stops with a plain explanation when the `swift` on PATH is older than 6.2 (trixie's own
# `swiftlang` is 6.0.3: it cannot read the manifests of swift-log and swift-service-lifecycle and
# would fail later in dependency resolution with a message about tools versions).
set -euo pipefail
version=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | head -1)
read -r major minor <<<"${version:-0 0}"
if (( major < 6 || (major == 6 && minor < 2) )); then
  echo "$(command -v swift) is Swift ${major}.${minor}; KeepAlive needs 6.2 or newer: the swift.org \"Debian 12\" toolchain (see deploy/README.md, \"Which Swift\")" >&2
  exit 1
fi
