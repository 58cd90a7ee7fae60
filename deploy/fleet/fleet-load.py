#!/usr/bin/python3
"""Simulated KeepAlive devices for the fleet test and benchmark (docs/fleet.md).

Each device speaks the agent's wire format on its own account: MQTT v5, QoS 1, JSON with a
per-device `seq`, content type application/json, on keepalive/<device>/location (an OwnTracks
fix), …/status and …/health/today, in the agent's proportions. A device waits for each PUBACK
before the next message (as the agent's outbox does per message in flight); when its connection
is lost it connects to the next node and sends the unacknowledged message again with the same seq.
It connects and reconnects as a Pi's mosquitto bridge does, without blocking the loop
(fleet_bridge.py, beside it, says how).

  fleet-load.py --nodes 127.0.0.1:1883,127.0.0.1:1884 --devices d1:pw1,d2:pw2 --rate 5 --seconds 60 --out acked.tsv
  fleet-load.py --cafile ca.pem --nodes localhost:8883,… …     the same over TLS (names as in the nodes' certificate)

Writes one line per acknowledged message, "device<TAB>seq<TAB>sent_unix_ms", and a summary on stderr
(with CONNECT-to-CONNACK and publish-to-PUBACK times, p50/p99 in ms).

All devices of a process share one thread and one epoll loop (paho driven from outside:
loop_read/loop_write/loop_misc): no thread per device (a thread per device and one per paho
network loop made 1 000 devices on 2 cores spend their time in the GIL), and no select() limit.
Devices connect spread over --ramp seconds, as a fleet that comes up over a while would.

Each device connects as a Pi's bridge does, from pi-bridge.conf.in (fleet_bridge.py): the bridge's
will, its state published retained, one SUBSCRIBE per `topic … in` line and, unless the template
says `bridge_attempt_unsubscribe false`, one UNSUBSCRIBE per `out` line, on every connect
(--seq-only: one SUBSCRIBE to selection/seq, nothing else).
Like the agent ([store] keep_published_h), each device keeps what it published and answers resend
requests on keepalive/<device>/selection/seq ({"from":N,"to":M}, v5 response topic and correlation
data) with {"ok":true,"from","to","messages":[{"seq","topic","payload"}],"not_kept":[[a,b]…],"next"}.
With --linger S the devices stay connected S seconds after the run (the out file and the summary are
written when the run ends), answering requests, or until SIGTERM; with --keep-publishing N each also
publishes N more messages at --rate meanwhile (not in the out file), as an agent never stops: a
message lost at the end of a device's run is then followed by a later seq, the gap the archive
looks for.
"""
import argparse, json, os, selectors, signal, sys, time
import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes

from fleet_bridge import SELECTOR, TLS, BridgeConnection, configure

LINGERING = [False]  # --keep-publishing, once the run is over


def resend_reply(request_payload, kept):
    """The reply to a resend request {"from":N,"to":M}: the kept messages of the range, as published,
    48 KiB at most (then "next"), and the seqs not kept."""
    try:
        request = json.loads(request_payload)
        first, last = int(request["from"]), int(request["to"])
        assert 0 <= first <= last
    except (ValueError, KeyError, TypeError, AssertionError):
        return {"ok": False, "error": {"code": "bad_request", "message": "expected {\"from\":N,\"to\":M}"}}
    found = [(seq,) + kept[seq] for seq in sorted(seq for seq in kept if first <= seq <= last)]
    messages, size, covered = [], 0, last
    for seq, kept_topic, payload in found:
        if messages and size + len(payload) > 48 * 1024:
            covered = messages[-1]["seq"]
            break
        messages.append({"seq": seq, "topic": kept_topic, "payload": payload.decode()})
        size += len(payload) + len(kept_topic)
    not_kept, expected = [], first
    for seq in [m["seq"] for m in messages]:
        if seq > expected:
            not_kept.append([expected, seq - 1])
        expected = seq + 1
    if expected <= covered:
        not_kept.append([expected, covered])
    body = {"ok": True, "from": first, "to": last, "messages": messages, "not_kept": not_kept}
    if covered < last:
        body["next"] = covered + 1
    return body


