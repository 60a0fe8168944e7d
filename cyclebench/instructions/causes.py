"""A cause for every mismatch between a measured figure and the published one, from what was
measured (agreement.py gives them); nothing is classified by naming forms.  "Microarchitecture
differs" is never inferred from a difference alone (agreement.py: only from a published table for
the CPU measured here)."""
from __future__ import annotations

from .comparing import (ABS_TOL, LAT_TOL, MASK_EMPTY, TP_TOL, agrees, compared_pairs, issue_bound, ours,
                        process_readings, reference, theirs, unsettled, within)
from . import mask_chain, window
from .copies import rmw_stride
from .session import COUNT_NOTE
from .vsib import vsib_operand

DATA_DEPENDENT_RATIO = 20.0     # a figure this many times the published one: a slow path, suspected


def _carried(doc: dict) -> list[str]:
    return list((doc.get("throughput") or {}).get("carried") or [])


ISSUE_BOUND_CAUSE = ("issue-bound chain: our chain ran at the form's own reciprocal throughput, so it "
                     "cannot show a latency below it; the published figure is lower")


def _issue_bound(doc: dict, our: float | None, their: float | None) -> bool:
    """Our latency is above the published one, and its chain ran no faster than the copies issue
    (from the figures, so that result files written before characterize labelled such pairs read
    the same)."""
    return our is not None and their is not None and our > their and issue_bound(our, doc.get("throughput"))


MEMORY_PAIR_CAUSE = ("published counts no memory pair: uops.info marks its memory and address pairs "
                     "≤ and this figure has none; our register pairs agree")


def _memory_pair_only(doc: dict, rec) -> bool:
    """Our largest latency is a memory or address pair's bound, the published figure has no ``≤``
    (so it counts no such pair) and the largest of our register pairs matches it."""
    v = rec.latency
    if v is None or v.lo_upper_bound or v.hi_upper_bound:
        return False
    pairs = compared_pairs(doc)
    if not pairs:
        return False
    top = max(pairs, key=lambda p: p["value"])
    regs = [p["value"] for p in pairs if not str(p.get("start", "")).startswith(("mem ", "addr "))]
    return (str(top.get("start", "")).startswith(("mem ", "addr ")) and bool(regs)
            and bool(within(max(regs), v.hi, LAT_TOL, ABS_TOL)))


MEMORY_CHAIN_CAUSE = "memory round trip of this core"


def _memory_chain(doc: dict) -> float | None:
    """The exact memory -> memory chain of a read-modify-write form (its own operand), if measured."""
    for p in compared_pairs(doc):
        s, e = str(p.get("start", "")), str(p.get("end", ""))
        if s.startswith("mem ") and s == e and p.get("bound") == "exact":
            return p["value"]
    return None


def _rmw_cause(doc: dict, their: float) -> str:
    """A read-modify-write memory form off the published figure: with the address conventions
    measured (throughput.py), say whether another one reproduces it, or where it lies."""
    tp = doc.get("throughput") or {}
    one = tp.get("one_address") or {}
    if one.get("stable") and agrees(one.get("value"), their, False, TP_TOL):
        return (f"memory RMW convention (copies' addresses): one copy on one address, repeated (uops.info's "
                f"count 1), reads {one['value']:.2f} here, as published; {one['copies']} copies on their own "
                f"addresses {one['with']:.2f}")
    alt = (tp.get("alternative") or {}).get("value")
    width = (tp.get("operand_width_apart") or {}).get("value", tp.get("value"))
    word = (tp.get("word_apart") or {}).get("value")
    if alt is None or any(v is not None and agrees(v, their, False, TP_TOL) for v in (alt, width, word)):
        return "memory RMW convention (copies' addresses)"
    return (f"memory RMW rate of this core: {tp.get('copies')} copies one operand width apart (uops.info's "
            f"addresses) {width:.2f}" + (f", one 8-byte word apart {word:.2f}" if word is not None else "") +
            f", one cache line apart {alt:.2f}; none reaches the published figure")


