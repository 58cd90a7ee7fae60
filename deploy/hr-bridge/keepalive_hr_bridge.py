#!/usr/bin/env python3
"""KeepAlive's reference heart-rate bridge for a Pi whose own Bluetooth talks to the strap.

Finds a BLE sensor (by address, or the first device advertising the Heart Rate service 0x180D,
Running Speed and Cadence 0x1814 or Cycling Speed and Cadence 0x1816) and subscribes to what it
offers, one bridge message per notification (KeepAlive SPEC "Heart rate: the bridge", docs/steps.md):

- Heart Rate Measurement (0x2A37), no `char` (the original form):
    {"ts":"<ISO-8601 UTC, ms>","seq":N,"sensor":"<id>","raw":"<hex of 0x2A37>","bpm":…,"rr":[…]}
- RSC Measurement (0x2A53) of a foot pod or treadmill:
    {"ts":…,"seq":N,"sensor":…,"char":"2a53","raw":"<hex of 0x2A53>","cadence":…,"speed_mps":…}
- CSC Measurement (0x2A5B) of a bike's speed or cadence sensor (cumulative counts, not rates):
    {"ts":…,"seq":N,"sensor":…,"char":"2a5b","raw":"<hex of 0x2A5B>","wheel_revs":…,"crank_revs":…}
- a Polar strap's accelerometer over its PMD service (keepalive_pmd.py), mG, at --acc-rate Hz,
  `ts` the first sample's time, at most 100 samples a message:
    {"ts":…,"seq":N,"sensor":…,"char":"pmd_acc","rate_hz":50,"samples":[[x,y,z],…]}

to stdout as NDJSON (`--ndjson`, for the agent's `command` transport) or to MQTT
(`--mqtt HOST`): `hrbridge/v1/<sensor>/measurement`, a retained `…/status` online/offline (the
offline is the MQTT will), and `{"op":"reconnect"}` accepted on `…/cmd`.

Straps stall silently: when no notification arrives for --stall-timeout seconds (10) the bridge
disconnects and connects again even without a disconnect event, with a capped, jittered backoff.

Needs Debian's python3-bleak (and python3-paho-mqtt for --mqtt).
"""
import argparse
import asyncio
import datetime
import json
import random
import sys
import time

import keepalive_pmd as pmd

HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"
RSC_SERVICE = "00001814-0000-1000-8000-00805f9b34fb"
RSC_MEASUREMENT = "00002a53-0000-1000-8000-00805f9b34fb"
CSC_SERVICE = "00001816-0000-1000-8000-00805f9b34fb"
CSC_MEASUREMENT = "00002a5b-0000-1000-8000-00805f9b34fb"
MAX_ACC_SAMPLES = 100  # a message stays well under the agent's 4096-byte line limit


def decode_measurement(raw):
    """The plain fields of a 0x2A37 value (for humans; the agent decodes `raw` itself)."""
    if not raw:
        raise ValueError("empty payload")
    flags, offset = raw[0], 1
    if flags & 0x01:
        if len(raw) < 3:
            raise ValueError("truncated 16-bit value")
        bpm, offset = int.from_bytes(raw[1:3], "little"), 3
    else:
        if len(raw) < 2:
            raise ValueError("truncated 8-bit value")
        bpm, offset = raw[1], 2
    contact = {2: "not_detected", 3: "detected"}.get((flags >> 1) & 0x03, "unsupported")
    energy = None
    if flags & 0x08:
        if len(raw) < offset + 2:
            raise ValueError("truncated energy")
        energy, offset = int.from_bytes(raw[offset:offset + 2], "little"), offset + 2
    rr = []
    if flags & 0x10:
        if (len(raw) - offset) % 2 or len(raw) == offset:
            raise ValueError("bad RR intervals")
        rr = [int.from_bytes(raw[i:i + 2], "little") for i in range(offset, len(raw), 2)]
    return {"bpm": bpm, "contact": contact, "energy_kj": energy, "rr_1024": rr}


