#!/usr/bin/env bash
# The fleet benchmark (docs/fleet.md, "Figures"): for each device count (default 100 and 1000),
# a fresh three-node ejabberd cluster, PostgreSQL 15 and two archivers; simulated devices
# (deploy/fleet/fleet-load.py, the agent's wire format) publish for SECONDS while node 1 is
# SIGKILLed and PostgreSQL is stopped for 30 s, and stay connected afterwards answering the archive's
# resend requests (its gap fill); then messages/s, archive lag p50/p99, memory per node, what was
# filled from the devices and what is still lost, and per-date query p50/p99 through the cluster. Not a test: it prints a
# table, with every figure also as a ratio to the first device count's (the baseline of this run).
#
#   scripts/fleet-bench.sh [DEVICES…]          e.g. scripts/fleet-bench.sh 100 1000
#   FLEET_RATE=0.5 FLEET_SECONDS=120 …         messages per second per device, load duration
#   FLEET_FAULTS=0 …                           the load alone: no node killed, PostgreSQL not stopped
#   FLEET_RAMP=0 …                             seconds over which the devices first connect (0: all at once)
#   FLEET_RATE=0 FLEET_SECONDS=5 …              connect only: CONNECT-to-CONNACK times and CPU, nothing published
#   FLEET_PASSWORD_FORMAT=scram …              accounts stored as SCRAM (deploy/fleet/cluster.sh), to measure its cost
#   FLEET_AUTH=jwt …                           devices authenticate with tokens (deploy/fleet/fleet-jwt.py), no device account
#   FLEET_KEEP=1 …                             keep each size's work directory (acked.tsv, archived.tsv, logs)
#   FLEET_CONNINFO_EXTRA="options='-c synchronous_commit=off'" …   more libpq settings for the archivers' conninfo
#   KEEPALIVE_BIN=.build/release/keepalive …   the archiver binary (default: a release build)
#
# The cluster speaks plain MQTT here (cluster.sh without FLEET_TLS_DIR), unlike the fleet tests: the
# figures in docs/fleet.md were taken so, and a TLS run is a change of what is measured (a handshake
# per connect, records per message) not yet made.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
[ "$(id -u)" -eq 0 ] || { echo "fleet-bench: run as root (ejabberd and PostgreSQL run as their own users)" >&2; exit 1; }
counts=("$@"); [ ${#counts[@]} -gt 0 ] || counts=(100 1000)
rate="${FLEET_RATE:-0.5}"; seconds="${FLEET_SECONDS:-120}"; faults="${FLEET_FAULTS:-1}"; ramp="${FLEET_RAMP:-0}"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)  # Debian's newest (15 on bookworm, 17 on trixie)
if [ -z "${KEEPALIVE_BIN:-}" ]; then
  swift build -c release --product keepalive >&2
  KEEPALIVE_BIN="$root/.build/release/keepalive"
fi
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status" 2>/dev/null || echo 0; }
# CPU seconds (user + system) the given processes have used so far; gone ones count 0.
cpu_s() { local t=0 pid; for pid in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0))); done
  awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", t / hz}'; }
results="$(mktemp)"

for devices in "${counts[@]}"; do
  work="$(mktemp -d /tmp/fleet-bench.XXXXXX)"; chmod 755 "$work"
  # Three consecutive free ports for the nodes, below Linux's ephemeral range (32768-60999): a
  # client's outgoing connection can take an ephemeral port while a killed node is down, and the
  # node's restart then fails with eaddrinuse.
  base="$(/usr/bin/python3 -c "import random, socket
while True:
    base = random.randrange(20000, 32000)
    try:
        for p in range(base, base + 3):
            s = socket.socket(); s.bind(('127.0.0.1', p)); s.close()
        print(base); break
    except OSError:
        pass")"
  pgport="$(free_port)"
  pids=(); loaders=()
  cleanup() {
    for pid in "${pids[@]}" "${loaders[@]}"; do kill "$pid" 2>/dev/null || true; done
    runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1 || true
    deploy/fleet/cluster.sh down "$work/cluster" || true
  }
  trap cleanup EXIT
  echo "fleet-bench: $devices devices, $rate msg/s each, ${seconds} s, in $work" >&2
  if [ "${FLEET_AUTH:-password}" = jwt ]; then
    # Devices with tokens (ES256, one a device); the readers keep their passwords.
    deploy/fleet/fleet-jwt.py keys "$work/jwt" >/dev/null
    /usr/bin/python3 - "$work/jwt" "$devices" >"$work/devices.txt" <<'PY'
