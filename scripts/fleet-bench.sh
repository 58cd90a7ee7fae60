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
#   FLEET_RAMP=0 …                             seconds over which the devices first connect (0: all at once),
#                                              like Pis booting over a while; the faults start after it
#   FLEET_RATE=0 FLEET_SECONDS=5 …              connect only: CONNECT-to-CONNACK times and CPU, nothing published
#                                              (the nodes' CPU per device: node_cpu_ms_per_device in the JSON line)
#   FLEET_TLS=0 …                              plain MQTT instead of TLS (as the figures before 2026-11-28 23:30 UTC)
#   FLEET_SEQ_ONLY=1 …                         devices send one SUBSCRIBE (selection/seq) on connect, not what a Pi's
#                                              bridge sends (fleet-load.py --seq-only: the figures before 2026-11-29 06:00 UTC)
#   FLEET_REVOKED_RULE=0 …                     topic rules without the group "revoked" (deploy/fleet/cluster.sh), to measure it
#   FLEET_SCHEDULERS="" … / FLEET_DIST_TLS=0 … Erlang's default schedulers (not one a node) / plain distribution (cluster.sh)
#   FLEET_KEEP=1 …                             keep each size's work directory (acked.tsv, archived.tsv, logs)
#   FLEET_CONNINFO_EXTRA="options='-c synchronous_commit=off'" …   more libpq settings for the archivers' conninfo
#   KEEPALIVE_BIN=.build/release/keepalive …   the archiver binary (default: a release build)
#
# As deployed: the nodes speak MQTT over TLS only (cluster.sh with FLEET_TLS_DIR; the load, the
# archivers and the queries verify them), devices log in with tokens (one ES256 JWT each, signed in
# bulk by fleet-jwt.py tokens), the readers with SCRAM-stored passwords. PostgreSQL is local (Unix
# socket, trust): its TLS is the tests' (FleetTLSTests), not what is measured here.
# The CPU of each part (nodes, load, archivers, PostgreSQL) while the load runs: scripts/fleet-cpu.py,
# which follows restarted processes, so also with faults.
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
  # Devices with tokens (ES256, one a device, valid a day), no device account on the nodes.
  deploy/fleet/fleet-jwt.py keys "$work/jwt" >/dev/null
  seq -f 'b%05g' 1 "$devices" | deploy/fleet/fleet-jwt.py tokens "$work/jwt" fleet.keepalive 1 >"$work/devices.txt"
  if [ "${FLEET_TLS:-1}" = 1 ]; then
    deploy/fleet/fleet-ca.sh "$work/tls" localhost >/dev/null
    export FLEET_TLS_DIR="$work/tls"
    client_host=localhost; tls=true; cafile="$work/tls/ca.pem"; cafile_arg=(--cafile "$cafile")
  else
    unset FLEET_TLS_DIR
    client_host=127.0.0.1; tls=false; cafile=""; cafile_arg=()
  fi
  FLEET_JWT_DIR="$work/jwt" deploy/fleet/cluster.sh up "$work/cluster" "$base" >/dev/null
  mkdir -p "$work/pg"; chown postgres "$work/pg"
  runuser -u postgres -- "$pgbin/initdb" -D "$work/pg/data" -A trust -U postgres --no-sync >/dev/null
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -o "-p $pgport -k $work/pg -c listen_addresses=''" -l "$work/pg/log" -w start >/dev/null
  conninfo="host=$work/pg port=$pgport user=postgres dbname=postgres${FLEET_CONNINFO_EXTRA:+ $FLEET_CONNINFO_EXTRA}"

  # The readers' accounts (stored as SCRAM); the devices have none.
  for reader in archive viewer; do deploy/fleet/cluster.sh ctl "$work/cluster" 1 register "$reader" fleet.keepalive "pw-$reader" >/dev/null; done
  echo "pw-archive" >"$work/archive.pw"; chmod 600 "$work/archive.pw"
  for n in 1 2; do
    sed -e "s|@HOST@|$client_host|g" -e "s|@PORT@|$((base + n - 1))|g" -e "s|@TLS@|$tls|g" -e "s|@CAFILE@|$cafile|g" \
      -e "s|@PASSWORD_FILE@|$work/archive.pw|g" -e "s|@CLIENT_ID@|archive-$n|g" -e "s|@CONNINFO@|$conninfo|g" \
      -e "s|@STATUS_INTERVAL_S@|5|g" -e "s|@NODES@||g" deploy/fleet/archive.toml.in >"$work/archive-$n.toml"
    "$KEEPALIVE_BIN" archive --config "$work/archive-$n.toml" >"$work/archive-$n.log" 2>&1 &
    pids+=($!)
  done
  echo "${pids[@]}" >"$work/archivers.pids"
  sleep 3

  # The load: 250 devices per process (each process one epoll loop), so the load uses both cores.
  nodes="$client_host:$base,$client_host:$((base + 1)),$client_host:$((base + 2))"
  for ((first = 1; first <= devices; first += 250)); do
    last=$((first + 249 < devices ? first + 249 : devices))
    sed -n "${first},${last}p" "$work/devices.txt" >"$work/devices-$first.txt"
    /usr/bin/python3 deploy/fleet/fleet-load.py --nodes "$nodes" --devices "@$work/devices-$first.txt" --rate "$rate" --seconds "$seconds" \
      --ramp "$ramp" "${cafile_arg[@]}" ${FLEET_SEQ_ONLY:+--seq-only} \
      --out "$work/acked-$first.tsv" --linger 900 --keep-publishing 1 2>"$work/load-$first.log" &
    loaders+=($!)
  done
  start=$(date +%s); start_ms=$((start * 1000))
  # Who uses the CPU during the load: the nodes, the load processes, the archivers, PostgreSQL
  # (followed through node 1's and PostgreSQL's restarts).
  echo "${loaders[@]}" >"$work/loaders.pids"
  /usr/bin/python3 scripts/fleet-cpu.py "$work" >"$work/cpu.json" &
  sampler=$!; pids+=("$sampler")
  load0="$(cut -d' ' -f1 /proc/loadavg)"
  at() { local wait=$((start + $1 - $(date +%s))); [ "$wait" -le 0 ] || sleep "$wait"; }
  at $((ramp + 20))
  mem=""; for n in 1 2 3; do mem+="$(rss_mb "$(deploy/fleet/cluster.sh pid "$work/cluster" $n)") "; done
  arch_mem="$(rss_mb "${pids[0]}")"
  if [ "$faults" = 1 ]; then
    at $((ramp + 30));  killed_ms=$(date +%s%3N); kill -9 "$(deploy/fleet/cluster.sh pid "$work/cluster" 1)"
    at $((ramp + 50));  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null
    at $((ramp + 80));  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/data" -o "-p $pgport -k $work/pg -c listen_addresses=''" -l "$work/pg/log" -w start >/dev/null
    at $((ramp + 90));  deploy/fleet/cluster.sh start "$work/cluster" 1 >/dev/null || echo "fleet-bench: node 1 did not restart" >&2
  else
    # No fault: every message is "calm" (sent before a kill that never comes).
    killed_ms=$(((start + ramp + seconds + 3600) * 1000))
  fi
  # Each load process writes its file when its run ends (at most 300 s late, its devices stuck
  # reconnecting), then lingers answering resend requests.
  deadline=$(($(date +%s) + ramp + seconds + 400))
  for ((first = 1; first <= devices; first += 250)); do
    while [ ! -f "$work/acked-$first.tsv" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done
  done
  kill "$sampler"; wait "$sampler" || true
  load1="$(cut -d' ' -f1 /proc/loadavg)"
  cat "$work"/acked-*.tsv >"$work/acked.tsv" 2>/dev/null || true
  unfinished=$(cat "$work"/load-*.log | grep -o '"unfinished": [0-9]*' | awk '{n += $2} END {print n + 0}')
  acked=$(wc -l <"$work/acked.tsv")

  # Caught up: every acknowledged message archived, or the number still missing unchanged for 30 s
  # (three of the archivers' status periods, in which they ask for what is missing); at most 5
  # minutes. Each device publishes one more message after its run (--keep-publishing 1: an agent
  # never stops), so a message lost at the end of its run shows as a gap before that one.
  psql "$conninfo" -q -c "CREATE TABLE bench_acked (device text, seq bigint)"
  cut -f1,2 "$work/acked.tsv" | psql "$conninfo" -q -c "\copy bench_acked FROM STDIN"
  previous=-1; still=0
  for _ in $(seq 1 150); do
    missing="$(psql "$conninfo" -At -c 'SELECT count(*) FROM bench_acked a WHERE NOT EXISTS
      (SELECT 1 FROM archive_messages m WHERE m.device = a.device AND m.seq = a.seq)')"
    [ "$missing" -eq 0 ] && break
    if [ "$missing" = "$previous" ]; then still=$((still + 1)); [ "$still" -ge 15 ] && break; else still=0; fi
    previous="$missing"; sleep 2
  done
  psql "$conninfo" -At -F $'\t' -c "SELECT device, seq, (extract(epoch FROM received_at) * 1000)::bigint FROM archive_messages" >"$work/archived.tsv"

  # Per-date queries through the cluster: a day reply for 100 devices, asked on node 3.
  psql "$conninfo" -q -c "INSERT INTO archive_days (device, day, body, source_seq)
    SELECT 'b' || lpad(i::text, 5, '0'), '2026-11-24', '{\"ok\":true,\"date\":\"2026-11-24\",\"tz\":\"UTC\",\"has_data\":true,\"health\":{},\"location\":{}}', 1
    FROM generate_series(1, least($devices, 100)) i ON CONFLICT DO NOTHING"
  query="$(/usr/bin/python3 deploy/fleet/fleet-query.py --node "$client_host:$((base + 2))" --user viewer --password pw-viewer "${cafile_arg[@]}" \
    --devices "$(seq -f 'b%05g' 1 $((devices < 100 ? devices : 100)) | paste -sd,)" --date 2026-11-24 --count 500)"

  connect="$(cat "$work"/load-*.log | grep -o '"connack_ms": {[^}]*}' | sed 's/"connack_ms": //' | paste -sd, )"
  puback="$(cat "$work"/load-*.log | grep -o '"puback_ms": {[^}]*}' | sed 's/"puback_ms": //' | paste -sd, )"
  /usr/bin/python3 - "$work" "$devices" "$seconds" "$killed_ms" "$mem" "$arch_mem" "$query" "$start_ms" "$unfinished" \
    "$load0 $load1" "[$connect]" "[$puback]" "$tls" >>"$results" <<'PY'
import json, re, sys
work, devices, seconds, killed, mem, arch_mem, query, start_ms, unfinished, loadavg, connect, puback, tls = sys.argv[1:]
# CPU of each part while the load ran (scripts/fleet-cpu.py): seconds, and % of one core (the machine has two).
sampled = json.load(open(f"{work}/cpu.json"))
cpu_s = sampled["cpu_s"]
cpu = {name: round(100 * used / sampled["seconds"]) for name, used in cpu_s.items()}
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
                  "archived": sum(1 for k in sent if k in archived), "filled": filled, "devices_unfinished": int(unfinished), "lost": len(lost), "lost_at_node_death": len(window),
                  "lag_p50_ms": pct(lags, .5), "lag_p99_ms": pct(lags, .99),
                  "lag_calm_p50_ms": pct(calm, .5), "lag_calm_p99_ms": pct(calm, .99),
                  "node_rss_mb": [int(x) for x in mem.split()], "archiver_rss_mb": int(arch_mem), "query": json.loads(query),
                  "connack_ms_p50_p99": [worst(json.loads(connect), "p50"), worst(json.loads(connect), "p99")],
                  "puback_ms_p50_p99": [worst(json.loads(puback), "p50"), worst(json.loads(puback), "p99")],
                  "cpu_percent": cpu, "cpu_s": cpu_s, "cpu_window_s": sampled["seconds"], "tls": tls == "true",
                  # The connect-only mode's figure (FLEET_RATE=0): the nodes' CPU over the run per device.
                  "node_cpu_ms_per_device": round(1000 * cpu_s["nodes"] / int(devices), 2),
                  "load_average_start_end": loadavg.split(),
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
           ("query p50", 9, lambda r: r["query"]["p50_ms"]), ("query p99", 9, lambda r: r["query"]["p99_ms"]),
           ("CPU s nodes/load/arch/pg", 24, lambda r: "/".join(str(r["cpu_s"][k]) for k in ("nodes", "load", "archivers", "postgres")))]
print(" ".join(cell(name, width) for name, width, _ in columns))
for r in rows:
    print(" ".join(cell(value(r), width) for _, width, value in columns))
for r in rows[1:]:
    print(f"ratio {r['devices']}/{base['devices']} devices: msg/s {ratio(r['msg_per_s'], base['msg_per_s'])}, calm lag p99 "
          f"{ratio(r['lag_calm_p99_ms'], base['lag_calm_p99_ms'])}, CONNACK p99 {ratio(r['connack_ms_p50_p99'][1], base['connack_ms_p50_p99'][1])}, "
          f"node RSS {ratio(sum(r['node_rss_mb']), sum(base['node_rss_mb']))}, query p99 {ratio(r['query']['p99_ms'], base['query']['p99_ms'])}")
PY
rm -f "$results"
