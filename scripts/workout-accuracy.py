#!/usr/bin/env python3
"""Workout distance against a trundle wheel, end to end: each walk's phone GPS track is written
as NMEA, played by gpsfake into a real gpsd, read by the agent process (`keepalive run`), and the
workouts the agent stores are compared with the wheel's length of the same walk.

Dataset: "Walked distance dataset" (Jérémy Bezançon, recorded in Malmö; github.com/Jeremy618/TrundleWheel,
Data/User1_Jeremy_Bezancon/*_conditioned.csv): 15 walks of about 1000 m (slow, normal, fast,
alternating speeds, mixed with stops; 3 each) plus one of 1250 m, 1 Hz phone GNSS (Android
Geolocation API) with a sensorised trundle wheel counting every metre. The repository states no
licence: nothing of it is committed here; pass the folder holding the CSV files.

What is real: every fix's time, latitude, longitude, altitude, speed and heading, the wheel's
distance, the phone's stated accuracy. What is synthesised (plumbing, not accuracy): the NMEA
framing, the satellite count, the DOPs (set so that gpsd's eph is the phone's accuracy), and 2 minutes standing before and 7 after each walk at its first
and last position (so that the walk ends in the data: 5 minutes without moving end a workout).

A second dataset (`--dataset snapper-rtk`, `--dataset snapper`): "SnapperGPS collection 2"
(Jonas Beuchert, University of Oxford, 2023, doi:10.5287/ora-xq5b8xva7;
github.com/JonasBchrt/snapshot-gnss-data-2, CC BY 4.0; pass the repository's folder): walks in
Oxfordshire carried with a u-blox ZED-F9P receiver in RTK mode (`ground-truth/wNN.json`, 1 Hz,
time of day, latitude, longitude) and with SnapperGPS snapshot receivers (`fixes/wNN.json`, 1 Hz,
with a 50 % confidence radius). Walks carried with several boards share one RTK file: each RTK
walk is played once. The reference length is the RTK track's own path length. `snapper-rtk`
plays the RTK track itself: a dedicated receiver's track (not a phone's), whose length is the
reference, so it measures what the agent's rules lose, not receiver error. `snapper` plays the
snapshot receivers' fixes: snapshot positioning (12 ms of signal a second, no tracking loop),
10–24 m median error, far noisier than any tracking receiver; a stress test, not a USB-GPS
figure. Synthesised: the NMEA framing, a speed of none (the RTK file has none: the agent's Doppler
check is not used), the DOPs (RTK: an accuracy of 1 m; SnapperGPS: its confidence radius taken
as a 50 % radius).

Usage: scripts/workout-accuracy.py DATA_DIR [--dataset trundlewheel|snapper-rtk|snapper] [--only NAME] [--cycle S]
Needs: a built agent (.build/debug/keepalive or $KEEPALIVE_BIN), gpsfake (gpsd-clients), python3.
Prints one row per walk and the summary (mean and max |error|, walks found).
"""
import argparse
import csv
import datetime
import hashlib
import json
import glob
import importlib.util
import math
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENT = os.environ.get("KEEPALIVE_BIN") or os.path.join(ROOT, ".build/debug/keepalive")
BEFORE_S = 120
AFTER_S = 420
SLOT_S = 1800  # each walk in its own half hour


def read_walk(path):
    with open(path, encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter=";"))
    header = [h.strip().lower() for h in rows[0]]
    fixes = []
    wheel = None
    for values in rows[1:]:
        row = dict(zip(header, values))
        wheel = float(row["distance"]) if row.get("distance") else wheel
        if not row.get("p_lat") or not row.get("p_long"):
            continue
        fixes.append({
            "t": float(row["time"]) / 1000, "lat": float(row["p_lat"]), "lon": float(row["p_long"]),
            "alt": float(row["p_alt"]) if row.get("p_alt") else 0.0,
            "speed": float(row["p_speed"]) if row.get("p_speed") else None,
            "course": float(row["p_head"]) if row.get("p_head") else None,
            "acc": float(row["p_acc"]) if row.get("p_acc") else 5.0,
        })
    return fixes, wheel


def read_snapper(folder, source):
    """SnapperGPS collection 2's walks: (name, fixes, reference length) per distinct RTK track."""
    walks, seen = [], set()
    for path in sorted(glob.glob(os.path.join(folder, "ground-truth", "w*.json"))):
        name = os.path.basename(path)[:-5]
        raw = open(path, "rb").read()
        snapshot = json.load(open(os.path.join(folder, "fixes", name + ".json")))
        snapshot = sorted((datetime.datetime.strptime(p["datetime"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc),
                           p["latitude"], p["longitude"], p.get("confidence") or 50.0)
                          for p in snapshot if p.get("latitude") is not None and p.get("longitude") is not None)
        day = snapshot[0][0].date()  # the RTK file has the time of day only
        rtk = sorted((datetime.datetime.combine(day, datetime.datetime.strptime(p["time"], "%H:%M:%S").time(), datetime.timezone.utc),
                      p["latitude"], p["longitude"]) for p in json.loads(raw))
        first, last = max(snapshot[0][0], rtk[0][0]), min(snapshot[-1][0], rtk[-1][0])
        rtk = [p for p in rtk if first <= p[0] <= last]
        length = sum(haversine(a[1], a[2], b[1], b[2]) for a, b in zip(rtk, rtk[1:]))
        if source == "snapper-rtk":
            digest = hashlib.sha256(raw).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            fixes = [{"t": t.timestamp(), "lat": la, "lon": lo, "alt": 0.0, "speed": None, "course": None, "acc": 1.0}
                     for t, la, lo in rtk]
        else:
            # A 50 % radius is 1.18 σ per axis; the NMEA writer takes a 68 % radius (1.51 σ).
            fixes = [{"t": t.timestamp(), "lat": la, "lon": lo, "alt": 0.0, "speed": None, "course": None, "acc": c / 1.18 * 1.51}
                     for t, la, lo, c in snapshot if first <= t <= last]
        walks.append((name, fixes, length))
    return walks


def haversine(lat1, lon1, lat2, lon2):
    r = 6371008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))


