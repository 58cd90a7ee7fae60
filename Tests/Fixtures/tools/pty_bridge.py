#!/usr/bin/env python3
"""A serial heart-rate bridge on a pseudo-terminal: prints the tty path to give the agent, and
each time it gets SIGUSR1 writes one garbage line and the next N lines of FILE to it.

Usage: pty_bridge.py FILE N
"""
import os
import pty
import signal
import sys
import time

path, count = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as f:
    lines = f.read().splitlines()
master, slave = pty.openpty()  # the slave stays open here too, so no hang-up when the agent reopens
print(os.ttyname(slave), flush=True)
pending = 0
written = 0


def on_usr1(*_):
    global pending
    pending += 1


signal.signal(signal.SIGUSR1, on_usr1)
while True:
    if pending:
        pending -= 1
        os.write(master, b"not json at all\n")
        for line in lines[written:written + count]:
            os.write(master, line + b"\n")
        written += count
        print("wrote %d" % written, flush=True)
    time.sleep(0.05)