class Device(BridgeConnection):
    def __init__(self, name, password, nodes, args, start_at, results):
        self.name, self.password, self.nodes, self.args = name, password, nodes, args
        self.interval = 1.0 / args.rate if args.rate > 0 else None
        self.seq, self.results = args.start_seq, results
        self.node_index, self.client, self.fd, self.state = 0, None, None, "waiting"
        self.retry_at, self.connect_started, self.misc_at = start_at, 0.0, 0.0
        # The bridge's backoff (restart_timeout BASE CAP) and its return to the first node.
        self.restart_timeout, self.primary_check_at, self.primary_probe = args.backoff_base, None, None
        self.sock = None  # the socket while it connects and shakes hands, before paho takes it
        self.failovers, self.retries, self.resends, self.ignored, self.error = 0, 0, 0, 0, None
        self.connack_ms, self.puback_ms = [], []
        # seq -> (topic, payload) of every message the broker acknowledged: what a resend answers from.
        self.kept = {}
        # What is to be sent before the regular stream: what the archive must count and never store.
        self.pending = [(f"keepalive/{name}/status", b"{not json"), (f"keepalive/{name}/status", b'{"state":"online"}')] if args.malformed else []
        self.in_flight = None  # (mid, topic, payload, first_sent_ms, sent_monotonic, is_data)
        self.end, self.next_at = None, None  # the run starts when the device first connects
        self.after_run = args.keep_publishing  # messages still to publish while lingering

    @property
    def finished(self):
        return self.end is not None and time.monotonic() >= self.end and self.in_flight is None and not self.pending

    # The socket, registered with the loop under its descriptor number (paho may close it inside
    # any of its calls; unregistering a closed descriptor is harmless with epoll).
    def on_connect(self, client, userdata, flags, reason, properties=None):
        if reason != 0:
            return  # the broker closes the connection; on_disconnect moves on
        now = time.monotonic()
        self.state = "connected"
        self.connack_ms.append((now - self.connect_started) * 1000)
        self.restart_timeout = self.args.backoff_base  # mosquitto's bridge__backoff_reset on CONNACK
        if self.node_index % len(self.nodes) != 0:
            self.primary_check_at = now + self.args.primary_retry
        self.send_after_connack(client)
        if self.end is None:
            self.end = now + self.args.seconds
            self.next_at = now
        if self.in_flight is not None:  # sent again, the same seq, on the new connection
            _, topic, payload, first_ms, _, is_data = self.in_flight
            self.send(topic, payload, first_ms, is_data)

    def on_disconnect(self, client, userdata, reason, properties=None):
        if client is self.client:
            self.lost(time.monotonic())

    def on_publish(self, client, userdata, mid):
        if self.in_flight is None or self.in_flight[0] != mid or client is not self.client:
            return  # a resend reply's PUBACK
        _, topic, payload, first_ms, sent, is_data = self.in_flight
        self.puback_ms.append((time.monotonic() - sent) * 1000)
        self.in_flight = None
        if is_data:
            self.kept[self.seq] = (topic, payload)
            self.results.append((self.name, self.seq, first_ms))
            self.seq += 1

    def on_message(self, client, userdata, message):
        """A resend request: the kept messages of the range, as published. Nothing else is
        answered (a simulated device keeps no days, takes no commands)."""
        if message.topic != f"keepalive/{self.name}/selection/seq":
            self.ignored += 1
            return
        props = message.properties
        reply = Properties(PacketTypes.PUBLISH)
        reply.ContentType = "application/json"
        if getattr(props, "CorrelationData", None) is not None:
            reply.CorrelationData = props.CorrelationData
        topic = getattr(props, "ResponseTopic", None) or f"keepalive/{self.name}/selection/result"
        self.resends += 1
        client.publish(topic, json.dumps(resend_reply(message.payload, self.kept), separators=(",", ":")), qos=1, properties=reply)

    def send(self, topic, payload, first_ms, is_data):
        properties = None
        if is_data:
            properties = Properties(PacketTypes.PUBLISH)
            properties.ContentType = "application/json"
            properties.PayloadFormatIndicator = 1
        info = self.client.publish(topic, payload, qos=1, properties=properties)
        self.in_flight = (info.mid, topic, payload, first_ms, time.monotonic(), is_data)

    def message(self, now):
        kind = self.seq % 10
        if kind == 0:
            return "status", {"state": "online", "seq": self.seq, "version": "load", "since": "2026-11-25T00:00:00Z"}
        if kind == 5:
            return "health/today", {"date": "2026-11-25", "tz": "UTC", "final": False, "seq": self.seq}
        return "location", {"_type": "location", "lat": 52.52 + self.seq * 1e-6, "lon": 13.405, "tst": int(now),
                            "created_at": int(now), "acc": 5, "tid": self.name[-2:], "t": "t", "mode": 3, "seq": self.seq}

    def fail(self, error):
        """A device that stops early must fail the run (exit 1, named in "failed"), not vanish."""
        self.error, self.state, self.end = repr(error), "failed", time.monotonic()
        self.in_flight, self.pending = None, []
        if self.fd is not None:
            SELECTOR.unregister(self.fd)
            self.fd = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.drop_probe()
        client, self.client = self.client, None
        if client is not None:
            client.on_disconnect = None
            try:
                client.disconnect()
            except Exception:
                pass

    def tick(self, now):
        """Timers: connecting, keepalive pings, the next message, a PUBACK that never comes."""
        if self.state == "waiting":
            if now >= self.retry_at:
                self.connect(now)
            return
        if self.state in ("tcp", "handshake", "connecting") and now - self.connect_started > self.args.connect_timeout:
            self.lost(now)
            return
        # paho's keepalive check would drop a connection still waiting for its CONNACK after
        # `keepalive` seconds: the connect timeout above decides that instead.
        if self.state == "connected":
            self.check_primary(now)
            if self.state != "connected":
                return
        if self.state == "connected" and now >= self.misc_at:
            self.misc_at = now + 1
            self.client.loop_misc()
            self.sync()
            if self.client is None or self.state != "connected":
                return
        if self.state != "connected":
            return
        if self.in_flight is not None:
            if self.args.ack_timeout > 0 and self.in_flight[4] is not None and now - self.in_flight[4] > self.args.ack_timeout:
                self.lost(now, count_retry=True)  # stalled: the next node, the same message
            return
        if self.pending:
            topic, payload = self.pending.pop(0)
            self.send(topic, payload, int(time.time() * 1000), False)
        elif self.interval is not None and (now < self.end or (LINGERING[0] and self.after_run > 0)) and now >= self.next_at:
            if now >= self.end:
                self.after_run -= 1
            wall = time.time()
            topic, body = self.message(wall)
            self.send(f"keepalive/{self.name}/{topic}", json.dumps(body, separators=(",", ":")).encode(), int(wall * 1000), True)
            self.next_at += self.interval
        self.sync()


