"""Agreement with a published table over the whole catalogue: match rates and a cause per mismatch.

:func:`targets` maps every published form to a catalogue form and says whether it can run here
(forms this CPU lacks, e.g. AVX-512 and mask registers on Zen 3, are *cannot be measured on this
CPU*, never mismatches).  :func:`agreement` compares the measured documents with the published
records on three figures:

* **smallest latency** (the smallest over operand pairs) with the published range's lower end,
* **largest latency** with its upper end,
* **throughput** with the *measured* published value (the second of ``0.50 / 1.00``).

A latency also matches when uops.info's own reading of a chain, ``int(cycles + .2)``, gives the
published whole number, or for a published bound no more than it (:func:`whole_reading`).

Where a form's cost depends on its operand values and it was also measured with uops.info's own
values (reference_values.py: dividers, REP string forms; a selector register's null figure; a
gather's copies with the mask left empty), that figure is compared (comparing.reference) and the
row names the values (``values``).

A figure matches when it is within ``LAT_TOL`` (latency) or ``TP_TOL`` (throughput) relative, or
``ABS_TOL`` cycles.  A published upper bound (``≤7``) is matched by any figure at or below it (plus
the tolerance): it says no more.  Every mismatch gets a cause classified from what was measured
(:func:`causes.cause`); nothing is classified by naming forms.  comparing.py holds the figures and
the match rule, causes.py the causes; this module puts them together over the catalogue.

The published data may describe another microarchitecture (uops.info's Zen 4 column against a
Zen 3 machine): the result names both.  "Microarchitecture differs" is never inferred from a
difference alone: only when a published table for the CPU measured here (``evidence``) reads what
we measured while it differs from the compared table.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable

from .causes import (DATA_DEPENDENT_RATIO, ISSUE_BOUND_CAUSE, MEMORY_PAIR_CAUSE, PROCESS_CAUSE,  # noqa: F401
                     cause, spread_cause)
from .comparing import (ABS_TOL, FIGURES, LAT_TOL, TOLERANCES, TP_TOL, agrees, compared_pairs,  # noqa: F401
                        issue_bound, match, ours, published_pair, reference, same_register_published, single_issue,
                        theirs, unsettled, whole_reading)
from .coverage import NO_FORM, index_of

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
    index = index_of(catalogue)
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
    records = {t.published.name: t.published for t in tgts}
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
            row[f] = m = match(doc, rec, f)
            ref = reference(doc, f)
            if ref is not None:     # compared on uops.info's operand values (comparing.reference)
                m["values"] = ref["values"]
            our, bound, their, their_bound, ok = (m[k] for k in ("ours", "ours_bound", "published",
                                                                 "published_bound", "match"))
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
            why = _differs(evidence, evidence_label, rec, f, our, TOLERANCES[f]) or cause_fn(doc, rec, t.form, f)
            if why.split(":")[0] == "unexplained" and f == "throughput":
                why = spread_cause(rec, records, our) or why
            row[f]["cause"] = why
            mismatches.append({"form": rec.name, "figure": f, "ours": our, "ours_bound": bound,
                               "published": their, "published_bound": their_bound,
                               "published_text": _published_text(rec, f), "cause": why,
                               **({"values": m["values"]} if "values" in m else {})})
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