def _bounds_detail(doc: dict, our, bound, their, their_bound: bool) -> str:
    """Where the published figure stands against the pair's bounds [lower; upper] (a connector's
    share of its loop is known only between its least and its most): inside them the two agree
    as far as the method can tell; outside, one of the two readings is wrong."""
    if our is None or their is None:
        return ""
    if their_bound:
        mine = f"≤{our:.2f}" if bound == "upper" else f"{our:.2f}"
        return f": ours {mine}, published ≤{their:g} (a chain less its connector's least)"
    pair = next((p for p in compared_pairs(doc) if p["value"] == our and p.get("bound") == "upper"), None)
    low = None if pair is None else pair.get("lower")
    if low is None:
        return f": ours ≤{our:.2f}, published {their:g}"
    where = ("within them" if low - ABS_TOL <= their <= our + ABS_TOL else
             "below our lower bound: a contradiction" if their < low else "above our upper bound: a contradiction")
    return f": ours between {low:.2f} and {our:.2f}, published {their:g}, {where}"


def _values_reading(doc: dict, figure: str, our: float | None, their: float | None) -> str:
    """The figures of the operand-value sweep (values.py) and which of them reads the published
    one: the operand values the published measurement ran with, or '' where none was swept."""
    swept = (doc.get("throughput") or {}).get("values") or [] if figure == "throughput" else []
    if not swept or their is None:
        return ""
    text = "; ".join(f"{v['value']:.2f} with {v['values']}" for v in swept if v.get("value") is not None)
    same = [v for v in swept if v.get("value") is not None and agrees(v["value"], their, False, TP_TOL)]
    if same:
        return f": {text}; the published {their:g} is the reading with {same[0]['values']}"
    return f": {text}; none reads the published {their:g}"


REFERENCE_CAUSE = "data-dependent: measured with uops.info's operand values"


def _reference_cause(doc: dict, figure: str, ref: dict, our: float | None, their: float | None) -> str:
    """A figure measured with the published measurement's operand values (comparing.reference)
    that still differs: those values, each configuration's reading, and ours as reported."""
    text = f"{REFERENCE_CAUSE} ({ref['values']})"
    if our is not None and their is not None:
        text += f": {our:.2f} against the published {their:g}"
    if figure == "throughput":
        tp = doc.get("throughput") or {}
        # each configuration's reading, or (one configuration) every operand value swept
        runs = [c for c in ref.get("configs") or tp.get("values") or [] if c.get("value") is not None]
        text += "".join(f"; {c['value']:.2f} with {c['values']}" for c in runs)
        ahead = tp.get("setups_ahead") or {}
        if ahead.get("value") is not None and ref.get("values") == MASK_EMPTY:
            text += (f"; with every lane on, the set-ups ahead of {ahead['copies']} copies {ahead['value']:.2f}, "
                     f"each before its copy {ahead['in_place']:.2f}")
        mine = tp.get("value")
        reported = mine is not None and ref.get("configs") is not None or not tp.get("values")
        return text + (f"; {mine:.2f} as reported, with cyclebench's values" if reported and mine is not None else "")
    by = {}
    for p in ref["pairs"]:
        by.setdefault(p["values"], []).append(p["value"])
    text += "".join(f"; {min(v):.2f} to {max(v):.2f} with {k}" for k, v in by.items())
    memory = [p for p in doc.get("latency") or [] if str(p.get("start", "")).startswith(("mem ", "addr "))]
    if memory and not any(str(p.get("start", "")).startswith("addr ") for p in ref["pairs"]):
        text += ("; uops.info's pairs from the memory operand's address, in its published range, are not "
                 "measured with these values")
    return text


def cause(doc: dict, rec, form, figure: str) -> str:
    """Why our figure differs from the published one, from what was measured (first that applies).
    A data-dependent form whose swept values read no published figure gets the cause the other
    experiments find, the values named beside it (a fewer copy count read 4.50 for ``divpd``, its
    full count the published 5.00, on the same 1.0 operands); "data-dependent" where none does."""
    our, _bound = ours(doc, figure)
    their, _their_bound = theirs(rec, figure)
    ref = reference(doc, figure)
    if ref is not None:
        return _reference_cause(doc, figure, ref, our, their)
    if "data-dependent" not in " ".join(doc.get("notes") or []):
        return _measured_cause(doc, rec, form, figure)
    reading = _values_reading(doc, figure, our, their)
    why = "data-dependent: cost depends on the operand values" + reading
    if "none reads the published" not in reading:
        return why
    other = _measured_cause(doc, rec, form, figure)
    return why if other == "unexplained" else f"{other} (operand values swept{reading})"


