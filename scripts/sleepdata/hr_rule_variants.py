#!/usr/bin/env python3
"""Variants of the heart-rate wake rule (Sources/SleepStaging/HeartRateWakeRule.swift, docs/sleep.md
"Heart-rate rule variants"), measured on the classifier's epochs of the slpdb nights as the agent
computed them, against the lab's scoring.

Input: per record, `<rec>.ndjson` (what the rule was given: `lo`, `hi` the night's epoch range,
`states` 1 sleep / 0 wake / -1 missing after Webster's rules, `hr` each epoch's heart rate or null,
`start` each epoch's Unix start) and `<rec>.json` (the `--json` row of scripts/sleep-accuracy.py).
They come from a one-off build, not part of the repository: in `HeartRateWakeRule.rescore`, after
the `guard !sleeping.isEmpty`, append one such JSON line to the file named by an environment
variable, then for each record run
  KEEPALIVE_DUMP_HRRULE=DIR/<rec>.ndjson scripts/sleep-accuracy.py SLPDB_DIR --records <rec> --no-reference --json DIR/<rec>.json
The night with the widest `hi - lo` of a record's lines is its night. The rule the agent has, and
the quantile rule before it, run here give the end-to-end figures of every night exactly
(docs/sleep.md), as does no rule against `--no-heart-rate-rule`.

Each variant with a constant gets it chosen on the 6 tuning nights only, twice: the value with the
lowest mean |TST error| there, and the one with the highest mean epoch kappa there.

Usage: scripts/sleepdata/hr_rule_variants.py DUMP_DIR SLPDB_DIR
"""
import bisect
import datetime
import json
import math
import sys
from pathlib import Path

import slpdb

TUNE = ["slp03", "slp14", "slp32", "slp41", "slp48", "slp61"]
HOLD = ["slp04", "slp16", "slp37", "slp45", "slp60"]
PART = ["slp59", "slp66", "slp01a+slp01b", "slp02a+slp02b"]
WHOLE = TUNE + HOLD
HALF_WINDOW = 5  # the rule's 5-minute median window, ±5 epochs


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def quantile(sorted_values, q):
    """As HeartRateWakeRule: the value at index ⌊q·n⌋."""
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def kappa(a, b):
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return (po - pe) / (1 - pe) if pe < 1 else float("nan")


def load(dump: Path, slpdb_dir: Path) -> dict:
    nights = {}
    for name in WHOLE + PART:
        lines = [json.loads(x) for x in (dump / f"{name}.ndjson").read_text().splitlines() if x.strip()]
        d = max(lines, key=lambda x: x["hi"] - x["lo"])
        d["row"] = json.loads((dump / f"{name}.json").read_text())[0]
        # Epoch starts are on the date sleep-accuracy.py placed the night on (two days before its run).
        first = datetime.datetime.fromtimestamp(d["start"][0], datetime.timezone.utc).date()
        night = next(n for n in (slpdb.read_night(slpdb_dir, name, first + datetime.timedelta(days=k)) for k in (0, 1))
                     if abs(n.start.timestamp() - d["start"][0]) < 86400)
        d["t0"], d["scored"] = night.start.timestamp(), night.scored
        inside = range(d["lo"], d["hi"])
        d["win"] = [windowed(d, i) if i in inside else None for i in range(len(d["states"]))]
        d["sleephr"] = sorted(d["hr"][i] for i in inside if d["states"][i] == 1 and d["hr"][i] is not None)
        nights[name] = d
    return nights


def windowed(d, i):
    st, hr = d["start"], d["hr"]
    w = [hr[j] for j in range(max(0, i - HALF_WINDOW), min(len(st), i + HALF_WINDOW + 1))
         if abs(st[j] - st[i]) <= HALF_WINDOW * 30 and hr[j] is not None]
    return median(w) if w else None


def local_base(d, minutes):
    """The median heart rate of the night's sleep epochs within ±minutes of each epoch."""
    key = f"local{minutes}"
    if key not in d:
        st, hr, s = d["start"], d["hr"], d["states"]
        idx = [i for i in range(d["lo"], d["hi"]) if s[i] == 1 and hr[i] is not None]
        times = [st[i] for i in idx]
        out = [None] * len(st)
        for i in range(d["lo"], d["hi"]):
            a, b = bisect.bisect_left(times, st[i] - minutes * 60), bisect.bisect_right(times, st[i] + minutes * 60)
            out[i] = median([hr[idx[j]] for j in range(a, b)]) if b > a else None
        d[key] = out
    return d[key]


# Each variant: night -> predicate(epoch index, 5-minute median heart rate) -> relabel as wake.
def current(q=0.78):
    return lambda d: (lambda t: lambda i, w: w > t)(quantile(d["sleephr"], q))


def above_night_median(delta, q=0.78):
    return lambda d: (lambda t, m: lambda i, w: w > t and w >= m + delta)(quantile(d["sleephr"], q), median(d["sleephr"]))


def median_mad(k):
    def rule(d):
        m = median(d["sleephr"])
        mad = median([abs(x - m) for x in d["sleephr"]])
        return lambda i, w: w > m + k * mad
    return rule


def above_local(delta, minutes=30, q=0.78):
    def rule(d):
        t, lb = quantile(d["sleephr"], q), local_base(d, minutes)
        return lambda i, w: w > t and lb[i] is not None and w >= lb[i] + delta
    return rule


def local_only(delta, minutes=30):
    def rule(d):
        lb = local_base(d, minutes)
        return lambda i, w: lb[i] is not None and w >= lb[i] + delta
    return rule


