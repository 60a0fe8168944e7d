"""Side-by-side comparison of measured forms with published data (uops.info CSV/XML) or llvm-mca.

Against published data, the match column applies the agreement report's rule (comparing.match):
our largest latency over the pairs uops.info's method also measures against the published
range's upper end, our throughput against the *measured* published value (the second of
``0.50 / 1.00``), each within its figure's tolerance (5% latency, 7% throughput) or 0.05
cycles; a published bound (``≤``) is matched by any figure at or below it, and a latency by
uops.info's own reading of a chain.  So ``inst --compare``'s ✓ and ✗ are the report's.  Against
llvm-mca (``Latency``, ``RThroughput``) the same tolerances apply.  ``tolerance`` overrides both.
"""
from __future__ import annotations

from . import published as pub
from .catalogue import Catalogue, normalize_name
from .comparing import ABS_TOL as ABS_TOLERANCE, TOLERANCES, match, reference, tolerance as tolerance_of, within
from .coverage import index_of
from .llvm_mca import LlvmMcaFailed, predict


def _ours(doc: dict) -> tuple[float | None, float | None]:
    lat = (doc.get("latency_max") or {}).get("value")
    tp = (doc.get("throughput") or {}).get("value")
    return lat, tp


def _match_text(lat_ok, tp_ok) -> str:
    bad = [k for k, ok in (("lat", lat_ok), ("tp", tp_ok)) if ok is False]
    if bad:
        return "✗ " + ",".join(bad)
    if lat_ok is None and tp_ok is None:
        return "—"
    return "✓"


def _on_values(doc: dict, lat: dict, tp: dict) -> str:
    """Which figures were compared as measured with uops.info's operand values (comparing.reference):
    the table's own columns show cyclebench's."""
    used = [f"{k} {m['ours']:.2f}" for k, f, m in (("lat", "latency_max", lat), ("tp", "throughput", tp))
            if m["ours"] is not None and reference(doc, f) is not None]
    return f" (uops.info's operand values: {', '.join(used)})" if used else ""


def _tolerance_text(tolerance: float | None) -> str:
    if tolerance is None:
        return (f"within {TOLERANCES['latency_max']:.0%} (latency) / {TOLERANCES['throughput']:.0%} "
                f"(throughput)")
    return f"within {tolerance:.0%}"


def _summarize(label: str, rows: dict, n_docs: int, tolerance: float | None) -> dict:
    lat = [r["lat_ok"] for r in rows.values() if r["lat_ok"] is not None]
    tp = [r["tp_ok"] for r in rows.values() if r["tp_ok"] is not None]
    return {"label": label, "tolerance": tolerance, "forms": n_docs, "found": len(rows),
            "latency_compared": len(lat), "latency_match": sum(lat),
            "throughput_compared": len(tp), "throughput_match": sum(tp),
            "text": (f"{label}: latency matches {sum(lat)}/{len(lat)}, throughput {sum(tp)}/{len(tp)} "
                     f"{_tolerance_text(tolerance)} (or {ABS_TOLERANCE} cycles); "
                     f"{n_docs - len(rows)} of {n_docs} measured forms have no {label} figures")}


def compare_published(docs: list[dict], records: dict[str, "pub.Published"], label: str = "uops.info",
                      tolerance: float | None = None, catalogue: Catalogue | None = None) -> dict:
    """{"label", "rows": {form: {...}}, summary fields} for the measured (``ok``) documents."""
    rows = {}
    ok_docs = [d for d in docs if d.get("status") == "ok"]
    by_form = {}
    if catalogue is not None and ok_docs:       # published names spelled otherwise (coverage.py)
        index = index_of(catalogue)
        for name, r in records.items():
            f = index.find(name)[0]
            if f is not None:
                by_form.setdefault(f.name, r)
    for d in ok_docs:
        rec = records.get(normalize_name(d["form"])) or by_form.get(d["form"])
        if rec is None:
            continue
        lat, tp = match(d, rec, "latency_max", tolerance), match(d, rec, "throughput", tolerance)
        lat_ok, tp_ok, theirs_lat, theirs_tp = lat["match"], tp["match"], lat["published"], tp["published"]
        rows[d["form"]] = {"latency": str(rec.latency) if rec.latency else "—",
                           "throughput": rec.throughput_text or (str(rec.throughput) if rec.throughput else "—"),
                           "lat_ok": lat_ok, "tp_ok": tp_ok, "match": _match_text(lat_ok, tp_ok) + _on_values(d, lat, tp),
                           "latency_value": theirs_lat, "throughput_value": theirs_tp,
                           "source": rec.source}
    out = _summarize(label, rows, len(ok_docs), tolerance)
    out["rows"] = rows
    return out


def compare_llvm_mca(docs: list[dict], catalogue: Catalogue, mcpu: str | None = None,
                     tolerance: float | None = None, llvm_mca: str | None = None) -> dict:
    """The same comparison against llvm-mca's scheduling model (Latency, RThroughput) of ``mcpu``
    (default: the running core's, from the microarchitecture table)."""
    if not mcpu:
        from .llvm_mca import own_mcpu
        mcpu = own_mcpu()
    rows = {}
    ok_docs = [d for d in docs if d.get("status") == "ok"]
    for d in ok_docs:
        form = catalogue.get(d["form"])
        if form is None:
            continue
        try:
            p = predict(form, mcpu=mcpu, iterations=200, llvm_mca=llvm_mca)
        except LlvmMcaFailed:
            continue
        ours_lat, ours_tp = _ours(d)
        lat_ok = within(ours_lat, p.latency, tolerance_of("latency_max", tolerance))
        tp_ok = within(ours_tp, p.rthroughput, tolerance_of("throughput", tolerance))
        rows[d["form"]] = {"latency": f"{p.latency:g}" if p.latency is not None else "—",
                           "throughput": f"{p.rthroughput:.2f}" if p.rthroughput is not None else "—",
                           "lat_ok": lat_ok, "tp_ok": tp_ok, "match": _match_text(lat_ok, tp_ok),
                           "latency_value": p.latency, "throughput_value": p.rthroughput,
                           "uops": p.uops, "simulated_throughput": p.simulated_throughput}
    out = _summarize(f"llvm-mca ({mcpu})", rows, len(ok_docs), tolerance)
    out["rows"] = rows
    return out
