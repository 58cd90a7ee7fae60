#!/usr/bin/python3
"""Per-date queries to the archive through the cluster, one at a time, timed (docs/fleet.md).

  fleet-query.py --node 127.0.0.1:1885 --user viewer --password PW --devices d1,d2 --date 2026-11-24 --count 500

Prints one JSON line: count, answered, ok, p50_ms, p99_ms, max_ms.
"""
import argparse, json, threading, time
import paho.mqtt.client as mqtt
from paho.mqtt.properties import Properties
from paho.mqtt.packettypes import PacketTypes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--node", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--devices", required=True)
    parser.add_argument("--date", required=True)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--cafile", help="MQTT over TLS, the node verified with this CA (fleet-ca.sh's ca.pem)")
    args = parser.parse_args()
    host, port = args.node.rsplit(":", 1)
    devices = args.devices.split(",")
    got, ready = {}, threading.Event()
    lock = threading.Condition()

    def on_message(client, userdata, message):
        key = message.properties.CorrelationData.decode() if hasattr(message.properties, "CorrelationData") else ""
        with lock:
            got[key] = (time.monotonic(), message.payload)
            lock.notify_all()

    client = mqtt.Client(client_id=f"{args.user}-query", protocol=mqtt.MQTTv5)
    client.username_pw_set(args.user, args.password)
    if args.cafile:
        client.tls_set(ca_certs=args.cafile)
    client.on_message = on_message
    client.on_subscribe = lambda *a, **k: ready.set()
    client.connect(host, int(port), clean_start=True)
    client.loop_start()
    client.subscribe(f"reply/archive/{args.user}/#", qos=0)
    ready.wait(10)
    times, ok = [], 0
    for index in range(args.count):
        properties = Properties(PacketTypes.PUBLISH)
        properties.ResponseTopic = f"reply/archive/{args.user}/q"
        properties.CorrelationData = str(index).encode()
        device = devices[index % len(devices)]
        start = time.monotonic()
        client.publish(f"keepalive/archive/{device}/selection/date", args.date, qos=0, properties=properties)
        with lock:
            lock.wait_for(lambda: str(index) in got, timeout=5)
            answer = got.get(str(index))
        if answer:
            times.append((answer[0] - start) * 1000)
            ok += b'"ok":true' in answer[1]
    client.loop_stop()
    times.sort()
    pick = lambda q: round(times[min(len(times) - 1, int(q * len(times)))], 2) if times else None
    print(json.dumps({"count": args.count, "answered": len(times), "ok": ok, "p50_ms": pick(0.5), "p99_ms": pick(0.99),
                      "max_ms": round(times[-1], 2) if times else None}))


if __name__ == "__main__":
    main()