def decode_rsc(raw):
    """The plain fields of a 0x2A53 value (for humans; the agent decodes `raw` itself)."""
    if len(raw) < 4:
        raise ValueError("truncated speed or cadence")
    flags, length = raw[0], 4 + (2 if raw[0] & 0x01 else 0) + (4 if raw[0] & 0x02 else 0)
    if len(raw) != length:
        raise ValueError("%d bytes where the flags announce %d" % (len(raw), length))
    plain = {"speed_mps": int.from_bytes(raw[1:3], "little") / 256, "cadence": raw[3], "running": bool(flags & 0x04)}
    if flags & 0x01:
        plain["stride_m"] = int.from_bytes(raw[4:6], "little") / 100
    if flags & 0x02:
        plain["total_m"] = int.from_bytes(raw[length - 4:length], "little") / 10
    return plain


def decode_csc(raw):
    """The plain fields of a 0x2A5B value (for humans; the agent decodes `raw` itself): flags bit 0
    wheel data (uint32 revolutions, uint16 event time in 1/1024 s), bit 1 crank data (uint16
    revolutions, uint16 event time), little-endian."""
    if not raw:
        raise ValueError("empty payload")
    flags = raw[0]
    if not flags & 0x03:
        raise ValueError("neither wheel nor crank revolution data present")
    length = 1 + (6 if flags & 0x01 else 0) + (4 if flags & 0x02 else 0)
    if len(raw) != length:
        raise ValueError("%d bytes where the flags announce %d" % (len(raw), length))
    plain, offset = {}, 1
    if flags & 0x01:
        plain["wheel_revs"] = int.from_bytes(raw[1:5], "little")
        plain["wheel_time_1024"] = int.from_bytes(raw[5:7], "little")
        offset = 7
    if flags & 0x02:
        plain["crank_revs"] = int.from_bytes(raw[offset:offset + 2], "little")
        plain["crank_time_1024"] = int.from_bytes(raw[offset + 2:offset + 4], "little")
    return plain


def iso(when):
    return when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000)


def encode_message(raw, sensor, seq, when, char="2a37"):
    """One bridge message as a compact JSON line (no newline); no `char` means 0x2A37."""
    message = {"ts": iso(when), "seq": seq, "sensor": sensor}
    if char != "2a37":
        message["char"] = char
    message["raw"] = bytes(raw).hex()
    try:
        if char == "2a53":
            plain = decode_rsc(bytes(raw))
            message["cadence"], message["speed_mps"] = plain["cadence"], plain["speed_mps"]
        elif char == "2a5b":
            plain = decode_csc(bytes(raw))
            message.update({key: plain[key] for key in ("wheel_revs", "crank_revs") if key in plain})
        else:
            plain = decode_measurement(bytes(raw))
            message["bpm"] = plain["bpm"]
            message["rr"] = [round(value * 1000 / 1024) for value in plain["rr_1024"]]
    except ValueError:
        pass  # the raw bytes still go out: the agent counts and drops what it cannot decode
    return json.dumps(message, separators=(",", ":"))


def encode_acc_messages(samples, sensor, seq, first_ns, rate_hz):
    """pmd_acc messages for mG samples from `first_ns` (Unix ns) at `rate_hz`, ≤ 100 a message."""
    lines = []
    for start in range(0, len(samples), MAX_ACC_SAMPLES):
        when = datetime.datetime.fromtimestamp((first_ns + start * 1e9 / rate_hz) / 1e9, datetime.timezone.utc)
        lines.append(json.dumps({"ts": iso(when), "seq": seq + len(lines) + 1, "sensor": sensor, "char": "pmd_acc",
                                 "rate_hz": rate_hz, "samples": samples[start:start + MAX_ACC_SAMPLES]},
                                separators=(",", ":")))
    return lines


def sensor_id(address):
    """A topic-safe id from a BLE address: AA:BB:CC:DD:EE:FF → aabbccddeeff."""
    return "".join(ch for ch in address.lower() if ch.isalnum())


class StallWatchdog:
    """True once no notification has been fed for `timeout` seconds."""

    def __init__(self, timeout, clock=time.monotonic):
        self.timeout, self.clock = timeout, clock
        self.last = clock()

    def feed(self):
        self.last = self.clock()

    def stalled(self):
        return self.clock() - self.last >= self.timeout


class Backoff:
    """Capped exponential backoff with full jitter."""

    def __init__(self, minimum=1.0, maximum=60.0, rng=random.uniform):
        self.minimum, self.maximum, self.rng, self.failures = minimum, maximum, rng, 0

    def next_delay(self):
        ceiling = min(self.maximum, self.minimum * (2 ** min(self.failures, 30)))
        self.failures += 1
        return self.rng(self.minimum, ceiling)

    def reset(self):
        self.failures = 0


