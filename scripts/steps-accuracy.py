#!/usr/bin/env python3
"""Strap steps against hand-labelled steps, end to end: each recording's accelerometer signal is
resampled to the strap's 50 Hz, sent as `pmd_acc` bridge messages (what a Polar H10 notification
holds) by a `command` bridge child into the agent process (`keepalive run`), and the steps the
agent stores (`step_record`, kind `acc`) are compared per recording with the dataset's own count.

Datasets (pass the folder holding the files; nothing of either is committed here):
- `gaitdata`: "A Reference Data Set for the Study of Healthy Subject Gait with Inertial Measurement
  Units" (Voisard et al.; github.com/CyrilVoisard/ipol_dataset_1, folder GaitData, AGPL-3.0):
  19 healthy adults, 110 trials of standing, walking 10 m, turning, walking back, stopping; a
  lower-back (L5) XSens MTw Awinda at 100 Hz; every footstep's start and end, detected by two
  published methods and checked by hand. Reference = left + right footsteps.
- `oxford`: the Oxford Step Counter validation set (Salvi et al. 2018;
  github.com/Oxford-step-counter/DataSet, folder validation, CC BY 4.0): 2 users, 12 walks of
  about 3 minutes with a Samsung S6 in the hand, a front or back pocket, a neck pouch (on the
  chest), a bag or an armband; ~100 Hz; the steps counted by the dataset's ground-truth device
  (last value of its column). Reference = that count; the dataset's own algorithm's count and the
  phone's hardware step counter (user 2 only: user 1's column is 0) are printed beside ours.

Usage: scripts/steps-accuracy.py {gaitdata|oxford} DIR [--only TEXT]
Needs: a built agent (.build/debug/keepalive or $KEEPALIVE_BIN), python3 with numpy.
Prints one row per recording and the mean |error| per recording.
"""
import argparse
import datetime
import glob
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENT = os.environ.get("KEEPALIVE_BIN") or os.path.join(ROOT, ".build/debug/keepalive")
RATE = 50
BATCH = 36  # samples per pmd_acc message (Tests/Fixtures/steps/make_fixtures.py)
GRAVITY = 9.80665
SLOT = datetime.timedelta(minutes=10)  # each recording in its own 10 minutes: the gap closes its windows


def gaitdata(folder):
    """(name, times s, acc m/s² N×3, reference steps) per trial, lower-back sensor."""
    for meta_path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        name = os.path.basename(meta_path)[:-5]
        signal_path = os.path.join(folder, name + "_lb.txt")
        if not os.path.exists(signal_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        data = np.loadtxt(signal_path, skiprows=2)
        # Time from the sensor's PacketCounter (column 0), not the row number: the wireless
        # sensor drops packets (79 of the 110 files skip counter values, up to 64 in a row), and
        # the footstep labels are on the counter's time base. A repeated counter value is dropped.
        counter = data[:, 0]
        data = data[np.concatenate([[True], np.diff(counter) > 0])]
        times = (data[:, 0] - data[0, 0]) / 100.0
        yield name, times, data[:, 1:4], len(meta["LeftFootEvents"]) + len(meta["RightFootEvents"]), {}


def oxford(folder):
    """(name, times s, acc m/s² N×3, reference steps) per validation walk."""
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        data = np.loadtxt(path, delimiter=",")
        times = (data[:, 0] - data[0, 0]) / 1e9
        yield os.path.basename(path)[:-4], times, data[:, 1:4], int(data[-1, 5]), {"oxford_algo": int(data[-1, 4]), "phone_hw": int(data[-1, 6]) or None}


def resampled_mg(times, acc):
    """The signal on a 50 Hz grid (linear interpolation), in mG as the strap sends it."""
    grid = np.arange(0, times[-1], 1.0 / RATE)
    columns = [np.interp(grid, times, acc[:, axis]) for axis in range(3)]
    return np.round(np.stack(columns, axis=1) * 1000 / GRAVITY).astype(int)


def messages(sensor, start, samples):
    lines = []
    for seq, first in enumerate(range(0, len(samples), BATCH), start=1):
        when = start + datetime.timedelta(seconds=first / RATE)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000)
        lines.append(json.dumps({"ts": stamp, "seq": seq, "sensor": sensor, "char": "pmd_acc", "rate_hz": RATE,
                                 "samples": samples[first:first + BATCH].tolist()}, separators=(",", ":")))
    return lines


