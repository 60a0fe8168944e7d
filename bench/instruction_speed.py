#!/usr/bin/env python3
"""Benchmark (not a test): instruction forms characterised per minute (latency of every operand pair
+ throughput), the way `cyclebench inst --all` runs: one runner per CPU, 20 repetitions per
measurement unless -n says otherwise.

The forms are a fixed spread over the catalogue's offered forms (every k-th, so all extensions and
operand kinds are represented, not just the cheap integer ones). The goal is at least 250 forms per
minute on 2 vCPUs with fewer than 5% of the forms unstable: a Zen 3 catalogue (about 3,800 forms) in
15 minutes, an AVX-512 Intel one (about 15,000) in an hour.

Run: python3 bench/instruction_speed.py [--forms 1000] [-n 20] [--cpus 0,1] [--results out.jsonl]
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.instructions import Catalogue  # noqa: E402
from cyclebench.instructions.bulk import Selected, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forms", type=int, default=1000, help="how many forms (default 1000)")
    ap.add_argument("-n", type=int, default=20, help="repetitions per measurement (default 20)")
    ap.add_argument("--cpus", default="0,1", help="CPUs for the runners (default 0,1)")
    ap.add_argument("--results", type=Path, help="also write the JSONL results here")
    args = ap.parse_args()

    cat = Catalogue.load()
    offered = cat.offered()
    step = max(1, len(offered) // args.forms)
    forms = offered[::step][:args.forms]
    sel = [Selected(f.name, f) for f in forms]
    cpus = [int(c) for c in args.cpus.split(",")]
    done = [0]
    t0 = time.monotonic()

    def progress(doc, n, total):
        done[0] = n
        if n % 100 == 0:
            dt = time.monotonic() - t0
            print(f"  {n}/{total} forms, {dt:.0f} s, {60 * n / dt:.0f} forms/min", file=sys.stderr)

    docs = run(sel, results=args.results, cpus=cpus, measure_kwargs={"n_measurements": args.n},
               progress=progress)
    dt = time.monotonic() - t0
    st = Counter(d["status"] for d in docs)
    pairs = sum(len(d["latency"]) for d in docs)
    measured_pairs = sum(1 for d in docs for p in d["latency"] if p.get("value") is not None)
    unstable = sum(1 for d in docs if d.get("stable") is False)
    rate = 60 * len(docs) / dt
    print(f"{len(docs)} forms (every {step}th of {len(offered)} offered) in {dt:.1f} s on CPUs {args.cpus}, "
          f"-n {args.n}: {rate:.0f} forms/minute")
    print(f"  status: {dict(st)}; latency pairs: {measured_pairs}/{pairs} measured; unstable forms: {unstable}")
    print(f"  goal: 250 forms/minute and under 5% unstable ({unstable / max(len(docs), 1):.1%} here); "
          f"all {len(offered)} offered forms would take {len(offered) / rate:.0f} min")
    fails = Counter((d.get("reason") or "")[:80] for d in docs if d["status"] == "failed")
    for reason, k in fails.most_common(8):
        print(f"  failed x{k}: {reason}")


if __name__ == "__main__":
    main()
