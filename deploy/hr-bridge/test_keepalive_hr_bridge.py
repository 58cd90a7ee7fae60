"""Tests of the reference bridge that need no Bluetooth: message encoding (0x2A37, 0x2A53, 0x2A5B,
PMD acceleration), the stall watchdog, and the connect/stream/reconnect loop against a stand-in for
bleak's scanner and client.
Run: python3 -m unittest deploy/hr-bridge/test_keepalive_hr_bridge.py
"""
import asyncio
import datetime
import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keepalive_hr_bridge as bridge  # noqa: E402
import keepalive_pmd as pmd  # noqa: E402


class Encoding(unittest.TestCase):
    def test_real_vectors(self):
        self.assertEqual(bridge.decode_measurement(bytes.fromhex("063c")), {"bpm": 60, "contact": "detected", "energy_kj": None, "rr_1024": []})
        self.assertEqual(bridge.decode_measurement(bytes.fromhex("163c1104"))["rr_1024"], [1041])
        self.assertEqual(bridge.decode_measurement(bytes.fromhex("16485401ec02"))["rr_1024"], [340, 748])
        self.assertEqual(bridge.decode_measurement(bytes.fromhex("023c"))["contact"], "unsupported")
        self.assertEqual(bridge.decode_measurement(bytes.fromhex("010101"))["bpm"], 257)

    def test_rejects_truncated(self):
        for raw in ["", "01", "0101", "083c10", "103c", "163c11"]:
            with self.assertRaises(ValueError, msg=raw):
                bridge.decode_measurement(bytes.fromhex(raw))

    def test_message_form(self):
        when = datetime.datetime(2026, 11, 21, 8, 0, 1, 250000, tzinfo=datetime.timezone.utc)
        message = json.loads(bridge.encode_message(bytes.fromhex("16485401ec02"), "polar", 7, when))
        self.assertEqual(message["ts"], "2026-11-21T08:00:01.250Z")
        self.assertEqual((message["seq"], message["sensor"], message["raw"]), (7, "polar", "16485401ec02"))
        self.assertEqual((message["bpm"], message["rr"]), (72, [332, 730]))

    def test_undecodable_raw_still_sent(self):
        message = json.loads(bridge.encode_message(b"\x10\x3c", "s", 1, datetime.datetime.now(datetime.timezone.utc)))
        self.assertEqual(message["raw"], "103c")
        self.assertNotIn("bpm", message)

    def test_sensor_id_and_command(self):
        self.assertEqual(bridge.sensor_id("AA:BB:CC:00:11:22"), "aabbcc001122")
        self.assertTrue(bridge.is_reconnect_command(b'{"op":"reconnect"}'))
        self.assertFalse(bridge.is_reconnect_command(b"garbage"))
        self.assertFalse(bridge.is_reconnect_command(b"[1]"))


class RSCEncoding(unittest.TestCase):
    def test_every_flag_combination(self):
        # speed 0x0300 = 3.0 m/s, cadence 170, stride 106 cm, total 12345 dm
        for flags in range(8):
            raw = bytes([flags, 0x00, 0x03, 0xAA]) + (b"\x6a\x00" if flags & 1 else b"") + (b"\x39\x30\x00\x00" if flags & 2 else b"")
            plain = bridge.decode_rsc(raw)
            self.assertEqual((plain["speed_mps"], plain["cadence"], plain["running"]), (3.0, 170, bool(flags & 4)))
            self.assertEqual(plain.get("stride_m"), 1.06 if flags & 1 else None)
            self.assertEqual(plain.get("total_m"), 1234.5 if flags & 2 else None)

    def test_rejects_truncated_and_over_long(self):
        for raw in ["", "000003", "010003aa", "020003aa393000", "000003aa00"]:
            with self.assertRaises(ValueError, msg=raw):
                bridge.decode_rsc(bytes.fromhex(raw))

    def test_message_carries_the_characteristic(self):
        when = datetime.datetime(2026, 11, 21, 8, 0, 1, 250000, tzinfo=datetime.timezone.utc)
        message = json.loads(bridge.encode_message(bytes.fromhex("070003aa6a0039300000"), "pod", 3, when, "2a53"))
        self.assertEqual((message["char"], message["raw"], message["cadence"], message["speed_mps"]),
                         ("2a53", "070003aa6a0039300000", 170, 3.0))
        self.assertNotIn("char", json.loads(bridge.encode_message(bytes.fromhex("063c"), "s", 1, when)),
                         "heart rate keeps the original form: no char means 2a37")


