"""Legacy-SSE writes beside ZMM writes in the loop: one shared cost, measured, as a floor.

upper.py charges a legacy-SSE XMM write under a dirty upper state with a factor measured with the
ZMM write done once before the timed code.  Written in the loop too, the two kinds share a cost
the model's readings never hold (its mixes keep legacy-SSE and wide forms apart).  Measured with
``cyclebench asm --cpu 1`` on Zen 4 (cycles per iteration; k independent ``movaps xmmN, xmm2``
beside m independent ``vpxord zmmN, zmm2, zmm10``): k=1,2,4,8 with m=1: 1.52, 1.50, 2.63, 4.76;
k=4 with m=1,2,4: 2.63, 3.00, 4.00 (interleaved 4.03); k=1 with m=2,4: 1.50, 2.50; m=2 alone
1.00; 8 ``movaps`` after a ZMM write in the init only 4.39 (clean 1.33).  Each legacy write then
takes about half a cycle and each ZMM write about half a cycle of one resource: a fixed cost per
write of each kind, not per switch between them (grouped and interleaved read alike).

:func:`probe` measures the two costs on the CPU at hand from two blocks (k=4 with m=1 and m=4),
kept as a results-file record of ``cyclebench ports`` (type ``upper_loop``) as upper.py keeps
its factor.  :class:`LoopFloor` is the floor the predictor takes from it: a block that names a
ZMM register 0-15 and holds legacy-SSE XMM writes takes at least ``legacy`` cycles per such write
plus ``wide`` per write of a ZMM register 0-15.  A file without the record charges nothing.
Where upper_pool.probe found that the cost takes the vector pipes, the block's other vector
instructions add their usage of those pipes to the floor (:meth:`LoopFloor.beside`).
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from .bound import Bound
from .model import FRONT_END
from .upper import _X, _INFO, BINDING, WRITES, dirty, legacy_xmm_write

RECORD = "upper_loop"
LABEL = "legacy-SSE beside ZMM writes (upper_loop.py)"
LEGACY = [f"movaps xmm{n}, xmm2" for n in (5, 6, 7, 8)]     # independent legacy-SSE register moves
WIDE = [f"vpxord zmm{n}, zmm2, zmm10" for n in (9, 11, 12, 13)]  # independent 512-bit logic writes


def costs(one: float, four: float, k: int = len(LEGACY), m: int = len(WIDE)) -> tuple[float, float]:
    """(cycles per legacy write, per ZMM write) from k legacy writes beside 1 ZMM write (``one``)
    and beside m of them (``four``): ``one = k L + Z``, ``four = k L + m Z``."""
    wide = max(0.0, (four - one) / (m - 1))
    return max(0.0, (one - wide) / k), wide


def probe(session) -> dict:
    """The two costs measured on this CPU (``session``: an instructions.session.Session), as the
    record {"type": "upper_loop", "legacy", "wide", "times"}; legacy None where there is no AVX-512."""
    if not session.avx512:
        return {"type": RECORD, "legacy": None, "why": "no AVX-512 on this CPU"}
    one = session.measure(LEGACY + WIDE[:1], []).value
    four = session.measure(LEGACY + WIDE, []).value
    legacy, wide = costs(one, four)
    return {"type": RECORD, "legacy": round(legacy, 3), "wide": round(wide, 3),
            "times": {"1": round(one, 3), str(len(WIDE)): round(four, 3)}}


def _zmm_write(ins: iced_x86.Instruction) -> bool:
    """Writes a ZMM register 0-15 (its first operand)."""
    return (ins.op_count > 0 and ins.op_kind(0) == iced_x86.OpKind.REGISTER
            and _X.is_zmm(ins.op_register(0)) and _X.number(ins.op_register(0)) < 16
            and _INFO.info(ins).op0_access in WRITES)


def _vector(ins: iced_x86.Instruction) -> bool:
    """Names an XMM, YMM or ZMM register: work for the vector pipes."""
    return any(ins.op_kind(i) == iced_x86.OpKind.REGISTER and _X.is_vector_register(ins.op_register(i))
               for i in range(ins.op_count))


@dataclass
class LoopFloor(Bound):
    """The floor of :mod:`upper_loop` (a ``floors`` entry of predict(): :meth:`floor_of`, and
    :meth:`beside` where the costs share the vector pipes)."""
    legacy: float
    wide: float
    pool: str | None = None     # the probe's ZMM form, where upper_pool.probe found the pipes shared

    def describe(self) -> str:
        return (f"a block naming ZMM 0-15 takes {self.legacy:.2f} cycles a legacy-SSE XMM write and {self.wide:.2f} "
                "a ZMM write at least" + (f", and its other vector work on {self.pool}'s pipes" if self.pool else ""))

    def beside(self, model, instructions: list[iced_x86.Instruction], forms: list[str]) -> float:
        """What the block's other vector work adds to the floor where the costs take the vector
        pipes (:attr:`pool` set): each instruction that names a vector register and is neither a
        legacy write the floor counts nor a ZMM write, at its model usage of the pipes that bound
        the probe's ZMM form alone (the most of them); 0 without a pool or where the model lacks
        the form."""
        use = model.usage.get(self.pool) if self.pool else None
        if not use:
            return 0.0
        bound = model.alone.get(self.pool) or max(use.values())
        pipes = [r for r, u in use.items() if r != FRONT_END and u >= BINDING * bound]
        state = dirty(instructions, wide=True)
        return sum(max(model.usage[f].get(r, 0.0) for r in pipes)
                   for ins, f, s in zip(instructions, forms, state)
                   if f in model.usage and _vector(ins) and not _zmm_write(ins) and not (s and legacy_xmm_write(ins)))

    def floor_of(self, instructions: list[iced_x86.Instruction], counts=None) -> tuple[float, str]:
        """(cycles, label) for a block: its legacy-SSE XMM writes under a ZMM-dirty state and its
        ZMM 0-15 writes at their measured costs; 0 for a block without both a low ZMM register
        named and a legacy write."""
        n_legacy = self.writes(instructions)
        if not n_legacy:
            return 0.0, ""
        n_wide = sum(map(_zmm_write, instructions))
        return n_legacy * self.legacy + n_wide * self.wide, LABEL

    @staticmethod
    def writes(instructions: list[iced_x86.Instruction]) -> int:
        """The block's legacy-SSE XMM writes under a ZMM-dirty state."""
        state = dirty(instructions, wide=True)
        return sum(1 for ins, s in zip(instructions, state) if s and legacy_xmm_write(ins))


def stored(path) -> tuple[LoopFloor | None, str]:
    """(the floor, where its figures came from) of a results file, or None where it holds no probe."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no probe of legacy-SSE beside ZMM writes"
    if r.get("legacy") is None:
        return None, r.get("why") or "no figures"
    return LoopFloor(float(r["legacy"]), float(r["wide"])), (
        f"measured by cyclebench ports: {r['legacy']:.2f} cycles a legacy write, {r['wide']:.2f} a ZMM write")