def run_agent(work, bridge_file, expected_sensors):
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write('[device]\nid = "steps"\ntimezone = "UTC"\n[mqtt]\nport = 1\n[gps]\nenabled = false\n'
                '[hr]\ntransport = "command"\ncommand = ["/bin/sh", "-c", "cat %s; exec sleep 100000"]\nstall_timeout_s = 3600\n'
                # fold_s = 1: the stored windows reach the SQLite file this script reads within a second.
                '[store]\npath = "%s/k.db"\nfold_s = 1\n' % (bridge_file, work))
    log = open(os.path.join(work, "agent.log"), "w")
    agent = subprocess.Popen([AGENT, "run", "--config", config, "--log-level", "info"], stdout=log, stderr=subprocess.STDOUT,
                             env=dict(os.environ, KEEPALIVE_CLOCK_SYNCHRONISED="1"))
    try:
        # Windows close when a sensor's signal stops (the next recording is 10 minutes later; the
        # last one when the bridge has been quiet 5 s): wait until every sensor has records and
        # the count has not changed for 15 s.
        seen, changed, started = -1, time.time(), time.time()
        while time.time() - started < 1800:
            time.sleep(2)
            if agent.poll() is not None:
                sys.exit("the agent exited (%s): see its log\n%s" % (agent.returncode, open(log.name).read()[-2000:]))
            try:
                db = sqlite3.connect(os.path.join(work, "k.db"))
                count, sensors = db.execute("SELECT count(*), count(DISTINCT sensor) FROM step_record WHERE kind = 'acc'").fetchone()
                db.close()
            except sqlite3.Error:
                count, sensors = -1, 0
            if count != seen:
                seen, changed = count, time.time()
            if sensors >= expected_sensors and time.time() - changed > 15:
                break
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=30)
        except subprocess.TimeoutExpired:
            agent.kill()
        log.close()
    db = sqlite3.connect(os.path.join(work, "k.db"))
    counted = dict(db.execute("SELECT sensor, sum(steps) FROM step_record WHERE kind = 'acc' GROUP BY sensor").fetchall())
    db.close()
    return counted


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=["gaitdata", "oxford"])
    parser.add_argument("folder")
    parser.add_argument("--only", help="only recordings whose name contains this")
    args = parser.parse_args()
    reader = gaitdata if args.dataset == "gaitdata" else oxford
    recordings = [r for r in reader(args.folder) if not args.only or args.only in r[0]]
    if not recordings:
        sys.exit("no recordings in %s" % args.folder)
    # Two days ago, on the hour: past days, whole.
    start = datetime.datetime.now(datetime.timezone.utc).replace(minute=0, second=0, microsecond=0) - datetime.timedelta(days=2)
    work = tempfile.mkdtemp(prefix="steps-accuracy-")
    try:
        lines, references = [], {}
        for index, (name, times, acc, reference, others) in enumerate(recordings):
            sensor = "%s-%s" % (args.dataset, name)
            lines += messages(sensor, start + index * SLOT, resampled_mg(times, acc))
            references[sensor] = (name, reference, times[-1], others)
        bridge_file = os.path.join(work, "bridge.ndjson")
        with open(bridge_file, "w") as f:
            f.write("\n".join(lines) + "\n")
        counted = run_agent(work, bridge_file, len(recordings))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    other_names = sorted({key for r in references.values() for key in r[3]})
    print("%-36s %6s %8s %8s %7s%s" % ("recording", "s", "labelled", "agent", "error%", "".join(" %12s" % n for n in other_names)))
    errors = []
    other_errors = {n: [] for n in other_names}
    for sensor, (name, reference, seconds, others) in references.items():
        steps = counted.get(sensor, 0)
        error = (steps / reference - 1) * 100 if reference else float("nan")
        errors.append(abs(error))
        for n in other_names:
            if others[n] is not None:  # user1's phone counter was not recorded (0 throughout)
                other_errors[n].append(abs(others[n] / reference - 1) * 100)
        print("%-36s %6.0f %8d %8d %+7.1f%s" % (name, seconds, reference, steps, error,
                                                 "".join(" %5d %+5.1f%%" % (others[n], (others[n] / reference - 1) * 100) if others[n] is not None else " %12s" % "-"
                                                         for n in other_names)))
    total_reference = sum(r[1] for r in references.values())
    total = sum(counted.get(s, 0) for s in references)
    print("%d recordings, %d labelled steps, %d counted (net %+.1f %%); per recording |error|: mean %.1f %%, median %.1f %%, max %.1f %%" % (
        len(errors), total_reference, total, (total / total_reference - 1) * 100, sum(errors) / len(errors),
        sorted(errors)[len(errors) // 2], max(errors)))
    if args.dataset == "gaitdata":
        # The detector's newer settings (rhythmic threshold, closing step) were chosen on the
        # odd-numbered subjects only: the even-numbered ones are held out.
        for label, parity in (("odd-numbered subjects (tuned on)", 1), ("even-numbered subjects (held out)", 0)):
            group = [s for s, r in references.items() if int(r[0].split("-")[0]) % 2 == parity]
            group_errors = sorted(abs(counted.get(s, 0) / references[s][1] - 1) * 100 for s in group)
            group_reference = sum(references[s][1] for s in group)
            group_total = sum(counted.get(s, 0) for s in group)
            print("%s: %d trials, %d labelled, %d counted (net %+.1f %%); per trial |error|: mean %.1f %%, median %.1f %%, max %.1f %%" % (
                label, len(group), group_reference, group_total, (group_total / group_reference - 1) * 100,
                sum(group_errors) / len(group_errors), group_errors[len(group_errors) // 2], group_errors[-1]))
    for n, values in other_errors.items():
        print("reference %s on the same recordings (%d with a count): mean |error| %.1f %%, max %.1f %%" % (
            n, len(values), sum(values) / len(values), max(values)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
