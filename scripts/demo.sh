#!/usr/bin/env bash
# Sets everything up and runs the agent in the foreground, on this machine, right now:
#  - a broker: the one configured if it answers, else a local mosquitto on 127.0.0.1:1883;
#  - GPS: gpsd on 127.0.0.1:2947 if it has a receiver, else a bundled real receiver capture
#    replayed through gpsfake;
#  - heart rate: bundled real recordings replayed as bridge messages over UDP;
#  - the store and config under ./.demo/.
# Watch it with:   mosquitto_sub -t 'keepalive/#' -v
# Stop with Ctrl-C (everything this script started is stopped with it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if ! command -v swift >/dev/null 2>&1; then export PATH="/opt/swift/usr/bin:$PATH"; fi
BIN="$PWD/.build/debug/keepalive"
DEMO="$PWD/.demo"
mkdir -p "$DEMO"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PAGE_PORT=${PAGE_PORT:-9001}
PAGE_URL=""

# A broker.
if listening 1883; then
  echo "demo: using the MQTT broker already on 127.0.0.1:1883" >&2
else
  cat >"$DEMO/mosquitto.conf" <<CONF
per_listener_settings true
listener 1883 127.0.0.1
allow_anonymous true
set_tcp_nodelay true
persistence true
persistence_location $DEMO/
CONF
  # The day page (web/), served with MQTT over WebSockets on 127.0.0.1:$PAGE_PORT, account `page`
  # with the password in .demo/page.password, under the shipped page ACL.
  if listening "$PAGE_PORT"; then
    echo "demo: port $PAGE_PORT is taken: no day page (run with PAGE_PORT=<a free port> for one)" >&2
  else
    web/build.sh "$DEMO/web"
    [ -s "$DEMO/page.password" ] || echo keepalive >"$DEMO/page.password"
    rm -f "$DEMO/page.passwd"
    touch "$DEMO/page.passwd"
    mosquitto_passwd -b "$DEMO/page.passwd" page "$(cat "$DEMO/page.password")"
    cat >>"$DEMO/mosquitto.conf" <<CONF
listener $PAGE_PORT 127.0.0.1
protocol websockets
http_dir $DEMO/web
allow_anonymous false
password_file $DEMO/page.passwd
acl_file $PWD/deploy/mosquitto/keepalive-page.acl
CONF
    PAGE_URL="http://127.0.0.1:$PAGE_PORT/"
  fi
  if [ "$(id -u)" -eq 0 ]; then echo "user root" >>"$DEMO/mosquitto.conf"; fi
  mosquitto -c "$DEMO/mosquitto.conf" >"$DEMO/mosquitto.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 50); do listening 1883 && break; sleep 0.1; done
  echo "demo: started a local mosquitto on 127.0.0.1:1883 (log: .demo/mosquitto.log)" >&2
fi

# GPS: a real gpsd with a receiver, or the bundled capture through gpsfake.
GPS_PORT=2947
has_receiver() {
  python3 - "$1" <<'PY' 2>/dev/null
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
s.sendall(b'?DEVICES;\n'); data = b""
s.settimeout(2)
try:
    while b'"DEVICES"' not in data: data += s.recv(4096)
except Exception: pass
line = next(l for l in data.decode().splitlines() if '"DEVICES"' in l)
sys.exit(0 if json.loads(line).get("devices") else 1)
PY
}
if listening 2947 && has_receiver 2947; then
  echo "demo: using gpsd on 127.0.0.1:2947 and its receiver" >&2
else
  GPS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$DEMO/gpsfake"
  TMPDIR="$DEMO/gpsfake" gpsfake -P "$GPS_PORT" -q -c 0.5 Tests/Fixtures/gpsd/bu353s4.log >"$DEMO/gpsfake.log" 2>&1 &
  PIDS+=($!)
  echo "demo: replaying a real GlobalSat BU-353-S4 capture through gpsfake on port $GPS_PORT" >&2
fi

# Heart rate: an hour of real RR intervals (MIT-BIH, via pyhrv) replayed as a bridge would send them.
HR_PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 scripts/replay-hr.py "$HR_PORT" >"$DEMO/replay-hr.log" 2>&1 &
PIDS+=($!)
echo "demo: replaying recorded heart-rate bridge messages to UDP port $HR_PORT" >&2

cat >"$DEMO/config.toml" <<CONF
# Demo configuration written by scripts/demo.sh; see config.toml for every key.
[mqtt]
host = "127.0.0.1"
port = 1883
[gps]
port = $GPS_PORT
[hr]
transport = "udp"
udp_port = $HR_PORT
[store]
path = "$DEMO/keepalive.db"
synchronous = "normal"
[schedule]
location_interval_s = 60
status_interval_s = 30
CONF

if [ -n "$PAGE_URL" ]; then
  echo "demo: the day page is at $PAGE_URL — log in as 'page', password '$(cat "$DEMO/page.password")'" >&2
else
  echo "demo: no day page (docs/contract.md, \"The page\", says how to serve it from your own mosquitto)" >&2
fi
cat >&2 <<MSG
demo: starting the agent. In another terminal:
        mosquitto_sub -t 'keepalive/#' -v
        mosquitto_rr -V 5 -t keepalive/$("$BIN" check-config "$DEMO/config.toml" | sed -n 's/^id = "\(.*\)"/\1/p')/selection/date -e reply/me -m $(date +%F) -W 5
MSG
# The bundled capture is from 2014: treat the system clock as right, so fixes get today's time.
KEEPALIVE_CLOCK_SYNCHRONISED=1 "$BIN" run --config "$DEMO/config.toml" &
AGENT=$!
PIDS+=("$AGENT")
wait "$AGENT"