class NDJSONOutput:
    def __init__(self, stream=sys.stdout):
        self.stream = stream
        self.reconnect_requested = asyncio.Event()

    def online(self, sensor):
        pass

    def offline(self, sensor):
        pass

    def measurement(self, sensor, line):
        self.stream.write(line + "\n")
        self.stream.flush()


class MQTTOutput:
    """hrbridge/v1/<sensor>/{measurement,status,cmd} through paho-mqtt."""

    def __init__(self, host, port, sensor, prefix="hrbridge/v1"):
        import paho.mqtt.client as mqtt  # Debian: python3-paho-mqtt

        self.base = "%s/%s" % (prefix, sensor)
        self.reconnect_requested = asyncio.Event()
        self.loop = asyncio.get_event_loop()
        self.client = mqtt.Client(client_id="hrbridge-" + sensor)
        self.client.will_set(self.base + "/status", "offline", qos=1, retain=True)
        self.client.on_connect = lambda client, *_: (client.subscribe(self.base + "/cmd", qos=1),
                                                    client.publish(self.base + "/status", "online", qos=1, retain=True))
        self.client.on_message = self._on_message
        self.client.connect_async(host, port, keepalive=30)
        self.client.loop_start()

    def _on_message(self, _client, _userdata, message):
        if is_reconnect_command(message.payload):
            self.loop.call_soon_threadsafe(self.reconnect_requested.set)

    def online(self, sensor):
        self.client.publish(self.base + "/status", "online", qos=1, retain=True)

    def offline(self, sensor):
        self.client.publish(self.base + "/status", "offline", qos=1, retain=True)

    def measurement(self, sensor, line):
        self.client.publish(self.base + "/measurement", line, qos=1)


def is_reconnect_command(payload):
    try:
        return json.loads(payload).get("op") == "reconnect"
    except (ValueError, AttributeError):
        return False


async def find_strap(address, scanner):
    if address:
        return await scanner.find_device_by_address(address, timeout=15)
    devices = await scanner.discover(timeout=10, service_uuids=[HEART_RATE_SERVICE, RSC_SERVICE, CSC_SERVICE])
    return devices[0] if devices else None


def offers(client, uuid):
    """Whether the connected device has the characteristic; a client that cannot tell is
    taken for a plain heart-rate strap."""
    services = getattr(client, "services", None)
    if services is None:
        return uuid == HEART_RATE_MEASUREMENT
    return services.get_characteristic(uuid) is not None


async def start_acc(client, rate_hz, on_frame):
    """Starts a Polar strap's accelerometer stream over PMD; its frames go to `on_frame`.
    Returns the scale factor the strap announced (1.0 unless it says otherwise)."""
    answers = asyncio.Queue()
    await client.start_notify(pmd.PMD_CONTROL, lambda _c, data: answers.put_nowait(bytes(data)))
    await client.start_notify(pmd.PMD_DATA, lambda _c, data: on_frame(bytes(data)))
    await client.write_gatt_char(pmd.PMD_CONTROL, pmd.start_acc_command(rate_hz), response=True)
    while True:
        op, kind, status, settings = pmd.parse_control_response(await asyncio.wait_for(answers.get(), 10))
        if (op, kind) == (pmd.OP_START, pmd.MEASUREMENT_ACC):
            break
    if status != "success":
        raise pmd.PMDError("the strap refused to start the accelerometer: " + status)
    return settings.get(pmd.FACTOR, [1.0])[0]


