#!/usr/bin/env python3
"""Sleep accuracy end to end on scored polysomnography: the MIT-BIH Polysomnographic Database
(slpdb, PhysioNet, ODC-BY 1.0; Ichimaru & Moody, Psychiatry Clin Neurosci 53:175-177, 1999).

For each record: its beat annotations (`<rec>.ecg`) become RR intervals sent as a chest strap
would (one 0x2A37 notification a second carrying the beats that ended in it, 1/1024 s), through
the agent's `command` bridge into a real agent with its own store and a real mosquitto; the
agent's answer for the morning's date is read back over MQTT (an MQTT v5 per-date query, as any
client asks it); and it is compared with the scored 30-s epochs (`<rec>.st`: W awake; 1-4, R
asleep; MT movement time and unscored epochs are left out). The same beat times go through
sleepecg 0.6.0 (`stage(load_classifier("ws-gru-mesa", "SleepECG"))`, with the age and sex of the
record's header) for the reference column: its TST is its own sleep epochs in the recording.

It prints each night, then each set's figures (found, mean |TST error|, median, bias; efficiency),
then how the TST error moves with the lab's scored efficiency (slope, r, the nights above the
median): a rule that fits this apnoea cohort can fail people who sleep better.

Nights are placed on the date two days back, keeping their clock times, in zone UTC (the agent
stamps nothing older than 7 days with a bridge time).

Usage:
  scripts/sleep-accuracy.py SLPDB_DIR [--records slp03,slp04,...|--set tune|holdout|whole|partial|all]
      [--agent .build/debug/keepalive] [--reference PYTHON] [--json OUT.json] [--no-person]
      [--no-heart-rate-rule]

SLPDB_DIR holds the database's own files: RECORDS, <rec>.hea, <rec>.ecg, <rec>.st.
`--reference` is the python of scripts/sleepecg/venv.sh (made when not given); `--no-reference`
skips the sleepecg column.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "sleepdata"))
import slpdb  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEVICE = "slpeval"

# Whole nights (records of at least 5 hours of one night). Tuning was done on TUNE only; HOLDOUT
# was looked at for the figures, never to choose a rule or a number.
TUNE = ["slp03", "slp14", "slp32", "slp41", "slp48", "slp61"]
HOLDOUT = ["slp04", "slp16", "slp37", "slp45", "slp60"]
# Parts of nights: a 4-h and a 3.7-h record, and two nights recorded in two parts (a 1-h and a
# 10-min gap between them: a strap off and on again).
PARTIAL = ["slp59", "slp66", "slp01a+slp01b", "slp02a+slp02b"]
SETS = {"tune": TUNE, "holdout": HOLDOUT, "whole": TUNE + HOLDOUT, "partial": PARTIAL, "all": TUNE + HOLDOUT + PARTIAL}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


class Broker:
    def __init__(self, directory: Path):
        self.port = free_port()
        conf = directory / "mosquitto.conf"
        conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n"
                        f"log_dest file {directory / 'mosquitto.log'}\n")
        self.process = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def listening():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return True
            except OSError:
                return False
        wait_for(listening, 10, "mosquitto to listen")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)


class Agent:
    def __init__(self, binary: Path, directory: Path, broker: Broker, lines_path: Path, person: dict, heart_rate_rule: bool = True):
        self.directory = directory
        self.store = directory / "keepalive.db"
        person_section = ""
        if person:
            person_section = "[person]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in person.items())
        self.config = directory / "config.toml"
        self.config.write_text(
            f'[device]\nid = "{DEVICE}"\ntimezone = "UTC"\n'
            f'[mqtt]\nport = {broker.port}\n'
            f'[gps]\nenabled = false\n'
            f'[hr]\ntransport = "command"\ncommand = ["/bin/sh", "-c", "cat {lines_path}; exec sleep 100000"]\n'
            f'[store]\npath = "{self.store}"\nfold_s = 0\n'
            f'[homeassistant]\nenabled = false\n'
            + ("" if heart_rate_rule else '[health]\nsleep_heart_rate_rule = false\n') + person_section)
        self.log = open(directory / "agent.log", "wb")
        self.process = subprocess.Popen(
            [str(binary), "run", "--config", str(self.config)], stdout=self.log, stderr=subprocess.STDOUT,
            env=dict(os.environ, KEEPALIVE_CLOCK_SYNCHRONISED="1"))

    def stored_notifications(self) -> int:
        if self.process.poll() is not None:
            raise RuntimeError(f"the agent exited ({self.process.returncode}); log: {self.directory / 'agent.log'}")
        try:
            with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=1) as db:
                return db.execute("SELECT count(*) FROM hr_sample").fetchone()[0]
        except sqlite3.Error:
            return 0

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def query(broker: Broker, date: str) -> dict:
    """The agent's reply for `date` over MQTT v5 (request/response with correlation data)."""
    out = subprocess.run(
        ["mosquitto_rr", "-V", "5", "-p", str(broker.port), "-t", f"keepalive/{DEVICE}/selection/date",
         "-e", f"reply/{DEVICE}/eval", "-m", json.dumps({"date": date, "include": ["health"]}),
         "-D", "publish", "correlation-data", "eval", "-W", "60"],
        capture_output=True, text=True, timeout=90)
    if out.returncode != 0:
        raise RuntimeError(f"mosquitto_rr failed ({out.returncode}): {out.stderr}")
    return json.loads(out.stdout)


