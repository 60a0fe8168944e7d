#!/usr/bin/env python3
"""Benchmark (not a test): one memory-study bandwidth kernel measured in separate processes, each
alone, to show how far one process's best can sit from another's while its own repetitions agree
(the reason the study confirms a best with a second process, studies/memory/measuring.py).

For each process it prints the best (fastest B run minus fastest A run) and the median per pass,
in TSC-calibrated cycles, with the process's own stability verdict.

Run: flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/bandwidth_processes.py \\
         [--kernel triad-avx512] [--bytes 5376] [--passes 261] [--processes 10]
"""
from __future__ import annotations

import argparse

from cyclebench.measurement.api import measure
from cyclebench.studies.memory import kernels, measuring


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="triad-avx512", help="OP-WIDTH[-nt], e.g. read-avx2, copy-sse-nt")
    ap.add_argument("--bytes", type=int, default=5376, help="bytes per array (default: the quick study's L1)")
    ap.add_argument("--passes", type=int, default=261)
    ap.add_argument("--processes", type=int, default=10)
    args = ap.parse_args()
    op, width, *nt = args.kernel.split("-")
    k = kernels.Kernel(op, width, bool(nt))
    for i in range(args.processes):
        code, kw = measuring.kernel_args(k, args.bytes, args.passes, 5, measuring.main_cpu(), 0.3)
        r = measure(code, **kw)
        best = measuring.best_ns(r)
        ghz = r.backend.get("calibrated_ghz") or 0.0
        cyc = r.events["cycles"]
        print(f"process {i:2d}: best {best * ghz:8.1f}  median {cyc.median:8.1f} cycles a pass  "
              f"({'stable' if r.stable else 'unstable'}, repetitions {cyc.min:.1f} to {cyc.max:.1f})", flush=True)


if __name__ == "__main__":
    main()
