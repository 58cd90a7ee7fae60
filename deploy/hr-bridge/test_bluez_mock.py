"""The reference bridge with the real bleak against a fake BlueZ: python3-dbusmock's bluez5
template on a private D-Bus (no Bluetooth hardware here). The strap — its device object, the
Heart Rate service (0x2A37), a Running Speed and Cadence service (0x2A53), a Cycling Speed and
Cadence service (0x2A5B) and Polar's PMD service (control point and data) — is added by hand;
notifications are sent as the PropertiesChanged signals BlueZ emits, and the control point's
writes are read back from the mock's call log. The RSC and PMD values are made by hand from
their specifications (see test_keepalive_hr_bridge.py), not recorded from a device; the CSC
value is a Zwift Hub's, logged in nRF Connect (github.com/Berg0162/simcline issue 7).

Run with Debian's python (python3-bleak, python3-dbusmock, dbus):
    /usr/bin/python3 -m unittest deploy/hr-bridge/test_bluez_mock.py
"""
import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keepalive_hr_bridge as bridge  # noqa: E402
import keepalive_pmd as pmd  # noqa: E402

try:
    import dbus
    import bleak  # noqa: F401
    import dbusmock  # noqa: F401
    AVAILABLE = shutil.which("dbus-daemon") is not None
except ImportError:
    AVAILABLE = False

ADDRESS = "AA:BB:CC:DD:EE:FF"
DEVICE = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
SERVICE = DEVICE + "/service000a"
CHARACTERISTIC = SERVICE + "/char000b"
RSC_SERVICE = DEVICE + "/service000e"
RSC_CHARACTERISTIC = RSC_SERVICE + "/char000f"
CSC_SERVICE = DEVICE + "/service0019"
CSC_CHARACTERISTIC = CSC_SERVICE + "/char001a"
PMD_SERVICE = DEVICE + "/service0012"
PMD_CONTROL = PMD_SERVICE + "/char0013"
PMD_DATA = PMD_SERVICE + "/char0016"


