#!/usr/bin/env python3
"""What keeping delivered messages costs the SD card (docs/storage.md, "The outbox"): one hour of
the agent's outbox at the default schedule, on the store's own schema (the migrations are read
from Sources/Store/Schema.swift) with its page size (512 B), WAL and auto_vacuum, in two ways in
the same run:

  baseline  every acknowledged message deleted (as before schema 10; [store] keep_published_h = 0)
  kept      every acknowledged message marked delivered = 1, 48 h of them kept, the oldest hour
            pruned in one batch at the end of the hour (RetentionService)

Per minute: `status` (820 B, the size a real agent's has) and `health/today` (1 200 B) queued,
both superseding an undelivered one of their topic, plus a `location` (260 B) every 5 minutes;
then the minute's messages acknowledged in one commit (with the ingest journal on, the agent
makes that change in its fold's commit). Prints, per way, the WAL bytes written in the hour
(every frame) and the distinct pages the checkpoints copy into the file, and the ratio of kept
to baseline. Synthesised payloads (random bytes as JSON text), the real statements' shape.

Usage: scripts/outbox-wear.py
"""
import os
import random
import re
import sqlite3
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PAGE = 512


def migrations():
    text = open(os.path.join(ROOT, "Sources", "Store", "Schema.swift")).read()
    body = text[text.index("static let migrations"):text.index("static var latestVersion")]
    return [m for m in re.findall(r'"""\n(.*?)\n\s*"""', body, re.S)]


def payload(size, seq):
    return ('{"seq":%d,"x":"%s"}' % (seq, "".join(random.choice("abcdef0123456789") for _ in range(size - 20)))).encode()


class Outbox:
    def __init__(self, path, keep):
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute(f"PRAGMA page_size = {PAGE}")
        self.db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("PRAGMA wal_autocheckpoint = 0")
        for sql in migrations():
            self.db.executescript(sql)
        self.keep, self.seq, self.now = keep, 0, 0
        self.path = path

    def queue(self, topic, size, supersedable):
        if supersedable:
            ids = [r[0] for r in self.db.execute(
                "SELECT id FROM outbox WHERE topic = ? AND supersedable = 1 AND delivered = 0 AND rejected_reason IS NULL", (topic,))]
            for i in ids:
                self.db.execute("DELETE FROM outbox WHERE id = ?", (i,))
        self.seq += 1
        cur = self.db.execute(
            "INSERT INTO outbox (seq, topic, payload, qos, retain, content_type, expiry_s, supersedable, created_ms) VALUES (?,?,?,?,?,?,?,?,?)",
            (self.seq, topic, payload(size, self.seq), 1, 1, "application/json", None, int(supersedable), self.now))
        return cur.lastrowid

    def minute(self, with_location):
        self.db.execute("BEGIN IMMEDIATE")
        ids = [self.queue("keepalive/pi/status", 820, True), self.queue("keepalive/pi/health/today", 1200, True)]
        if with_location:
            ids.append(self.queue("keepalive/pi/location", 260, False))
        self.db.execute("COMMIT")
        self.db.execute("BEGIN IMMEDIATE")
        for i in ids:
            if self.keep:
                self.db.execute("UPDATE outbox SET delivered = 1 WHERE id = ?", (i,))
            else:
                self.db.execute("DELETE FROM outbox WHERE id = ?", (i,))
        self.db.execute("COMMIT")
        self.now += 60_000

    def prune(self, before_ms):
        doomed = [r[0] for r in self.db.execute(
            "SELECT id FROM outbox WHERE delivered = 1 AND created_ms < ? ORDER BY id LIMIT 500", (before_ms,))]
        self.db.execute("BEGIN IMMEDIATE")
        for i in doomed:
            self.db.execute("DELETE FROM outbox WHERE id = ? AND delivered = 1", (i,))
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA incremental_vacuum(10000)")

    def checkpoint(self):
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def wal_frames(self):
        """(frames, distinct pages) in the WAL now."""
        data = open(self.path + "-wal", "rb").read()
        frames, pages, offset = 0, set(), 32
        while offset + 24 + PAGE <= len(data):
            pages.add(int.from_bytes(data[offset:offset + 4], "big"))
            frames += 1
            offset += 24 + PAGE
        return frames, len(pages)


def hour(keep):
    random.seed(7)
    with tempfile.TemporaryDirectory() as scratch:
        box = Outbox(os.path.join(scratch, "store.db"), keep)
        # The state before the hour: 48 h kept (or nothing, deleted as delivered).
        for minute in range(48 * 60 if keep else 5):
            box.minute(minute % 5 == 0)
        box.checkpoint()
        for minute in range(60):
            box.minute(minute % 5 == 0)
        if keep:
            box.prune(box.now - 48 * 3_600_000)
        frames, pages = box.wal_frames()
        return frames * (24 + PAGE), pages * PAGE


def main():
    baseline, kept = hour(False), hour(True)
    print("| outbox, one hour at the default schedule | WAL bytes written | pages the checkpoint copies |")
    print("|---|---|---|")
    print(f"| deleted at PUBACK (baseline) | {baseline[0] / 1024:.1f} KiB | {baseline[1] / 1024:.1f} KiB |")
    print(f"| kept 48 h, pruned hourly | {kept[0] / 1024:.1f} KiB | {kept[1] / 1024:.1f} KiB |")
    print(f"| ratio kept / baseline | {kept[0] / baseline[0]:.2f}x | {kept[1] / baseline[1]:.2f}x |")


if __name__ == "__main__":
    main()