def run_agent(binary: Path, night: "slpdb.Night", lines: list[str], morning: str, person: dict, keep: bool,
              heart_rate_rule: bool = True) -> dict:
    directory = Path(tempfile.mkdtemp(prefix=f"sleep-eval-{night.name}-"))
    lines_path = directory / "night.ndjson"
    lines_path.write_text("\n".join(lines) + "\n")
    broker = Broker(directory)
    agent = None
    try:
        agent = Agent(binary, directory, broker, lines_path, person, heart_rate_rule)
        wait_for(lambda: agent.stored_notifications() >= len(lines), 600,
                 f"{len(lines)} notifications stored (log {directory / 'agent.log'})")
        return query(broker, morning)
    finally:
        if agent:
            agent.stop()
        broker.stop()
        if not keep:
            shutil.rmtree(directory, ignore_errors=True)


def reference_stages(python: str, nights: list) -> dict:
    """sleepecg 0.6.0's labels (1 sleep, 0 wake or undefined) per 30-s epoch from the record start."""
    with tempfile.TemporaryDirectory(prefix="sleep-eval-ref-") as tmp:
        spec = [{"name": n.name, "start": n.start.time().isoformat(), "age": n.age, "gender": n.gender,
                 "beats": str(Path(tmp) / f"{n.name}.f64")} for n in nights]
        import array
        for n, s in zip(nights, spec):
            array.array("d", n.beat_times).tofile(open(s["beats"], "wb"))
        (Path(tmp) / "spec.json").write_text(json.dumps(spec))
        result = Path(tmp) / "labels.json"
        out = subprocess.run([python, str(HERE / "sleepdata" / "sleepecg_stage.py"), str(Path(tmp) / "spec.json"), str(result)],
                             capture_output=True, text=True, env=dict(os.environ, KERAS_BACKEND="numpy"))
        if out.returncode != 0:
            raise RuntimeError(f"sleepecg failed: {out.stderr[-2000:]}")
        return json.loads(result.read_text())


