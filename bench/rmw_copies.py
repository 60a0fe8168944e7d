#!/usr/bin/env python3
"""Benchmark (not a test): read-modify-write memory copies by copy count and address spacing.

Times, through the measurement API (one runner process each), 8, 16 and 32 independent copies of
``shl byte [m], cl``, ``ror word [m], 2`` and ``add dword [m], 2``, each copy on its own address,
the addresses one operand width apart (uops.info's convention: cpuBench.py's
``getIndependentInstructions``, at most 16 copies) or one 8-byte word apart.  Each address chains
from one pass over the copies to the next through a store-forwarding round trip, so n copies
cannot beat that round trip / n; copies that share an 8-byte word may also wait for each other.

Run: flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/rmw_copies.py [--rounds 2]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.measurement.api import measure  # noqa: E402

FORMS = {"shl byte [m], cl": ("shl byte ptr [r14+{o}], cl", 1),
         "ror word [m], 2": ("ror word ptr [r14+{o}], 2", 2),
         "add dword [m], 2": ("add dword ptr [r14+{o}], 2", 4)}
COUNTS = (8, 16, 32)
WORD = 8


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2, help="rounds over every variant (default 2)")
    args = ap.parse_args()
    print("cycles a copy (copies x bytes apart), one runner process each; ? marks an unstable reading")
    for r in range(args.rounds):
        for name, (line, width) in FORMS.items():
            cells = []
            for n in COUNTS:
                for stride in (width, WORD):
                    m = measure("\n".join(line.format(o=64 + i * stride) for i in range(n)), init="mov ecx, 1")
                    cells.append(f"{n}x{stride}: {m.events['cycles'].value / n:.3f}{'' if m.stable else '?'}")
            print(f"round {r + 1} {name}: " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
