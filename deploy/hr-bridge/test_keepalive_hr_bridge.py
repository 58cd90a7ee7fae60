"""Tests of the reference bridge that need no Bluetooth: message encoding, the stall watchdog,
and the connect/stream/reconnect loop against a stand-in for bleak's scanner and client.
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


class Loop(unittest.TestCase):
    def run_bridge(self, client, stall_timeout):
        out = io.StringIO()
        output = bridge.NDJSONOutput(out)
        connections = asyncio.run(bridge.run_bridge(
            output, address=None, sensor=None, stall_timeout=stall_timeout, scanner=FakeScanner, client_factory=client,
            backoff=bridge.Backoff(0.01, 0.02), rounds=2))
        return connections, [json.loads(line) for line in out.getvalue().splitlines()]

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