def framed(body):
    checksum = 0
    for ch in body.encode():
        checksum ^= ch
    return "$%s*%02X\r\n" % (body, checksum)


def dm(value, digits, pos, neg):
    hemisphere = pos if value >= 0 else neg
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    return ("%0*d%07.4f" % (digits, degrees, minutes)), hemisphere


def sentences(epoch, fix):
    stamp = time.gmtime(epoch)
    centi = int(round((epoch - int(epoch)) * 100))
    if centi >= 100:
        centi = 99
    hhmmss = "%02d%02d%02d.%02d" % (stamp.tm_hour, stamp.tm_min, stamp.tm_sec, centi)
    date = "%02d%02d%02d" % (stamp.tm_mday, stamp.tm_mon, stamp.tm_year % 100)
    lat, ns = dm(fix["lat"], 2, "N", "S")
    lon, ew = dm(fix["lon"], 3, "E", "W")
    knots = "%.2f" % ((fix["speed"] or 0) / 0.514444) if fix["speed"] is not None else ""
    course = "%.1f" % fix["course"] if fix["course"] is not None and fix["speed"] else ""
    # Android's accuracy is a 68 % radius (σ per axis = acc / 1.51); gpsd 3.22 reports
    # eph = 19 m × HDOP (its UERE without DGPS, a 95 % radius = 2.45 σ): the HDOP written makes
    # gpsd's eph the phone's own accuracy, as a receiver stating it would.
    sigma = fix["acc"] / 1.51
    hdop = max(0.05, min(50.0, 2.45 * sigma / 19))
    return "".join([
        framed("GPRMC,%s,A,%s,%s,%s,%s,%s,%s,%s,,,A" % (hhmmss, lat, ns, lon, ew, knots, course, date)),
        framed("GPGGA,%s,%s,%s,%s,%s,1,08,%.2f,%.1f,M,0.0,M,," % (hhmmss, lat, ns, lon, ew, hdop, fix["alt"])),
        framed("GPGSA,A,3,04,05,09,12,17,20,24,28,,,,,%.2f,%.2f,%.2f" % (hdop * 1.5, hdop, hdop)),
        framed("GPGST,%s,%.1f,%.1f,%.1f,0.0,%.1f,%.1f,%.1f" % (hhmmss, sigma, sigma, sigma, sigma, sigma, sigma * 1.5)),
    ])


def nmea_log(walks, base):
    """Each walk in its own half hour from `base`, with standing before and after."""
    out = []
    spans = []
    slot = base
    for name, fixes, wheel in walks:
        t0 = fixes[0]["t"]
        first = dict(fixes[0], speed=0.0, course=None)
        last = dict(fixes[-1], speed=0.0, course=None)
        start = slot + BEFORE_S
        for second in range(BEFORE_S):
            out.append(sentences(slot + second, first))
        for fix in fixes:
            out.append(sentences(start + fix["t"] - t0, fix))
        end = start + fixes[-1]["t"] - t0
        for second in range(1, AFTER_S + 1):
            out.append(sentences(int(end) + second, last))
        spans.append((name, start, end, wheel, fixes))
        # The next walk in the next half hour, or later for a walk longer than one.
        slot += SLOT_S * math.ceil((BEFORE_S + fixes[-1]["t"] - t0 + AFTER_S + 60) / SLOT_S)
    return "".join(out), spans


# The free-port picker of scripts/gps-corpus.py (its name has a hyphen: loaded by path).
_corpus_spec = importlib.util.spec_from_file_location("gps_corpus", os.path.join(ROOT, "scripts", "gps-corpus.py"))
gps_corpus = importlib.util.module_from_spec(_corpus_spec)
_corpus_spec.loader.exec_module(gps_corpus)
free_port = gps_corpus.free_port


