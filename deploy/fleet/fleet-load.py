#!/usr/bin/python3
"""Simulated KeepAlive devices for the fleet test and benchmark (docs/fleet.md).

Each device speaks the agent's wire format on its own account: MQTT v5, QoS 1, JSON with a
per-device `seq`, content type application/json, on keepalive/<device>/location (an OwnTracks
fix), …/status and …/health/today, in the agent's proportions. A device waits for each PUBACK
before the next message (as the agent's outbox does per message in flight); when its connection
is lost it connects to the next node and sends the unacknowledged message again with the same seq.

A device reconnects as a Pi's bridge does (mosquitto 2.0.11, deploy/fleet/pi-bridge.conf.in; read
from mosquitto's src/bridge.c and lib/util_mosq.c): `restart_timeout 2 30` is "decorrelated
jitter" backoff — each attempt draws the next wait (whole seconds) from [2, 3 × the last wait), at most
30 s, and a CONNACK resets it to 2 s, so a device whose connection drops waits 2-3 s (mosquitto
checks once a second, at a phase of its own) and then backs off only while attempts fail. An
attempt (TCP, TLS handshake, CONNACK) is given up after `keepalive_interval` (60 s, mosquitto's
default): no shorter CONNACK timeout. Keepalive 60 s; no PUBACK timeout (mosquitto has none: a
peer that stops answering is found by the keepalive). `round_robin false`: a device connected to
a node other than its first tries its first node every 5 s and moves back once it accepts.

  fleet-load.py --nodes 127.0.0.1:1883,127.0.0.1:1884 --devices d1:pw1,d2:pw2 --rate 5 --seconds 60 --out acked.tsv
  fleet-load.py --cafile ca.pem --nodes localhost:8883,… …     the same over TLS (names as in the nodes' certificate)

Writes one line per acknowledged message, "device<TAB>seq<TAB>sent_unix_ms", and a summary on stderr
(with CONNECT-to-CONNACK and publish-to-PUBACK times, p50/p99 in ms).

All devices of a process share one thread and one epoll loop (paho driven from outside:
loop_read/loop_write/loop_misc): no thread per device (a thread per device and one per paho
network loop made 1 000 devices on 2 cores spend their time in the GIL), and no select() limit.
The TCP connect and the TLS handshake run in the same loop, non-blocking (paho's own connect
blocks for both, which made one slow handshake hold up every device of the process: a harsher
client than a fleet of Pis, each doing its own). Devices connect spread over --ramp seconds, as a
fleet that comes up over a while would.

Like the agent ([store] keep_published_h), each device keeps what it published and answers resend
requests on keepalive/<device>/selection/seq ({"from":N,"to":M}, v5 response topic and correlation
data) with {"ok":true,"from","to","messages":[{"seq","topic","payload"}],"not_kept":[[a,b]…],"next"}.
With --linger S the devices stay connected S seconds after the run (the out file and the summary are
written when the run ends), answering requests, or until SIGTERM; with --keep-publishing N each also
publishes N more messages at --rate meanwhile (not in the out file), as an agent never stops: a
message lost at the end of a device's run is then followed by a later seq, the gap the archive
looks for.
"""
import argparse, errno, json, os, random, selectors, signal, socket, ssl, sys, time
import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes

SELECTOR = selectors.DefaultSelector()
TLS = None  # the client TLS context (--cafile): the nodes verified, host names checked
ADDRESSES = {}  # node host name -> IPv4 address
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


