#!/bin/sh
# Copies Leaflet and Chart.js from Debian's libjs-leaflet and libjs-chart.js into the page's
# served directory DIR, gzipped (web/boot.js unzips them in the browser). Copies, not links:
# mosquitto serves only files whose real path lies inside its http_dir. Run again after those
# packages are upgraded (the Debian package's postinst runs it).
# Usage: install-libs.sh DIR [ROOT]   (ROOT: where /usr/share/javascript lies, for dpkg --root)
set -eu
DIR=${1:?usage: install-libs.sh DIR [ROOT]}
ROOT=${2:-}
LEAFLET=$ROOT/usr/share/javascript/leaflet
CHART=$ROOT/usr/share/javascript/chart.js
for file in "$LEAFLET/leaflet.min.js" "$LEAFLET/leaflet.css" "$CHART/chart.min.js"; do
    [ -f "$file" ] || { echo "install-libs: $file is missing (apt-get install libjs-leaflet libjs-chart.js)" >&2; exit 1; }
done
mkdir -p "$DIR/lib"
gzip -9n <"$LEAFLET/leaflet.min.js" >"$DIR/lib/leaflet.min.js.gz"
gzip -9n <"$LEAFLET/leaflet.css" >"$DIR/lib/leaflet.css.gz"
gzip -9n <"$CHART/chart.min.js" >"$DIR/lib/chart.min.js.gz"
