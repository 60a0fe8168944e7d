#!/usr/bin/env python3
"""Benchmark (not a test): what the rate of copies that write a mask register from memory depends on.

Times, through the measurement API (one runner process each), 16 copies of
``vptestmq k, ymm1, [m]`` (each copy's load 32 bytes further on, 8 addresses) while varying one
thing at a time: how many mask registers the copies write (1, 2, 4 or 7: k1, k1-k2 ...), the copy
count (4 or 16), a port-free instruction between copies (``nop``, the zero idiom ``xor eax, eax``),
and, for reference, the same copies with a register source (``vptestmq k, ymm1, ymm2``) and the same
loads into vector registers (``vpcmpeqq ymm, ymm1, [m]``).  If the rate were set by the mask
registers the copies name, by the count, or by how densely they issue, a variant would move it.

Then what does move it: mixes of the copies with other loads (vector-destination loads or 64-bit
GPR loads, 1:1, 3:1, 1:3; figures per instruction), with register-source mask writes (1:1), a load
into a vector register followed by a register-source mask write of it (per pair), and every load
given its address 6, 12 or 24 cycles later (2, 4 or 8 dependent ``imul`` ahead of the copies), for
the mask copies and for the vector-destination loads.  If mask writes that wait on a load were
limited per cycle by the loads or ports, the mixes would not reach 0.50 a copy; if by a count in
flight (rate = count / time each is held), delaying the loads slows the mask copies while the vector
loads, with more room, keep their rate.  Last, the copies writing one mask register (k2) or k1-k7
with the mask registers they do not name zeroed ahead of them by the zero idiom ``kxorw k, k, k``
(a zeroed register holding no rename register of its own, cyclebench's one_mask.py), against k2
alone without the zeroing.
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


def vector(i: int) -> str:
    return f"vpcmpeqq ymm{2 + i % 7}, ymm1, ymmword ptr [r14+{64 + 32 * (i % 8)}]"


def gpr(i: int) -> str:
    return f"mov {('rbx', 'rdx', 'r8', 'r9', 'r10', 'r11')[i % 6]}, qword ptr [r14+{8 * (i % 8)}]"


def zeroed(*kept: int) -> str:
    return "\n".join(f"kxorw k{i}, k{i}, k{i}" for i in range(8) if i not in kept)


def variants() -> dict[str, tuple[list[str], int] | tuple[list[str], int, str]]:
    """name -> (code, copies per run[, init after INIT])."""
    out = {f"k1-k{regs} x{n}": ([load(i, regs) for i in range(n)], n) for regs in (1, 2, 4, 7) for n in (4, 16)}
    out["+nop"] = ([x for i in range(16) for x in (load(i), "nop")], 16)
    out["+xor eax"] = ([x for i in range(16) for x in (load(i), "xor eax, eax")], 16)
    out["register source"] = ([f"vptestmq k{1 + i % 7}, ymm1, ymm2" for i in range(16)], 16)
    out["vector destination"] = ([vector(i) for i in range(16)], 16)
    for name, other, a, b in (("vector loads", vector, 1, 1), ("vector loads", vector, 3, 1),
                              ("vector loads", vector, 1, 3), ("GPR loads", gpr, 1, 1), ("GPR loads", gpr, 3, 1),
                              ("register source", lambda i: f"vptestmq k{1 + i % 7}, ymm1, ymm2", 1, 1)):
        code = [load(i) if i % (a + b) < a else other(i) for i in range(16)]
        out[f"{a}:{b} with {name}"] = (code, 16)
    out["vmovdqu then register source (per pair)"] = (
        [x for i in range(16) for x in (f"vmovdqu ymm{2 + i % 7}, ymmword ptr [r14+{64 + 32 * (i % 8)}]",
                                        f"vptestmq k{1 + i % 7}, ymm1, ymm{2 + i % 7}")], 16)
    for k in (2, 4, 8):
        for name, line in (("mask", load), ("vector", vector)):
            head = ["mov rbx, r14"] + ["imul rbx, rbx, 1"] * k
            delayed = [line(i).replace("[r14", "[rbx") for i in range(16)]
            out[f"{name} loads {3 * k} cycles later"] = (head + delayed, 16)
    k2 = [f"vptestmq k2, ymm1, ymmword ptr [r14+{64 + 32 * (i % 8)}]" for i in range(16)]
    out["k2 alone"] = (k2, 16)
    out["k2 alone, the others zeroed"] = (k2, 16, zeroed(2))
    out["k1-k7, k0 zeroed"] = ([load(i) for i in range(16)], 16, zeroed(*range(1, 8)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4, help="rounds over every variant (default 4)")
    args = ap.parse_args()
    if not this_cpu().has("AVX512F"):
        print("mask_memory_copies: needs AVX-512 (AVX512F)", file=sys.stderr)
        return 2
    table = variants()
    rows: dict[str, list[str]] = {name: [] for name in table}
    for _ in range(args.rounds):     # a round over every variant, so a step of the core's state shows in all
        for name, (code, per, *more) in table.items():
            m = measure("\n".join(code), init="\n".join([INIT] + more))
            rows[name].append(f"{m.events['cycles'].value / per:.3f}{'' if m.stable else '?'}")
    print(f"cycles a copy (an instruction of a mix), one runner process each, {args.rounds} rounds; "
          "? marks an unstable reading")
    width = max(map(len, rows))
    for name, cells in rows.items():
        print(f"{name:{width}s}  " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
