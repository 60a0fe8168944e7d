"""Inferred resources beside a published ports column (uops.info's ``1*FP01+1*FP23``).

A resource is named after its blocker; where the blocker has published ports, the resource is
the port set of the blocker's bottleneck term (the term with the most µops per port; a tie
leaves the resource unmapped).  The comparison is then made in µops per mapped port set:

* inferred: usage x the blocker's µops per cycle, rounded (a blocker with one µop on two ports
  at 0.5 cycles makes 0.5 cycles of usage one µop);
* published: how many of the form's published µops have a port set inside the resource's.

A form agrees when the two counts match on every mapped resource.  Forms with no published
ports (Zen's integer pipes) are not compared: their resources are the only ones there are.
"""
from __future__ import annotations

import re

from ..published import parse_ports
from .model import Model

def port_set(term: str) -> frozenset[str]:
    """``FP0123`` -> {FP0, FP1, FP2, FP3}; ``p0156`` -> {p0, p1, p5, p6}."""
    m = re.match(r"^([A-Za-z]+?)([0-9][0-9A-Za-z]*)$", term)
    if not m:
        return frozenset({term})
    return frozenset(m.group(1) + ch for ch in m.group(2))


def terms(ports_text: str) -> list[tuple[frozenset[str], int]]:
    return [(port_set(p), n) for p, n in parse_ports(ports_text).items()]


def resource_ports(blockers: dict[str, str], published: dict[str, str],
                   alone: dict[str, float] | None = None) -> dict[str, tuple[frozenset[str], float]]:
    """Resource -> (the published port set of its blocker's bottleneck, µops per cycle of usage).
    A blocker that puts n published µops on its port set and takes t cycles alone makes one cycle
    of its resource n / t µops (|ports| when ``alone`` is not given)."""
    out = {}
    for r, b in blockers.items():
        ts = terms(published.get(b, "") or "")
        if not ts:
            continue
        score = sorted(((n / len(q), q, n) for q, n in ts), key=lambda x: -x[0])
        if len(score) > 1 and score[0][0] == score[1][0]:
            continue
        _, q, n = score[0]
        t = (alone or {}).get(b)
        out[r] = (q, n / t if t else float(len(q)))
    return out


def compare(form: str, model: Model, mapped: dict[str, tuple[frozenset[str], float]], ports_text: str) -> dict | None:
    """The comparison of one form in µops per published port set (None: no published ports, or
    nothing mapped).  Several resources can map to one port set; the largest count stands."""
    ts = terms(ports_text or "")
    if not ts or not mapped or form not in model.usage:
        return None
    usage = model.usage[form]
    inferred: dict[str, int] = {}
    expected: dict[str, int] = {}
    for r, (q, per) in mapped.items():
        name = "".join(sorted(q))
        inferred[name] = max(inferred.get(name, 0), round(usage.get(r, 0.0) * per))
        expected[name] = sum(n for p, n in ts if p <= q)
    inferred = {k: v for k, v in inferred.items() if v}
    expected = {k: v for k, v in expected.items() if v}
    return {"form": form, "published": ports_text, "agree": inferred == expected,
            "inferred": inferred, "expected": expected}


def describe(form: str, model: Model, blockers: dict[str, str], mapped: dict | None = None) -> str:
    """One cell: the resources a form uses, in cycles per instance, named by port set or blocker."""
    parts, mapped = [], mapped or {}
    for r, v in sorted(model.used(form).items(), key=lambda x: -x[1]):
        name = "".join(sorted(mapped[r][0])) if r in mapped else f"{r}[{blockers.get(r, '?')}]"
        parts.append(f"{v:.2f} {name}")
    return ", ".join(parts) or "-"


def published_for(forms, records: dict, catalogue) -> dict:
    """Form name -> its published record: by name, else by the catalogue's base name (uops.info
    names ``ADD (R64, R64)`` what the catalogue tells apart as ``ADD_01``/``ADD_03``)."""
    from ..catalogue import normalize_name
    out = {}
    for name in forms:
        rec = records.get(normalize_name(name))
        form = catalogue.get(name)
        if rec is None and form is not None and form.base_name:
            rec = records.get(normalize_name(form.base_name))
        if rec is not None:
            out[name] = rec
    return out
