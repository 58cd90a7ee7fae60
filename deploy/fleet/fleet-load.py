#!/usr/bin/python3
"""Simulated KeepAlive devices for the fleet test and benchmark (docs/fleet.md).

Each device speaks the agent's wire format on its own account: MQTT v5, QoS 1, JSON with a
per-device `seq`, content type application/json, on keepalive/<device>/location (an OwnTracks
fix), …/status and …/health/today, in the agent's proportions. A device waits for each PUBACK
before the next message (as the agent's outbox does per message in flight); when its node goes
away it connects to the next node and sends the unacknowledged message again with the same seq.

  fleet-load.py --nodes 127.0.0.1:1883,127.0.0.1:1884 --devices d1:pw1,d2:pw2 --rate 5 --seconds 60 --out acked.tsv

Writes one line per acknowledged message, "device<TAB>seq<TAB>sent_unix_ms", and a summary on stderr.
Devices are threads; keep one process under ~300 devices (paho uses select()).

Like the agent ([store] keep_published_h), each device keeps what it published and answers resend
requests on keepalive/<device>/selection/seq ({"from":N,"to":M}, v5 response topic and correlation
data) with {"ok":true,"from","to","messages":[{"seq","topic","payload"}],"not_kept":[[a,b]…],"next"}.
With --linger S the devices stay connected S seconds after the run (the out file and the summary are
written when the run ends), answering requests, or until SIGTERM.
"""
import argparse, json, os, signal, sys, threading, time
import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes


