#!/usr/bin/python3
"""The CPU each part of a fleet-bench run uses (scripts/fleet-bench.sh), also through its faults.

  fleet-cpu.py WORK     samples every 0.5 s until SIGTERM, then prints one JSON line:
                        {"seconds": …, "cpu_s": {"nodes": …, "load": …, "archivers": …, "postgres": …}}

Parts, found again at every sample (a killed node comes back as a new process, PostgreSQL's
backends come and go): the nodes' Erlang VMs (WORK/cluster/ej*/ejabberd.pid), the load processes
(WORK/loaders.pids), the archivers (WORK/archivers.pids), PostgreSQL's postmaster and its children
(WORK/pg/data/postmaster.pid). A process counts from its first sample (from 0 if it started after
the first one) to its last: what a process used in the last half second before it died is missed.
"""
import glob, json, os, signal, sys, time

HZ = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(start time, user + system ticks, parent) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is the state (field 3 of proc(5)): ppid = 4, utime = 14, stime = 15, starttime = 22.
    return int(fields[19]), int(fields[11]) + int(fields[12]), int(fields[1])


def read_pids(path):
    try:
        with open(path) as f:
            return [int(word) for word in f.read().split() if word.isdigit()]
    except OSError:
        return []


def parts(work):
    nodes = [pid for path in sorted(glob.glob(f"{work}/cluster/ej*/ejabberd.pid")) for pid in read_pids(path)]
    postmaster = read_pids(f"{work}/pg/data/postmaster.pid")[:1]
    postgres = list(postmaster)
    if postmaster:
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (found := stat(entry)) and found[2] == postmaster[0]:
                postgres.append(int(entry))
    return {"nodes": nodes, "load": read_pids(f"{work}/loaders.pids"), "archivers": read_pids(f"{work}/archivers.pids"),
            "postgres": postgres}


def main():
    work = sys.argv[1]
    seen = {}  # (part, pid, start time) -> [ticks at its first sample, at its last]
    first = True
    began = time.monotonic()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    while True:
        for part, pids in parts(work).items():
            for pid in pids:
                found = stat(pid)
                if found is None:
                    continue
                key = (part, pid, found[0])
                if key in seen:
                    seen[key][1] = found[1]
                else:
                    seen[key] = [found[1] if first else 0, found[1]]
        first = False
        if stop:
            break
        time.sleep(0.5)
    totals = {part: 0 for part in ("nodes", "load", "archivers", "postgres")}
    for (part, _, _), (start, last) in seen.items():
        totals[part] += last - start
    print(json.dumps({"seconds": round(time.monotonic() - began, 1), "cpu_s": {k: round(v / HZ, 2) for k, v in totals.items()}}))


if __name__ == "__main__":
    main()
