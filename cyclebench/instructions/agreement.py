"""Agreement with a published table over the whole catalogue: match rates and a cause per mismatch.

:func:`targets` maps every published form to a catalogue form and says whether it can run here
(forms this CPU lacks, e.g. AVX-512 and mask registers on Zen 3, are *cannot be measured on this
CPU*, never mismatches).  :func:`agreement` compares the measured documents with the published
records on three figures:

* **smallest latency** (the smallest over operand pairs) with the published range's lower end,
* **largest latency** with its upper end,
* **throughput** with the *measured* published value (the second of ``0.50 / 1.00``).

An exact latency also matches when uops.info's own reading of a chain, ``int(cycles + .2)``,
gives the published whole number (:func:`whole_reading`).

A figure matches when it is within ``LAT_TOL`` (latency) or ``TP_TOL`` (throughput) relative, or
``ABS_TOL`` cycles.  A published upper bound (``≤7``) is matched by any figure at or below it (plus
the tolerance): it says no more.  Every mismatch gets a cause classified from what was measured
(:func:`cause`); nothing is classified by naming forms.

The published data may describe another microarchitecture (uops.info's Zen 4 column against a
Zen 3 machine): the result names both.  "Microarchitecture differs" is never inferred from a
difference alone: only when a published table for the CPU measured here (``evidence``) reads what
we measured while it differs from the compared table.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable

from .catalogue import normalize_name
from .compare import ABS_TOLERANCE as ABS_TOL, within
from .coverage import NO_FORM, Index
from .forms import divide_or_sqrt
from .instantiate import rmw_stride
from .mask_chain import whole

LAT_TOL = 0.05
TP_TOL = 0.07
DATA_DEPENDENT_RATIO = 20.0     # a figure this many times the published one: a slow path, suspected
FIGURES = ("latency_min", "latency_max", "throughput")

CANNOT_RUN = "cannot be measured on this CPU"
NOT_OFFERED = "not offered (unsafe or not measurable in the sandbox)"
NOT_IN_CATALOGUE = NO_FORM


@dataclass
class Target:
    """One published form and the catalogue form that measures it (None: why not)."""

    published: object              # published.Published
    form: object | None             # forms.Form
    status: str                     # 'runnable', CANNOT_RUN, NOT_OFFERED, NOT_IN_CATALOGUE
    why: str = ""


def targets(records: dict, catalogue) -> list[Target]:
    """Every published record with its catalogue form (coverage.py matches the spellings) and
    whether it runs here; a name with no form gets coverage.py's reason."""
    index = Index(catalogue)
    out = []
    for name, rec in records.items():
        form, _how = index.find(name)
        if form is None:
            out.append(Target(rec, None, NOT_IN_CATALOGUE, index.missing_reason(name)[1]))
        elif form.unsupported:
            out.append(Target(rec, form, CANNOT_RUN, form.unsupported))
        elif not form.offered:
            out.append(Target(rec, form, NOT_OFFERED, form.reason or ""))
        else:
            out.append(Target(rec, form, "runnable"))
    return out


# ------------------------------------------------------------------------------------ figures

def published_pair(pair: dict, form_name: str = "") -> bool:
    """Whether uops.info's method measures a pair of this kind at all (nanoBench
    ``tools/cpuBench/cpuBench.py``, ``getLatConfigLists``); its figures count no other pair:

    * memory pairs go to or from general-purpose, vector and MMX registers only: none from a memory
      operand or its address into a mask register, none from a mask register into memory (ZEN4
      publishes ``KMOVD (K, M32)`` without a latency, and none of its 183 forms that write a mask
      register from a memory operand has a ``≤`` part);
    * divide and square-root forms (DIV or SQRT in the name) get their own chains: from the
      memory operand's address but not its value, none from or to the write mask, none into flags.

    Such pairs are measured and shown, but not compared."""
    start, end = str(pair.get("start", "")), str(pair.get("end", ""))
    if start.startswith(("mem ", "addr ")) and end.endswith("(K)"):
        return False
    if start.endswith("(K)") and end.startswith("mem "):
        return False
    if divide_or_sqrt(form_name):
        return not (start.startswith("mem ") or "(K)" in (start[-3:], end[-3:]) or end == "flags")
    return True


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


