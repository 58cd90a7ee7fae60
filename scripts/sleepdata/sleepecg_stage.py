"""Runs sleepecg 0.6.0's ws-gru-mesa on beat times and prints its labels (1 sleep, 0 wake or
undefined) per 30-s epoch, as JSON {name: [..]}, into the file named by the second argument (Keras
prints progress on stdout). First argument: a JSON list of
{"name", "start" (HH:MM:SS), "age", "gender", "beats" (float64 file of seconds since start)}.
Run with the reference venv (scripts/sleepecg/venv.sh), KERAS_BACKEND=numpy."""
import datetime
import json
import os
import sys
import warnings

os.environ.setdefault("KERAS_BACKEND", "numpy")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
from sleepecg import SleepRecord, SubjectData, load_classifier, stage  # noqa: E402

clf = load_classifier("ws-gru-mesa", "SleepECG")
out = {}
for spec in json.load(open(sys.argv[1])):
    subject = SubjectData(age=spec["age"], gender=spec["gender"])
    record = SleepRecord(recording_start_time=datetime.time.fromisoformat(spec["start"]),
                         heartbeat_times=np.fromfile(spec["beats"], dtype="<f8"), subject_data=subject)
    labels = stage(clf, record, return_mode="str")
    out[spec["name"] + ":p"] = [round(float(p[1]), 4) for p in stage(clf, record, return_mode="prob")]
    out[spec["name"]] = [1 if label == "SLEEP" else 0 for label in labels]
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
