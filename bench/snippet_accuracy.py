#!/usr/bin/env python3
"""Benchmark (not a test): measured vs expected cycles for documented snippets, run-to-run spread
over separate processes, and the wall time of one `cyclebench asm` invocation.

Expected values come from the detected CPU's own uops.info column (the microarchitecture table picks
it; the nearest column, labelled so, where uops.info has none), shipped in
cyclebench/instructions/data/uops-info/: each snippet names the published form and figure it is
built from. Run: python3 bench/snippet_accuracy.py [--arch CODE]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cyclebench.instructions import published  # noqa: E402
from cyclebench.instructions.reference import resolve_arch  # noqa: E402

L1_INIT = "mov rax, r14; sub rax, 8; mov [rax], rax"
ZERO_VEC = "vxorps xmm0, xmm0, xmm0; vxorps xmm1, xmm1, xmm1; vxorps xmm2, xmm2, xmm2"
CASES = [
    # name, code, init, (uops.info form, figure, copies of it per snippet copy)
    ("not latency (2-chain)", "not rax; not rax", None, ("NOT (R64)", "latency", 2)),
    ("pext latency", "pext rax, rax, rbx", None, ("PEXT (R64, R64, R64)", "latency", 1)),
    ("L1 pointer chase", "mov rax, [rax]", L1_INIT, ("MOV (R64, M64)", "latency", 1)),
    ("not throughput (4 indep.)", "not rax; not rbx; not rcx; not rdx", None, ("NOT (R64)", "throughput", 4)),
    ("vaddps ymm latency", "vaddps ymm0, ymm0, ymm1", ZERO_VEC, ("VADDPS (YMM, YMM, YMM)", "latency", 1)),
    ("vpmulld ymm latency", "vpmulld ymm0, ymm0, ymm1", ZERO_VEC, ("VPMULLD (YMM, YMM, YMM)", "latency", 1)),
    ("vfmadd231ps ymm latency", "vfmadd231ps ymm0, ymm1, ymm2", ZERO_VEC,
     ("VFMADD231PS (YMM, YMM, YMM)", "latency", 1)),
    ("vpandq zmm latency", "vpandq zmm0, zmm0, zmm1", None, ("VPANDQ (ZMM, ZMM, ZMM)", "latency", 1)),
]
RUNS = 10


def expected(records: dict, form: str, figure: str, copies: int) -> float | None:
    """The published figure (the largest exact latency over operand pairs; measured throughput) x copies.
    A throughput snippet is ``copies`` chains of one instruction each, so a copy also costs at least
    the form's least latency: 4 chains of a 1-cycle form take 1 cycle a copy on a core with 5 ALUs
    (ADL-P: NOT throughput 0.20), not 0.8."""
    rec = records.get(form)
    value = getattr(rec, figure, None) if rec else None
    if value is None or value.hi is None:
        return None
    floor = rec.latency.lo if figure == "throughput" and rec.latency and rec.latency.lo else 0.0
    # an upper bound is no expectation: ZEN+ publishes MOV (R64, M64) as [4;≤6], 4 exact
    top = value.lo if value.hi_upper_bound and value.lo is not None and not value.lo_upper_bound else value.hi
    return max(top * copies, floor)


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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="auto", help="uops.info code of the expected values (default: this CPU's)")
    ref = resolve_arch(ap.parse_args().arch)
    records = published.read_csv(str(ref.path))
    table = Table(title=f"cyclebench asm: measured vs expected from {ref.label} ({RUNS} separate processes each)")
    for col in ("snippet", "expected", "median", "min..max over runs", "max |err|", "± (one run)", "stable",
                "confident-wrong", "wall s"):
        table.add_column(col, justify="left" if col == "snippet" else "right")
    worst = 0.0
    walls = []
    for name, code, init, source in CASES:
        expect = expected(records, *source)
        if expect is None:
            table.add_row(name, "—", f"{source[0]} not in {ref.label}", "", "", "", "", "", "")
            continue
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
            wrong += doc["stability"]["stable"] and abs(e["value"] - expect) > 3 * e["uncertainty"] + 0.01
            times.append(wall)
        if not values:
            table.add_row(name, f"{expect:.2f}", "not supported by this CPU", "", "", "", "", "", "")
            continue
        err = max(abs(v - expect) for v in values)
        worst = max(worst, err)
        walls += times
        table.add_row(name, f"{expect:.2f}", f"{statistics.median(values):.4f}",
                      f"{min(values):.4f}..{max(values):.4f}", f"{err:.4f}", f"{statistics.median(uncs):.4f}",
                      f"{stable}/{RUNS}", str(wrong), f"{statistics.median(times):.3f}")
    c = Console(width=150)
    c.print(table)
    c.print(f"worst absolute error over all runs: {worst:.4f} cycles")
    c.print(f"wall time of one invocation: median {statistics.median(walls):.3f} s, max {max(walls):.3f} s")
    c.print(f"backend: {last['backend']['name']} ({last['backend']['label']})")


if __name__ == "__main__":
    main()
