"""A memory operand's time from its address registers by addressing mode: measured, not assumed.

cyclebench inst measures a form with its memory operand as ``[r14+0x40]``, a base and a
displacement, and its figure from the address registers (a load's load-to-use time) is for
that mode.  Other modes can take longer from one of their registers.  Zen 4, pointer chases
(``cyclebench asm --cpu 1``, cycles an iteration): ``mov rax, [rax]``, ``[rax+0x1000]`` and
``[rax+r13]`` 4.00, but ``[rax+r13*4]`` 5.00 (the chain through the base, beside a scaled index),
``[rax+r13+8]`` 5.00 (beside an index and a displacement: three parts), ``[r13+rax*1]``,
``[r13+rax*1+8]`` and ``[rdi*8]`` 5.00 (the chain through the index).
BHive blocks that chase through such operands read a cycle over the chain bound without it
(``movsxd rax, [rax+r13*4]; add rax, rdi`` 7.00 cycles, predicted 6.00).

:func:`probe` times four chases, through a base alone, through a base beside a scaled index,
through a base beside an index and a displacement, and through an index, and keeps what the last
three take past the first as a results-file record
of ``cyclebench ports`` (type ``address``).  :class:`AddressCost` is the rule predict() takes
from it: an instruction's time from such a base (the larger cost where a scaled index and a
displacement are both there) or index register raised by it (dataflow.py's
:data:`~dataflow.ADDRESS` keys), for the chain bound and the simulation.  A LEA keeps its own
figures (cyclebench inst measures its base and index apart); a file without the record charges
nothing more.
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from .bound import Bound
from .dataflow import ADDRESS, mnemonic

RECORD = "address"
INIT = ["mov rax, r14", "mov qword ptr [r14], r14", "mov qword ptr [r14+8], r14",
        "xor r13d, r13d"]                      # [r14] and [r14+8] hold r14; r13 = 0
CHASES = {"base": "mov rax, qword ptr [rax]",
          "scaled": "mov rax, qword ptr [rax+r13*4]",
          "three": "mov rax, qword ptr [rax+r13*1+8]",
          "index": "mov rax, qword ptr [r13+rax*1]"}
COSTS = ("scaled", "three", "index")
FIELDS = COSTS        # a record without one of them is measured again (run.record)
NOISE = 0.1           # cycles: a difference below this is no cost of the mode


def costs(times: dict[str, float]) -> tuple[float, ...]:
    """Cycles past the base chase through a base beside a scaled index, beside an index and a
    displacement, and through an index."""
    return tuple(round(d, 3) if (d := times[k] - times["base"]) >= NOISE else 0.0 for k in COSTS)


def probe(session) -> dict:
    """The probe on this CPU (``session``: an instructions.session.Session), as the record
    {"type": "address", "scaled", "three", "index", "times"}."""
    times = {k: session.measure([code], INIT).value for k, code in CHASES.items()}
    return {"type": RECORD, **dict(zip(COSTS, costs(times))), "times": {k: round(v, 3) for k, v in times.items()}}


def _later(latency, extra: dict[str, float]):
    """``latency`` (as dataflow.chain_bound takes it) with its figure from the address registers
    raised by ``extra`` per :data:`~dataflow.ADDRESS` key."""
    if not isinstance(latency, tuple):
        latency = (latency, latency)
    by = dict(latency[2]) if len(latency) > 2 else {}
    by.update({k: latency[1] + e for k, e in extra.items()})
    return (latency[0], latency[1], by, *latency[3:])


@dataclass
class AddressCost(Bound):
    """A memory operand's time from a base beside a scaled index, beside an index and a
    displacement, and from an index, past its figure from a base (address.py)."""
    scaled: float
    three: float
    index: float

    def extra(self, ins: iced_x86.Instruction) -> dict[str, float]:
        """:data:`~dataflow.ADDRESS` key -> cycles an instruction's memory operand adds from that
        register (none for a LEA, an instruction without one, or a RIP-relative one)."""
        none = (iced_x86.Register.NONE, iced_x86.Register.RIP)
        if mnemonic(ins) == "LEA" or not any(ins.op_kind(i) == iced_x86.OpKind.MEMORY for i in range(ins.op_count)):
            return {}
        base, index = ADDRESS
        out = {}
        if ins.memory_index not in none and self.index:
            out[index] = self.index
        if ins.memory_base not in none and ins.memory_index not in none:
            cost = max(self.scaled if ins.memory_index_scale > 1 else 0.0,
                       self.three if ins.memory_displacement else 0.0)
            if cost:
                out[base] = cost
        return out

    def delayed(self, instructions, forms: list[str], latency: list) -> list:
        return [_later(v, e) if (e := self.extra(ins)) else v for ins, v in zip(instructions, latency)]

    def describe(self) -> str:
        return (f"a memory operand takes {self.scaled:.2f} cycles more from a base beside a scaled index, "
                f"{self.three:.2f} beside an index and a displacement, {self.index:.2f} more from an index")


def stored(path) -> tuple[AddressCost | None, str]:
    """(the rule, where its figures came from) of a results file; None where it holds no probe or
    the modes cost nothing more."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no addressing-mode probe"
    cost = AddressCost(*(float(r.get(k) or 0.0) for k in COSTS))
    t = r.get("times") or {}
    return (cost if cost.scaled or cost.three or cost.index else None), (
        f"measured by cyclebench ports: chases through a base {t.get('base')}, beside a scaled index "
        f"{t.get('scaled')}, beside an index and a displacement {t.get('three')}, through an index "
        f"{t.get('index')} cycles")
