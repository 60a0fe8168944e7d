"""Whether a NOP takes a front-end slot of its own beside the instruction before it: measured.

The model charges a form no front-end share where it runs alone faster than the front end could
pass it (slots.bypasses: Zen 4's long NOPs run about ten a cycle, where it dispatches six other
instructions).  In a block it holds only after some instructions.  ``cyclebench asm --cpu 1``
on Zen 4, cycles an iteration of an instruction X, a NOP and five eliminated ``mov r64, r9`` (six
slots: 1.00; a NOP with a slot of its own 1.17):

| X (its bytes); the NOP's bytes: | 1 | 3 | 6 | 7 | 8 | 9 |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
| ``cmp rbx, rcx`` (3); ``lea rbx, [rcx+8]``, ``shl rbx, 2`` (4); ``setb bl`` (3) | | | | | | 1.00 |
| ``cmp rbx, [r14+0x40]``, ``mov rbx, [r14+0x40]``, ``mov [r14+0x40], rbx``, ``add rbx, 2`` (4) | 1.00 | 1.00 | 1.00 | | | 1.00 |
| ``mov ebx, 0x12345`` (5), ``add ebx, 0x12345`` (6) | | | | 1.00 | 1.00 | 1.00 |
| ``add rbx, 0x12345``, ``cmp ebx, [r14+0x80]`` (7) | | | 1.00 (``add``) | 1.00 | 1.00 | 1.17 |
| ``cmp rbx, [r14+0x80]``, ``mov [r14+0x80], rbx`` (7) | 1.00 | 1.00 | 1.00 | | | 1.17 |
| ``mov rbx, 0x123456789`` (10) | 1.00 | 1.00 | 1.17 | | | 1.17 |
| ``vpaddd xmm1, xmm2, xmm3`` (4) | 1.17 | 1.17 | 1.17 | | | 1.17 |

(NOPs: ``nop``; ``nop dword ptr [rax]``; ``nop word ptr [r14+0x40]``; ``nop dword ptr
[rax+0xc0]``; ``nop dword ptr [r14+0xc0]``; ``nop word ptr [r14+0xc0]``.)  A vector load or store
(``vmovdqu xmm1, [m]``, ``movss [m], xmm1``) reads 1.17 with the 9-byte NOP as ``vpaddd`` does.
So a NOP shares the slot of the instruction before it where that names no vector
register and the two together take at most 15 bytes (an instruction's longest encoding), and
takes a slot of its own otherwise.

:func:`probe` times ``add rbx, 0x12345`` with the filler alone and with a NOP of 4, 7, 8 and 9
bytes after it (pairs of 11, 14, 15 and 16 bytes), and ``pxor xmm1, xmm2`` alone and with a
3-byte NOP.  A NOP that adds at least half of one slot's time (the block's time over its six
slots) takes its own; ``bytes`` is the longest pair whose NOP and every shorter pair's took
none (0 where the 11-byte pair already took one), ``vector`` whether the NOP after ``pxor``
took one.  ``cyclebench ports`` keeps the record (type ``nop_pairs``); predict() charges a
bypassing form's instance a slot where the record says it takes one (:func:`slotted`).  A file
without it, or a model whose NOPs take their share anyway, charges as before.  The filler is
eliminated moves, so the probe reads the front end only where they take no other resource; a
core that executes them on four ALUs would hide a slot (the NOP would read as shared).
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from .slots import bypasses
from .upper_loop import _vector

RECORD = "nop_pairs"
FILLER = [f"mov {r}, r9" for r in ("r8", "r10", "r11", "r12", "r13")]
INTEGER = "add rbx, 0x12345"            # 7 bytes, no vector register
NOPS = {11: "nop dword ptr [rax+0x40]", 14: "nop dword ptr [rax+0xc0]", 15: "nop dword ptr [r14+0xc0]",
        16: "nop word ptr [r14+0xc0]"}  # the pair's bytes with INTEGER -> the NOP
VECTOR = "pxor xmm1, xmm2"
VECTOR_NOP = "nop dword ptr [rax]"


def blocks() -> dict[str, list[str]]:
    """The probe's blocks (see the module docstring), keyed as its record's times."""
    out = {"integer": [INTEGER] + FILLER, "vector": [VECTOR] + FILLER,
           "vector and nop": [VECTOR, VECTOR_NOP] + FILLER}
    for n, nop in NOPS.items():
        out[str(n)] = [INTEGER, nop] + FILLER
    return out


def _slot(times: dict[str, float], base: str, key: str) -> bool:
    """Whether block ``key``'s NOP took a slot: it adds half a slot (the base block's time over
    its instructions) or more."""
    return times[key] - times[base] >= 0.5 * times[base] / (1 + len(FILLER))


def read(times: dict[str, float]) -> dict:
    """The record's figures from the probe's times: {"bytes", "vector"}."""
    shared = 0
    for n in sorted(NOPS):
        if _slot(times, "integer", str(n)):
            break
        shared = n
    return {"bytes": shared, "vector": _slot(times, "vector", "vector and nop")}


def probe(session) -> dict:
    """The record measured on this CPU (``session``: an instructions.session.Session):
    {"type": "nop_pairs", "bytes", "vector", "times"}."""
    times = {k: session.measure(code, []).value for k, code in blocks().items()}
    return {"type": RECORD, **read(times), "times": {k: round(v, 3) for k, v in times.items()}}


@dataclass(frozen=True)
class NopPairs:
    """What a NOP shares with the instruction before it, as the probe read it."""
    bytes: int             # the longest pair of an integer instruction and a NOP that share a slot
    vector: bool           # a NOP after an instruction with a vector register takes a slot

    def takes(self, before: iced_x86.Instruction, nop: iced_x86.Instruction) -> bool:
        """Whether ``nop`` takes a front-end slot of its own after ``before``."""
        if self.vector and _vector(before):
            return True
        return before.len + nop.len > self.bytes


def slotted(instructions: list[iced_x86.Instruction], forms: list[str], model, pairs: NopPairs | None) -> list[bool]:
    """Per instruction: an instance of a form the model lets bypass the front end (slots.bypasses)
    that takes a slot here, after the instruction before it (the loop wraps round)."""
    if pairs is None or len(instructions) < 2:
        return [False] * len(instructions)
    return [f in model.usage and bypasses(model, f) and pairs.takes(instructions[i - 1], ins)
            for i, (ins, f) in enumerate(zip(instructions, forms))]


def stored(path) -> tuple[NopPairs | None, str]:
    """(what the results file's probe read, where that came from), or None and why."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no NOP-pair probe; a NOP the model lets bypass takes no slot"
    if r.get("bytes") is None or r.get("vector") is None:      # a record that names no figure
        return None, r.get("why") or "the model file's NOP-pair probe gave no figure; a NOP takes no slot"
    t = r.get("times") or {}
    return NopPairs(int(r["bytes"]), bool(r["vector"])), (
        f"measured by cyclebench ports: an integer instruction and a NOP share a slot in up to {r['bytes']} bytes "
        f"({t.get('integer')} cycles, with the NOP {', '.join(f'{t.get(str(n))}' for n in sorted(NOPS))}); "
        + ("after a vector instruction a NOP takes its own" if r["vector"] else "after a vector one too"))
