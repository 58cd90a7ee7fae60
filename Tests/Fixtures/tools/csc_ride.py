#!/usr/bin/env python3
"""A bike's CSC sensor (0x2A5B) riding now, through a `command` bridge: once GO exists, prints
COUNT notifications HZ a second, each stamped with the time it is printed, of a wheel turning
WHEEL times a second and a crank at RPM; then writes "<wheel turns> <crank turns>" counted from
the first notification to the last into DONE, and stays silent. Synthesised: the values are
laid out as the characteristic's definition says (flags 0x03; uint32 wheel revolutions, uint16
last wheel event time in 1/1024 s, uint16 crank revolutions, uint16 last crank event time;
little-endian), with the event times from this process's monotonic clock.

Usage: csc_ride.py GO DONE COUNT HZ WHEEL RPM
"""
import datetime
import math
import os
import struct
import sys
import time

go, done = sys.argv[1], sys.argv[2]
count, hz, wheel_rate, rpm = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
crank_rate = rpm / 60
# The agent starts this before the test says go: waiting for a file is this process's only job.
while not os.path.exists(go):
    time.sleep(0.05)
start = time.monotonic()
first = None
for index in range(count):
    elapsed = time.monotonic() - start + 0.5
    wheel, crank = math.floor(elapsed * wheel_rate), math.floor(elapsed * crank_rate)
    wheel_time = round(wheel / wheel_rate * 1024) % 65536
    crank_time = round(crank / crank_rate * 1024) % 65536
    raw = struct.pack("<BIHHH", 0x03, wheel % 2**32, wheel_time, crank % 2**16, crank_time)
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    sys.stdout.write('{"ts":"%s","sensor":"trainer","char":"2a5b","raw":"%s"}\n' % (stamp, raw.hex()))
    sys.stdout.flush()
    if first is None:
        first = (wheel, crank)
    last = (wheel, crank)
    time.sleep(1 / hz)
with open(done + ".part", "w", encoding="utf-8") as out:
    out.write("%d %d\n" % (last[0] - first[0], last[1] - first[1]))
os.rename(done + ".part", done)
# Stays up: a bridge that exits is restarted by the agent, which would ride again.
time.sleep(100000)