def _measured_cause(doc: dict, rec, form, figure: str) -> str:
    our, bound = ours(doc, figure)
    their, their_bound = theirs(rec, figure)
    unstable = unsettled(doc, figure)
    notes = " ".join(doc.get("notes") or [])
    if our is not None and their and our > DATA_DEPENDENT_RATIO * their:
        return "data-dependent (suspected): a slow path with our operand values"
    if figure != "throughput":
        labels = {p.get("label") for p in compared_pairs(doc)}
        if labels & {"dependency broken", "move eliminated"}:
            return "zero idiom / eliminated move"
        if figure == "latency_min" and _vector_mask_gather(form) and their_bound and our is not None \
                and their is not None and their < our:
            return GATHER_MASK_CAUSE
        if figure == "latency_min" and _k_mask_gather(form) and our is not None and their is not None and their < our:
            return GATHER_K_MASK_CAUSE
        if their == 0:
            return _published_zero(doc, our)
        if figure == "latency_max" and COUNT_NOTE in notes and our is not None and their is not None \
                and our < their:
            return COUNT_CAUSE
        if _issue_bound(doc, our, their):
            return ISSUE_BOUND_CAUSE
        if figure == "latency_max" and _memory_pair_only(doc, rec):
            return MEMORY_PAIR_CAUSE
        chain = _memory_chain(doc) if figure == "latency_max" and not their_bound else None
        if chain is not None and our is not None and their is not None and our < their:
            return (f"{MEMORY_CHAIN_CAUSE}: the published largest, exact, is uops.info's memory -> memory "
                    f"chain (the form repeated on one address, its one memory pair without ≤); that same "
                    f"chain reads {chain:.2f} cycles a copy here")
        if bound == "upper" or their_bound:
            return "bound only (upper bound)" + _bounds_detail(doc, our, bound, their, their_bound)
        if unstable:
            return "unstable measurement"
        mask = _mask_chain(doc, their)
        if mask:
            return mask
        return "unexplained"
    carried = _carried(doc)
    if form is not None and rmw_stride(form) is not None and our is not None and their is not None:
        return _rmw_cause(doc, their)      # slower or faster: what each address convention reads
    if any(c not in ("flags", "x87 stack") and not c.startswith("memory") for c in carried):
        return "implicit fixed register chain"
    free = (doc.get("throughput") or {}).get("port_free_breakers") or {}
    if "flags" in carried and free.get("value") is not None and their is not None \
            and agrees(free["value"], their, their_bound, TP_TOL) and not agrees(our, their, their_bound, TP_TOL):
        return (f"{PORT_FREE_CAUSE}: {free['with']:.2f} a copy with uops.info's breaker (test r, r), "
                f"{free['value']:.2f} with a port-free zero idiom ({', '.join(free.get('breakers') or [])}), "
                "as published")
    if "flags" in carried and form is not None and "CF" in form.flags_read:
        return ("carry-flag consumer: copies linked through the flags, broken as uops.info does "
                "(test r, r); inst --why runs a port-free zero idiom and no breaker too")
    if "x87 stack" in carried:
        return "bound only (upper bound): x87 stack chain"
    if bound == "upper" or their_bound:
        return "bound only (upper bound)"
    if unstable:
        return "unstable measurement"
    ports = _port_figure(rec)
    if ports is not None and our is not None and their is not None and agrees(our, ports, False, TP_TOL) \
            and not agrees(ports, their, False, TP_TOL):
        return (f"{PORT_FIGURE_CAUSE}: {rec.throughput_text} (ports / measured), ours matches the port figure")
    limited = window.cause(doc.get("throughput") or {})
    if limited:
        return limited
    runs, varies = process_readings(doc.get("throughput"))
    if varies:       # throughput.py: the fastest is kept
        return (f"{PROCESS_CAUSE}: the same copies read {min(runs):.2f} to {max(runs):.2f} cycles a copy in "
                f"{len(runs)} processes (a process settles in one steady state); the fastest is reported")
    return _copy_count(doc.get("throughput") or {}, their, their_bound) or "unexplained"


ZERO_CAUSE = "published 0 (no dependency) where our chain carries one"
ZERO_UNTESTED = "published 0 (no dependency), not tested here"


