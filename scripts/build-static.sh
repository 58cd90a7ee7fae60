#!/usr/bin/env bash
# Builds the agent as it ships (deploy/package-deb.sh) and as the benchmarks measure it
# (scripts/bench.sh): release, the Swift runtime linked in, into .build-static/release/keepalive.
#
# Linked by lld with relative relocations packed (DT_RELR, glibc 2.36+: bookworm and trixie), when
# the toolchain has lld: gold's table of relocations is 2 MiB, read at every start and left in
# memory (docs/figures.md, "Sixth step"); packed, it is 16 KiB.
# Extra arguments go to `swift build`; `--link-flags` prints only the linker's flags (for another
# program the benchmarks build the same way).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
link=()
if [ -x "$(dirname "$(readlink -f "$(command -v swift)")")/ld.lld" ]; then
  link=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
else
  echo "build-static: no ld.lld beside swift; the default linker (relocations not packed)" >&2
fi
if [ "${1:-}" = --link-flags ]; then
  echo "${link[@]}"
  exit 0
fi
swift build -c release --static-swift-stdlib --product keepalive --scratch-path .build-static "${link[@]}" "$@"
