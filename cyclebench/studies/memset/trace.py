"""Stores and branches of one memset call, by single-stepping (routines/trace.py's tracer).

``trace_memset(routine, sizes, aligns)`` calls the routine once per (size, dst alignment) under the
tracer and classifies every executed instruction:

* a **store**: an instruction that writes memory (any operand with write access, so pushes and
  calls count too); a repeated string store (``rep stosb``) counts once, and its iterations and
  bytes are reported separately (``rep_iterations``, ``rep_bytes``), because the microcode's
  own stores are invisible: stores per cycle is not derivable for a call that uses it;
* a **conditional branch** (``jcc``, ``loop``, ``jrcxz``), and whether it was taken (the next
  executed address is not the fall-through).

These are what the reference's table of stores per size counts. Branch *mispredictions* cannot be
traced: they need a hardware PMU (``branch-misses``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

from cyclebench.routines.build import Routine
from cyclebench.routines.trace import decode, run_tracer


@dataclass(frozen=True)
class CallTrace:
    size: int
    align: int
    instructions: int        # executed instructions (a rep string instruction counts once)
    stores: int              # executed instructions that write memory (rep stosb counts once)
    rep_iterations: int      # iterations of repeated string stores
    rep_bytes: int           # bytes those iterations stored
    branches: int            # executed conditional branches
    taken: int               # ... of which taken
    widest_store: int = 0    # bytes of the widest store instruction executed (64: a zmm store)

    def as_dict(self) -> dict:
        return asdict(self)




def trace_memset(routine: Routine, sizes: Iterable[int], aligns: Iterable[int] = (0,), *,
                 fill: int = 0, timeout: float = 120.0) -> list[CallTrace]:
    """One CallTrace per (size, alignment), sizes outer, alignments inner."""
    sizes, aligns = [int(s) for s in sizes], [int(a) for a in aligns]
    cases, code = run_tracer(routine, ["--sizes", ",".join(map(str, sizes)),
                                        "--aligns", ",".join(map(str, aligns)), "--fill", str(fill)], timeout)
    table = [decode(hexbytes, int(addr, 16)) for addr, hexbytes in code["code"]]
    addrs = [int(addr, 16) for addr, _ in code["code"]]
    out = []
    for c in cases:
        seq = c["seq"]
        stores = branches = taken = rep_it = rep_bytes = widest = 0
        for k, (idx, count) in enumerate(seq):
            ins = table[idx]
            if ins.store:
                stores += 1
                widest = max(widest, ins.store_bytes)
                if ins.rep_store_bytes:
                    rep_it += count
                    rep_bytes += count * ins.rep_store_bytes
            if ins.cond_branch:
                branches += count
                nxt = seq[k + 1][0] if k + 1 < len(seq) else None
                if nxt is not None and addrs[nxt] != addrs[idx] + ins.length:
                    taken += 1
                taken += count - 1     # a branch to itself repeats only when taken
        out.append(CallTrace(c["size"], c["align"], len(seq), stores, rep_it, rep_bytes,
                             branches, taken, widest))
    return out
