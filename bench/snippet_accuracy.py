#!/usr/bin/env python3
"""Benchmark (not a test): measured vs expected cycles for documented snippets, run-to-run spread
over separate processes, and the wall time of one `cyclebench asm` invocation.

Expected values are Zen 4's published figures (AMD's optimisation guide / uops.info / Agner Fog):
they hold on Zen 4 and most recent cores, except where noted. Run: python3 bench/snippet_accuracy.py
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

from rich.console import Console
from rich.table import Table

L1_INIT = "mov rax, r14; sub rax, 8; mov [rax], rax"
CASES = [
    # name, code, init, expected cycles per copy
    ("add latency (2-chain)", "add rax, rbx; add rbx, rax", None, 2.0),
    ("imul r64 latency", "imul rax, rax", None, 3.0),
    ("L1 pointer chase", "mov rax, [rax]", L1_INIT, 4.0),
    ("add throughput (4 indep.)", "add rax, 1; add rbx, 1; add rcx, 1; add rdx, 1", None, 1.0),
    ("imul throughput (4 indep.)", "imul rax, rax; imul rbx, rbx; imul rcx, rcx; imul rdx, rdx", None, 4.0),
    ("vaddpd ymm latency", "vaddpd ymm0, ymm0, ymm1", None, 3.0),
    ("vpaddq zmm latency", "vpaddq zmm0, zmm0, zmm1", None, 1.0),
]
RUNS = 10


def cli(code, init):
    cmd = [sys.executable, "-m", "cyclebench.cli.main", "asm", "--json", code]
    if init:
        cmd += ["--init", init]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 4:           # e.g. AVX-512 on a CPU without it
        return None, time.perf_counter() - t
    proc.check_returncode()
    return json.loads(proc.stdout), time.perf_counter() - t


def main():
    table = Table(title=f"cyclebench asm: measured vs expected ({RUNS} separate processes each)")
    for col in ("snippet", "expected", "median", "min..max over runs", "max |err|", "± (one run)", "stable",
                "confident-wrong", "wall s"):
        table.add_column(col, justify="left" if col == "snippet" else "right")
    worst = 0.0
    walls = []
    for name, code, init, expected in CASES:
        values, uncs, stable, times, wrong = [], [], 0, [], 0
        for _ in range(RUNS):
            doc, wall = cli(code, init)
            if doc is None:
                break
            last = doc
            values.append(doc["events"]["cycles"]["value"])
            uncs.append(doc["events"]["cycles"]["uncertainty"])
            stable += doc["stability"]["stable"]
            # a stable-labelled figure off by more than 3x its uncertainty (+0.01) is a confident wrong number
            e = doc["events"]["cycles"]
            wrong += doc["stability"]["stable"] and abs(e["value"] - expected) > 3 * e["uncertainty"] + 0.01
            times.append(wall)
        if not values:
            table.add_row(name, f"{expected:.2f}", "not supported by this CPU", "", "", "", "", "", "")
            continue
        err = max(abs(v - expected) for v in values)
        worst = max(worst, err)
        walls += times
        table.add_row(name, f"{expected:.2f}", f"{statistics.median(values):.4f}",
                      f"{min(values):.4f}..{max(values):.4f}", f"{err:.4f}", f"{statistics.median(uncs):.4f}",
                      f"{stable}/{RUNS}", str(wrong), f"{statistics.median(times):.3f}")
    c = Console(width=150)
    c.print(table)
    c.print(f"worst absolute error over all runs: {worst:.4f} cycles")
    c.print(f"wall time of one invocation: median {statistics.median(walls):.3f} s, max {max(walls):.3f} s")
    c.print(f"backend: {last['backend']['name']} ({last['backend']['label']})")


if __name__ == "__main__":
    main()