def _published_zero(doc: dict, our: float | None) -> str:
    """A published 0 against the no-dependency test (unlinked.py): the pair's chain with the form's
    other inputs broken and lengthened past every other path of its loop still reads ``value``
    (the pair giving our figure where it was tested, else the lowest tested)."""
    tested = [p for p in compared_pairs(doc) if (p.get("no_dependency_test") or {}).get("value") is not None
              and p["no_dependency_test"].get("stable") is not False]
    if not tested:
        return (f"{ZERO_UNTESTED}: no pair of ours was measured lengthened (no one-cycle step fits its start: "
                "memory, an address, a mask, or flags without the carry; or the results predate the test)")
    p = min(tested, key=lambda p: (p["value"] != our, p["no_dependency_test"]["value"]))
    t = p["no_dependency_test"]
    broken = f", the form's other inputs broken ({'; '.join(t['breakers'])})" if t.get("breakers") else ""
    merge = ": the form waits for that operand's old value" if p["start"] == p["end"] else ""
    return (f"{ZERO_CAUSE}: {p['start']} -> {p['end']} with {t['steps']} one-cycle steps ({t['step']}) on its "
            f"start, past every other path of its loop{broken}, still reads {'' if t.get('exact') else '≤'}"
            f"{t['value']:.2f} ({t['cycles']:.2f} cycles a copy less the connector){merge}; "
            f"{len(tested)} pair{'s' if len(tested) > 1 else ''} tested (unlinked.py)")


COPY_COUNT_CAUSE = "fewer copies ran faster here"


def _copy_count(tp: dict, their: float | None, their_bound: bool) -> str | None:
    """A fewer copy count kept (throughput.py: the fastest count, as uops.info keeps its fastest of
    1, 4, 8 and 16) whose full count read the published figure: on uops.info's machine the fewer
    copies ran no faster, here they did.  The full count's readings are this run's and, where the
    fewer count was kept, those of the further processes (``by_process``: the full count's)."""
    by, kept = tp.get("by_copies") or {}, tp.get("copies")
    full = max(by, key=int, default=None)
    if their is None or full is None or not kept or kept >= int(full) or tp.get("value") is None:
        return None
    readings = [v for v in [by[full]] + list(tp.get("by_process") or []) if v is not None]
    if not any(agrees(v, their, their_bound, TP_TOL) for v in readings):
        return None
    lo, hi = min(readings), max(readings)
    span = f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f} to {hi:.2f}"
    return (f"{COPY_COUNT_CAUSE}: {kept} copies read {tp['value']:.2f} a copy, {full} copies {span} "
            f"({len(readings)} reading{'s' if len(readings) > 1 else ''}), as published; uops.info keeps the "
            f"fastest of its counts too, so there the fewer copies ran no faster")


PROCESS_CAUSE = "varies between runner processes"
PORT_FIGURE_CAUSE = "published measurement differs from its own port figure"
PORT_FREE_CAUSE = ("flag breaker's ALU µop: copies linked through the flags are broken as uops.info does, "
                   "with test r, r, which takes an ALU slot beside each copy; the published figure is the "
                   "copies' rate with a breaker that takes none")
GATHER_MASK_CAUSE = ("gather: the published smallest, a bound, is a pair into the vector mask, which cyclebench "
                     "does not measure (vsib.py); the gather clears the mask without waiting for its loads: "
                     "uops.info's index -> mask chain (the gather, four vandpd from the mask into the index, "
                     "the mask set again) runs at the gather's own issue rate, 5.00 cycles a loop on Zen 4, "
                     "so it shows no latency (docs/results/zen4-guest.md)")


GATHER_K_MASK_CAUSE = ("gather: the published smallest is below every pair cyclebench measures; the pairs it does "
                       "not measure are the write mask's (vsib.py), which the gather clears without waiting for its "
                       "loads: uops.info's mask -> mask chain (the gather, its destination zeroed, cRep + 1 kmovq; "
                       "published_chains.py, run by inst --why) reads a few cycles its way on Zen 4 (vgatherqps ymm{k}, "
                       "zmm index: 19.61 and 19.93 cycles a loop in two runs, 4 and 5; xmm index 2, ymm index 1; "
                       "published 3, 0, 1), against the loads' 11 or more (docs/results/zen4-guest.md)")


def _k_mask_gather(form) -> bool:
    """An AVX-512 gather: a VSIB memory operand read (not a scatter's store) under a K write mask."""
    if form is None or getattr(form, "operands", None) is None or vsib_operand(form) is None:
        return False
    return vsib_operand(form).read and any(op.cls == "K" and op.is_mask for op in form.operands)


