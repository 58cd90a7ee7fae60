#!/usr/bin/env python3
"""Runs the real sleepecg on nights written by the Swift tests and writes what it computes.

Each argument is a directory holding
  heartbeats.f64  heartbeat times in seconds since the recording start, float64 little-endian
  record.json     {"start": "HH:MM:SS" (local clock time of the recording start),
                   "age": years or null, "gender": 0 (female) | 1 (male) | null}
and receives
  features.f64    sleepecg.extract_features with the classifier's own parameters: epochs × 36,
                  float64 little-endian, row-major, NaN and inf as computed
  proba.f32       sleepecg.stage(..., return_mode="prob"): epochs × 3 (UNDEFINED, SLEEP, WAKE)
  timing.json     seconds spent in stage() (features + model) and in extract_features alone,
                  the best of `--repeat` runs, wall clock and this process's CPU time

Run with the reference venv (scripts/sleepecg/venv.sh). Keras runs on its numpy backend.
"""
import datetime
import json
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "numpy")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

from sleepecg import SleepRecord, SubjectData, extract_features, load_classifier, stage  # noqa: E402


def run(case: Path, clf, repeat: int) -> None:
    spec = json.loads((case / "record.json").read_text())
    heartbeats = np.fromfile(case / "heartbeats.f64", dtype="<f8")
    subject = None
    if spec.get("age") is not None or spec.get("gender") is not None:
        subject = SubjectData(age=spec.get("age"), gender=spec.get("gender"))
    record = SleepRecord(
        recording_start_time=datetime.time.fromisoformat(spec["start"]),
        heartbeat_times=heartbeats,
        subject_data=subject,
    )
    feature_seconds = stage_seconds = stage_cpu_seconds = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        features = extract_features([record], **clf.feature_extraction_params)[0][0]
        feature_seconds = min(feature_seconds, time.perf_counter() - began)
        began, began_cpu = time.perf_counter(), time.process_time()
        proba = stage(clf, record, return_mode="prob")
        stage_seconds = min(stage_seconds, time.perf_counter() - began)
        stage_cpu_seconds = min(stage_cpu_seconds, time.process_time() - began_cpu)
    np.asarray(features, dtype="<f8").tofile(case / "features.f64")
    np.asarray(proba, dtype="<f4").tofile(case / "proba.f32")
    (case / "timing.json").write_text(json.dumps(
        {"stage_s": stage_seconds, "stage_cpu_s": stage_cpu_seconds, "features_s": feature_seconds}
    ))
    print(f"{case.name}: {features.shape[0]} epochs, stage() {stage_seconds:.3f} s", file=sys.stderr)


def main(argv: list[str]) -> None:
    repeat = 1
    if argv and argv[0].startswith("--repeat="):
        repeat = int(argv.pop(0).split("=", 1)[1])
    clf = load_classifier("ws-gru-mesa", "SleepECG")
    for case in argv:
        run(Path(case), clf, repeat)


if __name__ == "__main__":
    main(sys.argv[1:])
