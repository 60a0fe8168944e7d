"""A legacy-SSE write after a 256-bit write: a state transition some cores charge, measured.

upper.py prices what a dirty upper state does to a legacy-SSE write on a core that merges the
kept bits (Zen 4: an extra pass on its pipe).  Another core may instead switch the whole vector
state, at a cost no pipe accounts for.  A Zen 3 guest, ``cyclebench asm --cpu 0``, cycles an
iteration:

| loop | cycles |
| --- | ---: |
| ``vpaddd xmm1, xmm2, xmm3; paddb xmm4, xmm2`` | 1.00 |
| ``vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2`` | 336-339 |
| ``vpaddd ymm1, ymm2, ymm3; vzeroupper; paddb xmm4, xmm2`` | 1.00 |
| ``vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2; paddb xmm5, xmm2`` | 362 |
| ``vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2; vpaddd xmm6, xmm2, xmm3; paddb xmm5, xmm2`` | 340 |
| ``vpaddd ymm1, ymm2, ymm3; vpaddd xmm1, xmm2, xmm3; paddb xmm4, xmm2`` | 265 |
| ``vpaddd ymm1, ymm2, ymm3; movaps [r14+0x40], xmm5`` (a legacy store: no XMM write) | 1.00 |

The cost comes once an iteration for the first legacy-SSE XMM write after a write of a YMM or
ZMM register 0-15, whichever register each names, and not again until another such write: a
VEX XMM write in between does not bring it back, a ``vzeroupper`` takes it away.  :func:`probe`
times the second line and the first; their difference, where it is more than :data:`SWITCH`
cycles, is the transition's cost (a record of type ``transition``).  The predictor takes a block
at least that cost for each such write an iteration (:class:`Transition`, one of its bounds); a
file without the record, or a core that reads less, charges nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from .bound import Bound
from .upper import _INFO, _X, WRITES, _low_vector, clears, legacy_xmm_write

RECORD = "transition"
SWITCH = 10.0            # cycles above the clean loop that are a state switch, not a pipe
DIRTY = ["vxorps ymm1, ymm2, ymm3", "paddd xmm4, xmm2"]      # AVX and SSE2: any core with AVX
CLEAN = ["vxorps xmm1, xmm2, xmm3", "paddd xmm4, xmm2"]


def wide_write(ins: iced_x86.Instruction) -> bool:
    """Its destination is a YMM or ZMM register numbered 0-15 (the ones a legacy-SSE form reaches);
    a VEX XMM write, which zeroes the bits above, is none (iced has it write the full register)."""
    if ins.op_count == 0 or ins.op_kind(0) != iced_x86.OpKind.REGISTER:
        return False
    r = ins.op_register(0)
    return _low_vector(r, lambda x: _X.is_ymm(x) or _X.is_zmm(x)) and _INFO.info(ins).op0_access in WRITES


def switches(instructions: list[iced_x86.Instruction]) -> int:
    """The legacy-SSE XMM writes an iteration that come first after a wide write (:func:`wide_write`),
    the loop wrapping round."""
    armed, n = False, 0
    for k, ins in enumerate(instructions + instructions):   # the second pass sees the state the loop leaves
        if clears(ins):
            armed = False
        elif wide_write(ins):
            armed = True
        elif armed and legacy_xmm_write(ins):
            armed = False
            n += k >= len(instructions)
    return n


def probe(session) -> dict:
    """{"type": "transition", "cycles": the cost or None, "times": {"clean", "dirty"}}; cycles None,
    with the reason, where the core has no AVX or reads no switch."""
    from ...machine.features import this_cpu
    from .mixes import best_of_two
    if not this_cpu().has("AVX"):
        return {"type": RECORD, "cycles": None, "why": "no AVX on this CPU"}
    times = {k: round(best_of_two(session, code, [], 1).value, 3) for k, code in (("clean", CLEAN), ("dirty", DIRTY))}
    cost = times["dirty"] - times["clean"]
    return {"type": RECORD, "cycles": round(cost, 3) if cost > SWITCH else None, "times": times,
            **({} if cost > SWITCH else {"why": f"a 256-bit write before a legacy-SSE write costs "
                                                f"{cost:.2f} cycles, no state switch"})}


@dataclass
class Transition(Bound):
    """A legacy-SSE XMM write after a 256-bit write switches the vector state (transition.py)."""
    cycles: float

    def describe(self) -> str:
        return f"a legacy-SSE XMM write after a 256-bit write: {self.cycles:.0f} cycles an iteration each"

    def floor_of(self, instructions, counts: dict[str, int]) -> tuple[float, str | None]:
        n = switches(instructions)
        return (n * self.cycles, "a legacy-SSE write after a 256-bit write (transition.py)") if n else (0.0, None)


def stored(path) -> tuple[Transition | None, str]:
    """(the bound of a results file's transition record, where it came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no probe of the vector state's transitions"
    if r.get("cycles") is None:
        return None, f"measured by cyclebench ports: {r.get('why') or 'no switch'}"
    t = r.get("times") or {}
    return Transition(float(r["cycles"])), (f"measured by cyclebench ports: {t.get('dirty', 0):.2f} cycles an "
                                            f"iteration with a 256-bit write, {t.get('clean', 0):.2f} with a 128-bit one")
