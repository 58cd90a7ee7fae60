"""A real Home Assistant, started the way the `hass` command starts it (homeassistant.runner:
bootstrap.async_setup_hass, then hass.async_run), with its own configuration directory, in this
process so that the check reads its state machine and registries directly. Its MQTT integration
is added through the same config flow as the UI's "Add integration → MQTT" and connects to the
real broker.
"""
import asyncio
import logging
import os

from homeassistant import bootstrap, runner
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er

# What every start here logs and is not about the agent: pip is skipped (the venv has what is
# needed), and 2024.3 warns that Python 3.11 support ends with 2024.4.
EXPECTED_WARNINGS = ("Skipping pip installation of required modules", "Support for the running Python version")
# HA times its own state writes and warns when one takes over 0.4 s of wall time. That measures
# the host's load (the suite runs beside this check on two cores), not what the agent sent: the
# record is printed, not counted as a complaint about the data.
HOST_LOAD_WARNINGS = ("took", "Please create a bug report")


class LogRecords(logging.Handler):
    """Every record HA logs at WARNING or above, after start."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        message = record.getMessage()
        if any(text in message for text in EXPECTED_WARNINGS):
            return
        if record.name == "homeassistant.helpers.entity" and message.startswith("Updating state for") \
                and all(text in message for text in HOST_LOAD_WARNINGS):
            print(f"host load, not counted: {message[:200]}", flush=True)
            return
        self.records.append(record)

    def lines(self, since=0):
        return [f"{r.levelname} {r.name}: {r.getMessage()[:400]}" for r in self.records[since:]]


class HomeAssistant:
    def __init__(self, directory, http_port, latitude, longitude):
        self.config_dir = os.path.join(directory, "homeassistant")
        os.makedirs(self.config_dir, exist_ok=True)
        with open(os.path.join(self.config_dir, "configuration.yaml"), "w") as f:
            # Home far from the capture's receiver: the tracker is expected "not_home".
            f.write(f"""homeassistant:
  name: KeepAlive check
  latitude: {latitude}
  longitude: {longitude}
  elevation: 0
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: DE
http:
  server_host: 127.0.0.1
  server_port: {http_port}
""")
        self.hass = None
        self._run = None
        self.log = LogRecords()

    async def start(self):
        hass = await bootstrap.async_setup_hass(runner.RuntimeConfig(config_dir=self.config_dir, skip_pip=True))
        if hass is None:
            raise AssertionError("Home Assistant did not set up (see its log above)")
        logging.getLogger().addHandler(self.log)
        self.hass = hass
        self._run = asyncio.create_task(hass.async_run(attach_signals=False))
        while hass.state.value != "RUNNING":
            if self._run.done():
                raise AssertionError(f"Home Assistant stopped while starting: {self._run.result()}")
            await asyncio.sleep(0.05)
        if "recovery_mode" in hass.config.components:
            raise AssertionError("Home Assistant started in recovery mode: an integration it needs failed to set up")

    async def add_mqtt(self, port):
        """The UI's flow: MQTT, broker 127.0.0.1:<port>; HA tries the connection before it saves."""
        flow = await self.hass.config_entries.flow.async_init("mqtt", context={"source": "user"})
        if flow.get("step_id") != "broker":
            raise AssertionError(f"unexpected MQTT config flow step: {flow}")
        result = await self.hass.config_entries.flow.async_configure(flow["flow_id"], {"broker": "127.0.0.1", "port": port})
        if result["type"] != "create_entry":
            raise AssertionError(f"MQTT config flow did not create an entry: {result}")

    def device(self, identifier):
        for device in dr.async_get(self.hass).devices.values():
            if ("mqtt", identifier) in device.identifiers:
                return device
        return None

    def entities(self, device):
        return {entry.unique_id: entry for entry in er.async_entries_for_device(er.async_get(self.hass), device.id)}

    def state(self, entity_id):
        return self.hass.states.get(entity_id)

    async def stop(self):
        if self.hass is not None:
            await self.hass.async_stop()
            await self._run
        logging.getLogger().removeHandler(self.log)


async def eventually(check, timeout, what, interval=0.1):
    """Polls `check()` (None when satisfied, else what is still wrong) until it is satisfied."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        problem = check()
        if problem is None:
            return
        if loop.time() > deadline:
            raise AssertionError(f"{what}: still not so after {timeout} s: {problem}")
        await asyncio.sleep(interval)
