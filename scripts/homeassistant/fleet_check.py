"""Home Assistant on the fleet's cluster (docs/fleet.md, "Home Assistant"): a real Home Assistant
2024.3.3 whose MQTT integration connects to ONE ejabberd node with the fleet's `viewer` account,
while the devices' agents publish through their Pis' bridges into another node. Retained discovery
configs live only on the node that received them; Home Assistant's birth (`homeassistant/status`
`online`) reaches every Pi through its bridge, each agent announces again, live, and Home
Assistant must then hold every device with exactly the entities its agent announced, and the
entities fed by `status` must have a state from the agent's live messages.

The cluster, the Pis and the agents are the caller's (Tests/FleetTests/FleetHomeAssistantTests);
this only runs Home Assistant and asserts through its device and entity registries.

Usage: fleet_check.py --port NODE_PORT --username viewer --password PW --device pi-1=16 --device pi-2=16
"""
import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

import rig  # noqa: E402
from home_assistant import HomeAssistant, eventually  # noqa: E402

STARTED = time.monotonic()


def step(text):
    print(f"fleet-ha [{time.monotonic() - STARTED:6.1f} s] {text}", flush=True)


async def add_mqtt_with_account(ha, port, username, password):
    """The UI's flow, as `HomeAssistant.add_mqtt`, with the fleet's account (the cluster has no
    anonymous clients)."""
    flow = await ha.hass.config_entries.flow.async_init("mqtt", context={"source": "user"})
    if flow.get("step_id") != "broker":
        raise AssertionError(f"unexpected MQTT config flow step: {flow}")
    result = await ha.hass.config_entries.flow.async_configure(
        flow["flow_id"], {"broker": "127.0.0.1", "port": port, "username": username, "password": password})
    if result["type"] != "create_entry":
        raise AssertionError(f"MQTT config flow did not create an entry: {result}")


def node_id(device):
    """The agent's node id (DiscoveryDocument.nodeID): keepalive_<device>, outside [a-zA-Z0-9_-] as _."""
    return "keepalive_" + "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in device)


async def check(args, directory):
    expected = {device: int(count) for device, count in (item.split("=", 1) for item in args.device)}
    ha = HomeAssistant(directory, rig.free_port(), latitude=0.0, longitude=0.0)
    try:
        await ha.start()
        step("Home Assistant 2024.3.3 running")
        await add_mqtt_with_account(ha, args.port, args.username, args.password)
        step(f"its MQTT integration connected to the node on port {args.port} as {args.username}")

        def every_device_complete():
            problems = []
            for device, count in expected.items():
                found = ha.device(node_id(device))
                entities = ha.entities(found) if found is not None else {}
                if len(entities) != count:
                    problems.append(f"{device}: {len(entities)} of {count} entities")
            return "; ".join(problems) or None

        await eventually(every_device_complete, args.timeout, "every device with all its entities in Home Assistant")
        for device, count in expected.items():
            step(f"{device}: device and its {count} entities registered")

        def status_states():
            missing = []
            for device in expected:
                state = ha.state(f"sensor.{node_id(device).lower().replace('-', '_')}_outbox_pending")
                if state is None or state.state in ("unknown", "unavailable"):
                    missing.append(f"{device}: {state.state if state else 'no state'}")
            return "; ".join(missing) or None

        await eventually(status_states, args.timeout, "each device's outbox_pending sensor with a state from its live status")
        step("each device's status-fed sensor has a state")
        if ha.log.records:
            raise AssertionError("Home Assistant logged warnings or errors:\n" + "\n".join(ha.log.lines()))
    finally:
        await ha.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True, help="the MQTT port of the node Home Assistant connects to")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--device", action="append", required=True, help="DEVICE=ENTITIES, once per device")
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="fleet-ha-")
    runner_module = __import__("homeassistant.runner", fromlist=["HassEventLoopPolicy"])
    asyncio.set_event_loop_policy(runner_module.HassEventLoopPolicy(False))
    try:
        asyncio.run(check(args, directory))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"fleet-ha: passed in {time.monotonic() - STARTED:.1f} s")


if __name__ == "__main__":
    main()