def run_agent(log_path, work, cycle, expected):
    gps_port = free_port()
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write('[device]\nid = "accuracy"\ntimezone = "UTC"\n[mqtt]\nport = %d\n[gps]\nport = %d\nfix_timeout_s = 120\n'
                '[hr]\ntransport = "none"\n[store]\npath = "%s/k.db"\nfold_s = 1\n' % (free_port(), gps_port, work))
    env = dict(os.environ, TMPDIR=work, KEEPALIVE_CLOCK_SYNCHRONISED="1")
    fake = subprocess.Popen(["gpsfake", "-P", str(gps_port), "-1", "-W", "1", "-q", "-c", str(cycle), log_path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    agent = None
    try:
        deadline = time.time() + 15
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", gps_port)) == 0:
                    break
            time.sleep(0.05)
        agent_log = open(os.path.join(work, "agent.log"), "w")
        agent = subprocess.Popen([AGENT, "run", "--config", config, "--log-level", "info"], stdout=agent_log,
                                 stderr=subprocess.STDOUT, env=env)
        started = time.time()
        fake.wait(timeout=3600)
        # The agent polls the store every 5 s: wait until every walk has a finished workout, or
        # the count has not changed for 40 s (a walk that is no workout by the rules).
        db_path = os.path.join(work, "k.db")
        seen, changed = -1, time.time()
        while time.time() - started < 1200:
            time.sleep(2)
            try:
                db = sqlite3.connect(db_path)
                count = db.execute("SELECT count(*) FROM workout WHERE finished = 1").fetchone()[0]
                db.close()
            except sqlite3.Error:
                count = -1
            if count != seen:
                seen, changed = count, time.time()
            if count >= expected or time.time() - changed > 40:
                break
    finally:
        for process in (fake, agent):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in (fake, agent):
            if process is not None:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
    db = sqlite3.connect(os.path.join(work, "k.db"))
    workouts = db.execute("SELECT start_ms, end_ms, distance_m, finished, sport FROM workout ORDER BY start_ms").fetchall()
    fixes = db.execute("SELECT count(*) FROM fix").fetchone()[0]
    db.close()
    return workouts, fixes


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", help="folder with the dataset's *_conditioned.csv files (snapper: the repository's folder)")
    parser.add_argument("--dataset", choices=["trundlewheel", "snapper-rtk", "snapper"], default="trundlewheel")
    parser.add_argument("--only", help="only walks whose name contains this")
    parser.add_argument("--keep", action="store_true", help="keep the working directory (store, log, NMEA)")
    parser.add_argument("--cycle", type=float, default=0.002, help="gpsfake's delay between sentences (s)")
    args = parser.parse_args()
    walks = []
    if args.dataset == "trundlewheel":
        paths = sorted(p for p in glob.glob(os.path.join(args.data, "*_conditioned.csv")) if not args.only or args.only in p)
        if not paths:
            sys.exit("no *_conditioned.csv in %s" % args.data)
        for path in paths:
            fixes, wheel = read_walk(path)
            walks.append((os.path.basename(path).replace("_conditioned.csv", ""), fixes, wheel))
    else:
        walks = [w for w in read_snapper(args.data, args.dataset) if not args.only or args.only in w[0]]
        if not walks:
            sys.exit("no ground-truth/w*.json in %s" % args.data)
    base = (int(time.time()) // 3600) * 3600 - 20 * 3600
    work = tempfile.mkdtemp(prefix="workout-accuracy-")
    try:
        text, spans = nmea_log(walks, base)
        log_path = os.path.join(work, "walks.nmea")
        with open(log_path, "w") as f:
            f.write(text)
        workouts, stored = run_agent(log_path, work, args.cycle, len(walks))
        if not workouts:
            print(open(os.path.join(work, "agent.log")).read()[-3000:])
    finally:
        if args.keep:
            print("working directory kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("%d fixes stored; %d workouts" % (stored, len(workouts)))
    print("%-22s %6s %6s %8s %8s %8s %7s %7s" % ("walk", "min", "m/s", "ref_m", "gps_m", "agent_m", "agent%", "gps%"))
    errors, missed, required_missed = [], [], []
    for name, start, end, wheel, fixes in spans:
        raw = sum(haversine(a["lat"], a["lon"], b["lat"], b["lon"]) for a, b in zip(fixes, fixes[1:]))
        minutes = (end - start) / 60
        speed = wheel / (end - start)
        found = [w for w in workouts if w[0] / 1000 < end and (w[1] or 0) / 1000 > start]
        distance = sum(w[2] for w in found) if found else None
        error = (distance / wheel - 1) * 100 if found else None
        if found:
            errors.append(abs(error))
        else:
            missed.append(name)
            if minutes >= 10 and speed >= 1:
                required_missed.append(name)
        print("%-22s %6.1f %6.2f %8.1f %8.1f %8s %7s %+6.1f%s" % (
            name, minutes, speed, wheel, raw, "%.1f" % distance if found else "-", "%+.1f" % error if found else "-",
            (raw / wheel - 1) * 100, " (%d workouts)" % len(found) if len(found) > 1 else ""))
    print("found %d of %d walks; missed %s (of them >= 10 min at >= 1 m/s: %s)" % (
        len(spans) - len(missed), len(spans), missed or "none", required_missed or "none"))
    if errors:
        print("distance |error|: mean %.1f %%, median %.1f %%, max %.1f %%" % (
            sum(errors) / len(errors), sorted(errors)[len(errors) // 2], max(errors)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