async def run_bridge(output, address=None, sensor=None, stall_timeout=10.0, scanner=None, client_factory=None,
                     backoff=None, rounds=None, clock=time.monotonic, acc_rate=50):
    """Connects, streams, and reconnects forever (or `rounds` connections, for tests)."""
    if scanner is None or client_factory is None:
        from bleak import BleakClient, BleakScanner  # Debian: python3-bleak
        scanner, client_factory = scanner or BleakScanner, client_factory or BleakClient
    backoff = backoff or Backoff()
    seq = 0
    connections = 0
    while rounds is None or connections < rounds:
        device = await find_strap(address, scanner)
        if device is None:
            await asyncio.sleep(backoff.next_delay())
            continue
        name = sensor or sensor_id(getattr(device, "address", str(device)))
        disconnected = asyncio.Event()
        watchdog = StallWatchdog(stall_timeout, clock)

        def notifier(char):
            def on_notify(_characteristic, data):
                nonlocal seq
                seq += 1
                watchdog.feed()
                output.measurement(name, encode_message(bytes(data), name, seq, datetime.datetime.now(datetime.timezone.utc), char))
            return on_notify

        acc_clock, acc_factor = pmd.AccClock(acc_rate or 50), [1.0]

        def on_acc_frame(data):
            nonlocal seq
            watchdog.feed()
            try:
                frame_ns, samples = pmd.decode_acc_frame(data, acc_factor[0])
            except pmd.PMDError as error:
                print("hr-bridge: PMD frame dropped: %s" % error, file=sys.stderr, flush=True)
                return
            first_ns = acc_clock.first_sample_ns(time.time_ns(), frame_ns, len(samples))
            for line in encode_acc_messages(samples, name, seq, first_ns, acc_rate):
                seq += 1
                output.measurement(name, line)

        client = client_factory(device, disconnected_callback=lambda _client: disconnected.set())
        connections += 1
        try:
            await client.connect()
            streams = []
            for uuid, char in ((HEART_RATE_MEASUREMENT, "2a37"), (RSC_MEASUREMENT, "2a53"), (CSC_MEASUREMENT, "2a5b")):
                if offers(client, uuid):
                    await client.start_notify(uuid, notifier(char))
                    streams.append(char)
            if acc_rate and offers(client, pmd.PMD_CONTROL) and offers(client, pmd.PMD_DATA):
                try:
                    acc_factor[0] = await start_acc(client, acc_rate, on_acc_frame)
                    streams.append("pmd_acc")
                except (pmd.PMDError, asyncio.TimeoutError) as error:
                    print("hr-bridge: no accelerometer: %s" % error, file=sys.stderr, flush=True)
            if not streams:
                raise RuntimeError("the device offers no heart rate, RSC, CSC or PMD accelerometer")
            output.online(name)
            watchdog.feed()
            backoff.reset()
            output.reconnect_requested.clear()
            while not disconnected.is_set() and not watchdog.stalled() and not output.reconnect_requested.is_set():
                await asyncio.sleep(0.25)
        except Exception as error:  # BLE errors of every kind: reconnect
            print("hr-bridge: %s" % error, file=sys.stderr, flush=True)
        finally:
            output.offline(name)
            try:
                await client.disconnect()
            except Exception:
                pass
        await asyncio.sleep(backoff.next_delay())
    return connections


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--address", help="the sensor's BLE address (default: the first heart rate, RSC or CSC device found)")
    parser.add_argument("--sensor", help="sensor id in messages and topics (default: from the address)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--ndjson", action="store_true", help="write messages to stdout (transport = \"command\")")
    mode.add_argument("--mqtt", metavar="HOST", help="publish to this broker (transport = \"mqtt\")")
    mode.add_argument("--encode-hex", metavar="HEX", help="print the message for one raw value (of --char) and exit")
    mode.add_argument("--decode-pmd", metavar="HEX", help="print the pmd_acc messages for one PMD ACC data frame and exit")
    parser.add_argument("--char", choices=["2a37", "2a53", "2a5b"], default="2a37", help="the characteristic of --encode-hex")
    parser.add_argument("--acc-rate", type=int, choices=(0,) + pmd.H10_ACC_RATES, default=50,
                        help="accelerometer rate in Hz when the strap offers Polar's PMD service (0: off)")
    parser.add_argument("--mqtt-port", type=int, default=1883)
    parser.add_argument("--stall-timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.encode_hex:
        print(encode_message(bytes.fromhex(args.encode_hex), args.sensor or "strap", 1,
                             datetime.datetime.now(datetime.timezone.utc), args.char))
        return 0
    if args.decode_pmd:
        frame_ns, samples = pmd.decode_acc_frame(bytes.fromhex(args.decode_pmd))
        first_ns = pmd.AccClock(args.acc_rate or 50).first_sample_ns(time.time_ns(), frame_ns, len(samples))
        print("\n".join(encode_acc_messages(samples, args.sensor or "strap", 0, first_ns, args.acc_rate or 50)))
        return 0

    async def run():
        output = NDJSONOutput() if args.ndjson else MQTTOutput(args.mqtt, args.mqtt_port, args.sensor or sensor_id(args.address or "strap"))
        await run_bridge(output, address=args.address, sensor=args.sensor, stall_timeout=args.stall_timeout,
                         acc_rate=args.acc_rate)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
