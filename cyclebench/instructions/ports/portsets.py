"""Inferred resources beside a published ports column (uops.info's ``1*FP01+1*FP23``).

A resource is named after its blocker; where the blocker has published ports, the resource is
the port set of the blocker's bottleneck term (the term with the most µops per port; a tie
leaves the resource unmapped).  The comparison is then made in µops per mapped port set:

* inferred: ``usage x |ports|`` rounded (a form using 0.5 cycles of a two-port resource puts one
  µop there);
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


def resource_ports(blockers: dict[str, str], published: dict[str, str]) -> dict[str, frozenset[str]]:
    """Resource -> the published port set of its blocker's bottleneck (mapped resources only)."""
    out = {}
    for r, b in blockers.items():
        ts = terms(published.get(b, "") or "")
        if not ts:
            continue
        score = sorted(((n / len(q), q) for q, n in ts), key=lambda x: -x[0])
        if len(score) > 1 and score[0][0] == score[1][0]:
            continue
        out[r] = score[0][1]
    return out


def compare(form: str, model: Model, mapped: dict[str, frozenset[str]], ports_text: str) -> dict | None:
    """The comparison of one form (None: no published ports, or nothing mapped)."""
    ts = terms(ports_text or "")
    if not ts or not mapped or form not in model.usage:
        return None
    usage = model.usage[form]
    inferred = {r: round(usage.get(r, 0.0) * len(q)) for r, q in mapped.items()}
    expected = {r: sum(n for p, n in ts if p <= q) for r, q in mapped.items()}
    return {"form": form, "published": ports_text, "agree": inferred == expected,
            "inferred": {"+".join(sorted(mapped[r])): n for r, n in inferred.items() if n},
            "expected": {"+".join(sorted(mapped[r])): n for r, n in expected.items() if n}}


def describe(form: str, model: Model, blockers: dict[str, str], mapped: dict[str, frozenset[str]]) -> str:
    """One cell: the resources a form uses, in cycles per instance, named by port set or blocker."""
    parts = []
    for r, v in sorted(model.used(form).items(), key=lambda x: -x[1]):
        name = "".join(sorted(mapped[r])) if r in mapped else f"{r}[{blockers.get(r, '?')}]"
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
