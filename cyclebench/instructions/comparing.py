"""How one measured figure is compared with one published figure (agreement.py, causes.py and window.py use it),
and whether one figure's runner processes agree (:func:`process_readings`).

Three figures per form: **smallest latency** (the smallest over the operand pairs that uops.info's
method also measures, :func:`compared_pairs`) against the published range's lower end, **largest
latency** against its upper end, **throughput** against the *measured* published value (the second
of ``0.50 / 1.00``).  A figure matches when it is within ``LAT_TOL`` (latency) or ``TP_TOL``
(throughput) relative, or ``ABS_TOL`` cycles; a published upper bound (``≤7``) is matched by any
figure at or below it (:func:`agrees`); a latency also matches when uops.info's own reading of a
chain, ``int(cycles + .2)``, gives the published whole number, or no more than a published bound
(:func:`whole_reading`).
"""
from __future__ import annotations

from .forms import divide_or_sqrt
from .mask_chain import whole

LAT_TOL = 0.05
TP_TOL = 0.07
ABS_TOL = 0.05             # cycles: small throughputs (0.25 against 0.27) match by this much
FIGURES = ("latency_min", "latency_max", "throughput")
TOLERANCES = {"latency_min": LAT_TOL, "latency_max": LAT_TOL, "throughput": TP_TOL}


def within(ours: float | None, theirs: float | None, tolerance: float,
           abs_tolerance: float = ABS_TOL) -> bool | None:
    """Two figures within ``tolerance`` (relative) or ``abs_tolerance`` cycles; None if one is missing."""
    if ours is None or theirs is None:
        return None
    return abs(ours - theirs) <= max(tolerance * abs(theirs), abs_tolerance)


def published_pair(pair: dict, form_name: str = "") -> bool:
    """Whether uops.info's method measures a pair of this kind at all (nanoBench
    ``tools/cpuBench/cpuBench.py``, ``getLatConfigLists``); its figures count no other pair:

    * memory pairs go to or from general-purpose, vector and MMX registers only: none from a memory
      operand or its address into a mask register, none from a mask register into memory (ZEN4
      publishes ``KMOVD (K, M32)`` without a latency, and none of its 183 forms that write a mask
      register from a memory operand has a ``≤`` part);
    * divide and square-root forms (DIV or SQRT in the name) get their own chains: from the
      memory operand's address but not its value, none from or to the write mask, none into flags.

    * no pair ends in a string instruction's pointer register (RSI, RDI: among the registers
      uops.info keeps for addresses, ``memRegs``, which no register pair starts or ends in); from
      the pointer, only the address pairs (into what the form reads through it) count.

    Such pairs are measured and shown, but not compared."""
    start, end = str(pair.get("start", "")), str(pair.get("end", ""))
    if end in STRING_POINTERS:
        return False
    if start.startswith(("mem ", "addr ")) and end.endswith("(K)"):
        return False
    if start.endswith("(K)") and end.startswith("mem "):
        return False
    if divide_or_sqrt(form_name):
        return not (start.startswith("mem ") or "(K)" in (start[-3:], end[-3:]) or end == "flags")
    return True


STRING_POINTERS = ("rsi", "rdi")        # implicit pointer registers, as pair labels name them
SAME_REGISTER_METHOD = "chain (same register)"
SAME_REGISTER_FASTER = 0.95


def single_issue(doc: dict) -> float | None:
    """Cycles per copy of one distinct-register instance repeated (uops.info's ``TP_single``):
    the form's reciprocal throughput, or the chain through a register it reads and writes (a
    pair from an operand to itself) when that is longer."""
    tp = (doc.get("throughput") or {}).get("value")
    selfs = [p["value"] for p in doc.get("latency") or [] if p.get("value") is not None
             and p.get("method") != SAME_REGISTER_METHOD and p.get("start") == p.get("end")]
    vals = [v for v in [tp, *selfs] if v is not None]
    return max(vals) if vals else None


