"""Latency chains that run at the form's own issue interval, and the same chains filled past it.

A pair's chain costs max(its latency, the form's issue interval) per copy, so where the two are
equal the chain cannot tell them apart (``RCL (R64, 0)``: chain 4.00 = throughput 4.00, while
uops.info gives the pair 2).  :func:`mark_issue_bound` marks such exact latencies as upper bounds
(only where the throughput is exact and nothing was carried between its copies: then it is the
issue interval).  :func:`filled_past_issue` measures such a chain again with one-cycle steps after
it, enough to make the loop longer than the issue interval, and takes the steps off, as uops.info
lengthens every chain (``cRep = 2 + 2 * ceil(TP_single / 2)``: ``MOVSX`` on a general register,
``CMC`` on the carry flag): ``RCR (R32, 0)`` reads 3.00 per link alone and 2 once filled.

A latency-only run (``cyclebench inst --latency-only``) has no throughput to compare with:
:func:`without_throughput` reads the copies' throughput for the check alone where a chain reads
above a cycle, and marks and fills as above.

The filled measurement also runs for a chain as long as a throughput that is only an upper bound
because breakers ran between its copies (``rcr rbx, 2``: the flags carried, ``test`` between the
copies, 3.00 a copy, its chains 3.00 too): the issue interval is then at most that figure, and the
fill alone decides; nothing is marked.

It also runs for a pair from a register or the flags of a form that reads and writes memory: every
copy of the chain goes through the same address, so the memory round trip (a store forwarded to
the next copy's load) can bound the chain instead of the pair, e.g. ``and [m], bl`` -> flags 2.33
a link, ``lock adc [m], 2`` flags -> flags 8.10.  uops.info's chains are long enough (their steps
outlast the round trip) to show the pair: 1 for both.  The fill is then at least as long as the
chain first read, which outlasts whatever bounded it.  Steps: ``add``/``sub`` of a scratch register on a pair
that starts in a general register (they write the flags, breaking any flag chain), ``cmc`` on a
carry flag -> carry flag pair (the form's other operands broken as its chain was).
"""
from __future__ import annotations

from typing import Callable

from . import connectors as C
from .comparing import ABS_TOL, LAT_TOL, issue_bound
from .copies import rmw_stride
from .forms import Form
from .instantiate import chain, instantiate
from .session import EXACT_SLACK, Session, used_gprs

ISSUE_BOUND = "issue-bound"
ISSUE_NOTE = (f"{ISSUE_BOUND}: the chain ran at the form's own reciprocal throughput; "
              "the pair's latency is at most that (≤)")
FILLED = "one-cycle steps added past the issue interval"
_METHODS = ("chain", "chain + connector", "chain, other operands broken",
            "chain + connector, other operands broken")


def mark_issue_bound(doc: dict) -> bool:
    """Mark exact latencies that only show the issue interval as upper bounds; True if any."""
    hit = False
    for p in doc["latency"]:
        if p["bound"] == "exact" and not p.get("label") and issue_bound(p["value"], doc.get("throughput")):
            p["bound"], p["label"], hit = "upper", ISSUE_BOUND, True
    return hit


def largest(pairs: list[dict]) -> dict | None:
    """The document's ``latency_max``: the largest measured pair, an exact one before a bound."""
    measured = [p for p in pairs if p["value"] is not None]
    if not measured:
        return None
    top = max(measured, key=lambda p: (p["value"], p["bound"] == "exact"))
    return {"value": top["value"], "bound": top["bound"], "pair": f"{top['start']} -> {top['end']}"}


def follow_throughput(doc: dict, tp: dict | None) -> None:
    """``doc``'s issue-bound labels, their note and its largest latency as the throughput ``tp`` (as
    the latencies see it: values.latency_view) gives them, where a reading of the copies was kept
    after the latencies were marked (bulk.py's pass on each CPU): a chain slower than the copies now
    issue is the pair's latency again, exact, and one the new figure equals is marked."""
    for p in doc["latency"]:
        if p.get("label") == ISSUE_BOUND:           # only exact pairs are ever marked
            p["bound"], p["label"] = "exact", None
    hit = mark_issue_bound({"latency": doc["latency"], "throughput": tp})
    doc["notes"] = [n for n in doc.get("notes") or [] if n != ISSUE_NOTE] + ([ISSUE_NOTE] if hit else [])
    doc["latency_max"] = largest(doc["latency"]) or doc.get("latency_max")


def _memory_carried(form: Form, pair) -> bool:
    """A pair from a register or the flags to one of them, of a form that reads and writes its
    memory operand: the chain's copies share that address (see the module docstring)."""
    return (rmw_stride(form) is not None and pair.start.kind in ("op", "implicit", "flags")
            and pair.end.kind in ("op", "implicit", "flags")
            and all(r.kind != "op" or form.operands[r.pos].kind == "reg" for r in (pair.start, pair.end)))


