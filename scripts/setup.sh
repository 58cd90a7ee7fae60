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
  libfftw3-dev                                  # FFTW: the sleep features' spectra (runtime libfftw3-double3)
  pkg-config openssl coreutils python3           # module maps, TLS test certificates, stdbuf
  python3-bleak python3-paho-mqtt                # the reference heart-rate bridge (deploy/hr-bridge)
  python3-dbusmock dbus                          # its test against a fake BlueZ
  systemd                                        # systemd-analyze, to check deploy/keepalive.service
  dpkg-dev binutils                              # dpkg-shlibdeps and strip for deploy/package-deb.sh
  libxml2-utils                                  # xmllint: the workout GPX/TCX tests validate against their XSDs
  python3-numpy                                  # scripts/steps-accuracy.py and Tests/Fixtures/steps/make_fixtures.py
  libpq-dev                                      # libpq: `keepalive archive` writes the fleet's archive (docs/fleet.md)
  libjs-leaflet libjs-chart.js                   # the day page's map and timeline (web/install-libs.sh copies them)
  node-mqtt node-buffer node-process node-events node-url esbuild  # the page's MQTT client, bundled by web/build.sh
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

# What only the test suite needs (scripts/test.sh sets KEEPALIVE_SETUP_TESTS=1): servers a Pi
# running the agent has no use for.
if [ "${KEEPALIVE_SETUP_TESTS:-0}" = 1 ]; then
  TEST_PACKAGES=(ejabberd postgresql postgresql-client)  # the fleet's tests: a clustered MQTT 5 broker and the archive's database
  TEST_PACKAGES+=(chromium chromium-driver python3-selenium python3-gpxpy)  # the day page in a real browser (scripts/page-check.sh)
  TEST_PACKAGES+=(tcpdump)  # FleetTLSTests: what crosses the loopback to the TLS nodes, captured
  TEST_PACKAGES+=(python3-cryptography)  # the fleet tests, fleet-bench and the page check: deploy/fleet/fleet-jwt.py signs the device tokens
  missing_tests=()
  for package in "${TEST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing_tests+=("$package")
  done
  if ((${#missing_tests[@]})); then
    echo "setup: installing for the tests ${missing_tests[*]}" >&2
    SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing_tests[@]}" ||
      $SUDO apt-get install -y -qq --no-install-recommends "${missing_tests[@]}"
    # Debian starts ejabberd's and PostgreSQL's own services on install (ejabberd listening for
    # MQTT on port 1883, where the demo looks for a broker): the tests and deploy/fleet/cluster.sh
    # run their own, so the packaged ones are stopped and disabled (docs/fleet.md).
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
      for service in ejabberd postgresql; do
        [[ " ${missing_tests[*]} " == *" $service "* ]] && { $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true; }
      done
    fi
  fi

  # chronyd, to check deploy/chrony against Debian's own: unpacked from the package, not installed
  # (installing chrony would replace this machine's time service).
  if [ ! -x /usr/sbin/chronyd ] && [ ! -x .build/tools/chrony/usr/sbin/chronyd ]; then
    download=$(mktemp -d)
    chmod 0777 "$download"  # apt's _apt user writes the download
    if ! (cd "$download" && apt-get download -qq chrony 2>/dev/null); then
      SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
      $SUDO apt-get update -qq
      (cd "$download" && apt-get download -qq chrony)
    fi
    mkdir -p .build/tools/chrony
    dpkg -x "$download"/chrony_*.deb .build/tools/chrony
    rm -rf "$download"
  fi
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