def same_register_published(pair: dict, doc: dict) -> bool:
    """Whether uops.info would have measured our extra all-same-register instance (renaming.py):
    cpuBench times the same-register case apart only when its single-instance throughput beats
    the distinct-register one by 5% (``tpResultSR.TP_single < .95 * tpResult.TP_single``; on a
    machine with per-port counters also when the µops or ports differ), e.g. a zero idiom the
    renamer also keeps off the execution units.  One that breaks the dependency but still runs
    on its unit (as fast as with distinct registers) has no same-register latency in uops.info;
    it is measured and shown, but not compared.  Other pairs always count."""
    if pair.get("method") != SAME_REGISTER_METHOD:
        return True
    ours_ = pair.get("cycles_per_copy", pair.get("value"))
    single = single_issue(doc)
    return ours_ is None or single is None or ours_ < SAME_REGISTER_FASTER * single


def compared_pairs(doc: dict) -> list[dict]:
    """The measured pairs that the published method also measures (published_pair,
    same_register_published): the ones our latency figures are taken over."""
    return [p for p in doc.get("latency") or [] if p.get("value") is not None
            and published_pair(p, doc.get("form", "")) and same_register_published(p, doc)]


MASK_EMPTY = ("the gather/scatter mask empty after the first copy: the form clears it and cpuBench's "
              "throughput copies never set it again, so they move no lane; index vector 0")


def reference(doc: dict, figure: str) -> dict | None:
    """Our figure measured with the published measurement's own operand values, where the cost
    depends on them (reference_values.py), else None: {value, bound, values (their names)} for the
    throughput; {values, pairs} for a latency.  Sources, first that applies: the reference
    configurations (dividers, REP string forms); the sweep's figure with uops.info's values (a
    selector in a register: null); a gather's or scatter's copies with the mask left empty."""
    ref = doc.get("reference_values") or {}
    if figure != "throughput":
        pairs = [p for p in ref.get("latency") or [] if p.get("value") is not None]
        return {"values": ", ".join(dict.fromkeys(p["values"] for p in pairs)), "pairs": pairs} if pairs else None
    tp = doc.get("throughput") or {}
    unset = tp.get("mask_unset") or {}
    empty = {"value": unset.get("value"), "bound": "exact", "stable": unset.get("stable"), "values": MASK_EMPTY}
    for r in ((ref.get("throughput") or {}), tp.get("reference") or {}, empty if unset.get("stable") else {}):
        if r.get("value") is not None:
            return r
    return None


def ours(doc: dict, figure: str) -> tuple[float | None, str | None]:
    """(value, bound) of one of our figures; the smallest latency over the measured pairs that the
    published method also measures (compared_pairs).  Where the figure was also measured with
    the published measurement's operand values (:func:`reference`), that one."""
    ref = reference(doc, figure)
    if figure == "throughput":
        tp = ref or doc.get("throughput") or {}
        return tp.get("value"), tp.get("bound")
    pairs = ref["pairs"] if ref else compared_pairs(doc)
    if not pairs:
        return None, None
    pick = min if figure == "latency_min" else max
    p = pick(pairs, key=lambda p: (p["value"], p["bound"] != "exact"))
    return p["value"], p["bound"]


def theirs(rec, figure: str) -> tuple[float | None, bool]:
    """(value, is an upper bound) of the published figure."""
    if figure == "throughput":
        v = rec.throughput
        return (v.hi, v.hi_upper_bound) if v else (None, False)
    v = rec.latency
    if v is None:
        return None, False
    return (v.lo, v.lo_upper_bound) if figure == "latency_min" else (v.hi, v.hi_upper_bound)


def agrees(our: float | None, their: float | None, their_bound: bool, tol: float) -> bool | None:
    """:func:`within`, except that any figure at or below a published upper bound matches it."""
    if their_bound and our is not None and their is not None:
        return our <= their + max(tol * abs(their), ABS_TOL)
    return within(our, their, tol, ABS_TOL)