class CSCEncoding(unittest.TestCase):
    # Recorded: a Zwift Hub in nRF Connect, github.com/Berg0162/simcline issue 7; a Wahoo sensor,
    # github.com/OpenTracksApp/OpenTracks issue 1054. The one-block values are synthesised.
    def test_recorded_and_single_block_values(self):
        self.assertEqual(bridge.decode_csc(bytes.fromhex("03a4000000184e4000a74c")),
                         {"wheel_revs": 164, "wheel_time_1024": 19992, "crank_revs": 64, "crank_time_1024": 19623})
        self.assertEqual(bridge.decode_csc(bytes.fromhex("030000000010012100c6eb"))["crank_time_1024"], 60358)
        self.assertEqual(bridge.decode_csc(bytes.fromhex("01452301000004")), {"wheel_revs": 74565, "wheel_time_1024": 1024})
        self.assertEqual(bridge.decode_csc(bytes.fromhex("02c8000008")), {"crank_revs": 200, "crank_time_1024": 2048})

    def test_rejects_empty_truncated_over_long_and_dataless(self):
        for raw in ["", "00", "fc", "014523010000", "02c80000", "03452301000004c80000", "02c800000800"]:
            with self.assertRaises(ValueError, msg=raw):
                bridge.decode_csc(bytes.fromhex(raw))

    def test_message_carries_the_characteristic_and_raw_unchanged(self):
        when = datetime.datetime(2026, 11, 21, 8, 0, 1, 250000, tzinfo=datetime.timezone.utc)
        message = json.loads(bridge.encode_message(bytes.fromhex("02c8000008"), "bike", 4, when, "2a5b"))
        self.assertEqual(message, {"ts": "2026-11-21T08:00:01.250Z", "seq": 4, "sensor": "bike", "char": "2a5b",
                                   "raw": "02c8000008", "crank_revs": 200})
        bad = json.loads(bridge.encode_message(b"\x00", "bike", 5, when, "2a5b"))
        self.assertEqual((bad["char"], bad["raw"]), ("2a5b", "00"), "what cannot be decoded still goes out, for the agent to count")


def acc_frame(timestamp_ns, samples, frame_type=1):
    width = {0: 1, 1: 2, 2: 3}[frame_type]
    body = b"".join(v.to_bytes(width, "little", signed=True) for sample in samples for v in sample)
    return bytes([pmd.MEASUREMENT_ACC]) + timestamp_ns.to_bytes(8, "little") + bytes([frame_type]) + body


