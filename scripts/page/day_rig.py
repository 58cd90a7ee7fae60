"""The real parts the page check runs against (scripts/page/page_check.py): a mosquitto with an
open TCP listener for the agent and the check, and the page's WebSockets listener serving the
built page under the shipped page ACL; the agent; and a replayed past day with a walk, from real
recordings, sent as a Pi would have recorded it:

- the GPS: SnapperGPS collection 2's walk w03, its RTK reference track (Tests/Fixtures/gps/snappergps,
  CC BY 4.0), with 2 minutes standing before it and 7 after (so it ends in the data), written as
  NMEA and replayed once by gpsfake into a real gpsd;
- heart rate: the MIT-BIH hour (Tests/Fixtures/hr/nsr-60min.ndjson) as a bridge backlog over UDP;
- steps: a foot pod's RSC notifications (0x2A53) during the walk;
- the night before: slpdb record slp37 (Tests/Fixtures/sleep/slpdb, 00:08-06:00, a 39-year-old
  man, given as [person]) as a strap's notifications with RR intervals.

The day is yesterday in a zone where it is now 12:xx, the walk at 14:00 local: 22 hours ago,
within the day the agent believes GPS time against a synchronised system clock (ClockRule).
"""
import base64
import datetime
import hashlib
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "homeassistant"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "sleepdata"))
import rig  # noqa: E402  (the Home Assistant check's processes, ports and waits)
import slpdb  # noqa: E402  (a scored night's beats as a strap's notifications)

ROOT = rig.ROOT
FIXTURES = rig.FIXTURES
PAGE_USER = "page"


def framed(body):
    checksum = 0
    for byte in body.encode():
        checksum ^= byte
    return "$%s*%02X" % (body, checksum)


def degrees_minutes(value, digits, positive, negative):
    magnitude = abs(value)
    degrees = int(magnitude)
    return ("%0*d%07.4f" % (digits, degrees, (magnitude - degrees) * 60)), (negative if value < 0 else positive)


def nmea(points):
    """GPRMC (date first, so gpsd knows every fix's day), GPGGA, GPGSA per fix, as
    Tests/TestKit/NMEALog.swift writes them. points: (datetime UTC, lat, lon, hdop)."""
    lines = []
    for when, lat, lon, hdop in points:
        t = when.strftime("%H%M%S.") + "%02d" % min(99, round(when.microsecond / 10000))
        d = when.strftime("%d%m%y")
        la, ns = degrees_minutes(lat, 2, "N", "S")
        lo, ew = degrees_minutes(lon, 3, "E", "W")
        h = round(hdop, 2)
        lines += [
            framed(f"GPRMC,{t},A,{la},{ns},{lo},{ew},,,{d},,,A"),
            framed(f"GPGGA,{t},{la},{ns},{lo},{ew},1,08,{h},35.0,M,46.9,M,,"),
            framed(f"GPGSA,A,3,04,05,09,12,17,20,24,28,,,,,{round(2 * h, 2)},{h},1.5"),
        ]
    return "".join(line + "\r\n" for line in lines)


def walk_points(walk_start):
    """The walk's RTK track (a u-blox ZED-F9P carried on it, 1 Hz: a receiver as good as a Pi's USB
    one on a good day) from `walk_start` (UTC), standing 2 min before and 7 after (5 minutes
    without moving end a workout)."""
    fixes = []
    with open(os.path.join(FIXTURES, "gps", "snappergps", "w03-rtk.csv")) as f:
        next(f)
        for line in f:
            fixes.append([float(x) for x in line.strip().split(",")])
    first, last = fixes[0], fixes[-1]
    second = datetime.timedelta(seconds=1)
    points = [(walk_start - (120 - i) * second, first[1], first[2], 0.9) for i in range(120)]
    points += [(walk_start + datetime.timedelta(seconds=f[0] - first[0]), f[1], f[2], 0.9) for f in fixes]
    end = walk_start + datetime.timedelta(seconds=last[0] - first[0])
    points += [(end + i * second, last[1], last[2], 0.9) for i in range(1, 421)]
    return points, end


def stamp(when):
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000)


def send_heart_rate(port, start):
    """The MIT-BIH hour as a bridge backlog, message i stamped start + i s."""
    with open(os.path.join(FIXTURES, "hr", "nsr-60min.ndjson")) as f:
        messages = [json.loads(line) for line in f if line.strip()]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for index, message in enumerate(messages):
            message = dict(message, seq=index + 1, ts=stamp(start + datetime.timedelta(seconds=index)))
            sender.sendto(json.dumps(message, separators=(",", ":")).encode(), ("127.0.0.1", port))
            time.sleep(0.001)
    return len(messages)


def send_night(port, morning, offset_h):
    """slp37 as a strap's notifications on the night that ends on `morning` (a date), at its own
    clock times in a zone `offset_h` hours ahead of UTC. Returns how many were sent."""
    night = slpdb.read_night(slpdb.Path(FIXTURES) / "sleep" / "slpdb", "slp37", morning)
    night.start -= datetime.timedelta(hours=offset_h)
    lines = slpdb.strap_lines(night, sensor="night-strap")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for line in lines:
            sender.sendto(line.encode(), ("127.0.0.1", port))
            time.sleep(0.0005)
    return len(lines)