def _candidate(p: dict, tp: dict, memory: bool = False) -> bool:
    """An issue-bound pair, an exact one as long as a throughput that breakers between the copies
    made an upper bound (then the interval is at most that), or (``memory``) an exact one of a
    chain through a read-modify-write memory operand longer than a cycle."""
    if p.get("value") is None or p.get("method") not in _METHODS:
        return False
    if p.get("label") == ISSUE_BOUND:
        return True
    if not p.get("label") and p["bound"] == "exact" and memory and p["value"] > 1 + LAT_TOL:
        return True
    v = tp.get("value")
    return (not p.get("label") and p["bound"] == "exact" and v is not None and bool(tp.get("carried"))
            and tp.get("bound") == "upper" and 1 + LAT_TOL < p["value"] <= v * (1 + LAT_TOL) + ABS_TOL)


def _fill(form: Form, pair, p: dict, steps: int) -> tuple[list[str], str] | None:
    """(lines after the chain, their step kind), or None when no step fits the pair."""
    if pair.start.kind == pair.end.kind == "flags":
        if "CF" not in form.flags_read & form.flags_written:
            return None
        return list((p.get("isolated") or {}).get("breakers") or []) + ["cmc"] * steps, "cmc"
    inst = chain(form, pair) or instantiate(form)
    reg = inst.regs.get(pair.start.pos) if pair.start.kind == "op" else pair.start.register
    try:
        g = C.gpr(reg) if reg and C.port_for_register(reg).kind == "GPR" else None
    except (KeyError, ValueError):
        g = None
    if g is None or g in ("rsp", C.MEM_BASE):
        return None
    t = C.scratch_gpr(used_gprs(inst.text, *inst.init) | {g})
    return [f"add {g}, {t}", f"sub {g}, {t}"] * (steps // 2), "alu"


def filled_past_issue(session: Session, form: Form, pairs: list, doc: dict, pattern: int,
                      measure_pair: Callable) -> None:
    """Each candidate pair measured again with one-cycle steps after its chain (see the module
    docstring); ``measure_pair(session, form, pair, pattern, extra)`` is characterize's."""
    tp = doc.get("throughput") or {}
    v = tp.get("value")
    if v is None:
        return
    for pair, p in zip(pairs, doc["latency"]):
        memory = _memory_carried(form, pair)
        if not _candidate(p, tp, memory):
            continue
        # past the issue interval, and for a memory chain past the chain as first read
        steps = 2 * (1 + round(max(v, p["value"] if memory else 0)))     # 2.9997 is 3
        fill = _fill(form, pair, p, steps)
        if fill is None:
            continue
        lo, hi = session.step_bounds(fill[1])
        if hi is None or hi - lo > EXACT_SLACK:
            continue
        again, _ = measure_pair(session, form, pair, pattern, fill[0])
        if again["stable"] is False:        # read during a burst: once more
            again, _ = measure_pair(session, form, pair, pattern, fill[0])
        if again["value"] is None or again["stable"] is False:
            continue
        value = again["value"] - steps * lo
        if value * (1 + LAT_TOL) + ABS_TOL < p["value"] and value >= 1 - LAT_TOL and \
                again["value"] > v * (1 + LAT_TOL):
            exact = again["bound"] == "exact"
            value = C.whole_cycles(value) if exact else value
            p.update(filled={"steps": steps, "step": fill[1], "cycles": again["value"], "without": p["value"]},
                     value=value, bound=again["bound"], label=FILLED, code=again["code"], upper=value,
                     lower=value if exact else min(p.get("lower") or value, value))


def self_latencies(pairs: list, measured: list[dict]) -> dict[int, float]:
    """Operand position -> its measured latency to itself (the throughput tells a rotation-bound
    figure by it)."""
    return {pair.start.pos: p["value"] for pair, p in zip(pairs, measured)
            if pair.start.kind == pair.end.kind == "op" and pair.start.pos == pair.end.pos
            and p["value"] is not None}


def without_throughput(session: Session, form: Form, pairs: list, doc: dict, pattern: int,
                       measure_pair: Callable) -> None:
    """The same marks and fills for a latency-only document, which has no throughput to compare
    its chains with: without them a chain that ran at the form's issue interval stands as the
    pair's latency (Zen 3 guest: ``BSF (R32, R32)`` op0 -> op0 read 3.34, its copies 3.00 each,
    where the fill reads 2.00).  Where a chain reads above a cycle, the copies' throughput is read
    for the check alone: a note gives it, and the document keeps no throughput figure."""
    if not any(p.get("value") is not None and p["bound"] == "exact" and p.get("method") in _METHODS
               and p["value"] > 1 + LAT_TOL for p in doc["latency"]):
        return
    from .throughput import measure_throughput
    tp = measure_throughput(session, form, self_latencies(pairs, doc["latency"]), pattern=pattern)
    if tp.get("value") is None:
        return
    view = {"latency": doc["latency"], "throughput": tp}
    mark_issue_bound(view)
    filled_past_issue(session, form, pairs, view, pattern, measure_pair)
    doc["notes"].append(f"the copies' throughput, {tp['value']:.2f} cycles ({tp['bound']}), was read to check "
                        "the chains against the issue interval; it is no figure of this latency-only run")
    if any(p.get("label") == ISSUE_BOUND for p in doc["latency"]):
        doc["notes"].append(ISSUE_NOTE)
