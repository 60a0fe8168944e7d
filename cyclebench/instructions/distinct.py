"""A pair between two written register operands, chained through two registers (uops.info's way).

:func:`instantiate.chain` closes a pair between two operand positions of one family through one
register (``xchg cx, cx`` for ``XCHG (R16, R16)`` op0 -> op1).  When both positions are written,
that one register takes both of the form's writes in turn, so the chain runs through both
results: on Zen 4 ``xchg cx, cx`` reads 2.00 cycles a copy, ``xchg bx, cx; xchg cx, bx`` 1.00.
uops.info's figure is the one with distinct registers (nanoBench ``tools/cpuBench/cpuBench.py``,
``getLatConfigLists``: ``useDistinctRegs``, the ``selfChain`` configuration, halved; the
same-register case is published apart), so such a pair is measured that way too and the lower
reading kept:

* operands of one register class: the self chain, two instances with the registers swapped
  (:func:`self_chain`), cycles per copy;
* of different classes (``XADD (R8H, R8L)``): the connector route with distinct registers
  (characterize.py).
"""
from __future__ import annotations

from .forms import Form
from .instantiate import Instance, LatencyPair, instantiate

METHOD = "self chain (distinct registers)"


def applies(form: Form, pair: LatencyPair) -> bool:
    """The pair joins two different explicit register operands that are both written, and
    chain() would give them one register."""
    s, e = pair.start, pair.end
    if not pair.same_register or s.kind != "op" or e.kind != "op" or s.pos == e.pos:
        return False
    a, b = form.operands[s.pos], form.operands[e.pos]
    return (a.kind == b.kind == "reg" and a.write and b.write and not a.fixed and not b.fixed
            and not a.is_mask and not b.is_mask)


def self_chain(form: Form, pair: LatencyPair) -> list[Instance] | None:
    """Two instances, the second with the pair's registers swapped, so that each one's end feeds
    the other's start (``xchg bx, cx; xchg cx, bx``); None when the classes differ."""
    s, e = form.operands[pair.start.pos], form.operands[pair.end.pos]
    if s.cls != e.cls:
        return None
    base = instantiate(form)
    r1, r2 = base.regs[s.pos], base.regs[e.pos]
    if r1 == r2:
        return None
    try:
        return [instantiate(form, regs={s.pos: r1, e.pos: r2}), instantiate(form, regs={s.pos: r2, e.pos: r1})]
    except ValueError:
        return None
