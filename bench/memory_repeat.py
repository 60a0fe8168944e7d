#!/usr/bin/env python3
"""Benchmark (not a test): do two runs of the memory study state the same figures?

Reads two ``results.jsonl`` files of ``cyclebench study memory`` (same config) and prints, per
group of measurements (latency by layout and pages, TLB, MLP, bandwidth by level and CPUs,
loaded), how many each run flagged unstable and how many figures the two runs state alike: the
two figures differ by no more than their combined 95% half-width, sqrt(u1^2 + u2^2) ("agree"),
and, more loosely, their intervals overlap (d <= u1 + u2). A figure's half-width is its own
(``uncertainty``; for a figure stated over processes, the Student's t half-width of their mean);
a bandwidth best confirmed by a second process counts as known to within the agreement it was
confirmed to (measuring.BEST_AGREE). Pairs where either run flagged the figure are counted apart:
an unstable figure states nothing to reproduce. The agreement is also split by how the figures
were stated: both over processes (processes.py), both by one process or a pool of processes'
repetitions (the measurement's own verdict), or one of each.

Run: python3 bench/memory_repeat.py RUN1/results.jsonl RUN2/results.jsonl [--list]
"""
from __future__ import annotations

import argparse
import json
import math
from collections import Counter, defaultdict

from cyclebench.studies.memory.measuring import BEST_AGREE

IGNORED = ("huge_kb",)


def load(path: str) -> dict:
    out = {}
    with open(path) as fh:
        for line in fh:
            rec = json.loads(line)
            if "experiment" not in rec:
                continue           # the header
            p = {k: v for k, v in rec["params"].items() if k not in IGNORED}
            out[(rec["experiment"], json.dumps(p, sort_keys=True))] = rec
    return out


def group(rec: dict) -> str:
    e, p = rec["experiment"], rec["params"]
    if e == "latency":
        return f"latency {p['layout']} {p['page']}"
    if e == "tlb":
        return f"tlb {p['page']}"
    if e == "bandwidth":
        return f"bandwidth {p['level']} x{p['cpus']}"
    return e


def figure(rec: dict) -> tuple[float, float] | None:
    """(value, 95% half-width) of the record's stated figure, in its own unit."""
    res = rec["result"]
    if rec["experiment"] == "bandwidth":
        ns = [res.get("best_ns")] + ([rec["other"].get("best_ns")] if "other" in rec else [])
        if any(n is None or n <= 0 for n in ns):
            return None
        total = sum(1 / n for n in ns)                      # passes per ns, summed over CPUs
        b = res.get("between")
        rel = b["half_width"] / b.get("median", b.get("mean")) if b else BEST_AGREE
        return total, rel * total
    c = res["cycles"]
    if c.get("upper_bound") is not None:
        return 0.0, c["upper_bound"]
    return c["value"], c["uncertainty"] if c["uncertainty"] is not None and math.isfinite(c["uncertainty"]) else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--list", action="store_true", help="list every pair that does not agree")
    args = ap.parse_args()
    a, b = load(args.first), load(args.second)
    flagged = [Counter(), Counter()]
    total = Counter()
    stats = defaultdict(Counter)
    worst = []
    kinds = defaultdict(Counter)
    for run, recs in enumerate((a, b)):
        for rec in recs.values():
            if not rec["result"]["stable"]:
                flagged[run][group(rec)] += 1
    for key in sorted(set(a) & set(b)):
        ra, rb = a[key], b[key]
        g = group(ra)
        total[g] += 1
        if not (ra["result"]["stable"] and rb["result"]["stable"]):
            stats[g]["flagged in a run"] += 1
            continue
        fa, fb = figure(ra), figure(rb)
        if fa is None or fb is None:
            stats[g]["no figure"] += 1
            continue
        d = abs(fa[0] - fb[0])
        ok = d <= math.hypot(fa[1], fb[1])
        stats[g]["agree" if ok else "disagree"] += 1
        stats[g]["overlap"] += d <= fa[1] + fb[1]
        kind = "over processes" if ra["result"].get("between") and rb["result"].get("between") else (
            "one process or pooled" if not (ra["result"].get("between") or rb["result"].get("between")) else "mixed")
        kinds[kind]["pairs"] += 1
        kinds[kind]["agree"] += ok
        if not ok:
            worst.append((d / max(math.hypot(fa[1], fb[1]), 1e-12), g, ra["params"], fa, fb))
    print(f"{'group':24s} {'n':>4s} {'flag 1':>6s} {'flag 2':>6s} {'both ok':>7s} {'agree':>5s} {'overlap':>7s}")
    for g in sorted(total):
        s = stats[g]
        both = s["agree"] + s["disagree"]
        print(f"{g:24s} {total[g]:4d} {flagged[0][g]:6d} {flagged[1][g]:6d} {both:7d} {s['agree']:5d} {s['overlap']:7d}")
    n = sum(total.values())
    ag = sum(s["agree"] for s in stats.values())
    both = ag + sum(s["disagree"] for s in stats.values())
    ov = sum(s["overlap"] for s in stats.values())
    print(f"{'all':24s} {n:4d} {sum(flagged[0].values()):6d} {sum(flagged[1].values()):6d} {both:7d} {ag:5d} {ov:7d}")
    print(f"flagged: {sum(flagged[0].values())}/{len(a)} and {sum(flagged[1].values())}/{len(b)}; stated alike "
          f"(within the combined 95% half-width): {ag}/{both}; intervals overlap: {ov}/{both}")
    for kind, c in sorted(kinds.items()):
        print(f"  {kind}: {c['agree']}/{c['pairs']} stated alike")
    if args.list:
        for r, g, p, fa, fb in sorted(worst, key=lambda x: x[0], reverse=True):
            p = {k: v for k, v in p.items() if k in ("layout", "page", "size", "pages", "dense", "chains", "kernel",
                                                     "loaded")}
            print(f"  {r:5.1f}x  {g:22s} {p}  {fa[0]:.4g} +- {fa[1]:.2g}  vs  {fb[0]:.4g} +- {fb[1]:.2g}")


if __name__ == "__main__":
    main()
