"""Dependencies the register renamer removes: zero idioms and eliminated moves.

Every µop that executes has a latency of at least one cycle, so a dependency chain that runs at
less than ``ZERO_BELOW`` cycles per copy carries no dependency at all: what was timed is the
chain's throughput.  Such a pair is reported as latency **0** with a label, as uops.info reports
it, instead of a fraction such as 0.17 or 0.25:

* ``move eliminated``: the form copies one register to another (one register source, a
  write-only destination of the same family, no flags written): the renamer points the
  destination at the source's physical register;
* ``dependency broken``: any other form, e.g. ``xor r, r``, ``sub r, r``, ``vpxor x, x, x``,
  ``vpcmpgtd x, x, x``: with equal inputs the result is a constant, and the renamer does not wait
  for the inputs.

The **same-register case is kept apart**: a chain through two operand positions needs one
register for both (``xor rax, rax``), so its pair is marked ``same_register``; and a form with
three or more register operands of one family (``vpxor x1, x2, x3``) gets one more entry, the
instance with all of them the same register, labelled ``same register``.  The other pairs keep
distinct registers, so ``vpxor`` reads ``[0;1]``: 0 when all registers are equal, 1 otherwise.

A form that writes a mask register from two or more vector sources (``vpcmpgtq k1, x1, x2``)
gets that entry too, its sources the same register (``vpcmpgtq k1, x1, x1``: always 0), the
chain closed back to the source by a connector (K -> VEC).  Zen 4 measured: ``vpcmpgtq k1, xmm1,
xmm1; vpmovm2q xmm1, k1`` 0.33 cycles, the form alone 0.17 a copy against 0.50 with distinct
sources; ``vpcmpeqd`` and ``vptestmq`` with equal sources keep their 4-cycle chain.  uops.info
measures it the same way (its ``_same_reg`` configurations: ``VPCMPGTQ_EVEX (K, XMM, XMM)``
``[0;3]``).
"""
from __future__ import annotations

from typing import NamedTuple

from .forms import Form, Operand
from .instantiate import Instance, LatencyPair, instantiate, register_id, sized_alias
from .operands import FAMILY

ZERO_BELOW = 0.75
MOVE_ELIMINATED = "move eliminated"
DEPENDENCY_BROKEN = "dependency broken"
# mask registers count too: ``kxorb k1, k1, k1`` is a zero idiom on some cores (Zen 4: six per
# cycle, against two with distinct registers); only the write mask ({k}) stays out
_FAMILY = dict(FAMILY)


def no_dependency(cycles_per_copy: float | None) -> bool:
    return cycles_per_copy is not None and cycles_per_copy < ZERO_BELOW


def _registers(form: Form) -> list[Operand]:
    return [op for op in form.operands
            if op.kind == "reg" and not op.fixed and not op.is_mask and op.cls in _FAMILY]


def is_move(form: Form) -> bool:
    """One register source copied to a write-only register destination of the same family."""
    regs = _registers(form)
    srcs = [op for op in regs if op.read]
    dsts = [op for op in regs if op.write]
    return (len(regs) == 2 and len(srcs) == 1 and len(dsts) == 1 and not dsts[0].read
            and _FAMILY[srcs[0].cls] == _FAMILY[dsts[0].cls] and not form.flags_written
            and all(op.kind in ("reg",) for op in form.operands if not op.is_mask))


def label(form: Form) -> str:
    return MOVE_ELIMINATED if is_move(form) else DEPENDENCY_BROKEN


def _group(form: Form) -> list[Operand]:
    """The register operands of the (first written register) destination's family."""
    regs = _registers(form)
    dst = next((op for op in regs if op.write), None)
    return [] if dst is None else [op for op in regs if _FAMILY[op.cls] == _FAMILY[dst.cls]]


def same_register_chain(form: Form, pair: LatencyPair) -> bool:
    """chain() gave the pair's two operand positions one register, and they are all the form's
    register operands of that family (``xor rax, rax``): the same-register case."""
    group = {op.pos for op in _group(form)}
    return (pair.start.kind == pair.end.kind == "op" and pair.start.pos != pair.end.pos
            and group == {pair.start.pos, pair.end.pos})


class SameRegister(NamedTuple):
    start: str              # the label of the shared register (``same register (op1=op2)``)
    end: str                # the destination's label
    inst: Instance
    src: int                # operand positions: one of the shared sources, the destination
    dst: int

    @property
    def closed(self) -> bool:
        """The destination is of another family than the sources: a connector closes the chain."""
        return _FAMILY[self.inst.form.operands[self.src].cls] != _FAMILY[self.inst.form.operands[self.dst].cls]


def _mask_sources(form: Form) -> tuple[list[Operand], Operand | None]:
    """(vector sources, mask destination) of a form that writes a mask register (not through a
    write mask) from two or more read-only vector registers; ([], None) otherwise."""
    regs = _registers(form)
    dst = next((op for op in regs if op.write), None)
    if dst is None or _FAMILY[dst.cls] != "K" or dst.read:
        return [], None
    srcs = [op for op in regs if op.read and not op.write and _FAMILY[op.cls] == "VEC"]
    return (srcs, dst) if len(srcs) >= 2 else ([], None)


def same_register_case(form: Form) -> SameRegister | None:
    """The instance with every register operand of the destination's family the same register
    (three or more of them; fewer: a pair's chain covers it), or with a mask destination's vector
    sources the same register; None when the form has neither."""
    group = _group(form)
    srcs, dst = _mask_sources(form)
    if len(group) >= 3 and any(op.read for op in group):
        dst = next(op for op in group if op.write)
        srcs = group
    elif dst is None:
        return None
    src = next(op for op in srcs if op.read)
    base = instantiate(form)
    reg = base.regs[(dst if dst in srcs else src).pos]
    try:
        regs = {op.pos: sized_alias(register_id(reg), op.cls) for op in srcs}
        if dst not in srcs:     # a mask destination: not the write mask's k1 (no chain through it)
            regs[dst.pos] = "k2"
        inst = instantiate(form, regs=regs)
    except (ValueError, KeyError):
        return None
    names = "=".join(f"op{op.pos}" for op in srcs)
    return SameRegister(f"same register ({names})", f"op{dst.pos} ({dst.notation})", inst, src.pos, dst.pos)


def zero_update(form: Form, cycles_per_copy: float, same_register: bool) -> dict:
    """The pair fields for a chain that carries no dependency."""
    return {"value": 0.0, "bound": "exact", "lower": 0.0, "upper": 0.0, "label": label(form),
            "same_register": same_register, "cycles_per_copy": cycles_per_copy}
