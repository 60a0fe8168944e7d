"""Whether a latency pair carries any dependency at all: its chain lengthened past every other path.

A pair's chain loop runs at the slowest cycle through it.  Where the pair carries nothing, that
cycle is another one: the form's own chain through another operand (``cmpxchg [m], ebx``:
op1 -> rax closed with ``add rbx, rax; sub rbx, rax`` runs at rax's own 3 cycles), a path
through memory into the next copy, or the copies' issue interval; less the connector it still
reads a cycle or more.  uops.info lengthens every chain with ``cRep`` one-cycle steps on the
start operand, breaks the form's other inputs, and reads ``int(cycles + .2)`` less the chain's
latency: 0 there means the loop ran no longer than its own steps (nanoBench
``tools/cpuBench/cpuBench.py``, ``getLatConfigLists`` and ``getLatencies``).

:func:`test_pairs` does the same on the pairs that may be hidden so: the chain as first measured,
then the form's other read-written operands broken (isolate.py) and ``k`` one-cycle steps on the
start (``add``/``sub`` of a scratch register on a general register, ``vpand`` of a vector register
with itself, ``cmc`` on the carry flag), ``k`` past every reading the pair's loop has had.  A loop
of ``R`` cycles then bounds the pair by ``R`` less the connector's least and ``k`` (each step takes
a cycle at least): below ``ZERO_BELOW`` the pair carries nothing and reads 0 with
:data:`UNLINKED`; otherwise the figure is kept under ``no_dependency_test`` (causes.py gives it
where uops.info publishes 0) and replaces the pair's where it is lower, exact and settled.
"""
from __future__ import annotations

from typing import Callable

from . import connectors as C
from .comparing import ABS_TOL, LAT_TOL, published_pair
from .forms import Form, flags_in
from .instantiate import chain, instantiate
from .issue_fill import FILLED
from .renaming import DEPENDENCY_BROKEN, MOVE_ELIMINATED, ZERO_BELOW
from .session import EXACT_SLACK, Session, used_gprs

UNLINKED = ("no dependency: lengthened past every other path of its loop, with the form's other inputs "
            "broken, the chain runs no longer than its one-cycle steps")
MAX_TESTED = 4          # pairs per form, smallest first (the smallest latency is the figure compared)
MAX_TIED = 8            # a level at the MAX_TESTED cut is tested whole, up to this many pairs
MAX_STEPS = 100
_METHODS = ("chain", "chain + connector", "chain, other operands broken",
            "chain + connector, other operands broken")
_ZERO_LABELS = (DEPENDENCY_BROKEN, MOVE_ELIMINATED)