class PMD(unittest.TestCase):
    def test_start_command(self):
        # start ACC: 50 Hz (0x0032), 16 bits, ±8 g
        self.assertEqual(pmd.start_acc_command(50).hex(), "0202000132000101100002010800")
        self.assertEqual(pmd.start_acc_command(200, range_g=2).hex(), "02020001c8000101100002010200")

    def test_control_point_answers(self):
        self.assertEqual(pmd.parse_control_response(bytes.fromhex("f00202000000")), (2, 2, "success", {}))
        self.assertEqual(pmd.parse_control_response(bytes.fromhex("f002020000050100008040"))[3], {pmd.FACTOR: [4.0]})
        self.assertEqual(pmd.parse_control_response(bytes.fromhex("f0020206"))[2], "already in state")
        # A "get settings" answer: rates 25, 50; 16 bits; ranges 2, 4, 8 g; 3 channels.
        self.assertEqual(pmd.parse_settings(bytes.fromhex("0002190032000101100002030200040008000401" "03")),
                         {0: [25, 50], 1: [16], 2: [2, 4, 8], 4: [3]})
        for bad in ["0f00", "f002"]:
            with self.assertRaises(pmd.PMDError, msg=bad):
                pmd.parse_control_response(bytes.fromhex(bad))
        for bad in ["00021900", "0901", "0002"]:
            with self.assertRaises(pmd.PMDError, msg=bad):
                pmd.parse_settings(bytes.fromhex(bad))

    def test_raw_frames_of_each_width(self):
        samples = [[-12, 980, 40], [0, 1001, -3]]
        for frame_type in (1, 2):
            self.assertEqual(pmd.decode_acc_frame(acc_frame(123456789, samples, frame_type)), (123456789, samples))
        self.assertEqual(pmd.decode_acc_frame(acc_frame(5, [[-1, 2, 100]], 0)), (5, [[-1, 2, 100]]))
        with self.assertRaises(pmd.PMDError):
            pmd.decode_acc_frame(acc_frame(5, samples)[:-1])  # half a sample
        with self.assertRaises(pmd.PMDError):
            pmd.decode_acc_frame(bytes([0]) + bytes(9))  # ECG, not acceleration

    def test_compressed_frame(self):
        # Reference (10, 20, 30); one block of 2-bit deltas, one sample: +1, -1, 0 packed LSB first:
        # 01 | 11 | 00 -> 0b001101 = 0x0D. Then a block of 8-bit deltas, two samples.
        payload = bytes.fromhex("0a001400" "1e00") + bytes([2, 1, 0x0D]) + bytes([8, 2, 0xFE, 0x05, 0x00, 0x01, 0x01, 0x80])
        frame = bytes([pmd.MEASUREMENT_ACC]) + (99).to_bytes(8, "little") + bytes([0x81]) + payload
        self.assertEqual(pmd.decode_acc_frame(frame), (99, [[10, 20, 30], [11, 19, 30], [9, 24, 30], [10, 25, -98]]))
        scaled = bytes([pmd.MEASUREMENT_ACC]) + (99).to_bytes(8, "little") + bytes([0x80]) + bytes.fromhex("010002000300")
        self.assertEqual(pmd.decode_acc_frame(scaled, factor=0.5)[1], [[500, 1000, 1500]], "type 0 carries g")
        with self.assertRaises(pmd.PMDError):
            pmd.decode_acc_frame(frame[:-1])

    def test_clock_joins_frames(self):
        clock = pmd.AccClock(50)
        first = clock.first_sample_ns(host_now_ns=10_000_000_000, frame_ns=500_000_000, count=36)
        self.assertEqual(first, 10_000_000_000 - 35 * 20_000_000)
        # The next frame, 36 samples later on the sensor clock, starts where the first ended.
        second = clock.first_sample_ns(host_now_ns=99, frame_ns=500_000_000 + 36 * 20_000_000, count=36)
        self.assertEqual(second, 10_000_000_000 + 20_000_000)

    def test_acc_messages_are_split_and_timed(self):
        samples = [[i, 0, 1000] for i in range(250)]
        first_ns = int(datetime.datetime(2026, 11, 21, 8, 0, tzinfo=datetime.timezone.utc).timestamp() * 1e9)
        lines = [json.loads(line) for line in bridge.encode_acc_messages(samples, "h10", 6, first_ns, 50)]
        self.assertEqual([len(m["samples"]) for m in lines], [100, 100, 50])
        self.assertEqual([m["seq"] for m in lines], [7, 8, 9])
        self.assertEqual([m["ts"] for m in lines], ["2026-11-21T08:00:00.000Z", "2026-11-21T08:00:02.000Z",
                                                    "2026-11-21T08:00:04.000Z"])
        self.assertEqual({(m["char"], m["rate_hz"], m["sensor"]) for m in lines}, {("pmd_acc", 50, "h10")})
        widest = [[-32768, -32768, -32768]] * 250
        self.assertTrue(all(len(line) < 4096 for line in bridge.encode_acc_messages(widest, "h10", 0, first_ns, 200)))


