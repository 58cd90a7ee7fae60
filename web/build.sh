#!/usr/bin/env bash
# Builds the page's served directory in OUTDIR: the page's own files, the MQTT client bundled from
# Debian's node-mqtt with Debian's esbuild, and (web/install-libs.sh) Leaflet and Chart.js copied
# from Debian's libjs-leaflet and libjs-chart.js. Libraries and the bundle are stored gzipped:
# mosquitto serves files as they are, and web/boot.js unzips them in the browser. The bundle is
# built here (by scripts/demo.sh, the page's test and deploy/package-deb.sh), not committed: it is
# made from whatever Debian ships, as the binary is, and nobody has to trust a committed blob.
# Usage: web/build.sh OUTDIR [--without-libs]   (the Debian package copies the libraries at install)
set -euo pipefail
cd "$(dirname "$0")"
OUT=${1:?usage: web/build.sh OUTDIR [--without-libs]}
mkdir -p "$OUT/lib"
install -m 0644 index.html boot.js config.js style.css "$OUT/"
install -m 0644 app/*.js "$OUT/"
BUNDLE=$(mktemp -d)
trap 'rm -rf "$BUNDLE"' EXIT
NODE_PATH=/usr/share/nodejs esbuild mqtt-entry.js --bundle --minify --format=iife --global-name=KeepAliveMQTT \
  --platform=browser --inject:node-globals.js --define:global=globalThis --alias:ws=./no-ws.js \
  --log-level=warning --outfile="$BUNDLE/mqtt.min.js"
gzip -9n <"$BUNDLE/mqtt.min.js" >"$OUT/lib/mqtt.min.js.gz"
if [ "${2:-}" != "--without-libs" ]; then ./install-libs.sh "$OUT"; fi
