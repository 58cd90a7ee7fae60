"""The real parts the Home Assistant check runs against: a mosquitto on a free loopback port, the
bundled GlobalSat BU-353-S4 capture through gpsfake, the keepalive agent, the MIT-BIH heart-rate
hour sent as bridge messages over UDP, and an MQTT client that records everything published.

Every process is started with PR_SET_PDEATHSIG = SIGTERM (it stops with the check, however the
check ends) and stopped by its PID.
"""
import ctypes
import datetime
import json
import os
import random
import signal
import socket
import subprocess
import threading
import time

import paho.mqtt.client as mqtt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures")


def free_port(kind=socket.SOCK_STREAM):
    """A port on 127.0.0.1 free now, below the kernel's ephemeral range (as Tests/TestKit picks
    them): a port from that range can become any outgoing connection's source port meanwhile."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(1000):
        port = random.randint(1025, max(2000, low) - 1)
        with socket.socket(socket.AF_INET, kind) as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise AssertionError("no free port below the ephemeral range")


def _die_with_parent():
    # SIGTERM, not SIGKILL: gpsfake stops its gpsd on SIGTERM, a killed one leaves it running.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Process:
    """A child process with its output in a file; `stop` sends SIGTERM, then SIGKILL."""

    def __init__(self, name, argv, directory, env=None):
        self.name = name
        self.log_path = os.path.join(directory, f"{name}.log")
        self._log = open(self.log_path, "wb")
        self.popen = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})}, preexec_fn=_die_with_parent)

    def log_tail(self, size=3000):
        with open(self.log_path, "rb") as f:
            return f.read()[-size:].decode(errors="replace")

    def kill9(self):
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait()

    def stop(self, timeout=10):
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self._log.close()
        return self.popen.returncode


def wait_until(predicate, timeout, what, interval=0.1):
    """Waits for `predicate()` to be truthy and returns its value; raises naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def start_broker(directory):
    port = free_port()
    conf = os.path.join(directory, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nset_tcp_nodelay true\n")
        if os.getuid() == 0:
            f.write("user root\n")
    broker = Process("mosquitto", ["mosquitto", "-c", conf], directory)
    wait_until(lambda: _listening(port), 10, "mosquitto to listen")
    return broker, port


def _listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def start_gpsfake(directory):
    """gpsd fed by the BU-353-S4 capture, replayed in a loop (0.2 s between sentences)."""
    port = free_port()
    tmp = os.path.join(directory, "gpsfake")
    os.makedirs(tmp, exist_ok=True)
    capture = os.path.join(FIXTURES, "gpsd", "bu353s4.log")
    return Process("gpsfake", ["gpsfake", "-P", str(port), "-q", "-c", "0.2", capture], directory, env={"TMPDIR": tmp}), port


def midday_zone(now=None):
    """An Etc/GMT zone in which it is now 12:xx. The check replays an hour of heart rate and two
    minutes of a foot pod ending now, and reads them back from `health/today`: in UTC, a run
    just after midnight put most of them in yesterday (found by a fresh-clone run at 00:01 UTC).
    Etc/GMT names are POSIX-style: Etc/GMT-3 is three hours ahead of UTC."""
    hour = (now or datetime.datetime.now(datetime.timezone.utc)).hour
    offset = (12 - hour + 12) % 24 - 12  # -12…11 hours: local 12:xx
    return "UTC" if offset == 0 else f"Etc/GMT{'-' if offset > 0 else '+'}{abs(offset)}"


def write_agent_config(directory, device, broker_port, gps_port, hr_port, gps_enabled=True):
    path = os.path.join(directory, "config.toml")
    with open(path, "w") as f:
        f.write(f"""[device]
id = "{device}"
timezone = "{midday_zone()}"
[mqtt]
port = {broker_port}
reconnect_min_s = 0.2
reconnect_max_s = 1
[gps]
enabled = {"true" if gps_enabled else "false"}
port = {gps_port}
fix_timeout_s = 600
[hr]
transport = "udp"
udp_port = {hr_port}
stall_timeout_s = 600
[store]
path = "{os.path.join(directory, "keepalive.db")}"
synchronous = "normal"
batch_ms = 200
[schedule]
location_interval_s = 5
today_interval_s = 2
status_interval_s = 2
[homeassistant]
enabled = true
""")
    return path


def start_agent(binary, config, directory, name="agent"):
    # The capture is from 2014: the system clock is the right one (as scripts/demo.sh does). A
    # re-announcement may follow the start announcement after 2 s rather than 60 s.
    env = {"KEEPALIVE_CLOCK_SYNCHRONISED": "1", "KEEPALIVE_HA_REANNOUNCE_MIN_S": "2"}
    return Process(name, [binary, "run", "--config", config, "--log-level", "debug"], directory, env=env)


def heart_rate_of(raw_hex):
    """(bpm, valid) from a Heart Rate Measurement (0x2A37): flags bit0 uint16, bits1-2 contact."""
    raw = bytes.fromhex(raw_hex)
    bpm = raw[1] | (raw[2] << 8) if raw[0] & 1 else raw[1]
    contact_not_detected = (raw[0] & 0b110) == 0b100
    return bpm, bpm > 0 and not contact_not_detected


def replay_heart_rate_hour(port, pace_s=0.001):
    """Sends the MIT-BIH hour as a bridge backlog: message i stamped (N - i) s before now, so the
    last one is the newest. Returns the bpm of the last valid message sent."""
    with open(os.path.join(FIXTURES, "hr", "nsr-60min.ndjson")) as f:
        messages = [json.loads(line) for line in f if line.strip()]
    now = datetime.datetime.now(datetime.timezone.utc)
    last_valid = None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for index, message in enumerate(messages):
            stamp = now - datetime.timedelta(seconds=len(messages) - 1 - index)
            message = dict(message, seq=index + 1, ts=stamp.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (stamp.microsecond // 1000))
            sender.sendto(json.dumps(message, separators=(",", ":")).encode(), ("127.0.0.1", port))
            bpm, valid = heart_rate_of(message["raw"])
            if valid:
                last_valid = bpm
            time.sleep(pace_s)
        # The newest message once more, as a bridge that got no acknowledgement would: should the
        # first copy have been lost on the way, the last valid bpm is still the agent's last.
        time.sleep(0.5)
        sender.sendto(json.dumps(message, separators=(",", ":")).encode(), ("127.0.0.1", port))
    return last_valid, len(messages)


def send_foot_pod(port, seconds=120, cadence=170):
    """Sends `seconds` of a foot pod's RSC notifications (0x2A53: running, 3.0 m/s, `cadence`
    steps/min), one a second ending now, as bridge messages (`"char":"2a53"`). By the agent's
    integral rule they are worth seconds × cadence / 60 steps. Returns that count."""
    now = datetime.datetime.now(datetime.timezone.utc)
    raw = "040003%02x" % cadence  # flags: running; speed 0x0300/256 m/s; cadence
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for index in range(seconds + 1):
            stamp = now - datetime.timedelta(seconds=seconds - index)
            message = {"ts": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (stamp.microsecond // 1000),
                       "seq": index + 1, "sensor": "footpod", "char": "2a53", "raw": raw}
            sender.sendto(json.dumps(message, separators=(",", ":")).encode(), ("127.0.0.1", port))
            time.sleep(0.001)
    return seconds * cadence // 60


class Capture:
    """Records every message on the given filters, in arrival order, with its retain flag."""

    def __init__(self, port, filters):
        self.messages = []
        self._lock = threading.Lock()
        self._client = mqtt.Client(client_id=f"ha-check-capture-{os.getpid()}", protocol=mqtt.MQTTv311)
        self._client.on_connect = lambda client, *_: [client.subscribe(f, qos=1) for f in filters]
        self._client.on_message = self._received
        self._client.connect("127.0.0.1", port)
        self._client.loop_start()

    def _received(self, _client, _userdata, message):
        with self._lock:
            self.messages.append({
                "t": time.monotonic(), "topic": message.topic, "retain": bool(message.retain),
                "payload": message.payload.decode("utf-8", errors="replace"),
            })

    def snapshot(self):
        with self._lock:
            return list(self.messages)

    def last(self, topic, where=lambda payload: True):
        """The newest JSON payload on `topic` that satisfies `where`, or None."""
        for message in reversed(self.snapshot()):
            if message["topic"] == topic and message["payload"]:
                payload = json.loads(message["payload"])
                if where(payload):
                    return payload
        return None

    def publish(self, topic, payload, retain=True):
        self._client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def save(self, path):
        with open(path, "w") as f:
            for message in self.snapshot():
                f.write(json.dumps(message) + "\n")

    def stop(self):
        self._client.loop_stop()
        self._client.disconnect()
