"""The reference bridge with the real bleak against a fake BlueZ: python3-dbusmock's bluez5
template on a private D-Bus (no Bluetooth hardware here). The strap — its device object, the
Heart Rate service and the 0x2A37 characteristic — is added by hand, and notifications are sent
as the PropertiesChanged signals BlueZ emits.

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
            "UUIDs": dbus.Array([bridge.HEART_RATE_SERVICE], signature="s"),
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
        self.device = dbus.Interface(self.bus.get_object("org.bluez", DEVICE), "org.freedesktop.DBus.Mock")
        self.characteristic = dbus.Interface(self.bus.get_object("org.bluez", CHARACTERISTIC), "org.freedesktop.DBus.Mock")

    def tearDown(self):
        self.mock.terminate()
        self.bus_daemon.terminate()
        self.mock.wait(10)
        self.bus_daemon.wait(10)

    def advertise(self):
        """An advertisement as bleak's scanner sees one: an RSSI update while it discovers."""
        self.device.UpdateProperties("org.bluez.Device1", {"RSSI": dbus.Int16(-60)})

    def notify(self, hex_value):
        self.characteristic.EmitSignal("org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as", dbus.Array([
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
                output, address=ADDRESS, stall_timeout=1.0, backoff=bridge.Backoff(0.05, 0.1), rounds=2), 60)
            strap_task.cancel()
            return connections

        connections = asyncio.run(main())
        messages = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual([m["raw"] for m in messages[:2]], ["063c", "16485401ec02"])
        self.assertEqual(messages[0]["sensor"], "aabbccddeeff")
        self.assertEqual(connections, 2, "the silent strap is connected again")

    def connected(self):
        props = dbus.Interface(self.bus.get_object("org.bluez", DEVICE), "org.freedesktop.DBus.Properties")
        return bool(props.Get("org.bluez.Device1", "Connected"))


if __name__ == "__main__":
    unittest.main()
