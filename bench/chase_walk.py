#!/usr/bin/env python3
"""Benchmark (not a test): the memory study's chase with each run continuing one walk (the
study's method, studies/memory/chase.py) against each run starting at a random element (its
method before), interleaved process by process.

For each chain it prints, per process, the cost per load of A's and of B's runs on their own and
of B - A (medians over the repetitions, cycles) with their spread (interquartile range over
median). Where A and B see the same cache state, A and B per load agree and B - A spreads little.

Run: flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/chase_walk.py \\
         [LAYOUT:KIB:PAGE ...] [--rounds N]
"""
from __future__ import annotations

import argparse

import numpy as np

from cyclebench.measurement.api import measure
from cyclebench.studies.memory import chains, chase

DEFAULT = ["random:16:2m", "random:256:2m", "random:2048:2m", "random:262144:2m", "random:65536:4k",
           "sequential:262144:4k", "lmbench:16384:4k"]


def random_start(chain: chains.Chain, r14_size: int) -> str:
    """The earlier init: every chain of every run starts at an element hashed from the TSC."""
    lines = chase._base(r14_size) + ["rdtsc", "shl rdx, 32", "or rax, rdx", f"mov rcx, {chase.GOLD}", "mov r8, rax"]
    for j in range(chain.segments):
        lines += ["imul r8, rcx", f"add r8, {j * 2 + 1}", "mov rax, r8", f"mov r9, {chain.seg_len}", "mul r9",
                  f"add rdx, {j * chain.seg_len}", *chase._addr("rdx", "rax", chain), f"mov [rsp - {8 * (j + 1)}], rdx"]
    lines += [f"mov {chase.REGS[j]}, [rsp - {8 * (j + 1)}]" for j in range(min(chain.segments, len(chase.REGS)))]
    return "\n".join(lines)


def _iqr(x) -> float:
    return float((np.percentile(x, 75) - np.percentile(x, 25)) / np.median(x) * 100)


def one(layout: str, kib: int, page: str, method: str, reps: int) -> str:
    c = chains.build(layout, kib << 10)
    s = chase.setup(c, page, min_loads=16384, max_loads=32768)       # the quick study's loads
    init = s.init if method == "continued" else random_start(c, s.r14_size)
    r = measure(s.code, init=init, one_time_init=s.one_time_init, unroll=s.unroll, loop=s.loop, data=s.data,
                r14_size=s.r14_size, max_memory=s.max_memory, allow_syscalls=True, n_measurements=reps,
                budget=0.0, aggregate="median", timeout=60)
    att = r.raw["attempts"][r.raw["chosen"]]
    n = s.unroll * s.loop
    a, b = np.array(att["cycles_a"]) / n, np.array(att["cycles_b"]) / (2 * n)
    d = 2 * b - a
    return (f"{layout:10s} {page} {kib:7d} KiB {method:9s}  A {np.median(a):7.1f} ({_iqr(a):5.1f}%)  "
            f"B {np.median(b):7.1f} ({_iqr(b):5.1f}%)  B-A {np.median(d):7.1f} ({_iqr(d):5.1f}%)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chains", nargs="*", default=DEFAULT, help="LAYOUT:KIB:PAGE, e.g. random:65536:4k")
    ap.add_argument("--rounds", type=int, default=2, help="processes per chain and method")
    ap.add_argument("-n", type=int, default=15, help="repetitions per process")
    args = ap.parse_args()
    print("per load, cycles: median (interquartile range / median)")
    for spec in args.chains:
        layout, kib, page = spec.split(":")
        for _ in range(args.rounds):
            for method in ("random", "continued"):
                print(one(layout, int(kib), page, method, args.n), flush=True)


if __name__ == "__main__":
    main()