def steps_for(form: Form, pair, code: str, k: int) -> tuple[list[str], str] | None:
    """``k`` one-cycle steps on the pair's start (their lines, their step name), or None where
    none fits (memory, an address, a mask or MMX register, flags other than the carry)."""
    s = pair.start
    if s.kind == "flags":       # a carry flag the form reads, or keeps with a count of 0 in CL (flags_in)
        reads = "CF" in form.flags_read or (not form.flags_read and flags_in(form) and "CF" in form.flags_written)
        return (["cmc"] * k, "cmc") if reads else None
    if s.kind == "implicit":
        reg = s.register
    elif s.kind == "op" and form.operands[s.pos].kind == "reg":
        inst = chain(form, pair) or instantiate(form)
        reg = inst.regs.get(s.pos)
    else:
        return None
    try:
        port = C.port_for_register(reg) if reg else None
    except (KeyError, ValueError):
        return None
    if port is None or port.is_mask:
        return None
    if port.kind == "VEC":
        full = C.vec(reg, port.bits)
        return [f"{C.vand(full)} {full}, {full}, {full}"] * k, f"vand{port.bits}"
    if port.kind != "GPR":
        return None
    g = C.gpr(reg)
    if g in ("rsp", "rbp", C.MEM_BASE):
        return None
    t = C.scratch_gpr(used_gprs(code) | {g})
    return [f"add {g}, {t}", f"sub {g}, {t}"] * (k // 2), "alu"


def candidates(doc: dict) -> list[tuple[int, int]]:
    """(level, index) of the pairs to test, smallest first: measured, compared, above ZERO_BELOW,
    through a chain this module can lengthen (not the distinct-register or same-register variants).
    Readings within the latency tolerance of each other are one level, in pair order: a difference
    in the fourth decimal (1.0001 against 0.9999) must not pick which of two equal pairs is tested."""
    form = doc.get("form", "")
    got = sorted((p["value"], i) for i, p in enumerate(doc["latency"])
                 if p.get("value") is not None and p["value"] >= ZERO_BELOW and p.get("method") in _METHODS
                 and p.get("label") not in _ZERO_LABELS and p.get("stable") is not False
                 and published_pair(p, form))
    out, level, first = [], -1, None
    for v, i in got:
        if first is None or v > first + max(LAT_TOL * first, ABS_TOL):
            level, first = level + 1, v
        out.append((level, i))
    return sorted(out)


def steps_needed(p: dict, tp: dict) -> int:
    """An even step count past every reading this pair's loop has had, and past the issue interval:
    the steps then outlast any other cycle through the loop."""
    seen = [p.get("value"), tp.get("value"), (p.get("isolated") or {}).get("value"),
            (p.get("isolated") or {}).get("without"), (p.get("filled") or {}).get("without")]
    conn = p.get("connector") or {}
    top = max(v for v in seen if v is not None) + (conn.get("latency_upper") or conn.get("latency_lower") or 0)
    return min(MAX_STEPS, 2 * (1 + round(top)))


def reading(cycles_less_connector: float, k: int, step_lower: float) -> float:
    """The pair's upper bound from the lengthened loop: the loop less the connector's least (already
    taken off) and the steps' least; the pair's latency is at most that."""
    return cycles_less_connector - k * step_lower


def _lengthened(session: Session, form: Form, pair, pattern: int, extra: list[str],
                measure_pair: Callable) -> tuple[float, dict] | None:
    """(the lengthened loop's cycles less the connector's least, its document), read again once if
    unsettled; None where it failed or stayed unsettled."""
    for _ in range(2):
        again, _ = measure_pair(session, form, pair, pattern, extra)
        if again.get("value") is not None and again.get("stable") is not False:
            return again.get("bound_read", again["value"]), again    # below a cycle: the loop's own figure
    return None


def test_pairs(session: Session, form: Form, pairs: list, doc: dict, pattern: int,
               measure_pair: Callable) -> None:
    """The pairs of :func:`candidates` (at most MAX_TESTED) measured lengthened, as the module
    docstring says: each one, so that no pair keeps the figure of another path of its loop
    (``cmpxchg [m], ebx``: op1 -> rax read through memory into the next copy, op1 -> flags at rax's
    pace).  A reading that would change the pair is taken twice and the larger kept: one loop
    read fast by a clock that moved during it (a 5-cycle loop read as 4.28 on a busy Zen 4 host)
    would otherwise pass for a missing dependency."""
    tp, tested, last = doc.get("throughput") or {}, 0, None
    for level, i in candidates(doc):
        p, pair = doc["latency"][i], pairs[i] if i < len(pairs) else None
        # past the cut only the rest of the last level tested: equal pairs are tested alike
        if tested >= MAX_TIED or (tested >= MAX_TESTED and level != last):
            break
        if pair is None or str(pair) != f"{p['start']} -> {p['end']}":
            continue
        k = steps_needed(p, tp)
        try:
            steps = steps_for(form, pair, p.get("code") or "", k)
        except C.NoConnector:
            steps = None
        if steps is None:
            continue
        tested, last = tested + 1, level
        lines, name = steps
        breakers = list((p.get("isolated") or {}).get("breakers") or [])
        lo, hi = session.step_bounds(name)
        read = _lengthened(session, form, pair, pattern, lines + breakers, measure_pair)
        if read is None:
            continue
        cycles, again = read
        exact = again.get("bound") == "exact" and hi is not None and hi - lo <= EXACT_SLACK
        value = max(0.0, reading(cycles, len(lines), lo))
        moves = value < ZERO_BELOW or (exact and value * (1 + LAT_TOL) + ABS_TOL < p["value"])
        second = _lengthened(session, form, pair, pattern, lines + breakers, measure_pair) if moves else None
        if second is not None:
            cycles = max(cycles, second[0])
            value = max(0.0, reading(cycles, len(lines), lo))
        p["no_dependency_test"] = {"steps": len(lines), "step": name, "breakers": breakers, "cycles": cycles,
                                   "value": value, "exact": exact, "stable": True, "code": again.get("code"),
                                   "readings": 1 if second is None else 2}
        if moves and second is None:        # the confirming reading failed: nothing changes
            continue
        if value < ZERO_BELOW:
            p.update(value=0.0, bound="exact", lower=0.0, upper=0.0, label=UNLINKED, code=again.get("code"))
            continue
        if exact and value * (1 + LAT_TOL) + ABS_TOL < p["value"]:
            value = C.whole_cycles(value)
            p["no_dependency_test"]["without"] = p["value"]
            p.update(value=value, bound="exact", lower=value, upper=value, label=FILLED, code=again.get("code"))