def run_loop(devices, until):
    """The one network loop: sockets ready, then every device's timers, until `until()` is true."""
    last_tick = 0.0
    while not until():
        for key, mask in SELECTOR.select(timeout=0.05):
            device = key.data
            try:
                if device.sock is not None:
                    device.advance()
                    continue
                if device.client is None:
                    continue
                if mask & selectors.EVENT_READ:
                    device.client.loop_read(max_packets=10)
                    # What TLS has decrypted already is not seen by epoll: read it now.
                    while device.client is not None and TLS[0] is not None and device.client.socket() is not None \
                            and device.client.socket().pending() > 0:
                        device.client.loop_read(max_packets=10)
                if device.client is not None and mask & selectors.EVENT_WRITE:
                    device.client.loop_write()
                if device.client is not None:
                    device.sync()
            except Exception as error:
                device.fail(error)
        now = time.monotonic()
        if now - last_tick >= 0.05:
            last_tick = now
            for device in devices:
                if device.state == "failed":
                    continue
                try:
                    device.tick(now)
                except Exception as error:
                    device.fail(error)


def percentiles(values):
    values = sorted(values)
    pick = lambda q: round(values[min(len(values) - 1, int(q * len(values)))], 1) if values else None
    return {"p50": pick(0.5), "p99": pick(0.99), "max": round(values[-1], 1) if values else None, "n": len(values)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", required=True, help="host:port,host:port… (devices spread over them)")
    parser.add_argument("--devices", required=True, help="name:password,… or @file with one name:password a line")
    parser.add_argument("--rate", type=float, default=1.0, help="messages per second per device (0: connect only)")
    parser.add_argument("--seconds", type=float, default=30, help="each device's run, from its first connection")
    parser.add_argument("--ramp", type=float, default=0, help="first connections spread evenly over this many seconds")
    parser.add_argument("--connect-timeout", type=float, default=60,
                        help="seconds for an attempt (TCP, TLS, CONNACK) before the next node (a bridge's keepalive_interval, 60)")
    parser.add_argument("--keepalive", type=int, default=60, help="MQTT keepalive (a bridge's keepalive_interval, 60)")
    parser.add_argument("--backoff-base", type=int, default=2, help="restart_timeout's base (pi-bridge.conf.in: 2)")
    parser.add_argument("--backoff-cap", type=int, default=30, help="restart_timeout's cap (pi-bridge.conf.in: 30; 0: always the base)")
    parser.add_argument("--primary-retry", type=float, default=5,
                        help="seconds between tries of the first node while on another (round_robin false: 5; 0: never go back)")
    parser.add_argument("--ack-timeout", type=float, default=0,
                        help="seconds to wait for a PUBACK before the next node (0, as a bridge: never, the keepalive decides)")
    parser.add_argument("--start-seq", type=int, default=1)
    parser.add_argument("--cafile", help="MQTT over TLS, the nodes verified with this CA (fleet-ca.sh's ca.pem)")
    parser.add_argument("--malformed", action="store_true", help="each device also sends two messages the archive must reject")
    parser.add_argument("--seq-only", action="store_true",
                        help="subscribe to selection/seq only, and send nothing else a Pi's bridge sends on connect (the figures before 2026-11-29 06:00 UTC)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--keep-publishing", type=int, default=0, metavar="N",
                        help="while lingering, publish N more messages each at --rate (not written to --out)")
    parser.add_argument("--linger", type=float, default=0,
                        help="seconds to stay connected after the run, answering resend requests (until SIGTERM)")
    args = parser.parse_args()
    nodes = [(n.rsplit(":", 1)[0], int(n.rsplit(":", 1)[1])) for n in args.nodes.split(",")]
    configure(nodes, args.cafile)
    spec = open(args.devices[1:]).read().split() if args.devices.startswith("@") else args.devices.split(",")
    results, devices = [], []
    started = time.monotonic()
    for index, item in enumerate(spec):
        name, password = item.split(":", 1)
        rotated = nodes[index % len(nodes):] + nodes[:index % len(nodes)]
        devices.append(Device(name, password, rotated, args, started + args.ramp * index / len(spec), results))
    # One deadline for all: devices stuck reconnecting (a cluster that fell over) must not hold the run.
    deadline = started + args.ramp + args.seconds + 300
    run_loop(devices, lambda: all(d.finished or d.error for d in devices) or time.monotonic() > deadline)
    elapsed = time.monotonic() - started
    with open(args.out + ".tmp", "w") as out:
        for name, seq, sent in results:
            out.write(f"{name}\t{seq}\t{sent}\n")
    os.replace(args.out + ".tmp", args.out)
    print(json.dumps({"devices": len(devices), "acked": len(results), "seconds": round(elapsed, 1),
                      "failovers": sum(d.failovers for d in devices), "resent": sum(d.retries for d in devices),
                      "failed": {d.name: d.error for d in devices if d.error},
                      "unfinished": sum(1 for d in devices if not d.finished and not d.error),
                      "connack_ms": percentiles([x for d in devices for x in d.connack_ms]),
                      "puback_ms": percentiles([x for d in devices for x in d.puback_ms])}),
          file=sys.stderr, flush=True)
    if args.linger > 0:
        # Answering resend requests until the time is up or SIGTERM.
        stop = [False]
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.__setitem__(0, True))
        until = time.monotonic() + args.linger
        LINGERING[0] = args.keep_publishing > 0
        run_loop(devices, lambda: stop[0] or time.monotonic() > until)
        print(json.dumps({"resend_requests_answered": sum(d.resends for d in devices),
                          "other_messages_ignored": sum(d.ignored for d in devices)}), file=sys.stderr, flush=True)
    for device in devices:
        if device.client is not None:
            device.client.disconnect()
    if any(d.error for d in devices):
        sys.exit(1)


if __name__ == "__main__":
    main()