def kappa(a: list[int], b: list[int]) -> float:
    n = len(a)
    if n == 0:
        return float("nan")
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return (po - pe) / (1 - pe) if pe < 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slpdb", type=Path)
    parser.add_argument("--records", default="")
    parser.add_argument("--set", default="all", choices=sorted(SETS))
    parser.add_argument("--agent", type=Path, default=ROOT / ".build" / "debug" / "keepalive")
    parser.add_argument("--reference", default="")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--no-person", action="store_true", help="leave [person] out of the agent's config")
    parser.add_argument("--no-heart-rate-rule", action="store_true",
                        help="run the agent with [health] sleep_heart_rate_rule = false (the classifier's night)")
    parser.add_argument("--keep", action="store_true", help="keep each night's directory (store, log)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    names = [r for r in args.records.split(",") if r] or SETS[args.set]
    today = datetime.datetime.now(datetime.timezone.utc).date()
    morning = today - datetime.timedelta(days=2)
    nights = [slpdb.read_night(args.slpdb, name, morning) for name in names]

    reference = {}
    if not args.no_reference:
        python = args.reference or subprocess.run([str(HERE / "sleepecg" / "venv.sh")], capture_output=True,
                                                  text=True, check=True).stdout.strip()
        reference = reference_stages(python, nights)

    rows = []
    for night in nights:
        person = {} if args.no_person or night.age is None else {"birth_year": morning.year - night.age}
        if person and night.gender is not None:
            person["sex"] = "male" if night.gender == 1 else "female"
        reply = run_agent(args.agent, night, slpdb.strap_lines(night), morning.isoformat(), person, args.keep,
                          not args.no_heart_rate_rule)
        health = reply.get("health") or {}
        sleep = health.get("sleep") or {}
        truth_sleep = sum(1 for label in night.scored.values() if label == 1) * 30
        truth_epochs = len(night.scored)
        row = {
            "record": night.name, "hours": round(night.duration_s / 3600, 2), "age": night.age,
            "truth_tst_min": truth_sleep / 60,
            "truth_efficiency": round(truth_sleep / (truth_epochs * 30), 3) if truth_epochs else None,
            "agent_tst_min": None if health.get("sleep_s") is None else health["sleep_s"] / 60,
            "agent_efficiency": sleep.get("efficiency"), "agent_in_bed_min": None if sleep.get("in_bed_s") is None else sleep["in_bed_s"] / 60,
            "agent_start": sleep.get("start"), "agent_end": sleep.get("end"), "agent_in_progress": sleep.get("in_progress"),
        }
        if night.name in reference:
            labels = reference[night.name]
            row["sleepecg_tst_min"] = sum(labels) * 30 / 60
            pairs = [(truth, labels[i]) for i, truth in night.scored.items() if i < len(labels)]
            row["sleepecg_accuracy"] = round(sum(t == p for t, p in pairs) / len(pairs), 3)
            row["sleepecg_kappa"] = round(kappa([t for t, _ in pairs], [p for _, p in pairs]), 3)
        rows.append(row)
        agent_err = "—" if row["agent_tst_min"] is None else f"{row['agent_tst_min'] - row['truth_tst_min']:+.1f}"
        ref_err = f"{row['sleepecg_tst_min'] - row['truth_tst_min']:+.1f}" if "sleepecg_tst_min" in row else "—"
        print(f"{night.name:15s} truth {row['truth_tst_min']:6.1f} min  agent {agent_err:>7s}  sleepecg {ref_err:>7s}  "
              f"eff truth {row['truth_efficiency']} agent {row['agent_efficiency']}", flush=True)

    # The whole run, then each set it holds more than one of (tuning, held out, whole, partial).
    subsets = [("", rows)] + [(f"[{name}] ", [r for r in rows if r["record"] in SETS[name]])
                              for name in ("tune", "holdout", "whole", "partial")]
    for prefix, chosen in subsets:
        if prefix and (len(chosen) < 2 or len(chosen) == len(rows)):
            continue
        summary(chosen, "agent_tst_min", prefix + "agent")
        efficiency = [(r["truth_efficiency"], r["agent_efficiency"]) for r in chosen
                      if r.get("agent_efficiency") is not None and r.get("truth_efficiency") is not None]
        if efficiency:
            fit = least_squares(efficiency)
            print(f"{prefix}agent efficiency: mean |error| {sum(abs(a - t) for t, a in efficiency) / len(efficiency):.3f} "
                  f"(scored: sleep / scored time); range {min(a for _, a in efficiency):.3f}-{max(a for _, a in efficiency):.3f} "
                  f"against scored {min(t for t, _ in efficiency):.3f}-{max(t for t, _ in efficiency):.3f}"
                  + (f", r {fit[1]:+.2f}" if fit else ""))
        if reference:
            summary(chosen, "sleepecg_tst_min", prefix + "sleepecg 0.6.0")
            print(f"{prefix}sleepecg epoch accuracy (mean) {sum(r['sleepecg_accuracy'] for r in chosen) / len(chosen):.3f}, "
                  f"kappa (mean) {sum(r['sleepecg_kappa'] for r in chosen) / len(chosen):.3f}")
    if len(rows) >= 3:
        against_efficiency(rows, "agent_tst_min", "agent")
        if reference:
            against_efficiency(rows, "sleepecg_tst_min", "sleepecg 0.6.0")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
        if reference:  # sleepecg's labels and sleep probabilities per epoch, for study
            args.json.with_suffix(".sleepecg.json").write_text(json.dumps(reference))


def summary(rows: list[dict], key: str, label: str) -> None:
    found = [r for r in rows if r.get(key) is not None]
    errors = [r[key] - r["truth_tst_min"] for r in found]
    if not errors:
        print(f"{label}: no night found of {len(rows)}")
        return
    absolute = sorted(abs(e) for e in errors)
    median = absolute[len(absolute) // 2] if len(absolute) % 2 else (absolute[len(absolute) // 2 - 1] + absolute[len(absolute) // 2]) / 2
    print(f"{label}: found {len(found)}/{len(rows)}; mean |TST err| {sum(absolute) / len(absolute):.1f} min, "
          f"median {median:.1f}, bias {sum(errors) / len(errors):+.1f}, max {absolute[-1]:.1f}")


def least_squares(pairs: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(slope, Pearson r) of y on x; None for fewer than 3 points or no spread."""
    if len(pairs) < 3:
        return None
    mean_x = sum(x for x, _ in pairs) / len(pairs)
    mean_y = sum(y for _, y in pairs) / len(pairs)
    sxx = sum((x - mean_x) ** 2 for x, _ in pairs)
    syy = sum((y - mean_y) ** 2 for _, y in pairs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in pairs)
    if sxx == 0 or syy == 0:
        return None
    return sxy / sxx, sxy / (sxx * syy) ** 0.5


def against_efficiency(rows: list[dict], key: str, label: str) -> None:
    """How the TST error moves with how well the night was slept (the lab's scored efficiency):
    a rule that fits poor sleepers can fail good ones, and a cohort never seen here may sleep better
    than this one. The least-squares slope over the run's nights, and the nights above the median."""
    pairs = sorted((r["truth_efficiency"], r[key] - r["truth_tst_min"]) for r in rows
                   if r.get(key) is not None and r.get("truth_efficiency") is not None)
    fit = least_squares(pairs)
    if fit is None:
        return
    median_x = pairs[len(pairs) // 2][0]
    upper = [y for x, y in pairs if x > median_x]
    print(f"{label}: TST error against scored efficiency: {0.1 * fit[0]:+.1f} min per +0.1 (r {fit[1]:+.2f}, "
          f"{len(pairs)} nights); the {len(upper)} nights scored above the median efficiency {median_x:.3f}: "
          f"mean |TST err| {sum(abs(y) for y in upper) / len(upper):.1f} min, bias {sum(upper) / len(upper):+.1f}")


if __name__ == "__main__":
    main()