def send_foot_pod(port, start, seconds, cadence, first_seq):
    """`seconds` of RSC notifications from `start` (running, 3.0 m/s, `cadence` steps/min)."""
    raw = "040003%02x" % cadence
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for index in range(seconds + 1):
            message = {"ts": stamp(start + datetime.timedelta(seconds=index)), "seq": first_seq + index,
                       "sensor": "footpod", "char": "2a53", "raw": raw}
            sender.sendto(json.dumps(message, separators=(",", ":")).encode(), ("127.0.0.1", port))
            time.sleep(0.001)


def certificate(directory):
    """A self-signed certificate for 127.0.0.1 (openssl), as a Pi owner would make one for the Pi's
    name. Returns (certificate, key, SPKI pin: base64 SHA-256 of its public key, the form
    Chromium's --ignore-certificate-errors-spki-list takes)."""
    cert, key = os.path.join(directory, "page.crt"), os.path.join(directory, "page.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    public = subprocess.run(["openssl", "x509", "-in", cert, "-pubkey", "-noout"], check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public, check=True, capture_output=True).stdout
    return cert, key, base64.b64encode(hashlib.sha256(der).digest()).decode()


def tls_listener(port, site, cert, key, passwd):
    """The shipped TLS listener (deploy/mosquitto/keepalive-page.conf, its commented listener
    9443) with "#" removed, on `port` of loopback, with the check's files."""
    with open(os.path.join(ROOT, "deploy", "mosquitto", "keepalive-page.conf")) as f:
        lines = f.read().splitlines()
    first = lines.index("#listener 9443")
    block = [line[1:] for line in lines[first:first + 8]]
    assert all(not line.startswith((" ", "#")) for line in block), f"keepalive-page.conf's TLS listener changed shape: {block}"
    paths = {"listener": f"{port} 127.0.0.1", "http_dir": site, "certfile": cert, "keyfile": key, "password_file": passwd,
             "acl_file": os.path.join(ROOT, "deploy", "mosquitto", "keepalive-page.acl")}
    return "\n".join(f"{name} {paths.get(name, value)}" for name, value in (line.split(" ", 1) for line in block))


def start_broker(directory, site, password):
    """mosquitto: an open listener for the agent and the check, the page's listener, and the same
    with TLS (keepalive-page.conf's certfile/keyfile). Returns (process, tcp, ws, wss, SPKI pin)."""
    tcp, ws, wss = rig.free_port(), rig.free_port(), rig.free_port()
    cert, key, pin = certificate(directory)
    passwd = os.path.join(directory, "page.passwd")
    open(passwd, "w").close()
    subprocess.run(["mosquitto_passwd", "-b", passwd, PAGE_USER, password], check=True)
    conf = os.path.join(directory, "mosquitto.conf")
    with open(conf, "w") as f:
        f.write(f"""per_listener_settings true
listener {tcp} 127.0.0.1
allow_anonymous true
listener {ws} 127.0.0.1
protocol websockets
http_dir {site}
allow_anonymous false
password_file {passwd}
acl_file {os.path.join(ROOT, "deploy", "mosquitto", "keepalive-page.acl")}
{tls_listener(wss, site, cert, key, passwd)}
persistence false
set_tcp_nodelay true
""")
        if os.getuid() == 0:
            f.write("user root\n")
    broker = rig.Process("mosquitto", ["mosquitto", "-c", conf], directory)
    rig.wait_until(lambda: rig._listening(tcp) and rig._listening(ws) and rig._listening(wss), 10, "mosquitto to listen on its ports")
    return broker, tcp, ws, wss, pin


def write_agent_config(directory, device, zone, broker_port, gps_port, hr_port):
    path = os.path.join(directory, "config.toml")
    with open(path, "w") as f:
        f.write(f"""[device]
id = "{device}"
timezone = "{zone}"
[mqtt]
port = {broker_port}
reconnect_min_s = 0.2
reconnect_max_s = 1
[gps]
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
today_interval_s = 1
status_interval_s = 2
[query]
reply_topics = ["reply/#"]
# Slow refill, so that a burst of requests leaves the page's next one refused (rate_limited).
rate_per_s = 0.5
burst = 20
[homeassistant]
enabled = false
[person]
# slp37's sleeper (its header: 39, M) on a night of the year before last at the latest.
birth_year = {datetime.date.today().year - 39}
sex = "male"
""")
    return path


def local_midnight(now_utc, zone_offset_h):
    """The start of today in a fixed-offset zone, as a UTC datetime."""
    local = now_utc + datetime.timedelta(hours=zone_offset_h)
    return local.replace(hour=0, minute=0, second=0, microsecond=0) - datetime.timedelta(hours=zone_offset_h)


def zone_offset_hours(zone):
    """Etc/GMT-3 is three hours ahead of UTC (POSIX-style names); UTC is 0."""
    if zone == "UTC":
        return 0
    sign = -1 if zone[7] == "+" else 1
    return sign * int(zone[8:])
