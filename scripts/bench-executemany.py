#!/usr/bin/env python3
"""The end-to-end ingest benchmark's baseline: the same heart-rate rows the agent stores from a
bridge backlog, written with Python's sqlite3 `executemany` in one transaction, into a file the
store created (same tables, indexes, WAL, synchronous=FULL, foreign keys on).

Usage: bench-executemany.py STORE.db BACKLOG.ndjson  -> prints the seconds the insert took.
Decoding the NDJSON (JSON, hex, 0x2A37) is not timed: only what SQLite does.
"""
import datetime
import json
import sqlite3
import sys
import time

store, backlog = sys.argv[1], sys.argv[2]
samples, intervals = [], []
now_ms = int(time.time() * 1000)
with open(backlog) as lines:
    for number, line in enumerate(lines, start=1):
        message = json.loads(line)
        raw = bytes.fromhex(message["raw"])
        flags = raw[0]
        bpm, index = (int.from_bytes(raw[1:3], "little"), 3) if flags & 1 else (raw[1], 2)
        if flags & 0x08:
            index += 2
        rr = [int.from_bytes(raw[i:i + 2], "little") for i in range(index, len(raw) - 1, 2)] if flags & 0x10 else []
        stamp = datetime.datetime.strptime(message["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        ts_ms = int(stamp.timestamp() * 1000)
        contact = (flags >> 1) & 3
        samples.append((number, message["sensor"], ts_ms, now_ms, bpm, 2 if contact == 3 else (1 if contact == 2 else 0), None,
                        1 if 25 <= bpm <= 250 and contact != 2 else 0, raw))
        end = ts_ms
        for position in reversed(range(len(rr))):
            intervals.append((number, position, end, rr[position]))
            end -= round(rr[position] * 1000 / 1024)

db = sqlite3.connect(store, isolation_level=None)
db.execute("PRAGMA synchronous = FULL")
db.execute("PRAGMA foreign_keys = ON")
start = time.perf_counter()
db.execute("BEGIN IMMEDIATE")
db.executemany("INSERT OR IGNORE INTO hr_sample (id, sensor, ts_ms, received_ms, bpm, contact, energy_kj, valid, raw) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", samples)
db.executemany("INSERT INTO rr_interval (sample_id, position, ts_ms, rr_1024) VALUES (?, ?, ?, ?)", intervals)
db.execute("COMMIT")
print("%.6f" % (time.perf_counter() - start))