class Device:
    def __init__(self, name, password, nodes, args, start_at, results):
        self.name, self.password, self.nodes, self.args = name, password, nodes, args
        self.interval = 1.0 / args.rate if args.rate > 0 else None
        self.seq, self.results = args.start_seq, results
        self.node_index, self.client, self.fd, self.state = 0, None, None, "waiting"
        self.retry_at, self.connect_started, self.misc_at = start_at, 0.0, 0.0
        # The bridge's backoff (restart_timeout BASE CAP) and its return to the first node.
        self.restart_timeout, self.primary_check_at, self.primary_probe = args.backoff_base, None, None
        self.sock = None  # the socket while it connects and shakes hands, before paho takes it
        self.failovers, self.retries, self.resends, self.error = 0, 0, 0, None
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
    def sync(self, want_write=False):
        if self.sock is not None:
            sock = self.sock
        else:
            sock = self.client.socket() if self.client is not None else None
            want_write = sock is not None and self.client.want_write()
        fd = sock.fileno() if sock is not None else -1
        fd = fd if fd >= 0 else None
        if fd != self.fd and self.fd is not None:
            SELECTOR.unregister(self.fd)
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if fd is not None and want_write else 0)
        if fd is not None:
            if fd != self.fd:
                SELECTOR.register(fd, events, self)
            elif SELECTOR.get_key(fd).events != events:
                SELECTOR.modify(fd, events, self)
        self.fd = fd

    def connect(self, now):
        """An attempt: a non-blocking TCP connect, then (over TLS) the handshake, then paho's CONNECT."""
        host, port = self.nodes[self.node_index % len(self.nodes)]
        # Each attempt steps the backoff (mosquitto's bridge__backoff_step: rand_between(base, 3 × last), capped).
        if self.args.backoff_cap > 0:
            self.restart_timeout = min(self.args.backoff_cap, random.randrange(self.args.backoff_base, self.restart_timeout * 3))
        self.state, self.connect_started = "tcp", now
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        code = sock.connect_ex((ADDRESSES[host], port))
        if code not in (0, errno.EINPROGRESS):
            self.lost(now)
            return
        self.sync(want_write=True)

    def advance(self):
        """The socket is ready while connecting or shaking hands: the next step."""
        now = time.monotonic()
        if self.state == "tcp":
            if self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                self.lost(now)
                return
            if TLS is None:
                self.start_mqtt()
                return
            host = self.nodes[self.node_index % len(self.nodes)][0]
            # The nodes' certificate verified with the fleet's CA, host name checked.
            self.sock = TLS.wrap_socket(self.sock, server_hostname=host, do_handshake_on_connect=False)
            self.state = "handshake"
        try:
            self.sock.do_handshake()
        except ssl.SSLWantReadError:
            self.sync(want_write=False)
            return
        except ssl.SSLWantWriteError:
            self.sync(want_write=True)
            return
        except (ssl.SSLError, OSError):
            self.lost(now)
            return
        self.start_mqtt()

    def start_mqtt(self):
        """Connected (and TLS up): paho takes the socket and sends CONNECT."""
        host, port = self.nodes[self.node_index % len(self.nodes)]
        sock, self.sock = self.sock, None
        client = mqtt.Client(client_id=f"{self.name}-load", protocol=mqtt.MQTTv5)
        client.username_pw_set(self.name, self.password)
        client._create_socket_connection = lambda: sock  # paho's connect() then only sends CONNECT
        client.max_inflight_messages_set(20)
        client.on_connect = self.on_connect
        client.on_disconnect = self.on_disconnect
        client.on_publish = self.on_publish
        client.on_message = self.on_message
        self.client, self.state = client, "connecting"
        try:
            client.connect(host, port, keepalive=self.args.keepalive, clean_start=False)
        except OSError:
            self.lost(time.monotonic())
            return
        self.sync()

    def lost(self, now, count_retry=False, next_index=None):
        """Connection gone (or given up on): the next node after the bridge's backoff."""
        if self.sock is not None:
            if self.fd is not None:
                SELECTOR.unregister(self.fd)
            self.fd = None
            self.sock.close()
            self.sock = None
        self.drop_probe()
        if self.client is not None:
            client, self.client = self.client, None
            client.on_disconnect = None
            try:
                client.disconnect()
            except Exception:
                pass
            if self.fd is not None:
                SELECTOR.unregister(self.fd)
            self.fd = None
        if count_retry:
            self.retries += 1
        if self.in_flight is not None:  # not on the wire any more: no stall timer until it is sent again
            self.in_flight = self.in_flight[:4] + (None,) + self.in_flight[5:]
        self.state = "waiting"
        self.node_index = self.node_index + 1 if next_index is None else next_index
        self.failovers += 1
        # mosquitto tries again once its whole-second clock is past the wait: up to a second later,
        # at a phase of each Pi's own.
        self.retry_at = now + self.restart_timeout + random.uniform(0, 1)

    def drop_probe(self):
        if self.primary_probe is not None:
            self.primary_probe.close()
            self.primary_probe = None

    def check_primary(self, now):
        """round_robin false: connected elsewhere, the first node is tried every 5 s (a TCP connect,
        mosquitto's primary_retry); once it accepts, this connection is closed and the device goes back."""
        if self.node_index % len(self.nodes) == 0 or self.args.primary_retry <= 0:
            return
        if self.primary_check_at is None or now < self.primary_check_at:
            return
        if self.primary_probe is None:
            host, port = self.nodes[0]
            self.primary_probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.primary_probe.setblocking(False)
            code = self.primary_probe.connect_ex((ADDRESSES[host], port))
            if code not in (0, errno.EINPROGRESS):
                self.drop_probe()
                self.primary_check_at = now + self.args.primary_retry
            else:
                self.primary_check_at = now + 1  # looked at again on mosquitto's next once-a-second check
            return
        failed = self.primary_probe.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0
        self.drop_probe()
        if failed:
            self.primary_check_at = now + self.args.primary_retry
            return
        self.primary_check_at = None
        self.lost(now, next_index=len(self.nodes) * (self.node_index // len(self.nodes) + 1))

    def on_connect(self, client, userdata, flags, reason, properties=None):
        if reason != 0:
            return  # the broker closes the connection; on_disconnect moves on
        now = time.monotonic()
        self.state = "connected"
        self.connack_ms.append((now - self.connect_started) * 1000)
        self.restart_timeout = self.args.backoff_base  # mosquitto's bridge__backoff_reset on CONNACK
        if self.node_index % len(self.nodes) != 0:
            self.primary_check_at = now + self.args.primary_retry
        client.subscribe(f"keepalive/{self.name}/selection/seq", qos=1)
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
        """A resend request: the kept messages of the range, as published."""
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
                    while device.client is not None and TLS is not None and device.client.socket() is not None \
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
    parser.add_argument("--out", required=True)
    parser.add_argument("--keep-publishing", type=int, default=0, metavar="N",
                        help="while lingering, publish N more messages each at --rate (not written to --out)")
    parser.add_argument("--linger", type=float, default=0,
                        help="seconds to stay connected after the run, answering resend requests (until SIGTERM)")
    args = parser.parse_args()
    nodes = [(n.rsplit(":", 1)[0], int(n.rsplit(":", 1)[1])) for n in args.nodes.split(",")]
    global TLS
    for host, port in nodes:  # resolved once (IPv4: the nodes listen on 127.0.0.1 here)
        ADDRESSES[host] = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    if args.cafile:
        TLS = ssl.create_default_context(cafile=args.cafile)
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
        print(json.dumps({"resend_requests_answered": sum(d.resends for d in devices)}), file=sys.stderr, flush=True)
    for device in devices:
        if device.client is not None:
            device.client.disconnect()
    if any(d.error for d in devices):
        sys.exit(1)


if __name__ == "__main__":
    main()
