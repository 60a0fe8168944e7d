"""uops.info's chain from a write mask into a mask destination, measured beside ours.

A form that writes a mask register under a write mask (``vptestmb k1{k2}, ymm1, [m]``,
``vpcmpq k1{k2}, ...``) has a pair from the write mask to the destination.  We chain it through one
register (``vptestmb k1{k1}, ...``: the form alone).  uops.info closes it with ``kmovq k_mask,
k_dest`` and ``cRep`` more ``kmovq k_mask, k_mask`` and subtracts ``cRep + 1`` times the latency
of ``kmovq k1, k1`` (nanoBench ``tools/cpuBench/cpuBench.py``, ``getLatConfigLists``, the ``K``
to ``K`` case; ``cRep = 4`` for a form of throughput at most 2), taking every reading to whole
cycles as ``int(cycles + .2)``.  On Zen 4 that chain reads more than the sum of its parts
(``kmovq k3, k1; 4*kmovq k3, k3; vptestmb k1{k3}, ymm1, [m]``: 10.61 cycles against 5 + 4, while
``kmovq k3, k1; vptestmb k1{k3}, ymm1, [m]`` reads 5.00), which makes the published pair one cycle
above ours (``VPTESTMB (K, K, YMM, M256)``: ZEN4 ``[4;5]``).

The extra cycles come from the chain's length, not from the form: a compare that writes a mask
followed by ``n`` kmovq (``vpcmpeqd k2{k1}, ymm1, dword ptr [r14]{1to8}; kmovq k1, k2; kmovq k1,
k1 ...``) reads 5.00, 6.00, 7.00 cycles for n = 1, 2, 3 (the form's 4 plus one a kmovq), then
9.17, 10.60, 11.43 and 14.88 for n = 4, 5, 6, 9; its register form 8.21 and 9.46 for n = 4, 5;
``kandq`` with five kmovq 6.00 (additive).  uops.info's chain is n = cRep + 1 = 5.  The long
chain is also not steady between processes: the same loop read 8.63, 9.25, 9.77 and 10.60 in
different runs, i.e. 3 to 5 after uops.info's rounding.  So the pair keeps its own figure, and
both loops, uops.info's (:func:`configuration`) and the one-kmovq loop (:func:`short`), are kept
with it as ``published_method``: the evidence agreement.py gives for a mismatch on such a pair.
"""
from __future__ import annotations

from .forms import Form
from .instantiate import Instance, LatencyPair, instantiate

C_REP = 4                       # cpuBench's cRep for a form whose TP_single is at most 2
EXTRA_SHOWN = 0.2               # cycles the long chain adds beyond its links before a cause names them
KMOVQ = "kmovq k1, k1"          # the step uops.info measures (its basicLatency['KMOVQ'])
MASK, DEST = "k1", "k2"


def applies(form: Form, pair: LatencyPair) -> bool:
    """The pair goes from the form's write mask to a mask register it writes."""
    s, e = pair.start, pair.end
    if s.kind != "op" or e.kind != "op" or s.pos == e.pos:
        return False
    start, end = form.operands[s.pos], form.operands[e.pos]
    return start.is_mask and not end.is_mask and end.kind == "reg" and end.notation == "K"


def configuration(form: Form, pair: LatencyPair) -> tuple[Instance, list[str]]:
    """(instance, code): the form writing DEST under MASK, then the kmovq chain back to MASK."""
    inst = instantiate(form, regs={pair.end.pos: DEST}, mask_reg=MASK)
    return inst, [inst.text, f"kmovq {MASK}, {DEST}"] + [f"kmovq {MASK}, {MASK}"] * C_REP


def short(code: list[str]) -> list[str]:
    """uops.info's loop cut to one kmovq (``kmovq k_mask, k_dest``): additive here."""
    return code[:2]


def whole(cycles: float) -> int:
    """uops.info's reading of a chain: ``int(cycles + .2)``."""
    return int(cycles + .2)


def reading(cycles: float, kmovq: float) -> float:
    """The pair's latency as uops.info computes it from the chain's and kmovq's cycles."""
    return float(max(0, whole(cycles) - whole(kmovq) * (C_REP + 1)))
