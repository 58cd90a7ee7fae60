"""How a simulated device of fleet-load.py connects and reconnects: as a Pi's mosquitto bridge does.

A device reconnects as a Pi's bridge does (mosquitto 2.0.11, deploy/fleet/pi-bridge.conf.in; read
from mosquitto's src/bridge.c and lib/util_mosq.c): `restart_timeout 2 30` is "decorrelated
jitter" backoff — each attempt draws the next wait (whole seconds) from [2, 3 × the last wait), at most
30 s, and a CONNACK resets it to 2 s, so a device whose connection drops waits 2-3 s (mosquitto
checks once a second, at a phase of its own) and then backs off only while attempts fail. An
attempt (TCP, TLS handshake, CONNACK) is given up after `keepalive_interval` (60 s, mosquitto's
default): no shorter CONNACK timeout. Keepalive 60 s; no PUBACK timeout (mosquitto has none: a
peer that stops answering is found by the keepalive). `round_robin false`: a device connected to
a node other than its first tries its first node every 5 s and moves back once it accepts.

The TCP connect and the TLS handshake run in the same loop, non-blocking (paho's own connect
blocks for both, which made one slow handshake hold up every device of the process: a harsher
client than a fleet of Pis, each doing its own).
"""
import errno, os, random, re, selectors, socket, ssl, time
import paho.mqtt.client as mqtt

SELECTOR = selectors.DefaultSelector()
TLS = [None]  # the client TLS context (--cafile): the nodes verified, host names checked
ADDRESSES = {}  # node host name -> IPv4 address


# What a Pi's bridge sends on every connect, read from pi-bridge.conf.in itself so the two cannot
# drift apart (mosquitto 2.0.11, src/bridge.c: bridge__connect and bridge__on_connect; checked
# against a real mosquitto bridge's packets by BridgeConnectPacketsTests; docs/fleet.md, "A Pi's
# connect, as its bridge makes it"):
# - with `notifications true`, a will on notification_topic ("0", QoS 1, retained) in the CONNECT,
#   and "1" published there, retained, once the CONNACK is in;
# - then, topic line by topic line: a SUBSCRIBE for each `in` (or `both`) topic, and an UNSUBSCRIBE
#   for each `out` topic unless `bridge_attempt_unsubscribe false`.
# Each SUBSCRIBE costs the nodes an ACL check and a Mnesia transaction on every node; each
# UNSUBSCRIBE one more transaction; the retained notification a replicated write.
def _read_bridge_template():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pi-bridge.conf.in")) as template:
        text = template.read()
    def setting(name, default):
        found = re.findall(rf"^{name} (\S+)$", text, re.M)
        return found[-1] if found else default
    topics = [(m.group(1), m.group(2), int(m.group(3))) for m in re.finditer(r"^topic (\S+) (in|out|both) (\d)$", text, re.M)]
    return {"topics": topics,
            "notifications": setting("notifications", "true") == "true",
            "notification_topic": setting("notification_topic", None),
            "attempt_unsubscribe": setting("bridge_attempt_unsubscribe", "true") == "true"}


BRIDGE = _read_bridge_template()


def bridge_notification_topic(device):
    """The bridge's will and state topic for `device`, or None without notifications."""
    topic = BRIDGE["notification_topic"]
    return topic.replace("@DEVICE@", device) if BRIDGE["notifications"] and topic else None


def bridge_on_connect(device):
    """What the bridge sends after its CONNACK, in its order: ("subscribe" | "unsubscribe", topic, QoS)."""
    packets = []
    for topic, direction, qos in BRIDGE["topics"]:
        topic = topic.replace("@DEVICE@", device)
        if direction in ("in", "both"):
            packets.append(("subscribe", topic, qos))
        elif BRIDGE["attempt_unsubscribe"]:
            packets.append(("unsubscribe", topic, qos))
    return packets


def configure(nodes, cafile):
    """The nodes' addresses, resolved once (IPv4: the nodes listen on 127.0.0.1 here), and TLS."""
    for host, port in nodes:
        ADDRESSES[host] = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    if cafile:
        TLS[0] = ssl.create_default_context(cafile=cafile)


class BridgeConnection:
    """The connection half of a device (fleet-load.py's Device: name, password, nodes, args, the
    paho callbacks, failovers, retries, in_flight). States: waiting, tcp, handshake, connecting
    (CONNECT sent), connected."""

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
            if TLS[0] is None:
                self.start_mqtt()
                return
            host = self.nodes[self.node_index % len(self.nodes)][0]
            # The nodes' certificate verified with the fleet's CA, host name checked.
            self.sock = TLS[0].wrap_socket(self.sock, server_hostname=host, do_handshake_on_connect=False)
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
        notification = None if self.args.seq_only else bridge_notification_topic(self.name)
        if notification:
            client.will_set(notification, b"0", qos=1, retain=True)
        self.client, self.state = client, "connecting"
        try:
            client.connect(host, port, keepalive=self.args.keepalive, clean_start=False)
        except OSError:
            self.lost(time.monotonic())
            return
        self.sync()

    def send_after_connack(self, client):
        """What the bridge sends once its CONNACK is in: its state, then its topic lines' packets
        (--seq-only: one SUBSCRIBE to selection/seq, as the figures before 2026-11-29 06:00 UTC)."""
        if self.args.seq_only:
            client.subscribe(f"keepalive/{self.name}/selection/seq", qos=1)
            return
        notification = bridge_notification_topic(self.name)
        if notification:
            client.publish(notification, b"1", qos=1, retain=True)
        for kind, topic, qos in bridge_on_connect(self.name):
            if kind == "subscribe":
                client.subscribe(topic, qos=qos)
            else:
                client.unsubscribe(topic)

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

