"""Latencies for the predictor's chain bound, from a published column or from cyclebench's own
instruction tables, each labelled with where it came from.

* a uops.info CSV (``.csv``): published latencies;
* a ``cyclebench inst`` results file (any other name): latencies measured here.

A form with a memory operand gets its smallest latency for its data registers (the
register-to-register pair), and, where it was measured, the latency from its address registers
(``addr`` pairs: a load's load-to-use time, which a pointer chase carries from one iteration to
the next) as a second figure; any other form its largest latency.
"""
from __future__ import annotations

from pathlib import Path

from ..catalogue import Catalogue


def _pick(form, lo, hi):
    if form is not None and form.memory_operand is not None and form.memory_operand.kind == "mem":
        return lo
    return hi


def from_file(path: Path, catalogue: Catalogue, forms=None) -> tuple[dict, str]:
    """(form name -> cycles, or (cycles, cycles from the address registers), label)."""
    if path.suffix.lower() == ".csv":
        from ..published import read_csv
        from .portsets import published_for
        records = read_csv(str(path), collect=True)[0]
        names = list(forms) if forms is not None else [f.name for f in catalogue.offered()]
        out = {}
        for name, rec in published_for(names, records, catalogue).items():
            v = rec.latency
            if v is not None and v.lo is not None and v.hi is not None:
                out[name] = _pick(catalogue.get(name), v.lo, v.hi)
        return out, f"published ({path.name})"
    from ..bulk import results_store
    _, docs = results_store(path).load()
    out = {}
    for d in docs:
        lat = [p for p in d.get("latency") or [] if p.get("value") is not None]
        pairs = [p["value"] for p in lat if not str(p.get("start", "")).startswith("addr")]
        addr = [p["value"] for p in lat if str(p.get("start", "")).startswith("addr") and p.get("bound") == "exact"]
        pairs = pairs or [p["value"] for p in lat]          # LEA: its address is its data
        if pairs:
            v = _pick(catalogue.get(d["form"]), min(pairs), max(pairs))
            out[d["form"]] = (v, max(addr)) if addr else v
    return out, f"measured by cyclebench inst ({path.name})"
