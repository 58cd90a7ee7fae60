#!/usr/bin/env python3
"""A serial bridge replaying its SD card: opens a pseudo-terminal, prints the tty path to give
the agent, and on SIGUSR1 writes all of FILE to it as fast as the tty takes it (blocking writes:
a full tty makes this wait, as a UART with flow control would), then prints "done BYTES SECONDS".

Usage: pty_stream.py FILE
"""
import os
import pty
import signal
import sys
import time

path = sys.argv[1]
master, slave = pty.openpty()  # the slave stays open here too, so no hang-up when the agent reopens
print(os.ttyname(slave), flush=True)
go = False


def on_usr1(*_):
    global go
    go = True


signal.signal(signal.SIGUSR1, on_usr1)
while not go:
    time.sleep(0.02)
start = time.perf_counter()
written = 0
with open(path, "rb") as data:
    while True:
        chunk = data.read(4096)
        if not chunk:
            break
        view = memoryview(chunk)
        while view:
            count = os.write(master, view)
            view = view[count:]
            written += count
print("done %d %.3f" % (written, time.perf_counter() - start), flush=True)
while True:
    time.sleep(1)
