#!/usr/bin/env bash
# Installs what KeepAlive needs to build and test on Debian 12 / Raspberry Pi OS bookworm,
# then builds it. Safe to run again: packages already present are not reinstalled.
# Usage: scripts/setup.sh [swift build arguments…]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  mosquitto mosquitto-clients libmosquitto-dev   # broker for tests/demo, clients, the C library
  gpsd gpsd-clients python3-gps libgps-dev       # gpsd + gpsfake (replay), gpspipe, libgps
  libsqlite3-dev sqlite3                         # the store
  pkg-config openssl coreutils python3           # module maps, TLS test certificates, stdbuf
  python3-bleak python3-paho-mqtt                # the reference heart-rate bridge (deploy/hr-bridge)
  python3-dbusmock dbus                          # its test against a fake BlueZ
  systemd                                        # systemd-analyze, to check deploy/keepalive.service
  dpkg-dev binutils                              # dpkg-shlibdeps and strip for deploy/package-deb.sh
  libxml2-utils                                  # xmllint: the workout GPX/TCX tests validate against their XSDs
  ejabberd postgresql-15 postgresql-client-15 libpq-dev  # the fleet: clustered MQTT 5 broker, the archive (docs/fleet.md)
)

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # dpkg has been seen to fail once with "files missing" on a first install: retry once.
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian starts ejabberd's own service on install, listening for MQTT on every address's port 1883,
# where the demo looks for a broker: the fleet's tests and deploy/fleet/cluster.sh run their own
# nodes, so the packaged service is stopped and disabled (docs/fleet.md).
if ((${#missing[@]})) && [[ " ${missing[*]} " == *" ejabberd "* ]] && command -v systemctl >/dev/null 2>&1 &&
  [ -d /run/systemd/system ]; then
  SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO systemctl disable --now ejabberd >/dev/null 2>&1 || true
fi

if ! command -v swift >/dev/null 2>&1; then
  for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin "$HOME/swift/usr/bin"; do
    if [ -x "$candidate/swift" ]; then export PATH="$candidate:$PATH"; break; fi
  done
fi
if ! command -v swift >/dev/null 2>&1; then
  cat >&2 <<'MSG'
setup: no Swift toolchain found. Install Swift 6 for your machine (https://www.swift.org/install/linux/,
"Debian 12" for x86_64 or aarch64), put its usr/bin on PATH, and run this again.
MSG
  exit 1
fi

scripts/require-swift.sh
echo "setup: building with $(swift --version 2>/dev/null | head -1)" >&2
swift build "$@"
