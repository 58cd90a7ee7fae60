#!/usr/bin/env python3
"""Replays recorded heart-rate bridge messages to the agent's UDP input, one per second, as a
live bridge would send them: each message's "ts" is rewritten to now. Loops over the file.

Usage: scripts/replay-hr.py PORT [Tests/Fixtures/hr/nsr-60min.ndjson]
"""
import datetime
import json
import os
import socket
import sys
import time

port = int(sys.argv[1])
path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "Tests/Fixtures/hr/nsr-60min.ndjson")
with open(path) as f:
    messages = [json.loads(line) for line in f if line.strip()]
sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
seq = 0
while True:
    for message in messages:
        seq += 1
        now = datetime.datetime.now(datetime.timezone.utc)
        message = dict(message, seq=seq, ts=now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000))
        sender.sendto(json.dumps(message, separators=(",", ":")).encode(), ("127.0.0.1", port))
        time.sleep(1)