def ours(doc: dict, figure: str) -> tuple[float | None, str | None]:
    """(value, bound) of one of our figures; the smallest latency over the measured pairs that the
    published method also measures (compared_pairs)."""
    if figure == "throughput":
        tp = doc.get("throughput") or {}
        return tp.get("value"), tp.get("bound")
    pairs = compared_pairs(doc)
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
    """``compare.within``, except that any figure at or below a published upper bound matches it."""
    if their_bound and our is not None and their is not None:
        return our <= their + max(tol * abs(their), ABS_TOL)
    return within(our, their, tol, ABS_TOL)


def whole_reading(our: float | None, our_bound: str | None, their: float | None, their_bound: bool) -> bool:
    """Our exact latency read as uops.info reads a chain's cycles, ``int(cycles + .2)``
    (mask_chain.whole), equals the published whole-cycle figure: ``hsubpd``'s chain runs 4.38
    cycles a copy here, which uops.info's reading publishes as 4."""
    return (our is not None and their is not None and our_bound == "exact" and not their_bound
            and float(their).is_integer() and whole(our) == their)


# ------------------------------------------------------------------------------------- causes

def _carried(doc: dict) -> list[str]:
    return list((doc.get("throughput") or {}).get("carried") or [])


ISSUE_BOUND_CAUSE = ("issue-bound chain: our chain ran at the form's own reciprocal throughput, so it "
                     "cannot show a latency below it; the published figure is lower")


def issue_bound(value: float | None, tp: dict | None) -> bool:
    """A pair's chain (``value`` per copy) that ran no faster than the copies issue: the form's
    reciprocal throughput ``tp`` (exact, nothing carried between copies) is as long. A chain of
    about a cycle is not: no real dependency is shorter."""
    v = (tp or {}).get("value")
    return (value is not None and v is not None and tp.get("bound") == "exact" and not tp.get("carried")
            and 1 + LAT_TOL < value <= v * (1 + LAT_TOL) + ABS_TOL)


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


def unsettled(doc: dict, figure: str) -> bool:
    """The measurement behind ``figure`` stayed unstable (or not linear in the copies): a figure
    still to measure, never a match or a mismatch."""
    if figure == "throughput":
        part = doc.get("throughput") or {}
        return part.get("stable") is False or part.get("linear") is False
    return any(p.get("stable") is False or p.get("linear") is False for p in compared_pairs(doc))


def _rmw_cause(doc: dict, their: float) -> str:
    """A read-modify-write memory form slower than published: with both address conventions
    measured (throughput.py), say whether the other one reproduces the figure."""
    tp = doc.get("throughput") or {}
    alt = (tp.get("alternative") or {}).get("value")
    if alt is None or agrees(alt, their, False, TP_TOL):
        return "memory RMW convention (copies' addresses)"
    return (f"memory RMW rate of this core: {tp.get('copies')} copies one operand width apart (uops.info's "
            f"addresses) {tp.get('value'):.2f}, one cache line apart {alt:.2f}; neither reaches the "
            "published figure")


