#!/usr/bin/env python3
"""Benchmark (not a test): BHive's blocks measured by `cyclebench block`, twice.

Prints the CPU, the share of blocks measured cleanly in both runs and within the run-to-run
tolerance (the 95th percentile of the relative difference between the two runs), the reasons for
the rest, the run-to-run agreement, the rate (blocks per minute, two runners on two CPUs), and
llvm-mca-16's MAPE and Kendall's tau against the first run, per application and overall.

The goal is at least 95% of the blocks measured cleanly and at least 200 blocks per minute on 2 vCPUs.

Run (under the measurement lock): python3 bench/block_accuracy.py [--blocks 300 | --all] [-n 10]
    [--cpus 0,1] [--results-dir DIR]
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.blocks import accuracy, bulk  # noqa: E402
from cyclebench.blocks.measure import clean  # noqa: E402
from cyclebench.blocks.predictors import LlvmMca, predict_all  # noqa: E402
from cyclebench.blocks.report import reasons  # noqa: E402
from cyclebench.machine.cpu import cpu_info  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "cyclebench" / "blocks" / "data" / "bhive_blocks.csv"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=300, help="a random sample of this many blocks (seed 1)")
    ap.add_argument("--all", action="store_true", help="all 3,000 blocks")
    ap.add_argument("-n", type=int, default=10, help="repetitions per block (default 10)")
    ap.add_argument("--cpus", default="0,1", help="CPUs for the runners (default 0,1)")
    ap.add_argument("--results-dir", type=Path, help="keep the two runs' JSONL files here")
    args = ap.parse_args()

    rows = bulk.read_csv(DATA)
    if not args.all and args.blocks < len(rows):
        rows = random.Random(1).sample(rows, args.blocks)
    cpus = [int(c) for c in args.cpus.split(",")]
    out_dir = args.results_dir or Path(tempfile.mkdtemp(prefix="cb-block-bench-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    cpu = cpu_info()
    print(f"CPU: {cpu.model_name} (family {cpu.family}, model {cpu.model}); {len(rows)} blocks, -n {args.n}, "
          f"runners on CPUs {args.cpus}")

    runs, rates = [], []
    for k in (1, 2):
        path = out_dir / f"run{k}.jsonl"
        path.unlink(missing_ok=True)
        t0 = time.monotonic()
        docs = bulk.run(rows, results=path, cpus=cpus, measure_kwargs={"n_measurements": args.n})
        rates.append(60 * len(docs) / (time.monotonic() - t0))
        runs.append(docs)
        print(f"run {k}: {sum(map(clean, docs))} of {len(docs)} clean, {rates[-1]:.0f} blocks/min ({path})")

    ag = accuracy.agreement(runs[0], runs[1])
    tol = ag.get("p95", 0.0)
    second = {d["hex"]: d for d in runs[1]}
    both = [d for d in runs[0] if clean(d) and clean(second[d["hex"]])]
    within = [d for d in both if abs(second[d["hex"]]["cycles"] - d["cycles"]) / d["cycles"] <= tol]
    n = len(rows)
    print(f"\nrun-to-run: {ag['n']} blocks clean in both; relative difference median {100 * ag['median']:.2f}%, "
          f"p90 {100 * ag['p90']:.2f}%, p95 {100 * ag['p95']:.2f}%, max {100 * ag['max']:.1f}%; "
          f"within 1%: {100 * ag['within_1pct']:.1f}%, within 5%: {100 * ag['within_5pct']:.1f}%")
    print(f"measured cleanly in both runs: {len(both)} of {n} ({100 * len(both) / n:.1f}%); "
          f"and within the run-to-run tolerance (p95, {100 * tol:.2f}%): {len(within)} ({100 * len(within) / n:.1f}%)")
    for t in (0.01, 0.02, 0.05):
        k = sum(abs(second[d["hex"]]["cycles"] - d["cycles"]) / d["cycles"] <= t for d in both)
        print(f"  clean in both and the two runs within {100 * t:.0f}%: {k} of {n} ({100 * k / n:.1f}%)")
    dep = sum(d.get("mapping_dependent", False) for d in both)
    print(f"of those, depending on the mapping (several pages on one, page crossing, 4K aliasing, "
          f"registers meeting, memory walks): {dep}")
    print("why the others were not (first run):")
    for why, k in reasons(runs[0]).most_common(15):
        print(f"  {k:5d}  {why}")
    print(f"rate: {min(rates):.0f}-{max(rates):.0f} blocks/min with {len(cpus)} runners")

    mca = LlvmMca()
    t0 = time.monotonic()
    pred = predict_all(mca, runs[0])
    failed = sum(not isinstance(v, float) for v in pred.values())
    print(f"\n{mca.name}: {len(pred) - failed} predictions ({failed} without) in {time.monotonic() - t0:.0f} s")
    print(accuracy.format_table(accuracy.error_table(runs[0], pred), mca.name))


if __name__ == "__main__":
    main()