import contextlib, importlib.util, io, sys
spec = importlib.util.spec_from_file_location("fleet_jwt", "deploy/fleet/fleet-jwt.py")
fleet_jwt = importlib.util.module_from_spec(spec); spec.loader.exec_module(fleet_jwt)
for i in range(1, int(sys.argv[2]) + 1):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fleet_jwt.token(sys.argv[1], f"b{i:05d}", "fleet.keepalive", 1)
    print(f"b{i:05d}:{out.getvalue().strip()}")
PY
    FLEET_JWT_DIR="$work/jwt" deploy/fleet/cluster.sh up "$work/cluster" "$base" >/dev/null
  else
    seq -f 'b%05g' 1 "$devices" | awk '{print $1 ":pw-" $1}' >"$work/devices.txt"
    deploy/fleet/cluster.sh up "$work/cluster" "$base" >/dev/null
  fi
  mkdir -p "$work/pg"; chown postgres "$work/pg"
  runuser -u postgres -- "$pgbin/initdb" -D "$work/pg/data" -A trust -U postgres --no-sync >/dev/null
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -o "-p $pgport -k $work/pg -c listen_addresses=''" -l "$work/pg/log" -w start >/dev/null
  conninfo="host=$work/pg port=$pgport user=postgres dbname=postgres${FLEET_CONNINFO_EXTRA:+ $FLEET_CONNINFO_EXTRA}"

  # Accounts in bulk (one ejabberdctl call): XEP-0227 import.
  /usr/bin/python3 - "$devices" >"$work/users.xml" <<'PY'
import sys
n = int(sys.argv[1])
print("<?xml version='1.0' encoding='UTF-8'?><server-data xmlns='urn:xmpp:pie:0'><host jid='fleet.keepalive'>")
for name in [f"b{i:05d}" for i in range(1, n + 1)] + ["archive", "viewer"]:
    print(f"<user name='{name}' password='pw-{name}'/>")
print("</host></server-data>")
PY
  chmod 644 "$work/users.xml"
  # No ejabberdctl timeout: 1 000 accounts took longer than it on the loaded build machine (exit 3).
  deploy/fleet/cluster.sh ctl "$work/cluster" 1 --no-timeout import_piefxis "$work/users.xml" >/dev/null
  echo "pw-archive" >"$work/archive.pw"; chmod 600 "$work/archive.pw"
  for n in 1 2; do
    cat >"$work/archive-$n.toml" <<TOML