def cause(doc: dict, rec, form, figure: str) -> str:
    """Why our figure differs from the published one, from what was measured (first that applies)."""
    our, bound = ours(doc, figure)
    their, their_bound = theirs(rec, figure)
    unstable = unsettled(doc, figure)
    notes = " ".join(doc.get("notes") or [])
    if "data-dependent" in notes:
        return "data-dependent: cost depends on the operand values"
    if our is not None and their and our > DATA_DEPENDENT_RATIO * their:
        return "data-dependent (suspected): a slow path with our operand values"
    if figure != "throughput":
        labels = {p.get("label") for p in compared_pairs(doc)}
        if labels & {"dependency broken", "move eliminated"}:
            return "zero idiom / eliminated move"
        if their == 0:
            return "published 0 (no dependency) where our chain carries one"
        if _issue_bound(doc, our, their):
            return ISSUE_BOUND_CAUSE
        if figure == "latency_max" and _memory_pair_only(doc, rec):
            return MEMORY_PAIR_CAUSE
        if bound == "upper" or their_bound:
            return "bound only (upper bound)"
        if unstable:
            return "unstable measurement"
        mask = _mask_chain(doc)
        if mask:
            return mask
        return "unexplained"
    carried = _carried(doc)
    if form is not None and rmw_stride(form) is not None and our is not None and their is not None and our > their:
        return _rmw_cause(doc, their)
    if any(c not in ("flags", "x87 stack") and not c.startswith("memory") for c in carried):
        return "implicit fixed register chain"
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
        return (f"published measurement differs from its own port figure: {rec.throughput_text} (ports / "
                "measured), ours matches the port figure")
    runs = [v for v in (doc.get("throughput") or {}).get("by_process") or [] if v is not None]
    if len(runs) > 1 and max(runs) > min(runs) * (1 + TP_TOL):       # throughput.py: the fastest is kept
        return (f"{PROCESS_CAUSE}: the same copies read {min(runs):.2f} to {max(runs):.2f} cycles a copy in "
                f"{len(runs)} processes (a process settles in one steady state); the fastest is reported")
    return "unexplained"


PROCESS_CAUSE = "varies between runner processes"


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


def _mask_chain(doc: dict) -> str | None:
    """A write mask -> mask pair measured uops.info's way too (mask_chain.py): its reading."""
    for p in compared_pairs(doc):
        pm = p.get("published_method") or {}
        if pm.get("cycles") is not None:
            return (f"write mask -> mask pair: uops.info's kmovq chain (mask_chain.py) reads {pm['cycles']:.2f} "
                    f"cycles here, {pm.get('value')} after its rounding, against {p['value']:.2f} through one "
                    "register; that chain's cost varies with registers and values")
    return None


# ---------------------------------------------------------------------------------- agreement

def this_machine() -> str:
    """'AMD Zen 3, VM guest (family 25 model 1)': what the measured column is, named beside the
    published one by the microarchitecture table."""
    from ..machine.uarch import this_machine as ident
    i = ident()
    return f"{i.name} (family {i.family} model {i.model})"


def _family(rec, doc: dict | None) -> str:
    fam = (rec.extra or {}).get("family") or (rec.extra or {}).get("extension")
    if fam:
        return fam
    return ",".join((doc or {}).get("extensions") or []) or "?"


def _differs(evidence: dict | None, label: str, rec, figure: str, our: float, tol: float) -> str | None:
    """The microarchitecture cause, when a published table for the CPU measured here (``evidence``)
    reads what we measured and differs from the compared table: the same form measured by the
    same publisher on both CPUs differs, so the method is not what differs."""
    ev = (evidence or {}).get(rec.name)
    if ev is None:
        return None
    e_val, e_bound = theirs(ev, figure)
    their, their_bound = theirs(rec, figure)
    if e_val is None or e_bound or not agrees(our, e_val, False, tol):
        return None
    if agrees(e_val, their, their_bound, tol):
        return None
    return f"microarchitecture differs: {label} reads {_published_text(ev, figure)}, as measured here"


