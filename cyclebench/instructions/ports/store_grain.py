"""The span of memory within which two stores are written in one cycle: measured, not assumed.

The predictor charges a block's stores by runs of stores to one span (predict.store_lines): a
core that writes two stores a cycle to one span and one a cycle to different spans takes a run
of k stores in ceil(k / 2) of its cycles.  The span was taken for the cache line; on Zen 4 it is
half of one.  ``cyclebench asm --cpu 1``, two ``mov [r14+a], rax`` an iteration (r14 64-byte
aligned), cycles an iteration:

| offsets a, b | cycles |
| --- | ---: |
| 0x240, 0x258 (one 32-byte half) | 1.00 |
| 0x260, 0x278 (one 32-byte half) | 1.00 |
| 0x258, 0x260 (one line, two halves) | 2.00 |
| 0x200, 0x220 (one line, two halves) | 2.00 |
| 0x21c, 0x220 (4-byte stores, two halves) | 2.00 |
| 0x200, 0x240 (two lines) | 2.00 |

so a gcc -O2 block that writes 0x260, 0x218 and 0x258 of one area runs 3.00 cycles where runs by
line (the last and, the loop wrapping round, the first on one line) said 2.00.

:func:`probe` times two 8-byte stores on one address (the paired time), on two lines (the
unpaired one), and for each span g of 16, 32 and 64 bytes on either side of the g/2 boundary of
one g-byte span (offsets g/2 - 8 and g/2).  The span is the largest g whose pair runs nearer the
paired time than the unpaired one (:func:`grain`); a core that pairs no stores has none (its
store forms' line readings already charge one a cycle).  ``cyclebench ports`` keeps it as a
results-file record (type ``store_grain``); a file without one keeps the cache line, :data:`LINE`.
"""
from __future__ import annotations

import iced_x86

from .upper import WRITES

RECORD = "store_grain"
LINE = 64                      # bytes: the span a file without the probe is charged by
SPANS = (16, 32, 64)           # bytes: the spans tried, each a power of two within a line


def store_sequence(instructions, grain: int = LINE, placed: bool = False, of=WRITES) -> list[tuple]:
    """The block's memory writes (or the accesses ``of`` names: iced's OpAccess values;
    load_banks.py takes the reads) in program order: (instruction number, iced's used-memory
    entry, its span): spans told apart by address expression (segment, base, index, scale) and
    displacement / ``grain``, or with ``placed`` by where the start state puts them
    (memory.steady_state; page offset / grain)."""
    factory = iced_x86.InstructionInfoFactory()
    at = {}
    if placed:
        from ...blocks.memory import PAGE, steady_state
        at = {(a.index, n): a.address % PAGE for n, a in enumerate(steady_state(instructions)) if a.address is not None}
    out, n = [], -1
    for i, ins in enumerate(instructions):
        for m in factory.info(ins).used_memory():
            if m.access == iced_x86.OpAccess.NO_MEM_ACCESS:
                continue
            n += 1
            if m.access in of:
                where = at.get((i, n))
                out.append((i, m, (m.segment, m.base, m.index, m.scale, m.displacement // grain) if where is None
                            else ("page", where // grain)))
    return out


def pair(a: int, b: int) -> list[str]:
    """Two 8-byte stores at offsets ``a`` and ``b`` of r14's area (64-byte aligned)."""
    return [f"mov qword ptr [r14+{a:#x}], rax", f"mov qword ptr [r14+{b:#x}], rax"]


def blocks() -> dict[str, list[str]]:
    """The probe's blocks: the paired and unpaired references, then one per span tried."""
    out = {"one address": pair(0x200, 0x200), "two lines": pair(0x200, 0x200 + LINE)}
    for g in SPANS:
        out[str(g)] = pair(0x200 + g // 2 - 8, 0x200 + g // 2)
    return out


def grain(times: dict[str, float]) -> int | None:
    """The span from the probe's times (cycles an iteration, keyed as :func:`blocks`): the largest
    g whose pair is nearer the one-address time than the two-lines time, or None where the two
    references are within a quarter of a cycle (no pairing to tell spans apart)."""
    paired, apart = times["one address"], times["two lines"]
    if apart - paired < 0.25:
        return None
    mid = (paired + apart) / 2
    fits = [g for g in SPANS if times[str(g)] < mid]
    return max(fits) if fits else None


def probe(session) -> dict:
    """The span measured on this CPU (``session``: an instructions.session.Session), as the record
    {"type": "store_grain", "grain", "times"}."""
    times = {k: session.measure(code, []).value for k, code in blocks().items()}
    return {"type": RECORD, "grain": grain(times), "times": {k: round(v, 3) for k, v in times.items()}}


def stored(path) -> tuple[int, str]:
    """(bytes of the span a block's stores are charged by, where that came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return LINE, "not measured: the model file has no store-span probe; the cache line"
    if not r.get("grain"):
        return LINE, "measured by cyclebench ports: no two stores paired; the cache line"
    t = r.get("times") or {}
    return int(r["grain"]), (f"measured by cyclebench ports: two stores {t.get(str(r['grain']))} cycles within "
                             f"{r['grain']} bytes, {t.get('two lines')} on two lines")
