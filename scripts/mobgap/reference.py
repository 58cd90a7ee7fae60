#!/usr/bin/env python3
"""The Mobilise-D detectors on the recordings scripts/steps-accuracy.py scores: the published
reference for the strap's step counter (docs/steps.md, "Accuracy").

For each recording (read by steps-accuracy.py's own loader, so the same signal and the same
reference count) the lower-back acceleration is put on its native 100 Hz grid, turned into the
body frame mobgap expects by aligning the mean acceleration (gravity) with the vertical axis
(tilt correction, Moe-Nilssen 1998; the strap could do the same), and given to mobgap 1.2.0:
- the initial-contact detectors IcdIonescu (the CWT method of McCamley et al., Gait & Posture
  2012, as adapted by Paraschiv-Ionescu et al., IEEE EMBC 2020), IcdShinImproved and
  IcdHKLeeImproved (Shin & Park, Med Eng Phys 2011; Lee et al., Electronics Letters 2010; both as
  improved by Paraschiv-Ionescu et al. 2020) on the whole recording, and
- the same detectors inside the gait sequences GsdIluz (Iluz et al., J NeuroEng Rehabil 2014) finds — the way the
  Mobilise-D pipeline runs them.
Steps = initial contacts. Printed per recording and as the mean |error| per recording (for
gaitdata also per half: odd-numbered subjects, even-numbered subjects).

Usage: $(scripts/mobgap/venv.sh) scripts/mobgap/reference.py {gaitdata|movingreality} DIR
"""
import argparse
import importlib.util
import os
import sys
import warnings

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore")
from mobgap.gait_sequences import GsdIluz  # noqa: E402
from mobgap.initial_contacts import IcdHKLeeImproved, IcdIonescu, IcdShinImproved  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("steps_accuracy", os.path.join(HERE, "..", "steps-accuracy.py"))
steps_accuracy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(steps_accuracy)
RATE = 100.0
DETECTORS = {"ionescu": IcdIonescu, "shin": IcdShinImproved, "hklee": IcdHKLeeImproved}


def body_frame(acc):
    """Sensor-frame m/s² → mobgap's body frame: `is` along the mean acceleration (up), `ml` the
    sensor's y axis made orthogonal to it, `pa` completing the right-handed frame."""
    up = acc.mean(axis=0) / np.linalg.norm(acc.mean(axis=0))
    ml = np.array([0.0, 1.0, 0.0]) - up * up[1]
    ml /= np.linalg.norm(ml)
    pa = np.cross(ml, up)
    zeros = np.zeros(len(acc))
    return pd.DataFrame({"acc_is": acc @ up, "acc_ml": acc @ ml, "acc_pa": acc @ pa,
                         "gyr_is": zeros, "gyr_ml": zeros, "gyr_pa": zeros})


def counts(frame):
    """Initial contacts of each detector on the whole recording and inside GsdIluz's sequences."""
    out = {}
    sequences = GsdIluz().detect(frame, sampling_rate_hz=RATE).gs_list_
    for name, detector in DETECTORS.items():
        out[name] = len(detector().detect(frame, sampling_rate_hz=RATE).ic_list_)
        out[name + "+gsd"] = sum(
            len(detector().detect(frame.iloc[int(s.start):int(s.end)].reset_index(drop=True), sampling_rate_hz=RATE).ic_list_)
            for s in sequences.itertuples())
    return out


def summary(rows, column):
    errors = [abs(r[column] / r["reference"] - 1) * 100 for r in rows]
    net = (sum(r[column] for r in rows) / sum(r["reference"] for r in rows) - 1) * 100
    return "mean %.1f %%, median %.1f %%, max %.1f %% (net %+.1f %%)" % (
        sum(errors) / len(errors), sorted(errors)[len(errors) // 2], max(errors), net)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", choices=["gaitdata", "movingreality"])
    parser.add_argument("folder")
    args = parser.parse_args()
    rows = []
    for name, times, acc, reference, _ in getattr(steps_accuracy, args.dataset)(args.folder):
        grid = np.arange(0, times[-1], 1.0 / RATE)
        resampled = np.stack([np.interp(grid, times, acc[:, axis]) for axis in range(3)], axis=1)
        row = {"name": name, "reference": reference, **counts(body_frame(resampled))}
        rows.append(row)
        print(" ".join("%s=%s" % item for item in row.items()), flush=True)
    columns = [c for c in rows[0] if c not in ("name", "reference")]
    groups = [("all %d recordings" % len(rows), rows)]
    if args.dataset == "gaitdata":
        groups += [("odd-numbered subjects", [r for r in rows if int(r["name"].split("-")[0]) % 2 == 1]),
                   ("even-numbered subjects", [r for r in rows if int(r["name"].split("-")[0]) % 2 == 0])]
    for label, group in groups:
        for column in columns:
            print("%s, %s: per recording |error| %s" % (label, column, summary(group, column)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