@unittest.skipUnless(AVAILABLE, "needs python3-bleak, python3-dbusmock and dbus-daemon")
class BleakAgainstMockedBlueZ(unittest.TestCase):
    def setUp(self):
        self.bus_daemon = subprocess.Popen(["dbus-daemon", "--session", "--print-address=1", "--nofork"],
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        address = self.bus_daemon.stdout.readline().strip()
        # bleak talks to BlueZ on the system bus: point it at the private one.
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
        self.mock = subprocess.Popen([sys.executable, "-m", "dbusmock", "--system", "--template", "bluez5"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.bus = dbus.bus.BusConnection(address)
        deadline = time.time() + 10
        while not self.bus.name_has_owner("org.bluez"):
            self.assertLess(time.time(), deadline, "dbusmock did not start")
            time.sleep(0.05)
        root = self.bus.get_object("org.bluez", "/")
        dbus.Interface(root, "org.bluez.Mock").AddAdapter("hci0", "pi")
        mock = dbus.Interface(root, "org.freedesktop.DBus.Mock")
        # By hand rather than the template's AddDevice, whose ManufacturerData/ServiceData are
        # arrays where BlueZ (and bleak) use dicts.
        boolean = lambda value: dbus.Boolean(value, variant_level=1)  # noqa: E731
        mock.AddObject(DEVICE, "org.bluez.Device1", {
            "Address": ADDRESS, "AddressType": "public", "Name": "Strap", "Alias": "Strap",
            "Adapter": dbus.ObjectPath("/org/bluez/hci0"), "Paired": False, "Connected": False, "Trusted": False,
            "Blocked": False, "LegacyPairing": False, "RSSI": dbus.Int16(-70), "ServicesResolved": False,
            "UUIDs": dbus.Array([bridge.HEART_RATE_SERVICE, bridge.RSC_SERVICE, bridge.CSC_SERVICE], signature="s"),
            "ManufacturerData": dbus.Dictionary({}, signature="qv"), "ServiceData": dbus.Dictionary({}, signature="sv"),
        }, [
            ("Connect", "", "", "self.UpdateProperties('org.bluez.Device1', {'Connected': dbus.Boolean(True, variant_level=1), "
                                "'ServicesResolved': dbus.Boolean(True, variant_level=1)})"),
            ("Disconnect", "", "", "self.UpdateProperties('org.bluez.Device1', {'Connected': dbus.Boolean(False, variant_level=1), "
                                   "'ServicesResolved': dbus.Boolean(False, variant_level=1)})"),
        ])
        mock.AddObject(SERVICE, "org.bluez.GattService1", {
            "UUID": bridge.HEART_RATE_SERVICE, "Primary": True, "Device": dbus.ObjectPath(DEVICE), "Handle": dbus.UInt16(10)}, [])
        mock.AddObject(CHARACTERISTIC, "org.bluez.GattCharacteristic1", {
            "UUID": bridge.HEART_RATE_MEASUREMENT, "Service": dbus.ObjectPath(SERVICE), "Handle": dbus.UInt16(11),
            "Flags": dbus.Array(["notify"], signature="s"), "Value": dbus.Array([], signature="y"), "Notifying": False,
        }, [("StartNotify", "", "", ""), ("StopNotify", "", "", "")])
        self.add_characteristic(mock, RSC_SERVICE, bridge.RSC_SERVICE, 14, RSC_CHARACTERISTIC, bridge.RSC_MEASUREMENT, ["notify"])
        self.add_characteristic(mock, CSC_SERVICE, bridge.CSC_SERVICE, 25, CSC_CHARACTERISTIC, bridge.CSC_MEASUREMENT, ["notify"])
        self.add_characteristic(mock, PMD_SERVICE, pmd.PMD_SERVICE, 18, PMD_CONTROL, pmd.PMD_CONTROL, ["read", "write", "indicate"])
        self.add_characteristic(mock, None, pmd.PMD_SERVICE, 18, PMD_DATA, pmd.PMD_DATA, ["notify"])
        self.device = dbus.Interface(self.bus.get_object("org.bluez", DEVICE), "org.freedesktop.DBus.Mock")
        self.characteristic = dbus.Interface(self.bus.get_object("org.bluez", CHARACTERISTIC), "org.freedesktop.DBus.Mock")

    def add_characteristic(self, mock, service_path, service_uuid, service_handle, path, uuid, flags):
        service = service_path or path.rsplit("/", 1)[0]
        if service_path:
            mock.AddObject(service, "org.bluez.GattService1", {
                "UUID": service_uuid, "Primary": True, "Device": dbus.ObjectPath(DEVICE),
                "Handle": dbus.UInt16(service_handle)}, [])
        mock.AddObject(path, "org.bluez.GattCharacteristic1", {
            "UUID": uuid, "Service": dbus.ObjectPath(service), "Handle": dbus.UInt16(int(path[-4:], 16)),
            "Flags": dbus.Array(flags, signature="s"), "Value": dbus.Array([], signature="y"), "Notifying": False,
        }, [("StartNotify", "", "", ""), ("StopNotify", "", "", ""), ("WriteValue", "aya{sv}", "", "")])

    def tearDown(self):
        self.mock.terminate()
        self.bus_daemon.terminate()
        self.mock.wait(10)
        self.bus_daemon.wait(10)
        self.bus_daemon.stdout.close()

    def advertise(self):
        """An advertisement as bleak's scanner sees one: an RSSI update while it discovers."""
        self.device.UpdateProperties("org.bluez.Device1", {"RSSI": dbus.Int16(-60)})

    def notify(self, hex_value, path=CHARACTERISTIC):
        characteristic = dbus.Interface(self.bus.get_object("org.bluez", path), "org.freedesktop.DBus.Mock")
        characteristic.EmitSignal("org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as", dbus.Array([
            dbus.String("org.bluez.GattCharacteristic1"),
            dbus.Dictionary({"Value": dbus.Array(bytes.fromhex(hex_value), signature="y", variant_level=1)}, signature="sv"),
            dbus.Array([], signature="s")], signature="v"))

    def test_bridge_streams_notifications_and_reconnects_after_silence(self):
        out = io.StringIO()
        output = bridge.NDJSONOutput(out)

        async def strap():
            # Advertise all along (each connection starts with a scan); once connected the first
            # time, notify twice, then fall silent without disconnecting.
            notified = False
            while True:
                self.advertise()
                await asyncio.sleep(0.1)
                if not notified and self.connected():
                    await asyncio.sleep(0.3)
                    for value in ["063c", "16485401ec02"]:
                        self.notify(value)
                        await asyncio.sleep(0.1)
                    notified = True

        async def main():
            strap_task = asyncio.create_task(strap())
            connections = await asyncio.wait_for(bridge.run_bridge(
                output, address=ADDRESS, stall_timeout=1.0, backoff=bridge.Backoff(0.05, 0.1), rounds=2, acc_rate=0), 60)
            strap_task.cancel()
            return connections

        connections = asyncio.run(main())
        messages = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual([m["raw"] for m in messages if "char" not in m][:2], ["063c", "16485401ec02"])
        self.assertEqual(messages[0]["sensor"], "aabbccddeeff")
        self.assertEqual(connections, 2, "the silent strap is connected again")

    def test_bridge_streams_rsc_csc_and_starts_the_pmd_accelerometer(self):
        out = io.StringIO()
        output = bridge.NDJSONOutput(out)
        control = dbus.Interface(self.bus.get_object("org.bluez", PMD_CONTROL), "org.freedesktop.DBus.Mock")
        writes = []

        def frame(timestamp_ns, sample, count=36):
            body = b"".join(v.to_bytes(2, "little", signed=True) for v in sample) * count
            return (bytes([pmd.MEASUREMENT_ACC]) + timestamp_ns.to_bytes(8, "little") + b"\x01" + body).hex()

        async def strap():
            while not self.connected():
                self.advertise()
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.3)
            self.notify("070003aa6a0039300000", RSC_CHARACTERISTIC)
            self.notify("03a4000000184e4000a74c", CSC_CHARACTERISTIC)
            deadline = time.time() + 20
            while not writes:
                self.assertLess(time.time(), deadline, "the bridge never wrote to the PMD control point")
                writes.extend(bytes(call[2][0]) for call in control.GetCalls() if call[1] == "WriteValue")
                await asyncio.sleep(0.05)
            self.notify("f00202000000", PMD_CONTROL)
            await asyncio.sleep(0.2)
            self.notify(frame(10**9, [0, 0, 1000]), PMD_DATA)
            await asyncio.sleep(0.05)
            self.notify(frame(10**9 + 720_000_000, [3, -4, 980]), PMD_DATA)
            while True:
                await asyncio.sleep(1)

        async def main():
            strap_task = asyncio.create_task(strap())
            bridge_task = asyncio.create_task(bridge.run_bridge(
                output, address=ADDRESS, stall_timeout=1.5, backoff=bridge.Backoff(0.05, 0.1), rounds=1, acc_rate=50))
            done, _ = await asyncio.wait({strap_task, bridge_task}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
            strap_task.cancel()
            if strap_task in done and strap_task.exception():
                raise strap_task.exception()
            await asyncio.wait_for(bridge_task, 30)

        asyncio.run(main())
        self.assertEqual(writes, [pmd.start_acc_command(50)], "PMD start: acceleration, 50 Hz, 16 bits, ±8 g")
        messages = [json.loads(line) for line in out.getvalue().splitlines()]
        rsc = [m for m in messages if m.get("char") == "2a53"]
        csc = [m for m in messages if m.get("char") == "2a5b"]
        acc = [m for m in messages if m.get("char") == "pmd_acc"]
        self.assertEqual([(m["raw"], m["crank_revs"]) for m in csc], [("03a4000000184e4000a74c", 64)])
        self.assertEqual([(m["raw"], m["cadence"]) for m in rsc], [("070003aa6a0039300000", 170)])
        self.assertEqual([(m["rate_hz"], len(m["samples"]), m["samples"][0]) for m in acc],
                         [(50, 36, [0, 0, 1000]), (50, 36, [3, -4, 980])])
        self.assertEqual(len({m["seq"] for m in messages}), len(messages))

    def connected(self):
        props = dbus.Interface(self.bus.get_object("org.bluez", DEVICE), "org.freedesktop.DBus.Properties")
        return bool(props.Get("org.bluez.Device1", "Connected"))


if __name__ == "__main__":
    unittest.main()