class Watchdog(unittest.TestCase):
    def test_stalls_after_timeout(self):
        now = [100.0]
        watchdog = bridge.StallWatchdog(10, clock=lambda: now[0])
        now[0] = 109.9
        self.assertFalse(watchdog.stalled())
        now[0] = 110.0
        self.assertTrue(watchdog.stalled())
        watchdog.feed()
        self.assertFalse(watchdog.stalled())


class FakeDevice:
    address = "AA:BB:CC:DD:EE:FF"


class FakeScanner:
    @staticmethod
    async def find_device_by_address(address, timeout):
        return FakeDevice()

    @staticmethod
    async def discover(timeout, service_uuids):
        return [FakeDevice()] if bridge.HEART_RATE_SERVICE in service_uuids else []


class SilentStrap:
    """Notifies three measurements after connecting, then goes silent without disconnecting."""
    instances = []

    def __init__(self, device, disconnected_callback):
        self.disconnected_callback, self.disconnects = disconnected_callback, 0
        SilentStrap.instances.append(self)

    async def connect(self):
        pass

    async def start_notify(self, uuid, handler):
        assert uuid == bridge.HEART_RATE_MEASUREMENT
        for raw in ["063c", "16485401ec02", "163c1104"]:
            handler(None, bytearray.fromhex(raw))

    async def disconnect(self):
        self.disconnects += 1


class DroppingStrap(SilentStrap):
    """Reports a disconnect right after its notifications."""

    async def start_notify(self, uuid, handler):
        await super().start_notify(uuid, handler)
        asyncio.get_running_loop().call_later(0.05, self.disconnected_callback, self)


class FakeServices:
    def __init__(self, uuids):
        self.uuids = set(uuids)

    def get_characteristic(self, uuid):
        return uuid if uuid in self.uuids else None


class PolarStrapWithFootPod:
    """Offers heart rate, RSC and Polar's PMD; answers the accelerometer start on the control
    point, then streams two ACC frames. `refuse` makes it answer "invalid sample rate"."""
    refuse = False
    writes = []

    def __init__(self, device, disconnected_callback):
        self.handlers = {}
        self.services = FakeServices([bridge.HEART_RATE_MEASUREMENT, bridge.RSC_MEASUREMENT, pmd.PMD_CONTROL, pmd.PMD_DATA])

    async def connect(self):
        pass

    async def start_notify(self, uuid, handler):
        self.handlers[uuid] = handler
        if uuid == bridge.HEART_RATE_MEASUREMENT:
            handler(None, bytearray.fromhex("063c"))
        if uuid == bridge.RSC_MEASUREMENT:
            handler(None, bytearray.fromhex("070003aa6a0039300000"))

    async def write_gatt_char(self, uuid, data, response):
        assert uuid == pmd.PMD_CONTROL and response
        PolarStrapWithFootPod.writes.append(bytes(data))
        self.handlers[pmd.PMD_CONTROL](None, bytearray.fromhex("f0020208" if self.refuse else "f00202000000"))
        if not self.refuse:
            loop = asyncio.get_running_loop()
            loop.call_later(0.01, self.handlers[pmd.PMD_DATA], None, acc_frame(10**9, [[0, 0, 1000]] * 36))
            loop.call_later(0.02, self.handlers[pmd.PMD_DATA], None, acc_frame(10**9 + 36 * 20_000_000, [[5, -5, 990]] * 36))

    async def disconnect(self):
        pass


class BikeSensor:
    """Offers only the Cycling Speed and Cadence service, as a speed/cadence sensor does."""

    def __init__(self, device, disconnected_callback):
        self.services = FakeServices([bridge.CSC_MEASUREMENT])
        self.subscribed = []

    async def connect(self):
        pass

    async def start_notify(self, uuid, handler):
        self.subscribed.append(uuid)
        for raw in ["03a4000000184e4000a74c", "03a600000072524100c050"]:
            handler(None, bytearray.fromhex(raw))

    async def disconnect(self):
        pass