def agreement(tgts: list[Target], docs: dict[str, dict], published_label: str, measured_on: str,
              cause_fn: Callable = cause, evidence: dict | None = None,
              evidence_label: str = "") -> dict:
    """The comparison of measured documents (by form name) with the published targets.

    ``evidence``: published records for the CPU measured here (e.g. uops.info's Zen 3 column when
    the compared table is Zen 4); only used to classify a mismatch as "microarchitecture differs".

    Returns {"published_label", "measured_on", "counts", "figures", "by_extension", "mismatches",
    "causes", "rows"}; every published form is counted exactly once in ``counts``."""
    counts: Counter = Counter()
    figs = {f: Counter() for f in FIGURES}
    by_ext: dict[str, dict[str, Counter]] = defaultdict(lambda: {f: Counter() for f in FIGURES})
    mismatches, rows = [], []
    tol = {"latency_min": LAT_TOL, "latency_max": LAT_TOL, "throughput": TP_TOL}
    for t in tgts:
        rec = t.published
        if t.status != "runnable":
            counts[t.status] += 1
            rows.append({"form": rec.name, "status": t.status, "why": t.why})
            continue
        doc = docs.get(t.form.name)
        if doc is None:
            counts["not measured (not in the results)"] += 1
            continue
        if doc.get("status") != "ok":
            counts[f"measurement {doc.get('status')}"] += 1
            rows.append({"form": rec.name, "status": doc.get("status"), "why": doc.get("reason")})
            continue
        counts["compared"] += 1
        fam = _family(rec, doc)
        row = {"form": rec.name, "catalogue_form": t.form.name, "status": "compared", "extension": fam}
        for f in FIGURES:
            our, bound = ours(doc, f)
            their, their_bound = theirs(rec, f)
            ok = agrees(our, their, their_bound, tol[f])
            if ok is False and f != "throughput" and whole_reading(our, bound, their, their_bound):
                ok = True
            row[f] = {"ours": our, "ours_bound": bound, "published": their,
                      "published_bound": their_bound, "match": ok}
            if ok is None:
                figs[f]["not comparable"] += 1
                continue
            if unsettled(doc, f):
                # reported apart from the rate: re-measure these on a quieter machine
                figs[f]["unsettled"] += 1
                row[f]["unsettled"] = True
                continue
            figs[f]["compared"] += 1
            by_ext[fam][f]["compared"] += 1
            if ok:
                figs[f]["match"] += 1
                by_ext[fam][f]["match"] += 1
                continue
            why = _differs(evidence, evidence_label, rec, f, our, tol[f]) or cause_fn(doc, rec, t.form, f)
            row[f]["cause"] = why
            mismatches.append({"form": rec.name, "figure": f, "ours": our, "ours_bound": bound,
                               "published": their, "published_bound": their_bound,
                               "published_text": _published_text(rec, f), "cause": why})
        rows.append(row)
    return {"published_label": published_label, "measured_on": measured_on,
            "published_forms": len(tgts), "counts": dict(counts),
            "figures": {f: _rated(c) for f, c in figs.items()},
            "by_extension": {e: {f: _rated(c) for f, c in v.items()} for e, v in sorted(by_ext.items())},
            "mismatches": mismatches,
            "causes": dict(Counter(m["cause"].split(":")[0] for m in mismatches).most_common()), "rows": rows}


def _published_text(rec, figure: str) -> str:
    if figure == "throughput":
        return rec.throughput_text or (str(rec.throughput) if rec.throughput else "")
    return str(rec.latency) if rec.latency else ""


def _rated(c: Counter) -> dict:
    """The counts plus their match rate as text ('97/100 (97.0%)'); figures whose measurement
    stayed unstable are counted apart, never in the rate."""
    n, k, u = c.get("compared", 0), c.get("match", 0), c.get("unsettled", 0)
    rate = f"{k}/{n} ({100 * k / n:.1f}%)" if n else "—"
    return {**c, "rate": rate + (f", {u} unsettled (unstable, left out)" if u else "")}


def summary_lines(a: dict) -> list[str]:
    """The agreement as text lines (what the CLI prints under the table)."""
    c = a["counts"]
    lines = [f"measured on {a['measured_on']}, compared with figures published for {a['published_label']}: "
             "where the two CPUs differ, the figures may too",
             f"{a['published_label']} (published) vs {a['measured_on']} (measured here): "
             f"{a['published_forms']} published forms: " +
             ", ".join(f"{v} {k}" for k, v in sorted(c.items(), key=lambda kv: -kv[1]))]
    names = {"latency_min": "smallest latency", "latency_max": "largest latency",
             "throughput": "throughput (published measured value)"}
    for f in FIGURES:
        lines.append(f"match, {names[f]}: {a['figures'][f]['rate']}")
    lines.append(f"tolerance: latency {LAT_TOL:.0%}, throughput {TP_TOL:.0%}, or {ABS_TOL} cycles; a "
                 "published upper bound (≤) is matched by any figure at or below it")
    if a["causes"]:
        lines.append("mismatch causes: " + "; ".join(f"{k}: {v}" for k, v in a["causes"].items()))
    return lines
