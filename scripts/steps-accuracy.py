#!/usr/bin/env python3
"""Strap steps against labelled or reference steps, end to end: each recording's accelerometer signal is
resampled to the strap's 50 Hz, sent as `pmd_acc` bridge messages (what a Polar H10 notification
holds) by a `command` bridge child into the agent process (`keepalive run`), and the steps the
agent stores (`step_record`, kind `acc`) are compared per recording with the dataset's own count.

Datasets (pass the folder holding the files; nothing of GaitData is committed, of the other two
only the samples in Tests/Fixtures/steps):
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
- `oxford-optimisation`: the same data set's `optimisation` folder (the walks its authors tuned
  their algorithm on; ours never saw them; CC BY 4.0): 48 walks of 2-3 minutes by 3 people with
  Nexus, Pixel and Samsung phones in the hand, pockets, an armband, a purse, swinging in the hand
  or in a neck pouch; the ground truth is two foot switches sampled about 10 times a second
  (`stepcounter.csv`): a step is a switch going from 0 to 1, counted as the folder's own
  `stats.js` counts it. Folders starting with `_` (patients, without ground truth) are skipped.
- `movingreality`: the Movin(g)Reality study's Xsens recordings (Ensink et al. 2024; Sint
  Maartenskliniek, github.com/SintMaartenskliniek/MovingReality, folder data, MIT licence):
  12 people after a stroke walking 2-3 minutes on a treadmill (GRAIL), 5 trials each; a lower-back
  (lumbar) XSens MTw Awinda at 100 Hz, and one on each shank and foot. The study's reference (Vicon
  .c3d) could not be retrieved (over 4 MiB a file), so the reference here is the shank gyroscopes: one
  mid-swing peak of each shank's sagittal angular velocity per stride (Salarian et al. 2004),
  steps = left + right swings; a trial is scored only where the two legs agree within one swing
  (on a continuous walk they alternate), else it is listed as left out with both counts.

Usage: scripts/steps-accuracy.py {gaitdata|oxford|oxford-optimisation|movingreality} DIR [--only TEXT]
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


def oxford_optimisation(folder):
    """(name, times s, acc m/s² N×3, reference steps) per walk of the `optimisation/data` folder."""
    for walk in sorted(glob.glob(os.path.join(folder, "*", "stepcounter.csv"))):
        directory = os.path.dirname(walk)
        if os.path.basename(directory).startswith("_"):
            continue
        switches = np.loadtxt(walk, delimiter=",", ndmin=2)
        # Rising edges of either foot switch, from the first row on (as the data set's stats.js).
        steps = int(sum((np.diff(switches[:, column]) == 1).sum() for column in (1, 2)))
        data = np.loadtxt(os.path.join(directory, "accelerometer.csv"), delimiter=",", ndmin=2)
        data = data[np.concatenate([[True], np.diff(data[:, 0]) > 0])]
        yield os.path.basename(directory), (data[:, 0] - data[0, 0]) / 1e9, data[:, 2:5], steps, {}


def xsens_columns(path):
    """PacketCounter (unwrapped from 16 bits), Acc_X..Z (m/s²) and Gyr_X..Z (rad/s) of an MT Manager
    text export; its SampleTimeFine column is empty."""
    with open(path) as f:
        rows = [line.split("\t") for line in f if line[:1].isdigit()]
    if not rows:
        return None
    header = 2  # PacketCounter, SampleTimeFine, then Acc_X, Acc_Y, Acc_Z, FreeAcc_E/N/U, Gyr_X, Gyr_Y, Gyr_Z
    data = np.array([[float(r[0])] + [float(v) for v in r[header:header + 3] + r[header + 6:header + 9]] for r in rows])
    counter = data[:, 0] + 65536 * np.concatenate([[0], np.cumsum(np.diff(data[:, 0]) < -30000)])
    keep = np.concatenate([[True], np.diff(counter) > 0])
    return counter[keep], data[keep, 1:4], data[keep, 4:7]


def shank_swings(gyro, rate=100.0):
    """Mid-swing peaks of a shank's sagittal angular velocity (Salarian et al. 2004): the axis of
    largest variance, signed so the swing peak is positive, smoothed (two 4 Hz moving averages); a
    peak is the largest value within ±0.3 s, at least 50 °/s and a quarter of the 99th percentile,
    and 0.6 s after the previous one (no stride is shorter)."""
    centred = gyro - gyro.mean(axis=0)
    axis = np.linalg.svd(centred[::5], full_matrices=False)[2][0]
    w = centred @ axis
    if np.percentile(w, 99.5) < -np.percentile(w, 0.5):
        w = -w
    kernel = np.ones(int(rate / 8)) / int(rate / 8)
    w = np.convolve(np.convolve(w, kernel, mode="same"), kernel, mode="same")
    threshold = max(np.radians(50), 0.25 * np.percentile(w, 99))
    half, gap, peaks = int(0.3 * rate), int(0.6 * rate), []
    for i in range(half, len(w) - half):
        if w[i] >= threshold and w[i] == w[i - half:i + half + 1].max():
            if peaks and i - peaks[-1] < gap:
                if w[i] > w[peaks[-1]]:
                    peaks[-1] = i
                continue
            peaks.append(i)
    return len(peaks)


def movingreality(folder):
    """(name, times s, acc m/s² N×3, reference steps) per treadmill trial, lumbar sensor; the
    reference from the shanks (see the module's docstring)."""
    for participant_folder in sorted(glob.glob(os.path.join(folder, "1019_pp*"))):
        participant = os.path.basename(participant_folder)[len("1019_"):]
        # corresponding_files.txt names each trial's Xsens export ("1019_MR003_FBPO.c3d = exported003",
        # sometimes with a stray "']" or a comment): only the exports it lists are trials.
        trials = []
        for line in open(os.path.join(participant_folder, "corresponding_files.txt")):
            if "=" in line:
                c3d, exported = line.split("#")[0].split("=")
                kind = c3d.strip().rstrip("']").replace(".c3d", "").rsplit("_", 1)[-1]
                trials.append((kind, exported.strip()))
        for kind, exported in trials:
            trial = os.path.join(participant_folder, "Xsens", exported)
            name = "%s-%s" % (participant, kind)
            specs = glob.glob(os.path.join(trial, "sensorspec.json*"))
            if not specs:
                print("left out %s: no sensorspec.json" % name, file=sys.stderr)
                continue
            spec = json.load(open(specs[0]))
            paths = {}
            for segment in ("lumbar", "leftshank", "rightshank"):
                # The spec names a sensor by its id's tail ("47787.txt" or "00B47787.txt").
                found = [p for p in glob.glob(os.path.join(trial, "*.txt")) if p.endswith(spec[segment]) and "sensorspec" not in p]
                paths[segment] = found[0] if len(found) == 1 else None
            columns = {segment: xsens_columns(path) if path else None for segment, path in paths.items()}
            if any(c is None for c in columns.values()):
                print("left out %s: a sensor's file is missing or empty (%s)" % (name, ", ".join(s for s, c in columns.items() if c is None)), file=sys.stderr)
                continue
            left, right = shank_swings(columns["leftshank"][2]), shank_swings(columns["rightshank"][2])
            if abs(left - right) > 1:
                print("left out %s: the shanks disagree (left %d, right %d swings)" % (name, left, right), file=sys.stderr)
                continue
            counter, acc, _ = columns["lumbar"]
            yield name, (counter - counter[0]) / 100.0, acc, left + right, {}


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
    parser.add_argument("dataset", choices=["gaitdata", "oxford", "oxford-optimisation", "movingreality"])
    parser.add_argument("folder")
    parser.add_argument("--only", help="only recordings whose name contains this")
    args = parser.parse_args()
    reader = {"gaitdata": gaitdata, "oxford": oxford, "oxford-optimisation": oxford_optimisation,
              "movingreality": movingreality}[args.dataset]
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
    # GaitData: the rhythmic threshold and the closing step were chosen on the odd-numbered
    # subjects only; Movin(g)Reality: the stride check on the odd-numbered participants only
    # (pp01, pp03, ...). The even-numbered ones are held out.
    subject = {"gaitdata": lambda name: int(name.split("-")[0]),
               "movingreality": lambda name: int(name.split("-")[0][2:])}.get(args.dataset)
    if subject:
        for label, parity in (("odd-numbered subjects (tuned on)", 1), ("even-numbered subjects (held out)", 0)):
            group = [s for s, r in references.items() if subject(r[0]) % 2 == parity]
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
