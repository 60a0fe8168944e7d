#!/usr/bin/env python3
"""Benchmark (not a test): what the sandbox costs. The runner from a revision before the sandbox
(default: the parent of the commit that added it) is built into a temporary folder and alternated
with the current one, for:

- the wall time of one measure() call (process start, filter installation, measuring);
- getpid, the system call people time, which now passes the seccomp filter;
- a snippet timed with a software event, whose counter read() passes the filter twice per run;
- plain snippets (the TSC path makes no system call inside the window).

Run: python3 bench/sandbox_cost.py [--rev REV] [--rounds N]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import cyclebench
from cyclebench.runner import build, process
from cyclebench.runner.protocol import PROTOCOL

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    ("add rax, rbx (latency)", "add rax, rbx", {}),
    ("imul throughput x4", "imul rax, rax; imul rbx, rbx; imul rcx, rcx; imul rdx, rdx", {}),
    ("getpid", "mov eax, 39; syscall", {}),
    ("add, with task-clock read()", "add rax, rbx", {"events": "task-clock"}),
]


def build_old(rev: str, where: Path) -> Path:
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:runner/cb_runner.c"],
                         capture_output=True, text=True, check=True).stdout
    (where / "old.c").write_text(src)
    exe = where / "cb-runner-old"
    subprocess.run(["cc", *build.CFLAGS, "-o", str(exe), str(where / "old.c"), "-ldl"], check=True)
    # the old runner predates the protocol line and --out-fd (its protocol went to standard
    # output): a wrapper prints the line first and sends the old runner's output to that pipe
    wrapper = where / "cb-runner-old.sh"
    wrapper.write_text(f'#!/bin/sh\nfd=$2; shift 2\nexec >&"$fd"\necho protocol {PROTOCOL}\nexec "{exe}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def one(code, kw, exe):
    process.runner_path = (lambda rebuild=False: exe) if exe else NEW
    t = time.perf_counter()
    r = cyclebench.measure(code, n_measurements=20, budget=0.5, **kw)
    return r.value("cycles"), time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", default=None, help="revision without the sandbox (default: before it was added)")
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    added = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%H", "-S", "install_sandbox", "--",
                            "runner/cb_runner.c"], capture_output=True, text=True, check=True).stdout.split()
    rev = a.rev or added[-1] + "^"          # the oldest commit that mentions it added it
    t = Table(title=f"sandbox cost: current runner vs {rev} (median of {a.rounds} alternating rounds)")
    for col in ("snippet", "cycles before", "cycles now", "measure() s before", "measure() s now"):
        t.add_column(col, justify="right" if col != "snippet" else "left")
    with tempfile.TemporaryDirectory() as d:
        old = build_old(rev, Path(d))
        for name, code, kw in CASES:
            res = {"old": [], "new": []}
            for _ in range(a.rounds):
                res["old"].append(one(code, kw, old))
                res["new"].append(one(code, kw, None))
            med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for k, v in res.items()}
            t.add_row(name, f"{med['old'][0]:.3f}", f"{med['new'][0]:.3f}", f"{med['old'][1]:.3f}", f"{med['new'][1]:.3f}")
    Console().print(t)


NEW = build.runner_path
if __name__ == "__main__":
    sys.exit(main())
