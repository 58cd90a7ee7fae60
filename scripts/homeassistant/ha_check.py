"""Home Assistant's own view of the agent: a real mosquitto, the agent fed by real recordings
(gpsd's BU-353-S4 capture through gpsfake, the MIT-BIH heart-rate hour and two minutes of a foot
pod's RSC notifications over UDP), and a real Home
Assistant 2024.3.3 whose MQTT integration reads the agent's discovery from that broker. Asserted
through HA's device registry, entity registry and state machine:

 1. the device and exactly the entities the configuration enables, each with the component,
    device class, state class and unit the contract gives and HA accepts for that class;
 2. every entity's state equals what the agent's own payloads say: the tracker's latitude and
    longitude the last location's, the heart rate the last valid bpm the bridge sent, today's
    steps the foot pod's (340 at 170/min);
 3. entities whose figures are not published (last night's sleep: the check sends no night;
    workouts: none yet) are `unknown`, and a workout started and stopped by command fills the
    last-workout sensors with the agent's own workout/last;
 4. HA's birth message made the agent announce again;
 5. the agent's MQTT will (SIGKILL) makes every entity `unavailable`;
 6. payloads of the shape issues 18-20 specify (synthesised here, said so) fill those entities too,
    and a stale location without a position leaves the tracker unknown;
 7. a restart with GPS disabled removes the GPS entities from HA (empty retained configs);
 8. each pair of shoes added by cmd/gear is a sensor (km, its limit and the share used as
    attributes); a retired pair's sensor is removed, and a restart keeps the registered one;
and, throughout, nothing logged by HA at WARNING or above (a template error would be).

Usage: ha_check.py --agent PATH [--keep]
"""
import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

import expectations as expect  # noqa: E402
import rig  # noqa: E402
from home_assistant import HomeAssistant, eventually  # noqa: E402
from homeassistant.components.sensor import DEVICE_CLASS_STATE_CLASSES, DEVICE_CLASS_UNITS, SensorDeviceClass  # noqa: E402

DEVICE = "hacheck"
NODE = f"keepalive_{DEVICE}"
ROOT = f"keepalive/{DEVICE}"


def step(text):
    print(f"ha-check [{time.monotonic() - STARTED:6.1f} s] {text}", flush=True)


STARTED = time.monotonic()


def payloads(capture):
    """The newest payload per agent topic the entities read."""
    return {source: capture.last(f"{ROOT}/{source}") for source in ("status", "location", "health/today", "workout/last")}


def mismatches(ha, capture, ids):
    latest = payloads(capture)
    problems = []
    for object_id in sorted(ids):
        component, _, _, _, source, value, _ = expect.ENTITIES[object_id]
        state = ha.state(f"{component}.{NODE}_{object_id}")
        if state is None:
            problems.append(f"{object_id}: no state")
        elif component == "device_tracker":
            wanted = expect.tracker_attributes(latest[source])
            got = {key: state.attributes.get(key) for key in wanted}
            if got != wanted or any(key in state.attributes for key in ("latitude", "longitude")) != ("latitude" in wanted):
                problems.append(f"location: attributes {dict(state.attributes)}, expected {wanted}")
        elif not expect.state_matches(state.state, value(latest[source])):
            problems.append(f"{object_id}: HA says {state.state!r}, the agent's {source} says {value(latest[source])!r}")
    return problems or None


def check_classes(ha, entities, ids):
    """Registry and attributes against the contract, and against HA's own tables of what a
    device class allows (units, state classes)."""
    for object_id in sorted(ids):
        component, device_class, state_class, unit, _, _, _ = expect.ENTITIES[object_id]
        entry = entities.get(f"{NODE}_{object_id}")
        assert entry is not None, f"{object_id}: not in HA's entity registry"
        assert entry.entity_id == f"{component}.{NODE}_{object_id}", f"{object_id}: entity id {entry.entity_id}"
        assert entry.platform == "mqtt", f"{object_id}: platform {entry.platform}"
        attributes = ha.state(entry.entity_id).attributes
        assert attributes.get("device_class") == device_class, f"{object_id}: device_class {attributes.get('device_class')!r}, expected {device_class!r}"
        assert attributes.get("state_class") == state_class, f"{object_id}: state_class {attributes.get('state_class')!r}, expected {state_class!r}"
        assert attributes.get("unit_of_measurement") == unit, f"{object_id}: unit {attributes.get('unit_of_measurement')!r}, expected {unit!r}"
        if component == "sensor" and device_class is not None:
            allowed_units = DEVICE_CLASS_UNITS[SensorDeviceClass(device_class)]
            assert unit in allowed_units, f"{object_id}: HA does not accept unit {unit!r} for {device_class} ({sorted(map(str, allowed_units))})"
            allowed_states = DEVICE_CLASS_STATE_CLASSES[SensorDeviceClass(device_class)]
            assert state_class in allowed_states, f"{object_id}: HA does not accept state class {state_class!r} for {device_class}"
        if component == "device_tracker":
            assert attributes.get("source_type") == "gps", f"location: attributes {dict(attributes)}"


