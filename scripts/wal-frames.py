#!/usr/bin/env python3
"""The page-level view of SD-card wear: which pages each commit in a store's WAL touched.

Usage: scripts/wal-frames.py STORE.db [--last N]

Reads STORE.db-wal (a copy is taken first: safe on a running agent's file), groups its frames
into commits (current salt only, as SQLite does), names each page by the b-tree it belongs to
(SQLite's dbstat table, read through the WAL) and prints frames and WAL bytes per commit, the
4 KiB pages one commit dirties on average, and the b-trees of the last N commits.
"""
import collections
import os
import shutil
import sqlite3
import struct
import sys
import tempfile


def commits(wal_bytes):
    if len(wal_bytes) < 32:
        return 0, []
    _, _, page, _, salt1, salt2, _, _ = struct.unpack(">IIIIIIII", wal_bytes[:32])
    out, current, offset = [], [], 32
    while offset + 24 + page <= len(wal_bytes):
        number, commit, s1, s2 = struct.unpack(">IIII", wal_bytes[offset:offset + 16])
        if (s1, s2) != (salt1, salt2):
            break
        current.append(number)
        if commit:
            out.append(current)
            current = []
        offset += 24 + page
    return page, out


def page_names(db_path):
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "store.db")
        for suffix in ("", "-wal"):
            if os.path.exists(db_path + suffix):
                shutil.copyfile(db_path + suffix, copy + suffix)
        db = sqlite3.connect(copy)
        try:
            names = {pageno: name for name, pageno in db.execute("SELECT name, pageno FROM dbstat")}
        except sqlite3.DatabaseError:
            names = {}
        names[1] = "page 1 (file header, schema root)"
        return names


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    last = int(sys.argv[sys.argv.index("--last") + 1]) if "--last" in sys.argv else 5
    with open(path + "-wal", "rb") as wal:
        page, found = commits(wal.read())
    if not found:
        sys.exit("no commits in the WAL (just checkpointed?): try again in a few seconds")
    names = page_names(path)
    frames = sum(len(c) for c in found)
    wal_bytes = frames * (24 + page) / len(found)
    print(f"page size {page}: {len(found)} commits, {frames / len(found):.2f} frames per commit, "
          f"{wal_bytes:.0f} WAL bytes per commit (~{wal_bytes / 4096 + 1:.2f} 4 KiB pages dirtied, fsync'd)")
    trees = collections.Counter(names.get(p, "(freelist / pointer map)") for c in found for p in c)
    print("frames per commit by b-tree:", ", ".join(f"{n} {k / len(found):.2f}" for n, k in trees.most_common()))
    for c in found[-last:]:
        print(f"  {len(c):2d} frames:", ", ".join(f"{p} {names.get(p, '(freelist / pointer map)')}" for p in c))


if __name__ == "__main__":
    main()