def whole_reading(our: float | None, our_bound: str | None, their: float | None, their_bound: bool) -> bool:
    """Our latency read as uops.info reads a chain's cycles, ``int(cycles + .2)``
    (mask_chain.whole), gives the published whole-cycle figure: ``hsubpd``'s chain runs 4.38
    cycles a copy here, which uops.info's reading publishes as 4.  A published bound (``≤7``: its
    reading of a chain closed through memory) is matched by one of ours that reads no more
    that way: ``movbe eax, [m]`` through a store and a load is at most 7.70 cycles here, read
    as 7 (what we subtract for the connector is whole cycles, so reading the pair's figure is
    reading the chain's)."""
    if our is None or their is None or not float(their).is_integer():
        return False
    if their_bound:
        return our_bound in ("exact", "upper") and whole(our) <= their
    return our_bound == "exact" and whole(our) == their


def tolerance(figure: str, given: float | None = None) -> float:
    """The relative tolerance a figure is compared with: ``given``, else the figure's own."""
    return TOLERANCES[figure] if given is None else given


def match(doc: dict, rec, figure: str, tol: float | None = None) -> dict:
    """One figure of ``doc`` against the published record: {ours, ours_bound, published,
    published_bound, match}, match None where either side has no figure.  The one rule the
    agreement report, ``inst --why`` and ``inst --compare``'s match column all read
    (``tol``: the figure's own tolerance unless given)."""
    tol = tolerance(figure, tol)
    our, bound = ours(doc, figure)
    their, their_bound = theirs(rec, figure)
    ok = agrees(our, their, their_bound, tol)
    if ok is False and figure != "throughput" and whole_reading(our, bound, their, their_bound):
        ok = True
    return {"ours": our, "ours_bound": bound, "published": their, "published_bound": their_bound, "match": ok}


def unsettled(doc: dict, figure: str) -> bool:
    """The measurement behind ``figure`` stayed unstable (or not linear in the copies, or a pair's
    connector bounds came from a reference loop read only while unstable): a figure still to
    measure, never a match or a mismatch."""
    ref = reference(doc, figure)
    if figure == "throughput":
        part = ref or doc.get("throughput") or {}
        return part.get("stable") is False or part.get("linear") is False
    if ref:
        return any(p.get("stable") is False for p in ref["pairs"])
    # a published pair whose measurement failed for the moment (the clock calibration during a
    # burst: characterize.TRANSIENT) leaves the figures without it, taken over the other pairs
    failed = any(p.get("value") is None and p.get("stable") is False and published_pair(p, doc.get("form", ""))
                 for p in doc.get("latency") or [])
    return failed or any(p.get("stable") is False or p.get("linear") is False
                         or (p.get("connector") or {}).get("unsettled_reference") for p in compared_pairs(doc))


def process_readings(tp: dict | None) -> tuple[list[float], bool]:
    """The readings of the same copies in several runner processes (throughput.py: ``by_process``)
    and whether they vary beyond ``TP_TOL`` (the fastest is kept); window.py and causes.py give
    both in their cause texts."""
    runs = [v for v in (tp or {}).get("by_process") or [] if v is not None]
    return runs, len(runs) > 1 and max(runs) > min(runs) * (1 + TP_TOL)


def issue_bound(value: float | None, tp: dict | None) -> bool:
    """A pair's chain (``value`` per copy) that ran no faster than the copies issue: the form's
    reciprocal throughput ``tp`` (exact, nothing carried between copies) is as long. A chain of
    about a cycle is not: no real dependency is shorter."""
    v = (tp or {}).get("value")
    return (value is not None and v is not None and tp.get("bound") == "exact" and not tp.get("carried")
            and 1 + LAT_TOL < value <= v * (1 + LAT_TOL) + ABS_TOL)