def evaluate(nights, rule):
    out = {}
    for name, d in nights.items():
        states = list(d["states"])
        if rule is not None:
            fires = rule(d)
            for i in range(d["lo"], d["hi"]):
                if states[i] == 1 and d["win"][i] is not None and fires(i, d["win"][i]):
                    states[i] = 0
        tst = sum(1 for i in range(d["lo"], d["hi"]) if states[i] == 1) * 0.5
        label = {round((s - d["t0"]) / 30): int(d["lo"] <= i < d["hi"] and states[i] == 1) for i, s in enumerate(d["start"])}
        pairs = [(t, label.get(k, 0)) for k, t in d["scored"].items()]
        out[name] = {"err": tst - d["row"]["truth_tst_min"], "eff": d["row"]["truth_efficiency"],
                     "kappa": kappa([t for t, _ in pairs], [p for _, p in pairs])}
    return out


def figures(res, names):
    e = [res[n]["err"] for n in names]
    k = [res[n]["kappa"] for n in names]
    return f"{sum(map(abs, e)) / len(e):5.1f} {sum(e) / len(e):+6.1f} κ {sum(k) / len(k):.3f}"


def row(label, res):
    pairs = sorted((res[n]["eff"], res[n]["err"]) for n in WHOLE + PART)
    mx, my = sum(x for x, _ in pairs) / len(pairs), sum(y for _, y in pairs) / len(pairs)
    sxx, syy = sum((x - mx) ** 2 for x, _ in pairs), sum((y - my) ** 2 for _, y in pairs)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    whole = sorted((res[n]["eff"], res[n]["err"]) for n in WHOLE)
    top = [y for x, y in whole if x > whole[len(whole) // 2][0]]
    print(f"{label:34s} tune {figures(res, TUNE)} | held out {figures(res, HOLD)} | whole {figures(res, WHOLE)} | "
          f"partial {figures(res, PART)} | top {len(top)} of whole {sum(map(abs, top)) / len(top):5.1f} {sum(top) / len(top):+6.1f} | "
          f"slp37 {res['slp37']['err']:+6.1f} | {0.1 * sxy / sxx:+5.1f} min per +0.1 eff, r {sxy / math.sqrt(sxx * syy):+.2f}")


def chosen_on_tuning(nights, family, grid, label):
    scored = []
    for value in grid:
        res = evaluate(nights, family(value))
        scored.append((value, sum(abs(res[n]["err"]) for n in TUNE) / len(TUNE),
                       sum(res[n]["kappa"] for n in TUNE) / len(TUNE), res))
    by_error = min(scored, key=lambda s: s[1])
    by_kappa = max(scored, key=lambda s: s[2])
    row(f"{label.format(by_error[0])} (tuning |err|)", by_error[3])
    row(f"{label.format(by_kappa[0])} (tuning κ)", by_kappa[3])


def main():
    nights = load(Path(sys.argv[1]), Path(sys.argv[2]))
    print("mean |TST error| min, bias min, mean epoch κ; per set")
    row("≥ ±30-min median +3 bpm (the agent)", evaluate(nights, local_only(3.0, 30)))
    row("quantile 0.78 (the agent before)", evaluate(nights, current()))
    row("rule off", evaluate(nights, None))
    half_bpm = [x / 2 for x in range(0, 21)]
    chosen_on_tuning(nights, above_night_median, half_bpm, "q0.78 and ≥ night median +{} bpm")
    chosen_on_tuning(nights, median_mad, [x / 4 for x in range(2, 17)], "median + {}·MAD")
    chosen_on_tuning(nights, above_local, half_bpm, "q0.78 and ≥ ±30-min median +{} bpm")
    chosen_on_tuning(nights, lambda m: above_local(0, m), [10, 15, 20, 30, 45, 60, 90, 120], "q0.78 and ≥ ±{}-min median")
    chosen_on_tuning(nights, local_only, half_bpm, "≥ ±30-min median +{} bpm alone")
    chosen_on_tuning(nights, lambda v: local_only(v[1], v[0]), [(m, x / 2) for m in (15, 20, 30, 45, 60, 90) for x in range(0, 17)],
                     "≥ ±{0[0]}-min median +{0[1]} bpm alone")
    # Which epochs each rule turns to wake, on nights slept better and worse.
    whole = sorted(WHOLE, key=lambda n: nights[n]["row"]["truth_efficiency"])
    for rule_name, rule in (("the quantile rule (before)", current()), ("the local rule (the agent)", local_only(3.0, 30))):
        for label, names in (("the 5 whole nights slept best", whole[6:]), ("the other 6 whole nights", whole[:6])):
            wake, sleep = [], []
            for name in names:
                d = nights[name]
                fires, lb = rule(d), local_base(d, 30)
                for i in range(d["lo"], d["hi"]):
                    w = d["win"][i]
                    truth = d["scored"].get(round((d["start"][i] - d["t0"]) / 30))
                    if d["states"][i] == 1 and w is not None and fires(i, w) and truth is not None:
                        (wake if truth == 0 else sleep).append((w - median(d["sleephr"]), w - lb[i]))
            print(f"{rule_name}, {label}: {len(wake) + len(sleep)} scored epochs turned to wake, "
                  f"{100 * len(wake) / (len(wake) + len(sleep)):.0f} % scored wake; above the night's sleeping median: wake "
                  f"{median([a for a, _ in wake]):.1f}, sleep {median([a for a, _ in sleep]):.1f} bpm; above the ±30-min median: "
                  f"wake {median([b for _, b in wake]):.1f}, sleep {median([b for _, b in sleep]):.1f} bpm")


if __name__ == "__main__":
    main()