def _vector_mask_gather(form) -> bool:
    """An AVX2 gather: a VSIB memory operand and a vector mask that the form reads and writes."""
    if form is None or getattr(form, "operands", None) is None or vsib_operand(form) is None:
        return False
    return any(op.cls in ("XMM", "YMM") and op.read and op.write and op.pos > vsib_operand(form).pos
               for op in form.operands)
COUNT_CAUSE = ("shift count: measured with count CL = 1; a count of 0 leaves the flags as they were, and a "
               "flags read after it can take a slow path (inst --why measures every pair with CL = 0), as "
               "uops.info's flags -> CL chain (SETcc CL) runs it whenever the flag is clear")

def _port_figure(rec) -> float | None:
    """The first of a published ``ports / measured`` throughput pair: what the ports its µops
    were counted on allow (uops.info computes it from the port counts of the same run)."""
    text = str(getattr(rec, "throughput_text", "") or "")
    if "/" not in text:
        return None
    try:
        return float(text.split("/")[0].strip().lstrip("≤"))
    except ValueError:
        return None


def _mask_chain(doc: dict, their: float | None = None) -> str | None:
    """A write mask -> mask pair measured uops.info's way too (mask_chain.py): its reading, and
    the one-kmovq loop's, which shows what the long chain adds."""
    for p in compared_pairs(doc):
        pm = p.get("published_method") or {}
        if pm.get("cycles") is None:
            continue
        why = (f"write mask -> mask pair: uops.info's chain, the form and {mask_chain.C_REP + 1} kmovq "
               f"(mask_chain.py), reads {pm['cycles']:.2f} cycles here, {pm.get('value')} after its rounding"
               f"{' (the published figure)' if their is not None and pm.get('value') == their else ''}, "
               f"against {p['value']:.2f} through one register")
        one = pm.get("one_kmovq") or {}
        if one.get("cycles") is not None and one.get("stable") is not False:
            extra = pm["cycles"] - one["cycles"] - mask_chain.C_REP * (pm.get("kmovq") or 1.0)
            why += f"; with one kmovq the loop reads {one['cycles']:.2f} (the form plus 1)"
            if extra > mask_chain.EXTRA_SHOWN:
                why += (f": the long kmovq chain adds {extra:.2f} cycles of its own, a condition of that "
                        "method, not of the form")
            else:
                why += ": the long chain added nothing in this process"
        return why + ("; the five-link loop moves by up to two cycles between processes (mask_chain.py), "
                      "and in its slow state uops.info's reading is one cycle over the form")
    return None


SPREAD_CAUSE = "published figures of the same µops spread"


def _operands(name: str) -> str:
    """The operand list of a published name ('(YMM, YMM)'), or '' for none."""
    i = name.find(" (")
    return name[i:] if i >= 0 else ""


def spread_cause(rec, records: dict | None, our: float | None) -> str | None:
    """A throughput off the published one that uops.info's own figures for the forms with the same
    µops (the same port usage and port figure) and the same operand kinds also read: its
    measurement of such forms spreads (``VPEXPANDB (YMM, YMM)`` 0.67 / 1.00 beside
    ``VPEXPANDQ (YMM, YMM)`` 0.67 / 0.67), so the rate depends on how the core schedules them,
    not on the form.  None when no such sibling reads ours (evidence from the table itself)."""
    ports, first = getattr(rec, "ports_text", ""), _port_figure(rec)
    if not records or not ports or first is None or our is None:
        return None
    kin = [r for r in records.values() if r is not rec and r.ports_text == ports and _port_figure(r) == first
           and _operands(r.name) == _operands(rec.name) and r.throughput is not None]
    hits = [r for r in kin if agrees(our, r.throughput.hi, r.throughput.hi_upper_bound, TP_TOL)]
    if not hits:
        return None
    vals = sorted({r.throughput.hi for r in kin} | {rec.throughput.hi})
    return (f"{SPREAD_CAUSE}: uops.info's figures for the {len(kin) + 1} forms with ports {ports} (port figure "
            f"{first:.2f}) and operands {_operands(rec.name).strip()} read {vals[0]:.2f} to {vals[-1]:.2f}; "
            f"{hits[0].name} reads {hits[0].throughput_text}, as ours {our:.2f}")
