#!/usr/bin/env bash
# Builds keepalive_<version>_<arch>.deb in OUTDIR: a release binary with the Swift runtime linked
# in (the Pi needs no Swift), the systemd unit, /etc/keepalive/config.toml as a conffile, chrony's
# GPS reference clock (/etc/chrony/conf.d/keepalive-gps.conf), the reference heart-rate bridge and the day
# page with its mosquitto snippets (/usr/share/keepalive/). Depends: is computed by dpkg-shlibdeps from the binary.
# Usage: deploy/package-deb.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: deploy/package-deb.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi

scripts/build-static.sh >&2
BIN=.build-static/release/keepalive
VERSION=$("$BIN" --version)
ARCH=$(dpkg --print-architecture)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
STAGE="$WORK/keepalive"

install -D -m 0755 "$BIN" "$STAGE/usr/bin/keepalive"
strip --strip-unneeded "$STAGE/usr/bin/keepalive"
install -D -m 0644 deploy/keepalive.service "$STAGE/lib/systemd/system/keepalive.service"
install -D -m 0644 config.toml "$STAGE/etc/keepalive/config.toml"
# The GPS as chrony's reference clock: read once chrony is installed (Recommends), idle otherwise.
install -D -m 0644 deploy/chrony/keepalive-gps.conf "$STAGE/etc/chrony/conf.d/keepalive-gps.conf"
install -D -m 0755 deploy/hr-bridge/keepalive_hr_bridge.py "$STAGE/usr/share/keepalive/hr-bridge/keepalive_hr_bridge.py"
install -D -m 0644 deploy/hr-bridge/keepalive_pmd.py "$STAGE/usr/share/keepalive/hr-bridge/keepalive_pmd.py"
install -D -m 0644 deploy/hr-bridge/README.md "$STAGE/usr/share/doc/keepalive/hr-bridge.md"
install -D -m 0644 README.md "$STAGE/usr/share/doc/keepalive/README.md"
install -D -m 0644 deploy/README.md "$STAGE/usr/share/doc/keepalive/deploy.md"
# The day page (web/): its files and MQTT bundle; postinst copies Leaflet and Chart.js in from the
# Pi's own libjs-leaflet and libjs-chart.js. mosquitto serves it (deploy/mosquitto/keepalive-page.conf).
web/build.sh "$STAGE/usr/share/keepalive/web" --without-libs >&2
install -D -m 0755 web/install-libs.sh "$STAGE/usr/share/keepalive/web-install-libs.sh"
for file in keepalive-page.conf keepalive-page.acl keepalive-bridge.conf keepalive-device.acl; do
    install -D -m 0644 "deploy/mosquitto/$file" "$STAGE/usr/share/keepalive/mosquitto/$file"
done
# The sleep classifier's weights come from sleepecg (BSD-3-Clause): its notice goes with the binary.
install -D -m 0644 Sources/SleepStaging/Model/LICENSE.sleepecg "$STAGE/usr/share/doc/keepalive/LICENSE.sleepecg"

