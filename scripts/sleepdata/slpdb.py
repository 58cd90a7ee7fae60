"""Reads the MIT-BIH Polysomnographic Database (slpdb) from its own WFDB files, and turns a night's
beats into the NDJSON a heart-rate strap bridge sends (docs/contract.md, "Heart rate: the bridge").

WFDB annotation files (MIT format, as described in the WFDB Programmer's Guide, "Annotation
files"): 16-bit little-endian words, the upper 6 bits a code, the lower 10 a time step in samples;
code 59 (SKIP) is followed by a 32-bit step (high word first), 60-62 set fields, 63 (AUX) carries
that many bytes of text for the previous annotation; a zero word ends the file.
"""
import datetime
import math
from dataclasses import dataclass, field
from pathlib import Path

# Beat annotation codes (WFDB ecgcodes.h): N L R a V F J A S E j / Q e n f B r ?.
BEAT_CODES = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 25, 30, 34, 35, 38, 41}
# Sleep stages in the .st aux text (the database's README.st): W awake, 1-4 and R asleep. MT
# (movement time) and anything else is not scored as either.
SLEEP_LABELS = {"W": 0, "1": 1, "2": 1, "3": 1, "4": 1, "R": 1}
EPOCH_S = 30
# A strap reports the interval between two detected beats; a longer stretch without beats in the
# annotations is lost signal, sent as "contact not detected", never as one huge interval.
MAX_RR_S = 3.0
# Longer without beats (slp01a to slp01b: an hour) the strap was off: it sends nothing.
OFF_S = 60.0


def read_annotations(path: Path) -> list[tuple[int, int, str]]:
    """(sample, code, aux text) of every annotation."""
    data = path.read_bytes()
    out: list[list] = []
    sample, i = 0, 0
    while i + 1 < len(data):
        word = data[i] | (data[i + 1] << 8)
        i += 2
        code, step = word >> 10, word & 0x3FF
        if code == 0 and step == 0:
            break
        if code == 59:
            high, low = data[i] | (data[i + 1] << 8), data[i + 2] | (data[i + 3] << 8)
            i += 4
            value = (high << 16) | low
            sample += value - (1 << 32) if value >= 1 << 31 else value
        elif code in (60, 61, 62):
            continue
        elif code == 63:
            text = data[i:i + step].decode("latin-1").rstrip("\x00")
            i += step + (step & 1)
            if out:
                out[-1][2] = text
        else:
            sample += step
            out.append([sample, code, ""])
    return [tuple(a) for a in out]


@dataclass
class Header:
    fs: float
    samples: int
    start: datetime.time
    age: int | None
    gender: int | None  # sleepecg's coding: 0 female, 1 male


def read_header(path: Path) -> Header:
    lines = path.read_text().splitlines()
    first = lines[0].split()
    fs = float(first[2].split("/")[0])
    samples = int(first[3])
    hour, minute, second = (float(x) for x in first[4].split(":"))
    start = datetime.time(int(hour), int(minute), int(second))
    age = gender = None
    for line in lines:
        if line.startswith("#"):
            parts = line[1:].split()
            if len(parts) >= 2:
                age = int(parts[0]) if parts[0].isdigit() else None
                gender = {"M": 1, "F": 0}.get(parts[1])
            break
    return Header(fs, samples, start, age, gender)


@dataclass
class Night:
    name: str
    start: datetime.datetime        # the first part's start, placed on the evaluation date (UTC)
    duration_s: float
    beat_times: list[float]         # seconds since `start`
    scored: dict[int, int] = field(default_factory=dict)  # 30-s epoch index since `start` -> 1 sleep, 0 wake
    age: int | None = None
    gender: int | None = None


def read_night(directory: Path, name: str, morning: datetime.date) -> Night:
    """One record, or parts joined with "+" (slp01a+slp01b): the parts keep their clock times, the
    time between them has no beats and no scores. The night is placed so that it ends on `morning`."""
    parts = name.split("+")
    headers = [read_header(directory / f"{p}.hea") for p in parts]
    first = headers[0]
    base_date = morning - datetime.timedelta(days=1) if first.start.hour >= 12 else morning
    start = datetime.datetime.combine(base_date, first.start, tzinfo=datetime.timezone.utc)
    night = Night(name, start, 0.0, [], {}, first.age, first.gender)
    for part, header in zip(parts, headers):
        part_date = base_date
        part_start = datetime.datetime.combine(part_date, header.start, tzinfo=datetime.timezone.utc)
        if part_start < start:
            part_start += datetime.timedelta(days=1)
        offset = (part_start - start).total_seconds()
        for sample, code, _ in read_annotations(directory / f"{part}.ecg"):
            if code in BEAT_CODES:
                night.beat_times.append(offset + sample / header.fs)
        for sample, _, aux in read_annotations(directory / f"{part}.st"):
            label = SLEEP_LABELS.get((aux.split() or [""])[0])
            if label is not None:
                night.scored[int(round((offset + sample / header.fs) / EPOCH_S))] = label
        night.duration_s = offset + header.samples / header.fs
    night.beat_times.sort()
    return night


def strap_lines(night: Night, sensor: str = "slpdb-strap") -> list[str]:
    """A strap's notifications: one a second, at whole seconds after the first beat, each with the
    RR intervals (1/1024 s, rounded) of the beats that ended in the second before it. A second with
    no beat repeats the heart rate without RR; after MAX_RR_S without a beat, "contact not
    detected" (0 bpm) until beats come back; across OFF_S without beats, nothing."""
    beats = night.beat_times
    if not beats:
        return []
    lines = []
    tick = math.ceil(beats[0])
    end = beats[-1]
    j = 1  # next beat whose interval is still to be sent
    last_beat = beats[0]
    bpm = 0
    seq = 0
    while tick <= math.ceil(end):
        rrs = []
        while j < len(beats) and beats[j] <= tick:
            interval = beats[j] - beats[j - 1]
            if interval <= MAX_RR_S:
                rrs.append(int(round(interval * 1024)))
            last_beat = beats[j]
            j += 1
        if rrs:
            bpm = min(255, int(round(60 * 1024 / rrs[-1])))
            raw = bytes([0x16, bpm]) + b"".join(r.to_bytes(2, "little") for r in rrs)
        elif tick - last_beat <= MAX_RR_S and bpm:
            raw = bytes([0x06, bpm])
        elif j < len(beats) and beats[j] - last_beat > OFF_S:
            tick = math.ceil(beats[j]) if beats[j] > tick else tick + 1
            continue
        else:
            raw = bytes([0x04, 0])
        seq += 1
        ts = night.start + datetime.timedelta(seconds=tick)
        lines.append('{"ts":"%s.%03dZ","seq":%d,"sensor":"%s","raw":"%s"}' % (
            ts.strftime("%Y-%m-%dT%H:%M:%S"), ts.microsecond // 1000, seq, sensor, raw.hex()))
        tick += 1
    return lines