def assert_quiet(ha, what):
    lines = ha.log.lines()
    assert not lines, f"Home Assistant logged warnings or errors ({what}):\n" + "\n".join(lines)


def feed_agent(agent_binary, directory, capture, broker_port, processes):
    """Starts gpsfake and the agent, sends the heart-rate hour and waits until the agent has
    published what the entities read (blocking: run outside HA's event loop)."""
    gpsfake, gps_port = rig.start_gpsfake(directory)
    processes.append(gpsfake)
    hr_port = rig.free_port(rig.socket.SOCK_DGRAM)
    config = rig.write_agent_config(directory, DEVICE, broker_port, gps_port, hr_port)
    agent = rig.start_agent(agent_binary, config, directory)
    processes.append(agent)
    step("agent started with the BU-353-S4 capture through gpsfake")
    rig.wait_until(lambda: capture.last(f"{ROOT}/status", lambda p: p.get("gps", {}).get("state") == "fixed"), 60,
                   "the agent's status with a GPS fix")
    last_bpm, sent = rig.replay_heart_rate_hour(hr_port)
    step(f"sent the heart-rate hour ({sent} bridge messages); the last valid bpm was {last_bpm}")
    steps = rig.send_foot_pod(hr_port)
    rig.wait_until(lambda: capture.last(f"{ROOT}/health/today", lambda p: abs((p.get("steps") or 0) - steps) <= steps // 100), 30,
                   f"health/today with the foot pod's {steps} steps")
    step(f"sent two minutes of a foot pod at 170 steps/min (0x2A53 through the bridge): health/today says {steps} steps ± 1 %")
    rig.wait_until(lambda: capture.last(f"{ROOT}/status", lambda p: p.get("hr", {}).get("bpm") == last_bpm), 30,
                   f"a status with hr.bpm = {last_bpm}")
    rig.wait_until(lambda: capture.last(f"{ROOT}/health/today", lambda p: (p.get("heart_rate") or {}).get("rmssd_ms") is not None
                                        and (p.get("location") or {}).get("fixes")), 60, "health/today with heart rate and location")
    rig.wait_until(lambda: capture.last(f"{ROOT}/location", lambda p: "lat" in p), 30, "a location")
    return agent, gps_port, hr_port, last_bpm


async def check(agent_binary, directory):
    broker, broker_port = await asyncio.to_thread(rig.start_broker, directory)
    processes = [broker]
    capture = rig.Capture(broker_port, [f"{ROOT}/#", "homeassistant/#"])
    ha = HomeAssistant(directory, rig.free_port(), latitude=0.0, longitude=0.0)
    try:
        agent, gps_port, hr_port, last_bpm = await asyncio.to_thread(feed_agent, agent_binary, directory, capture, broker_port, processes)

        await ha.start()
        step("Home Assistant 2024.3.3 running")
        await ha.add_mqtt(broker_port)
        step("Home Assistant's MQTT integration connected to the broker")
        ids = expect.expected_ids()
        device = None

        def device_complete():
            nonlocal device
            device = ha.device(NODE)
            if device is None:
                return "no device"
            missing = {f"{NODE}_{i}" for i in ids} - set(ha.entities(device))
            return f"missing {sorted(missing)}" if missing else None
        await eventually(device_complete, 30, f"the device {NODE} with its {len(ids)} entities")
        entities = ha.entities(device)
        assert set(entities) == {f"{NODE}_{i}" for i in ids}, f"entities {sorted(entities)}"
        assert (device.name, device.manufacturer, device.model) == (f"KeepAlive {DEVICE}", "KeepAlive", "KeepAlive agent"), device
        assert device.sw_version, "the device has no sw_version"
        step(f"device '{device.name}' (sw {device.sw_version}) with its {len(entities)} entities")

        await eventually(lambda: mismatches(ha, capture, ids), 20, "HA's states equal the agent's payloads")
        check_classes(ha, entities, ids)
        step("device classes, state classes and units as the contract says and HA accepts")
        heart_rate = ha.state(f"sensor.{NODE}_heart_rate").state
        assert float(heart_rate) == last_bpm, f"heart rate {heart_rate}, last valid bpm sent {last_bpm}"
        location = capture.last(f"{ROOT}/location", lambda p: "lat" in p)
        tracker = ha.state(f"device_tracker.{NODE}_location")
        assert tracker.state == "not_home", f"tracker state {tracker.state}"
        for pending in expect.PENDING:
            assert ha.state(f"sensor.{NODE}_{pending}").state == "unknown", f"{pending} is not unknown"
        step(f"states equal the agent's payloads: heart rate {heart_rate} bpm = last valid sent; tracker at "
             f"{tracker.attributes['latitude']}, {tracker.attributes['longitude']} = last location ({location['lat']}, {location['lon']}); "
             f"unknown while absent: {', '.join(expect.PENDING)}")
        assert_quiet(ha, "with real data")
        report(ha)
        await real_workout(ha, capture, ids)
        shoes = await shoes_phase(ha, capture)

        def births():
            return [m["t"] for m in capture.snapshot() if m["topic"] == "homeassistant/status" and m["payload"] == "online"]
        await eventually(lambda: None if births() else "none yet", 30, "Home Assistant's birth message")
        birth = births()[0]

        def announced_again():
            again = {m["topic"] for m in capture.snapshot() if m["t"] > birth and m["topic"].endswith("/config")
                     and m["payload"] and not m["retain"]}
            missing = {f"homeassistant/{expect.ENTITIES[i][0]}/{NODE}/{i}/config" for i in ids} - again
            return f"not announced again: {sorted(missing)}" if missing else None
        await eventually(announced_again, 15, "the agent announcing again after HA's birth message")
        step(f"HA's birth message made the agent announce its {len(ids)} configs again")

        await asyncio.to_thread(agent.kill9)
        await eventually(lambda: None if (capture.last(f"{ROOT}/status") or {}).get("state") == "offline" else "no will yet", 20,
                         "the agent's will on its status topic")
        await eventually(lambda: [e for e in entities.values() if ha.state(e.entity_id).state != "unavailable"] or None, 20,
                         "every entity unavailable after the agent's will")
        step(f"SIGKILL: the will made all {len(entities)} entities unavailable")

        await synthesised_phase(ha, capture)
        await removal_phase(ha, capture, agent_binary, directory, broker_port, gps_port, hr_port, processes, shoes)
        assert_quiet(ha, "at the end")
    finally:
        capture.save(os.path.join(directory, "captured.jsonl"))
        await ha.stop()
        capture.stop()
        for process in reversed(processes):
            await asyncio.to_thread(process.stop)


async def real_workout(ha, capture, ids):
    """A workout started and stopped by command (`cmd/workout`, as `keepalive workout start|stop`
    sends it): the agent's own workout/last fills the last-workout sensors."""
    def command(op):
        capture.publish(f"{ROOT}/cmd/workout", json.dumps({"op": op, "sport": "run"}), retain=False)
    await asyncio.to_thread(command, "start")
    await eventually(lambda: None if capture.last(f"{ROOT}/event/workout", lambda p: p.get("op") == "started") else "not yet", 15,
                     "event/workout started after cmd/workout start")
    await asyncio.to_thread(command, "stop")
    await eventually(lambda: None if capture.last(f"{ROOT}/workout/last") else "not yet", 15, "workout/last after cmd/workout stop")
    await eventually(lambda: mismatches(ha, capture, ids), 20, "HA's last-workout sensors equal the agent's workout/last")
    last = capture.last(f"{ROOT}/workout/last")
    step(f"a workout started and stopped by command: HA shows the agent's workout/last (distance {last['distance_m']} m, "
         f"{last['elapsed_s']} s, TRIMP {last['trimp']})")


async def shoes_phase(ha, capture):
    """Two pairs added by command (`cmd/gear`, as `keepalive gear add` sends it): each appears as a
    sensor in km with its limit; the one retired disappears (registry and state). Returns the
    unique ids of the pairs still registered."""
    pairs = {"pegasus-41": ("Pegasus 41", 120.5, 800.0), "old_trail": ("Old trail", 640.0, 700.0)}

    def command(body):
        capture.publish(f"{ROOT}/cmd/gear", json.dumps(body), retain=False)
    for gear_id, (name, start_km, limit_km) in pairs.items():
        await asyncio.to_thread(command, {"op": "add", "id": gear_id, "name": name, "start_km": start_km, "limit_km": limit_km})
    device = ha.device(NODE)

    def entry(gear_id):
        return ha.entities(device).get(f"{NODE}_shoe_{gear_id}")

    def shown():
        for gear_id, (name, start_km, limit_km) in pairs.items():
            found = entry(gear_id)
            if found is None:
                return f"no entity for {gear_id}"
            state = ha.state(found.entity_id)
            if state is None or not expect.state_matches(state.state, round(start_km, 1)):
                return f"{gear_id}: state {state and state.state!r}, expected {start_km}"
            a = state.attributes
            wanted = {"unit_of_measurement": "km", "device_class": "distance", "state_class": "total", "limit_km": limit_km,
                      "percent_of_limit": round(start_km / limit_km * 100, 1), "runs": 0, "friendly_name": f"KeepAlive {DEVICE} Shoes {name}"}
            wrong = {k: a.get(k) for k, v in wanted.items() if a.get(k) != v}
            if wrong:
                return f"{gear_id}: attributes {wrong}, expected {wanted}"
        return None
    await eventually(shown, 20, "a sensor per pair of shoes (km, with its limit)")
    step("two pairs added by cmd/gear: " + ", ".join(
        f"{entry(g).entity_id} = {ha.state(entry(g).entity_id).state} km of {ha.state(entry(g).entity_id).attributes['limit_km']}"
        for g in pairs))
    retired = entry("old_trail").entity_id
    await asyncio.to_thread(command, {"op": "retire", "id": "old_trail"})

    def gone():
        if entry("old_trail") is not None:
            return "still registered"
        return "still with a state" if ha.state(retired) is not None else None
    await eventually(gone, 20, "the retired pair's sensor removed")
    assert entry("pegasus-41") is not None, "the other pair was removed too"
    assert_quiet(ha, "with shoes")
    step(f"retired old_trail: {retired} removed (registry and state); pegasus-41 stays")
    return [f"{NODE}_shoe_pegasus-41"]


async def synthesised_phase(ha, capture):
    """Payloads of the shape issues 18, 19 and 20 specify, written by this check as the agent would
    (the agent does not compute them yet): the pending entities show them."""
    status = capture.last(f"{ROOT}/status", lambda p: p.get("state") == "online")
    today = dict(capture.last(f"{ROOT}/health/today"), steps=8432, steps_source="rsc", sleep_s=26100,
                 sleep={"start": "2026-11-21T23:10:00+01:00", "end": "2026-11-22T07:10:00+01:00", "in_bed_s": 28800,
                        "awake_s": 2700, "efficiency": 0.90625, "awakenings": 3, "resting_hr": 52, "rmssd_ms": 41.2,
                        "method": "sleepecg-ws-gru-mesa", "in_progress": False, "person": "unset"})
    workout = {"id": "5b0e9a53-0c58-5d1e-9a5e-0d1c7c6c2a11", "version": 1, "sport": "run", "start": "2026-11-22T17:00:00+01:00",
               "end": "2026-11-22T17:30:30+01:00", "elapsed_s": 1830, "moving_s": 1795, "distance_m": 5210.44,
               "avg_speed_mps": 2.9, "max_speed_mps": 3.6, "pace_s_per_km": 344.5, "ascent_m": 12.0,
               "hr": {"avg": 151, "max": 172, "zones_s": [0, 120, 900, 700, 110]}, "trimp": 61.27, "source": "auto", "seq": 1}
    for topic, payload in (("status", status), ("health/today", today), ("workout/last", workout)):
        await asyncio.to_thread(capture.publish, f"{ROOT}/{topic}", json.dumps(payload))
    wanted = {"steps_today": 8432, "sleep_last_night": 26100, "sleep_efficiency_last_night": 90.6, "last_workout_distance": 5210.4,
              "last_workout_duration": 1830, "last_workout_moving_time": 1795, "last_workout_trimp": 61.3}

    def filled():
        wrong = {k: ha.state(f"sensor.{NODE}_{k}").state for k, v in wanted.items()
                 if not expect.state_matches(ha.state(f"sensor.{NODE}_{k}").state, v)}
        return wrong or None
    await eventually(filled, 10, "the pending entities showing synthesised issue 18-20 payloads")
    sleep_attributes = {"start": "2026-11-21T23:10:00+01:00", "end": "2026-11-22T07:10:00+01:00", "in_progress": False,
                        "awakenings": 3, "person": "unset"}
    got = {k: ha.state(f"sensor.{NODE}_sleep_last_night").attributes.get(k) for k in sleep_attributes}
    assert got == sleep_attributes, f"sleep_last_night: attributes {got}, expected {sleep_attributes}"
    await asyncio.to_thread(capture.publish, f"{ROOT}/location", json.dumps({"_type": "location", "stale": True, "seq": 1}))
    await eventually(lambda: None if ha.state(f"device_tracker.{NODE}_location").state == "unknown" else "not yet", 10,
                     "the tracker unknown on a stale location without a position")
    assert "latitude" not in ha.state(f"device_tracker.{NODE}_location").attributes
    assert_quiet(ha, "with synthesised payloads")
    step("synthesised issue 18-20 payloads: " + ", ".join(f"{k} {ha.state(f'sensor.{NODE}_{k}').state}" for k in wanted)
         + "; a stale location without a position: tracker unknown")


async def removal_phase(ha, capture, agent_binary, directory, broker_port, gps_port, hr_port, processes, shoes):
    """The agent restarted with [gps] enabled = false removes its GPS entities from HA; the pair of
    shoes still registered stays."""
    config = rig.write_agent_config(directory, DEVICE, broker_port, gps_port, hr_port, gps_enabled=False)
    processes.append(rig.start_agent(agent_binary, config, directory, name="agent-without-gps"))
    kept = {f"{NODE}_{i}" for i in expect.expected_ids(gps=False)} | set(shoes)
    device = ha.device(NODE)

    gone = sorted(expect.expected_ids() - expect.expected_ids(gps=False))

    # HA drops an entity from its registry first and from its state machine a moment later (the
    # removal runs as a task): both are awaited, or the check races HA's own event loop.
    def removed():
        left = set(ha.entities(device)) - kept
        if left:
            return f"still registered: {sorted(left)}"
        if kept - set(ha.entities(device)):
            return f"removed though kept: {sorted(kept - set(ha.entities(device)))}"
        stated = [i for i in gone if ha.state(f"{expect.ENTITIES[i][0]}.{NODE}_{i}") is not None]
        return f"removed but still with a state: {stated}" if stated else None
    await eventually(removed, 30, "the GPS entities removed (registry and states) after a restart with GPS disabled")
    first_since = capture.last(f"{ROOT}/status")["since"]
    await asyncio.to_thread(rig.wait_until, lambda: capture.last(f"{ROOT}/status", lambda p: p.get("since") != first_since), 20,
                            "the restarted agent's status")
    await eventually(lambda: mismatches(ha, capture, expect.expected_ids(gps=False)), 20,
                     "the remaining entities' states equal the restarted agent's payloads")
    step(f"restart with GPS disabled: HA removed {', '.join(gone)}; the other {len(kept)} follow the restarted agent")


def report(ha):
    """The entities as HA shows them with the agent's real data."""
    device = ha.device(NODE)
    print(f"{'entity':<52} {'state':>12}  {'unit':<6} {'device_class':<13} state_class")
    for entry in sorted(ha.entities(device).values(), key=lambda e: e.entity_id):
        state = ha.state(entry.entity_id)
        a = state.attributes
        print(f"{entry.entity_id:<52} {state.state:>12}  {a.get('unit_of_measurement') or '':<6} {a.get('device_class') or '':<13} {a.get('state_class') or ''}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", required=True, help="the keepalive binary")
    parser.add_argument("--keep", action="store_true", help="keep the working directory (logs, captured.jsonl)")
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="ha-check-")
    runner_module = __import__("homeassistant.runner", fromlist=["HassEventLoopPolicy"])
    asyncio.set_event_loop_policy(runner_module.HassEventLoopPolicy(False))
    try:
        asyncio.run(check(args.agent, directory))
    except BaseException:
        print(f"ha-check: FAILED; logs and captured.jsonl in {directory}", file=sys.stderr)
        for name in ("agent", "agent-without-gps", "mosquitto", "gpsfake"):
            path = os.path.join(directory, f"{name}.log")
            if os.path.exists(path):
                with open(path, "rb") as f:
                    print(f"--- {name}.log (tail) ---\n{f.read()[-2500:].decode(errors='replace')}", file=sys.stderr)
        raise
    print(f"ha-check: passed in {time.monotonic() - STARTED:.1f} s")
    if not args.keep:
        shutil.rmtree(directory, ignore_errors=True)
    else:
        print(f"ha-check: working directory kept: {directory}")


if __name__ == "__main__":
    main()