class Device(threading.Thread):
    def __init__(self, name, password, nodes, rate, seconds, start_seq, malformed, results, lock):
        super().__init__(daemon=True)
        self.name, self.password, self.nodes = name, password, nodes
        self.interval, self.seconds, self.seq = 1.0 / rate, seconds, start_seq
        self.malformed, self.results, self.lock = malformed, results, lock
        self.node_index, self.client, self.failovers, self.retries, self.error = 0, None, 0, 0, None
        # seq -> (topic, payload) of every message the broker acknowledged: what a resend answers from.
        self.kept, self.kept_lock, self.resends = {}, threading.Lock(), 0

    def connect(self):
        while True:
            host, port = self.nodes[self.node_index % len(self.nodes)]
            client = mqtt.Client(client_id=f"{self.name}-load", protocol=mqtt.MQTTv5)
            client.username_pw_set(self.name, self.password)
            client.max_inflight_messages_set(1)
            client.on_connect = lambda c, userdata, flags, reason, properties=None: c.subscribe(f"keepalive/{self.name}/selection/seq", qos=1)
            client.on_message = self.answer_resend
            try:
                client.connect(host, port, keepalive=10, clean_start=False)
                client.loop_start()
                deadline = time.monotonic() + 5
                while not client.is_connected() and time.monotonic() < deadline:
                    time.sleep(0.02)
                if client.is_connected():
                    self.client = client
                    return
                client.loop_stop()
            except OSError:
                pass
            self.node_index += 1
            self.failovers += 1
            time.sleep(0.5)

    def answer_resend(self, client, userdata, message):
        """A resend request: the kept messages of the range, as published, 64 KiB at most a reply."""
        props = message.properties
        reply = Properties(PacketTypes.PUBLISH)
        reply.ContentType = "application/json"
        if getattr(props, "CorrelationData", None) is not None:
            reply.CorrelationData = props.CorrelationData
        topic = getattr(props, "ResponseTopic", None) or f"keepalive/{self.name}/selection/result"
        try:
            request = json.loads(message.payload)
            first, last = int(request["from"]), int(request["to"])
            assert 0 <= first <= last
        except (ValueError, KeyError, TypeError, AssertionError):
            body = {"ok": False, "error": {"code": "bad_request", "message": "expected {\"from\":N,\"to\":M}"}}
            client.publish(topic, json.dumps(body), qos=1, properties=reply)
            return
        with self.kept_lock:
            seqs = sorted(seq for seq in self.kept if first <= seq <= last)
            found = [(seq,) + self.kept[seq] for seq in seqs]
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
        self.resends += 1
        client.publish(topic, json.dumps(body, separators=(",", ":")), qos=1, properties=reply)

    def published(self, topic, payload, properties):
        """Whether the broker acknowledged it within 3 s (False when not connected, refused, lost)."""
        try:
            info = self.client.publish(topic, payload, qos=1, properties=properties)
            info.wait_for_publish(3)
            return info.is_published()
        except (RuntimeError, ValueError, OSError):
            return False

    def reconnect(self):
        self.client.loop_stop()
        try:
            self.client.disconnect()
        except Exception:
            pass
        self.node_index += 1
        self.failovers += 1
        self.connect()

    def message(self, now):
        kind = self.seq % 10
        if kind == 0:
            return "status", {"state": "online", "seq": self.seq, "version": "load", "since": "2026-11-25T00:00:00Z"}
        if kind == 5:
            return "health/today", {"date": "2026-11-25", "tz": "UTC", "final": False, "seq": self.seq}
        return "location", {"_type": "location", "lat": 52.52 + self.seq * 1e-6, "lon": 13.405, "tst": int(now),
                            "created_at": int(now), "acc": 5, "tid": self.name[-2:], "t": "t", "mode": 3, "seq": self.seq}

    def run(self):
        try:
            self.publish_all()
        except Exception as error:  # a device that stops early must fail the run, not vanish
            self.error = repr(error)

    def publish_all(self):
        self.connect()
        properties = Properties(PacketTypes.PUBLISH)
        properties.ContentType = "application/json"
        properties.PayloadFormatIndicator = 1
        end = time.monotonic() + self.seconds
        next_at = time.monotonic()
        if self.malformed:
            # What the archive must count and never store: not JSON, and JSON without a seq.
            for payload in (b"{not json", b'{"state":"online"}'):
                while not self.published(f"keepalive/{self.name}/status", payload, None):
                    self.reconnect()
        while time.monotonic() < end:
            now = time.time()
            topic, body = self.message(now)
            payload = json.dumps(body, separators=(",", ":")).encode()
            while True:
                if self.published(f"keepalive/{self.name}/{topic}", payload, properties):
                    with self.kept_lock:
                        self.kept[self.seq] = (f"keepalive/{self.name}/{topic}", payload)
                    break
                # Node gone or stalled: the next node, the same message (same seq) again.
                self.retries += 1
                self.reconnect()
            with self.lock:
                self.results.append((self.name, self.seq, int(now * 1000)))
            self.seq += 1
            next_at += self.interval
            time.sleep(max(0.0, next_at - time.monotonic()))

    def stop(self):
        if self.client is not None:
            self.client.loop_stop()
            self.client.disconnect()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", required=True, help="host:port,host:port… (devices spread over them)")
    parser.add_argument("--devices", required=True, help="name:password,… or @file with one name:password a line")
    parser.add_argument("--rate", type=float, default=1.0, help="messages per second per device")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--start-seq", type=int, default=1)
    parser.add_argument("--malformed", action="store_true", help="each device also sends two messages the archive must reject")
    parser.add_argument("--out", required=True)
    parser.add_argument("--linger", type=float, default=0,
                        help="seconds to stay connected after the run, answering resend requests (until SIGTERM)")
    args = parser.parse_args()
    nodes = [(n.rsplit(":", 1)[0], int(n.rsplit(":", 1)[1])) for n in args.nodes.split(",")]
    spec = open(args.devices[1:]).read().split() if args.devices.startswith("@") else args.devices.split(",")
    results, lock = [], threading.Lock()
    devices = []
    for index, item in enumerate(spec):
        name, password = item.split(":", 1)
        rotated = nodes[index % len(nodes):] + nodes[:index % len(nodes)]
        devices.append(Device(name, password, rotated, args.rate, args.seconds, args.start_seq, args.malformed, results, lock))
    started = time.monotonic()
    for device in devices:
        device.start()
    # One deadline for all: devices stuck reconnecting (a cluster that fell over) must not make
    # the wait their number times as long.
    deadline = time.monotonic() + args.seconds + 300
    for device in devices:
        device.join(max(0.0, deadline - time.monotonic()))
    elapsed = time.monotonic() - started
    with open(args.out + ".tmp", "w") as out:
        for name, seq, sent in results:
            out.write(f"{name}\t{seq}\t{sent}\n")
    os.replace(args.out + ".tmp", args.out)
    print(json.dumps({"devices": len(devices), "acked": len(results), "seconds": round(elapsed, 1),
                      "failovers": sum(d.failovers for d in devices), "resent": sum(d.retries for d in devices),
                      "failed": {d.name: d.error for d in devices if d.error},
                      "unfinished": sum(1 for d in devices if d.is_alive())}),
          file=sys.stderr, flush=True)
    if args.linger > 0:
        # Answering resend requests until the time is up or SIGTERM.
        done = threading.Event()
        signal.signal(signal.SIGTERM, lambda signum, frame: done.set())
        done.wait(args.linger)
        print(json.dumps({"resend_requests_answered": sum(d.resends for d in devices)}), file=sys.stderr, flush=True)
    for device in devices:
        device.stop()
    if any(d.error for d in devices):
        sys.exit(1)


if __name__ == "__main__":
    main()
