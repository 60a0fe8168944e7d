#!/usr/bin/env python3
"""Benchmark (not a test): the harness overhead implied by 2A - B, for ordinary snippets and for
snippets whose cost per copy changes with the number of copies.

For each snippet it prints the per-copy figure, the overhead 2A - B (median over repetitions, in
cycles), its interquartile range, the allowance cyclebench.measurement.linearity grants, and the
verdict. Ordinary snippets should come out linear with a small overhead; the taken-branch
sequences at large unroll counts should be flagged. The flagged rows vary from run to run: where
the code stops fitting the branch predictor depends on its addresses.

Run: python3 bench/linearity.py
"""
from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cyclebench  # noqa: E402

BRANCHY = "cmp rax, rdx; jae 1f; mov rbx, [rsi]; 1:"        # rax = rdx = 0: the jae is taken
SNIPPETS = [
    ("add rax, rbx; add rbx, rax", {}, True),
    ("imul rax, rax", {}, True),
    ("imul rax, rax", dict(unroll=1, loop=20000), True),
    ("imul rax, rax", dict(unroll=1000, loop=0), True),
    ("nop", {}, True),
    ("add rax, 1; add rbx, 1; add rcx, 1; add rdx, 1", {}, True),
    ("mov rax, [r14]", {}, True),
    ("vaddpd ymm0, ymm0, ymm1", {}, True),
    ("div rcx", dict(init="mov rcx, 3; xor edx, edx"), True),
    ("mov rax, [rax]", dict(init="mov rax, r14; sub rax, 8; mov [rax], rax"), True),
    ("add rdi, 64; mov [rdi], rax", dict(unroll=100, loop=30), True),
    ("imul rax, rax", dict(late_init="; ".join(["imul rbx, rbx"] * 50)), True),
    ("imul rax, rax", dict(drain_frontend=True), True),
    ("add rax, rbx", dict(unroll=10, loop=5000), True),
    ("lfence", {}, True),
    (BRANCHY, {}, True),
    (BRANCHY, dict(unroll=500), False),
    (BRANCHY, dict(unroll=1000), False),
]


def main():
    t = Table(title="linearity: the overhead 2A - B implied by each repetition")
    for h in ("snippet", "options", "cycles/copy", "2A-B (cycles)", "IQR", "allowance", "linear", "expected"):
        t.add_column(h, justify="left" if h in ("snippet", "options") else "right")
    agree = 0
    for code, kw, expected in SNIPPETS:
        r = cyclebench.measure(code, **kw)
        lin = r.stability["linearity"]
        agree += lin["linear"] == expected
        t.add_row(escape(code[:34]), escape(", ".join(f"{k}={str(v)[:12]}" for k, v in kw.items())), f"{r.value():.3f}",
                  f"{lin['overhead_cycles']:.0f}", f"{lin['overhead_iqr']:.0f}", f"{lin['allowance_cycles']:.0f}",
                  "yes" if lin["linear"] else "NO", "yes" if expected else "no")
    Console(width=160).print(t)
    print(f"verdict as expected for {agree}/{len(SNIPPETS)} snippets")


if __name__ == "__main__":
    main()
