#!/usr/bin/env python3
"""Runs every NMEA receiver capture of gpsd's own test corpus through gpsfake and the agent,
and checks that every position the agent stores is one gpsd reports: in its expected output
(test/daemon/*.log.chk) and, as read at the same time with gpspipe, in the live session.
Slow (minutes): not part of the default test run.

Verdicts: pass (every stored position is in the .chk), pass-live (every stored position is
what the live gpsd reported, but the live gpsd reported positions its .chk does not have — a
difference between gpsd's regression run and a live one, not the agent's), fail (the agent
stored a position gpsd did not report, or nothing while gpsd reported fixes), skip (the .chk
has no position).

Usage: scripts/gps-corpus.py [--jobs N] [--only NAME]
Needs: a built agent (.build/debug/keepalive, or $KEEPALIVE_BIN), gpsfake, sqlite3 (python).
The gpsd source package is fetched once with apt-get into ~/.cache/keepalive/gpsd-src.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENT = os.environ.get("KEEPALIVE_BIN") or os.path.join(ROOT, ".build/debug/keepalive")
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "keepalive", "gpsd-src")


def fetch_corpus():
    found = glob.glob(os.path.join(CACHE, "gpsd-*/test/daemon"))
    if found:
        return found[0]
    os.makedirs(os.path.join(CACHE, "lists/partial"), exist_ok=True)
    source_list = os.path.join(CACHE, "sources.list")
    with open(source_list, "w") as f:
        f.write("deb-src http://deb.debian.org/debian bookworm main\n")
    options = ["-o", "Dir::Etc::SourceList=" + source_list, "-o", "Dir::Etc::SourceParts=/dev/null",
               "-o", "Dir::State::Lists=" + os.path.join(CACHE, "lists")]
    subprocess.run(["apt-get", *options, "update"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", *options, "source", "--download-only", "gpsd"], check=True, cwd=CACHE,
                   stdout=subprocess.DEVNULL)
    tarball = glob.glob(os.path.join(CACHE, "gpsd_*.orig.tar.*"))[0]
    subprocess.run(["tar", "xf", tarball], check=True, cwd=CACHE)
    return glob.glob(os.path.join(CACHE, "gpsd-*/test/daemon"))[0]


def is_nmea(path):
    with open(path, "rb") as f:
        data = f.read()
    lines = [l for l in data.splitlines() if l and not l.startswith(b"#")]
    if not lines:
        return False
    nmea = sum(1 for l in lines if l[:1] in (b"$", b"!"))
    return nmea / len(lines) > 0.9


def expected_positions(chk):
    positions = set()
    with open(chk, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if '"class":"TPV"' not in line:
                continue
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if "lat" in report and "lon" in report and report.get("mode", 0) >= 2:
                positions.add((report["lat"], report["lon"]))
    return positions


def free_port():
    while True:
        port = random.randint(1025, 30000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue


def run_capture(log):
    name = os.path.basename(log)
    expected = expected_positions(log + ".chk")
    if not expected:
        return name, "skip", "no position in gpsd's expected output", 0, 0
    with tempfile.TemporaryDirectory(prefix="corpus-") as work:
        gps_port = free_port()
        config = os.path.join(work, "config.toml")
        with open(config, "w") as f:
            f.write('[device]\nid = "corpus"\ntimezone = "UTC"\n[mqtt]\nport = %d\n[gps]\nport = %d\nfix_timeout_s = 120\n'
                    '[hr]\ntransport = "none"\n[store]\npath = "%s/k.db"\n' % (free_port(), gps_port, work))
        env = dict(os.environ, TMPDIR=work, KEEPALIVE_CLOCK_SYNCHRONISED="0")
        # gpsd needs a couple of seconds of sentences to recognise a receiver: short captures are
        # played slower so that they last at least ~10 s.
        with open(log, "rb") as f:
            sentences = sum(1 for line in f if line[:1] in (b"$", b"!"))
        cycle = "%.3f" % max(0.02, 10.0 / max(sentences, 1))
        fake = subprocess.Popen(["gpsfake", "-P", str(gps_port), "-1", "-W", "1", "-q", "-c", cycle, log],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.time() + 15
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", gps_port)) == 0:
                    break
            time.sleep(0.05)
        # To a file, not a pipe: nobody reads a pipe until the end, and a full one would stall
        # gpspipe until gpsd drops it as a slow client.
        live_path = os.path.join(work, "live.json")
        live_file = open(live_path, "w")
        pipe = subprocess.Popen(["gpspipe", "-w", "127.0.0.1:%d" % gps_port], stdout=live_file,
                                stderr=subprocess.DEVNULL)
        agent = subprocess.Popen([AGENT, "run", "--config", config], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=env)
        try:
            try:
                fake.wait(timeout=600)
            except subprocess.TimeoutExpired:
                pass
        finally:
            # Every process this capture started is stopped by PID, also on Ctrl-C or SIGTERM.
            for process in (fake, agent, pipe):
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in (fake, agent, pipe):
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
            live_file.close()
        live = set()
        for line in open(live_path, encoding="utf-8", errors="replace"):
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if report.get("class") == "TPV" and "lat" in report and "lon" in report and report.get("mode", 0) >= 2:
                live.add((report["lat"], report["lon"]))
        db = sqlite3.connect(os.path.join(work, "k.db"))
        stored = db.execute("SELECT lat, lon FROM fix").fetchall()
        db.close()
    not_live = [p for p in stored if (p[0], p[1]) not in live]
    not_chk = [p for p in stored if (p[0], p[1]) not in expected]
    if not stored:
        if live:
            return name, "fail", "no fix stored, gpsd reported %d positions" % len(live), 0, len(expected)
        return name, "skip", "live gpsd reported no position either (capture too short to detect?)", 0, len(expected)
    if not_live:
        return name, "fail", "%d stored positions gpsd did not report, e.g. %s" % (len(not_live), not_live[:2]), len(stored), len(expected)
    if not_chk:
        return name, "pass-live", "%d positions as live gpsd reported them but not in its .chk" % len(not_chk), len(stored), len(expected)
    return name, "pass", "", len(stored), len(expected)


def main():
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop the children.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--only")
    args = parser.parse_args()
    corpus = fetch_corpus()
    logs = sorted(l for l in glob.glob(os.path.join(corpus, "*.log"))
                  if os.path.exists(l + ".chk") and is_nmea(l) and (not args.only or args.only in l))
    print("corpus: %s, %d NMEA captures" % (corpus, len(logs)), flush=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for result in pool.map(run_capture, logs):
            results.append(result)
            name, verdict, detail, stored, expected = result
            print("%-4s %-40s stored %4d of %4d gpsd positions %s" % (verdict, name, stored, expected, detail), flush=True)
    passed = sum(1 for r in results if r[1] == "pass")
    live = sum(1 for r in results if r[1] == "pass-live")
    failed = sum(1 for r in results if r[1] == "fail")
    skipped = sum(1 for r in results if r[1] == "skip")
    print("corpus: %d pass (.chk), %d pass (live gpsd; its .chk differs), %d fail, %d skip" % (passed, live, failed, skipped))
    print("%d passed, %d failed, %d skipped" % (passed + live, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
