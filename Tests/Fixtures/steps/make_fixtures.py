#!/usr/bin/env python3
"""Makes the step fixtures in this folder (see README.md for what each is and where it comes from).

    python3 make_fixtures.py [MOBGAP_SDIST_DIR] [--oxford OXFORD_VALIDATION_DIR] [--movingreality MOVINGREALITY_DATA_DIR]

MOBGAP_SDIST_DIR is the unpacked source distribution of mobgap 1.2.0 from PyPI
(`pip download --no-deps --no-binary :all: mobgap==1.2.0`, then untar); OXFORD_VALIDATION_DIR
the `validation` folder of github.com/Oxford-step-counter/DataSet (CC BY 4.0);
MOVINGREALITY_DATA_DIR the `data` folder of github.com/SintMaartenskliniek/MovingReality (MIT); without them only
the synthesised fixtures are written and the real ones are kept as they are. Needs numpy and scipy (Debian: python3-numpy python3-scipy).
Deterministic: the same inputs give the same files.
"""
import datetime
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH = 36  # samples per pmd_acc message: what one H10 notification holds at an MTU of 232
EPOCH = datetime.datetime(2026, 11, 21, 8, 0, 0, tzinfo=datetime.timezone.utc)


def iso(when):
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (when.microsecond // 1000)


def acc_messages(sensor, start, rate, samples, seq=0):
    """pmd_acc bridge messages for mG samples taken from `start` at `rate` Hz."""
    lines = []
    for first in range(0, len(samples), BATCH):
        seq += 1
        when = start + datetime.timedelta(seconds=first / rate)
        chunk = [[int(v) for v in row] for row in samples[first:first + BATCH]]
        lines.append(json.dumps({"ts": iso(when), "seq": seq, "sensor": sensor, "char": "pmd_acc",
                                 "rate_hz": rate, "samples": chunk}, separators=(",", ":")))
    return lines, seq


def rsc_fixture():
    """10 minutes of a foot pod at 170 steps/min, one notification a second: 1700 steps."""
    lines, total_dm = [], 12345
    for second in range(601):
        raw = bytes([0x07]) + (768).to_bytes(2, "little") + bytes([170]) + (106).to_bytes(2, "little") \
            + total_dm.to_bytes(4, "little")  # 3.0 m/s, 1.06 m per step, running
        lines.append(json.dumps({"ts": iso(EPOCH + datetime.timedelta(seconds=second)), "seq": second + 1,
                                 "sensor": "footpod", "char": "2a53", "raw": raw.hex()}, separators=(",", ":")))
        total_dm += 30
    write("rsc-170spm-10min.ndjson", lines)


# --- Synthesised chest-strap acceleration (the model is described in README.md) ---------------

def rotation(tilt_deg, yaw_deg):
    t, y = math.radians(tilt_deg), math.radians(yaw_deg)
    rx = np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ rx


def gait(rng, rate, seconds, cadence, amplitude_g):
    """Body-frame (vertical, mediolateral, anteroposterior) acceleration in g and the step count."""
    steps, t_end, times = 0, 0.0, []
    while True:
        period = 60.0 / cadence * (1 + rng.normal(0, 0.02))
        if t_end + period > seconds:
            break
        times.append((t_end, period, amplitude_g * (1 + rng.normal(0, 0.08))))
        t_end += period
        steps += 1
    n = int(round(seconds * rate))
    out = np.zeros((n, 3))
    for k, (t0, period, a) in enumerate(times):
        i0, i1 = int(round(t0 * rate)), int(round((t0 + period) * rate))
        u = (np.arange(i0, min(i1, n)) / rate - t0) / period
        side = 1 if k % 2 == 0 else -1
        out[i0:i1, 0] = a * (0.8 * np.cos(2 * np.pi * (u - 0.12)) + 0.3 * np.cos(4 * np.pi * (u - 0.05)) + 0.08 * side)
        out[i0:i1, 1] = 0.45 * a * np.sin(np.pi * (u + k))
        out[i0:i1, 2] = 0.4 * a * np.cos(2 * np.pi * (u - 0.3))
    return out, steps


def still(rng, rate, seconds):
    n = int(round(seconds * rate))
    t = np.arange(n) / rate
    out = np.zeros((n, 3))
    out[:, 2] = 0.012 * np.sin(2 * np.pi * 0.25 * t + rng.uniform(0, 6))  # breathing
    out[:, 1] = 0.004 * np.sin(2 * np.pi * 0.1 * t)  # postural sway
    return out


def fidget(rng, rate, seconds):
    """Sitting down or standing up, and a turn of the torso: movement that is not walking."""
    out = still(rng, rate, seconds)
    n = len(out)
    t = np.arange(n) / rate
    bump = np.exp(-((t - seconds * 0.3) ** 2) / (2 * 0.25 ** 2))
    out[:, 0] += 0.35 * bump - 0.2 * np.exp(-((t - seconds * 0.3 - 0.6) ** 2) / (2 * 0.2 ** 2))
    out[:, 2] += 0.25 * bump
    twist = (t > seconds * 0.6) & (t < seconds * 0.6 + 3)
    out[twist, 1] += 0.12 * np.sin(2 * np.pi * 0.6 * t[twist])
    return out


def synthesise(segments, rate=50, seed=18):
    rng = np.random.default_rng(seed)
    body, steps, schedule = [], 0, []
    for kind, seconds, *args in segments:
        if kind == "walk" or kind == "run":
            part, n = gait(rng, rate, seconds, *args)
        elif kind == "fidget":
            part, n = fidget(rng, rate, seconds), 0
        else:
            part, n = still(rng, rate, seconds), 0
        schedule.append({"kind": kind, "seconds": seconds, "cadence": args[0] if args else None, "steps": n})
        body.append(part)
        steps += n
    body = np.vstack(body)
    # The strap sits tilted on the chest: gravity and the body axes seen through one rotation.
    rot = rotation(12, 20)
    gravity = rot @ np.array([1.0, 0.0, 0.0])
    device = body @ rot.T + gravity
    device = device * 1000 + rng.normal(0, 8, device.shape)  # mG, sensor noise
    return np.round(device).astype(int), steps, schedule


SYNTHETIC_WALK = [("stand", 30), ("fidget", 10), ("walk", 180, 112, 0.28), ("stand", 20),
                  ("run", 60, 170, 0.9), ("fidget", 10), ("stand", 30)]


def synthetic_fixture():
    samples, steps, schedule = synthesise(SYNTHETIC_WALK)
    lines, _ = acc_messages("h10-synthetic", EPOCH, 50, samples)
    write("synthetic-walk-acc.ndjson", lines)
    return {"sensor": "h10-synthetic", "first_sample": iso(EPOCH), "rate_hz": 50, "samples": len(samples),
            "steps": steps, "segments": schedule}


# --- Real lower-back recordings from the Mobilise-D example data in mobgap ------------------

def mobilised_fixture(sdist):
    import scipy.io as sio

    root = os.path.join(sdist, "example_data", "data", "lab")
    start, recordings, lines, seq = EPOCH, [], [], 0
    for participant in ["HA/001", "HA/002", "MS/001"]:
        data = sio.loadmat(os.path.join(root, participant, "data.mat"), simplify_cells=True)["data"]["TimeMeasure1"]
        for test in ["Test5", "Test11"]:
            for trial, record in data[test].items():
                lower_back = record["SU"]["LowerBack"]
                assert lower_back["Fs"]["Acc"] == 100
                bouts = reference_bouts(record["Standards"]["INDIP"])
                if not bouts:
                    continue  # the reference system found no walking: nothing to measure against
                acc = lower_back["Acc"][: len(lower_back["Acc"]) // 2 * 2]
                # 100 → 50 Hz (the strap's rate here): the mean of each pair, g → mG.
                samples = np.round((acc[0::2] + acc[1::2]) / 2 * 1000).astype(int)
                sensor = "mobilised-%s-%s-%s" % (participant.replace("/", "").lower(), test.lower(), trial.lower())
                more, seq = acc_messages(sensor, start, 50, samples, seq)
                lines += more
                stereo = reference_bouts(record["Standards"].get("Stereophoto", {}))
                recordings.append({
                    "sensor": sensor, "participant": participant, "test": test, "trial": trial,
                    "first_sample": iso(start), "rate_hz": 50, "samples": len(samples),
                    "indip_bouts": [{"start_s": s, "end_s": e, "initial_contacts": n} for s, e, n in bouts],
                    "indip_steps": sum(n for _, _, n in bouts),
                    "stereophoto_steps": sum(n for _, _, n in stereo),
                })
                start += datetime.timedelta(seconds=math.ceil(len(samples) / 50) + 60)
    write("mobilised-lab-acc.ndjson", lines)
    return recordings


def reference_bouts(standard):
    bouts = standard.get("MicroWB", [])
    bouts = bouts if isinstance(bouts, list) else [bouts]
    out = []
    for bout in bouts:
        if not isinstance(bout, dict):
            continue
        contacts = np.atleast_1d(np.asarray(bout["InitialContact_Event"], dtype=float))
        contacts = np.unique(np.round(contacts[np.isfinite(contacts)], 2))  # the reference repeats some
        out.append((round(float(bout["Start"]), 2), round(float(bout["End"]), 2), int(len(contacts))))
    return out


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as out:
        out.write("\n".join(lines) + "\n")


OXFORD_NECK_POUCH = ["user1_neckpouch_1506422851785.csv", "user2_neckpouch_1506423094931.csv"]


def oxford_fixture(folder):
    """The two neck-pouch walks of the Oxford Step Counter validation set (a phone hung on the
    chest): linearly interpolated to 50 Hz, m/s² to mG; the ground-truth device's count."""
    lines, seq, recordings = [], 0, []
    for index, name in enumerate(OXFORD_NECK_POUCH):
        data = np.loadtxt(os.path.join(folder, name), delimiter=",")
        times = (data[:, 0] - data[0, 0]) / 1e9
        grid = np.arange(0, times[-1], 1.0 / 50)
        samples = np.stack([np.interp(grid, times, data[:, 1 + axis]) for axis in range(3)], axis=1) * 1000 / 9.80665
        sensor = "oxford-" + name.split("_")[0] + "-neckpouch"
        start = EPOCH + datetime.timedelta(minutes=10 * index)
        batch, seq = acc_messages(sensor, start, 50, np.round(samples), seq)
        lines += batch
        recordings.append({"sensor": sensor, "source": "validation/" + name, "first_sample": iso(start), "rate_hz": 50,
                           "samples": len(samples), "steps": int(data[-1, 5]), "oxford_algorithm_steps": int(data[-1, 4])})
    write("oxford-neckpouch-acc.ndjson", lines)
    return recordings


# The first trial listed for each of the first two participants (not chosen by their result).
MOVINGREALITY_TRIALS = ["pp01-1Reg", "pp02-Reg"]


def movingreality_fixture(folder):
    """Two treadmill walks of the Movin(g)Reality study (people after a stroke, lumbar sensor), read,
    resampled and referenced by scripts/steps-accuracy.py's own loader (shank mid-swing peaks)."""
    import importlib.util
    path = os.path.join(HERE, "..", "..", "..", "scripts", "steps-accuracy.py")
    spec = importlib.util.spec_from_file_location("steps_accuracy", path)
    steps_accuracy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(steps_accuracy)
    lines, seq, recordings = [], 0, []
    for name, times, acc, reference, _ in steps_accuracy.movingreality(folder):
        if name not in MOVINGREALITY_TRIALS:
            continue
        sensor = "movingreality-" + name
        start = EPOCH + datetime.timedelta(minutes=10 * len(recordings))
        samples = steps_accuracy.resampled_mg(times, acc)
        batch, seq = acc_messages(sensor, start, 50, samples, seq)
        lines += batch
        recordings.append({"sensor": sensor, "trial": name, "first_sample": iso(start), "rate_hz": 50,
                           "samples": len(samples), "shank_swing_steps": int(reference)})
    write("movingreality-treadmill-acc.ndjson", lines)
    return recordings


def main():
    rsc_fixture()
    reference = {"synthetic": synthetic_fixture()}
    arguments = sys.argv[1:]
    oxford = None
    if "--oxford" in arguments:
        at = arguments.index("--oxford")
        oxford = arguments[at + 1]
        del arguments[at:at + 2]
    movingreality = None
    if "--movingreality" in arguments:
        at = arguments.index("--movingreality")
        movingreality = arguments[at + 1]
        del arguments[at:at + 2]
    with open(os.path.join(HERE, "reference.json")) as existing:
        kept = json.load(existing)
    reference["mobilised"] = mobilised_fixture(arguments[0]) if arguments else kept["mobilised"]
    reference["oxford"] = oxford_fixture(oxford) if oxford else kept["oxford"]
    reference["movingreality"] = movingreality_fixture(movingreality) if movingreality else kept["movingreality"]
    with open(os.path.join(HERE, "reference.json"), "w") as out:
        json.dump(reference, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