# Depends: from the libraries the binary links (dpkg-shlibdeps wants a debian/control to read).
mkdir -p "$WORK/debian"
printf 'Source: keepalive\n\nPackage: keepalive\nArchitecture: any\n' >"$WORK/debian/control"
DEPENDS=$(cd "$WORK" && dpkg-shlibdeps -O -e "$STAGE/usr/bin/keepalive" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$DEPENDS" ] || { echo "package-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# Packed relative relocations (scripts/build-static.sh) need glibc 2.36's loader; bookworm's
# symbols file does not say so, so dpkg-shlibdeps asks for less.
if readelf -V "$STAGE/usr/bin/keepalive" | grep -q GLIBC_ABI_DT_RELR; then
  DEPENDS=$(echo "$DEPENDS" | sed -E 's/libc6 \(>= 2\.(3[0-5]|[12][0-9]|[0-9])(\.[0-9]+)?\)/libc6 (>= 2.36)/')
fi

mkdir -p "$STAGE/DEBIAN"
cat >"$STAGE/DEBIAN/control" <<CONTROL
Package: keepalive
Version: $VERSION
Architecture: $ARCH
Maintainer: KeepAlive developers <keepalive@localhost>
Installed-Size: $(du -sk "$STAGE" | cut -f1)
Depends: $DEPENDS
Recommends: gpsd, mosquitto, chrony, libjs-leaflet, libjs-chart.js
Suggests: python3-bleak, python3-paho-mqtt, libpq5
Section: misc
Priority: optional
Description: edge agent for GPS and heart rate on a Raspberry Pi
 Reads a USB GPS through gpsd and a BLE heart-rate strap through a bridge, keeps everything
 in a local SQLite store, and publishes location, status and daily health to MQTT.
CONTROL
printf '/etc/keepalive/config.toml\n/etc/chrony/conf.d/keepalive-gps.conf\n' >"$STAGE/DEBIAN/conffiles"

cat >"$STAGE/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
# The broker password and TLS client key the unit loads with LoadCredential= (deploy/README.md):
# root's alone. systemd reads them as root and hands the service its own copies.
if [ "$1" = "configure" ]; then
    for secret in mqtt.password mqtt.key; do
        file="${DPKG_ROOT:-}/etc/keepalive/$secret"
        if [ -f "$file" ] && [ ! -L "$file" ] && [ "$(stat -c '%u:%g %a' "$file")" != "0:0 600" ]; then
            chown root:root "$file"
            chmod 0600 "$file"
            echo "keepalive: /etc/keepalive/$secret is now root:root, mode 0600 (the service gets it as a systemd credential)"
        fi
    done
fi
# The day page's libraries, from the Pi's own Debian packages (Recommends), gzipped into the page.
if [ "$1" = "configure" ]; then
    "${DPKG_ROOT:-}/usr/share/keepalive/web-install-libs.sh" "${DPKG_ROOT:-}/usr/share/keepalive/web" "${DPKG_ROOT:-}" ||
        echo "keepalive: the day page needs libjs-leaflet and libjs-chart.js (apt-get install them, then dpkg-reconfigure keepalive)"
fi
# The service runs as a DynamicUser; systemd creates it and /var/lib/keepalive on start.
# Enable, do not start: the owner sets broker and timezone in /etc/keepalive/config.toml first.
if [ "$1" = "configure" ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
    systemctl enable keepalive.service || true
    if systemctl is-active --quiet keepalive.service; then systemctl try-restart keepalive.service || true; fi
fi
exit 0
SCRIPT
cat >"$STAGE/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = "remove" ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
    systemctl stop keepalive.service || true
    systemctl disable keepalive.service || true
fi
exit 0
SCRIPT
cat >"$STAGE/DEBIAN/postrm" <<'SCRIPT'
#!/bin/sh
set -e
# The store in /var/lib/keepalive (or /var/lib/private/keepalive) is your data: never deleted here.
# The page's library copies postinst made are not the package's files: removed with it.
if [ "$1" = "remove" ] || [ "$1" = "purge" ]; then
    rm -f "${DPKG_ROOT:-}"/usr/share/keepalive/web/lib/leaflet.min.js.gz "${DPKG_ROOT:-}"/usr/share/keepalive/web/lib/leaflet.css.gz \
        "${DPKG_ROOT:-}"/usr/share/keepalive/web/lib/chart.min.js.gz
    rmdir "${DPKG_ROOT:-}/usr/share/keepalive/web/lib" "${DPKG_ROOT:-}/usr/share/keepalive/web" 2>/dev/null || true
fi
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
exit 0
SCRIPT
chmod 0755 "$STAGE/DEBIAN/postinst" "$STAGE/DEBIAN/prerm" "$STAGE/DEBIAN/postrm"

DEB="$OUT/keepalive_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group --build "$STAGE" "$DEB" >&2
echo "$DEB"
