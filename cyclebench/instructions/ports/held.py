"""Forms that hold the dispatch for whole cycles, read from the model's own figures.

A form slower alone than every resource it uses by a whole cycle or more (the model names no
resource for the rest: a sequence the core issues from microcode, Zen 4's `mpsadbw xmm, [m128],
imm` 3.00 cycles alone on resources it holds 2.00) takes its largest usage, the cycles every
blocker's readings beside it add, from the dispatch whole: nothing else of the block is dispatched
then.  The rest of its time alone is one dispatch cycle, or more, that it shares with the
instructions up to the next such form; those take whole cycles of the front end's width.  An
iteration therefore costs, per held instance, its hold plus the larger of its shared time and
the whole front-end cycles of the slots after it (Zen 4, read as the accuracy bench reads a block
on CPU 1: four `mpsadbw` each followed by k eliminated `mov r64, r64`, 3.00 cycles a copy for k = 4
and 6, 4.00 for 8 and 12; by k `vpand`, 3.00 to k = 6, 4.00 for 7-12; docs/ports-findings.md, "A
form that holds the dispatch").  Only the model's figures decide which forms hold it.  Where the
core deals vector µops in turn, such a form's step takes no pipe by its turn (dealing.py).
"""
from __future__ import annotations

import math

import iced_x86

from .dealing import READS, WRITES
from .model import FRONT_END, Model

LABEL = "dispatch held by a sequenced form (held.py)"
WHOLE = 0.95       # a hold at least this far above every usage is a whole cycle the model names nothing for
EPS = 1e-6


def holds(model: Model) -> dict[str, tuple[float, float]]:
    """form -> (cycles it holds the dispatch alone, cycles it shares with others) for the forms
    whose time alone exceeds every usage by a whole cycle."""
    out = {}
    for f, alone in model.alone.items():
        used = [v for r, v in model.usage.get(f, {}).items() if r != FRONT_END]
        top = max(used, default=0.0)
        if top > 0 and alone - top >= WHOLE:
            out[f] = (top, alone - top)
    return out


def slots(instructions: list[iced_x86.Instruction], dealt: list[int]) -> list[int]:
    """Dispatch slots per instruction: its vector µops (``dealt``, dealing.uops: a compute and a
    transfer to a general register, the flags or memory), one more for a transfer in from a
    general register, at least one (Zen 4: `ucomiss`, `comiss`, `cvttsd2si r64, xmm` and
    `cvtsi2ss xmm, r64` each take two beside a held form, a vector store, `movd r64, xmm`, a
    load-op and a three-part `lea` one)."""
    factory = iced_x86.InstructionInfoFactory()
    out = []
    for ins, d in zip(instructions, dealt):
        info = factory.info(ins)
        addr = {r for m in info.used_memory() for r in (m.base, m.index)}
        used = info.used_registers()
        X = iced_x86.RegisterExt
        into = any(X.is_gpr(u.register) and u.register not in addr and u.access in READS for u in used) and \
            any((X.is_xmm(u.register) or X.is_ymm(u.register) or X.is_zmm(u.register)) and u.access in WRITES
                for u in used)
        out.append(max(1, d + into))
    return out


def bound(forms: list[str], front: list[float], held: dict[str, tuple[float, float]], slots: list[int]) -> float:
    """Cycles an iteration of the block takes at the dispatch (0 without a held form): ``front``
    is each instruction's share of a front-end cycle (predict._instances), ``slots`` its dispatch
    slots (:func:`slots`)."""
    at = [i for i, f in enumerate(forms) if f in held]
    if not at:
        return 0.0
    n = len(forms)
    total = 0.0
    for k, i in enumerate(at):
        j = at[(k + 1) % len(at)] + (n if k + 1 == len(at) else 0)
        gap = sum(front[m % n] * slots[m % n] for m in range(i + 1, j))
        hold, shared = held[forms[i]]
        total += hold + max(shared, math.ceil(gap - EPS))
    return total
