#!/usr/bin/env bash
# Builds KeepAlive on a Raspberry Pi (Raspberry Pi OS trixie or bookworm, 64-bit) and installs it
# as a service. It needs Swift 6.2 or newer: trixie's own `swiftlang` (6.0.3) cannot read the
# manifests of swift-log and swift-service-lifecycle as released today (deploy/README.md, "Which
# Swift"). Download the swift.org toolchain for "Debian 12, aarch64" from
# https://www.swift.org/install/linux/ (6.3.1 is what the project is built and tested with),
# unpack it anywhere, then:
#
#   deploy/install-pi.sh /path/to/swift-6.3.1-RELEASE-debian12-aarch64
#
# A build takes several minutes on a Pi 4/5 (and needs ~2 GB of memory: add swap on smaller Pis).
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLCHAIN=${1:?usage: deploy/install-pi.sh SWIFT_TOOLCHAIN_DIR}
export PATH="$TOOLCHAIN/usr/bin:$PATH"
command -v swift >/dev/null || { echo "install-pi: no swift in $TOOLCHAIN/usr/bin" >&2; exit 1; }
scripts/require-swift.sh

sudo apt-get update -qq
sudo apt-get install -y -qq --no-install-recommends gpsd gpsd-clients mosquitto mosquitto-clients \
  libmosquitto-dev libgps-dev libsqlite3-dev pkg-config dpkg-dev binutils python3-bleak python3-paho-mqtt
OUT=$(mktemp -d)
DEB=$(deploy/package-deb.sh "$OUT" | tail -1)
sudo apt-get install -y "$DEB"
sudo keepalive check-config /etc/keepalive/config.toml
cat <<MSG
Installed $(keepalive --version). Next:
  sudoedit /etc/keepalive/config.toml        # broker, timezone, heart-rate transport
  sudo systemctl start keepalive
  journalctl -u keepalive -f
MSG