class CSCScanner(FakeScanner):
    @staticmethod
    async def discover(timeout, service_uuids):
        return [FakeDevice()] if bridge.CSC_SERVICE in service_uuids else []


class Loop(unittest.TestCase):
    def run_bridge(self, client, stall_timeout, rounds=2):
        out = io.StringIO()
        output = bridge.NDJSONOutput(out)
        connections = asyncio.run(bridge.run_bridge(
            output, address=None, sensor=None, stall_timeout=stall_timeout, scanner=FakeScanner, client_factory=client,
            backoff=bridge.Backoff(0.01, 0.02), rounds=rounds))
        return connections, [json.loads(line) for line in out.getvalue().splitlines()]

    def test_subscribes_to_everything_the_device_offers(self):
        PolarStrapWithFootPod.refuse, PolarStrapWithFootPod.writes = False, []
        _, messages = self.run_bridge(PolarStrapWithFootPod, stall_timeout=0.3, rounds=1)
        self.assertEqual([m.get("char", "2a37") for m in messages], ["2a37", "2a53", "pmd_acc", "pmd_acc"])
        self.assertEqual([m["seq"] for m in messages], [1, 2, 3, 4])
        self.assertEqual(PolarStrapWithFootPod.writes, [pmd.start_acc_command(50)])
        first, second = messages[2], messages[3]
        self.assertEqual((first["rate_hz"], first["samples"][0], len(first["samples"])), (50, [0, 0, 1000], 36))
        self.assertEqual(second["samples"][0], [5, -5, 990])
        gap = (datetime.datetime.fromisoformat(second["ts"].replace("Z", "+00:00"))
               - datetime.datetime.fromisoformat(first["ts"].replace("Z", "+00:00"))).total_seconds()
        self.assertAlmostEqual(gap, 36 / 50, delta=0.002, msg="the second batch starts where the first ended")

    def test_a_refused_accelerometer_leaves_the_rest_streaming(self):
        PolarStrapWithFootPod.refuse = True
        _, messages = self.run_bridge(PolarStrapWithFootPod, stall_timeout=0.3, rounds=1)
        PolarStrapWithFootPod.refuse = False
        self.assertEqual([m.get("char", "2a37") for m in messages], ["2a37", "2a53"])

    def test_finds_and_streams_a_cycling_speed_and_cadence_sensor(self):
        out = io.StringIO()
        # Bounded: a bridge that did not ask for the CSC service would scan forever.
        connections = asyncio.run(asyncio.wait_for(bridge.run_bridge(
            bridge.NDJSONOutput(out), stall_timeout=0.3, scanner=CSCScanner, client_factory=BikeSensor,
            backoff=bridge.Backoff(0.01, 0.02), rounds=1), 10))
        messages = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual(connections, 1, "found by the CSC service alone")
        self.assertEqual([(m["char"], m["raw"], m["seq"]) for m in messages],
                         [("2a5b", "03a4000000184e4000a74c", 1), ("2a5b", "03a600000072524100c050", 2)])

    def test_silent_strap_is_reconnected_without_a_disconnect_event(self):
        SilentStrap.instances.clear()
        connections, messages = self.run_bridge(SilentStrap, stall_timeout=0.3)
        self.assertEqual(connections, 2)
        self.assertEqual([m["seq"] for m in messages], [1, 2, 3, 4, 5, 6])
        self.assertEqual({m["sensor"] for m in messages}, {"aabbccddeeff"})
        self.assertTrue(all(s.disconnects == 1 for s in SilentStrap.instances))

    def test_disconnect_event_reconnects(self):
        SilentStrap.instances.clear()
        connections, messages = self.run_bridge(DroppingStrap, stall_timeout=30)
        self.assertEqual(connections, 2)
        self.assertEqual(len(messages), 6)


if __name__ == "__main__":
    unittest.main()
