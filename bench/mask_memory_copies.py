#!/usr/bin/env python3
"""Benchmark (not a test): what the rate of copies that write a mask register from memory depends on.

Times, through the measurement API (one runner process each), 16 copies of
``vptestmq k, ymm1, [m]`` (each copy's load 32 bytes further on, 8 addresses) while varying one
thing at a time: how many mask registers the copies write (1, 2, 4 or 7: k1, k1-k2 ...), the copy
count (4 or 16), a port-free instruction between copies (``nop``, the zero idiom ``xor eax, eax``),
and, for reference, the same copies with a register source (``vptestmq k, ymm1, ymm2``) and the same
loads into vector registers (``vpcmpeqq ymm, ymm1, [m]``).  If the rate were set by the mask
registers the copies name, by the count, or by how densely they issue, a variant would move it.

Run: flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/mask_memory_copies.py [--rounds 4]
Needs AVX-512 (exits 2 with a message otherwise).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.machine.features import this_cpu  # noqa: E402
from cyclebench.measurement.api import measure  # noqa: E402

INIT = "mov r15, 0x3ff0000000000000\nvpbroadcastq ymm1, r15"


def load(i: int, regs: int = 7) -> str:
    return f"vptestmq k{1 + i % regs}, ymm1, ymmword ptr [r14+{64 + 32 * (i % 8)}]"


def variants() -> dict[str, tuple[list[str], int]]:
    """name -> (code, copies per run)."""
    out = {f"k1-k{regs} x{n}": ([load(i, regs) for i in range(n)], n) for regs in (1, 2, 4, 7) for n in (4, 16)}
    out["+nop"] = ([x for i in range(16) for x in (load(i), "nop")], 16)
    out["+xor eax"] = ([x for i in range(16) for x in (load(i), "xor eax, eax")], 16)
    out["register source"] = ([f"vptestmq k{1 + i % 7}, ymm1, ymm2" for i in range(16)], 16)
    out["vector destination"] = ([f"vpcmpeqq ymm{2 + i % 7}, ymm1, ymmword ptr [r14+{64 + 32 * (i % 8)}]"
                                  for i in range(16)], 16)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4, help="rounds over every variant (default 4)")
    args = ap.parse_args()
    if not this_cpu().has("AVX512F"):
        print("mask_memory_copies: needs AVX-512 (AVX512F)", file=sys.stderr)
        return 2
    table = variants()
    print("cycles a copy, one runner process each; ? marks an unstable reading")
    for r in range(args.rounds):
        cells = []
        for name, (code, per) in table.items():
            m = measure("\n".join(code), init=INIT)
            cells.append(f"{name}: {m.events['cycles'].value / per:.3f}{'' if m.stable else '?'}")
        print(f"round {r + 1}: " + "; ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