[device]
id = "archive"
timezone = "UTC"
[mqtt]
host = "127.0.0.1"
port = $((base + n - 1))
username = "archive"
password_file = "$work/archive.pw"
client_id = "archive-$n"
keepalive_s = 10
reconnect_max_s = 2
[gps]
enabled = false
[hr]
transport = "none"
[archive]
conninfo = "$conninfo"
status_interval_s = 5
TOML
    "$KEEPALIVE_BIN" archive --config "$work/archive-$n.toml" >"$work/archive-$n.log" 2>&1 &
    pids+=($!)
  done
  sleep 3

  # The load: 250 devices per process (each process one epoll loop), so the load uses both cores.
  nodes="127.0.0.1:$base,127.0.0.1:$((base + 1)),127.0.0.1:$((base + 2))"
  for ((first = 1; first <= devices; first += 250)); do
    last=$((first + 249 < devices ? first + 249 : devices))
    sed -n "${first},${last}p" "$work/devices.txt" >"$work/devices-$first.txt"
    /usr/bin/python3 deploy/fleet/fleet-load.py --nodes "$nodes" --devices "@$work/devices-$first.txt" --rate "$rate" --seconds "$seconds" \
      --ramp "$ramp" \
      --out "$work/acked-$first.tsv" --linger 900 2>"$work/load-$first.log" &
    loaders+=($!)
  done
  start=$(date +%s); start_ms=$((start * 1000))
  # Who uses the CPU during the load: the nodes, the load processes, the archivers, PostgreSQL.
  node_pids=(); for n in 1 2 3; do node_pids+=("$(deploy/fleet/cluster.sh pid "$work/cluster" $n)"); done
  pg_pids() { local pm; pm="$(head -1 "$work/pg/data/postmaster.pid" 2>/dev/null)" || return 0; echo "$pm" $(ps -o pid= --ppid "$pm"); }
  cpu0="$(cpu_s "${node_pids[@]}") $(cpu_s "${loaders[@]}") $(cpu_s "${pids[@]}") $(cpu_s $(pg_pids))"
  load0="$(cut -d' ' -f1 /proc/loadavg)"
  at() { local wait=$((start + $1 - $(date +%s))); [ "$wait" -le 0 ] || sleep "$wait"; }
  at 20
  mem=""; for n in 1 2 3; do mem+="$(rss_mb "$(deploy/fleet/cluster.sh pid "$work/cluster" $n)") "; done
  arch_mem="$(rss_mb "${pids[0]}")"
  if [ "$faults" = 1 ]; then
    at 30;  killed_ms=$(date +%s%3N); kill -9 "$(deploy/fleet/cluster.sh pid "$work/cluster" 1)"
    at 50;  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null
    at 80;  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -o "-p $pgport -k $work/pg -c listen_addresses=''" -l "$work/pg/log" -w start >/dev/null
    at 90;  deploy/fleet/cluster.sh start "$work/cluster" 1 >/dev/null || echo "fleet-bench: node 1 did not restart" >&2
  else
    # No fault: every message is "calm" (sent before a kill that never comes).
    killed_ms=$(((start + seconds + 3600) * 1000))
  fi
  # Each load process writes its file when its run ends (at most 300 s late, its devices stuck
  # reconnecting), then lingers answering resend requests.
  deadline=$(($(date +%s) + seconds + 400))
  for ((first = 1; first <= devices; first += 250)); do
    while [ ! -f "$work/acked-$first.tsv" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done
  done
  # Only when nothing was killed (node 1's restart is a new process, PostgreSQL's too).
  cpu1="$(cpu_s "${node_pids[@]}") $(cpu_s "${loaders[@]}") $(cpu_s "${pids[@]}") $(cpu_s $(pg_pids))"
  load1="$(cut -d' ' -f1 /proc/loadavg)"; load_s=$(($(date +%s) - start))
  cat "$work"/acked-*.tsv >"$work/acked.tsv" 2>/dev/null || true
  unfinished=$(cat "$work"/load-*.log | grep -o '"unfinished": [0-9]*' | awk '{n += $2} END {print n + 0}')
  acked=$(wc -l <"$work/acked.tsv")

  # Caught up: every acknowledged message archived, or the row count unchanged for 30 s (three of
  # the archivers' status periods, in which they ask for what is missing); at most 5 minutes.
  previous=-1; still=0
  for _ in $(seq 1 150); do
    rows="$(psql "$conninfo" -At -c 'SELECT count(*) FROM archive_messages')"
    [ "$rows" -ge "$acked" ] && break
    if [ "$rows" = "$previous" ]; then still=$((still + 1)); [ "$still" -ge 15 ] && break; else still=0; fi
    previous="$rows"; sleep 2
  done
  psql "$conninfo" -At -F $'\t' -c "SELECT device, seq, (extract(epoch FROM received_at) * 1000)::bigint FROM archive_messages" >"$work/archived.tsv"

  # Per-date queries through the cluster: a day reply for 100 devices, asked on node 3.
  psql "$conninfo" -q -c "INSERT INTO archive_days (device, day, body, source_seq)
    SELECT 'b' || lpad(i::text, 5, '0'), '2026-11-24', '{\"ok\":true,\"date\":\"2026-11-24\",\"tz\":\"UTC\",\"has_data\":true,\"health\":{},\"location\":{}}', 1
    FROM generate_series(1, least($devices, 100)) i ON CONFLICT DO NOTHING"
  query="$(/usr/bin/python3 deploy/fleet/fleet-query.py --node "127.0.0.1:$((base + 2))" --user viewer --password pw-viewer \
    --devices "$(seq -f 'b%05g' 1 $((devices < 100 ? devices : 100)) | paste -sd,)" --date 2026-11-24 --count 500)"

  connect="$(cat "$work"/load-*.log | grep -o '"connack_ms": {[^}]*}' | sed 's/"connack_ms": //' | paste -sd, )"
  puback="$(cat "$work"/load-*.log | grep -o '"puback_ms": {[^}]*}' | sed 's/"puback_ms": //' | paste -sd, )"
  /usr/bin/python3 - "$work" "$devices" "$seconds" "$killed_ms" "$mem" "$arch_mem" "$query" "$start_ms" "$unfinished" \
    "$cpu0" "$cpu1" "$load_s" "$load0 $load1" "[$connect]" "[$puback]" "$faults" >>"$results" <<'PY'
import json, re, sys
work, devices, seconds, killed, mem, arch_mem, query, start_ms, unfinished, cpu0, cpu1, load_s, loadavg, connect, puback, faults = sys.argv[1:]
# CPU share of each part while the load ran (of one core; the machine has two).
cpu = {name: round(100 * (float(b) - float(a)) / float(load_s)) for name, a, b in
       zip(["nodes", "load", "archivers", "postgres"], cpu0.split(), cpu1.split())} if faults == "0" else "faults: processes restarted"
# Each load process's p50/p99 (CONNECT to CONNACK, publish to PUBACK); the worst of them.
worst = lambda stats, key: max((s[key] for s in stats if s[key] is not None), default=None)
sent = {}
for line in open(f"{work}/acked.tsv"):
    d, s, t = line.split("\t"); sent[(d, int(s))] = int(t)
archived = {}
for line in open(f"{work}/archived.tsv"):
    d, s, t = line.rstrip("\n").split("\t"); archived[(d, int(s))] = int(t)
lost = [k for k in sent if k not in archived]
window = [k for k in lost if int(killed) - 1000 <= sent[k] <= int(killed) + 5000]
lags = sorted(archived[k] - sent[k] for k in sent if k in archived)
calm = sorted(archived[k] - sent[k] for k in sent if k in archived and sent[k] < int(killed) - 1000)
pct = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None
# Rows stored from the devices' resend replies: the last status each archiver logged.
filled = 0
for n in (1, 2):
    found = re.findall(r'\\?"filled\\?":(\d+)', open(f"{work}/archive-{n}.log", errors="replace").read())
    filled += int(found[-1]) if found else 0
print(json.dumps({"devices": int(devices), "acked": len(sent), "msg_per_s": round(len(sent) / float(seconds), 1),
                  "archived": len(archived), "filled": filled, "devices_unfinished": int(unfinished), "lost": len(lost), "lost_at_node_death": len(window),
                  "lag_p50_ms": pct(lags, .5), "lag_p99_ms": pct(lags, .99),
                  "lag_calm_p50_ms": pct(calm, .5), "lag_calm_p99_ms": pct(calm, .99),
                  "node_rss_mb": [int(x) for x in mem.split()], "archiver_rss_mb": int(arch_mem), "query": json.loads(query),
                  "connack_ms_p50_p99": [worst(json.loads(connect), "p50"), worst(json.loads(connect), "p99")],
                  "puback_ms_p50_p99": [worst(json.loads(puback), "p50"), worst(json.loads(puback), "p99")],
                  "cpu_percent": cpu, "load_average_start_end": loadavg.split(),
                  # When the lost ones were sent, in seconds after the load started (faults: node 1 killed
                  # at 30, PostgreSQL stopped 50-80, node 1 started again at 90).
                  "lost_sent_at_s": sorted({round((sent[k] - int(start_ms)) / 1000) for k in lost})}))
PY
  tail -1 "$results" >&2
  cleanup; trap - EXIT
  if [ -n "${FLEET_KEEP:-}" ]; then echo "fleet-bench: kept $work" >&2; else rm -rf "$work"; fi
done

/usr/bin/python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = rows[0]
def ratio(a, b): return f"{a / b:.2f}x" if a and b else "-"
def cell(value, width): return f"{'-' if value is None else value:>{width}}"
columns = [("devices", 8, lambda r: r["devices"]), ("msg/s", 8, lambda r: r["msg_per_s"]), ("acked", 8, lambda r: r["acked"]),
           ("filled", 7, lambda r: r["filled"]), ("lost", 6, lambda r: r["lost"]), ("(node death)", 12, lambda r: r["lost_at_node_death"]),
           ("lag p50", 8, lambda r: r["lag_p50_ms"]), ("lag p99", 8, lambda r: r["lag_p99_ms"]),
           ("calm p50", 9, lambda r: r["lag_calm_p50_ms"]), ("calm p99", 9, lambda r: r["lag_calm_p99_ms"]),
           ("connack p99", 11, lambda r: r["connack_ms_p50_p99"][1]), ("puback p99", 10, lambda r: r["puback_ms_p50_p99"][1]),
           ("node RSS MB", 14, lambda r: "/".join(map(str, r["node_rss_mb"]))), ("archiver MB", 11, lambda r: r["archiver_rss_mb"]),
           ("query p50", 9, lambda r: r["query"]["p50_ms"]), ("query p99", 9, lambda r: r["query"]["p99_ms"])]
print(" ".join(cell(name, width) for name, width, _ in columns))
for r in rows:
    print(" ".join(cell(value(r), width) for _, width, value in columns))
for r in rows[1:]:
    print(f"ratio {r['devices']}/{base['devices']} devices: msg/s {ratio(r['msg_per_s'], base['msg_per_s'])}, calm lag p99 "
          f"{ratio(r['lag_calm_p99_ms'], base['lag_calm_p99_ms'])}, CONNACK p99 {ratio(r['connack_ms_p50_p99'][1], base['connack_ms_p50_p99'][1])}, "
          f"node RSS {ratio(sum(r['node_rss_mb']), sum(base['node_rss_mb']))}, query p99 {ratio(r['query']['p99_ms'], base['query']['p99_ms'])}")
PY
rm -f "$results"
