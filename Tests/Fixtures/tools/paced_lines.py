#!/usr/bin/env python3
"""A heart-rate bridge streaming live: writes the lines of FILE one at a time, DELAY seconds
apart, flushing each (as a strap's notifications arrive), then stays silent.

Usage: paced_lines.py FILE DELAY
"""
import sys
import time

path, delay = sys.argv[1], float(sys.argv[2])
with open(path, encoding="utf-8") as lines:
    for line in lines:
        sys.stdout.write(line)
        sys.stdout.flush()
        time.sleep(delay)
# Stays up: a bridge that exits is restarted by the agent, which would replay the file.
time.sleep(100000)
