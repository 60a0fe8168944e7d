"""The blocks study's analysis: the share measured cleanly and why the rest were not, the error
table of every predictor (MAPE, Kendall's tau per application), and the scatter of predicted
against measured cycles per iteration."""
from __future__ import annotations

from cyclebench.blocks.accuracy import error_table
from cyclebench.blocks.measure import clean
from cyclebench.blocks.report import reasons
from cyclebench.reports.model import Column, Figure, Panel, Series, Table


def docs_and_predictions(records: list[dict]) -> tuple[list[dict], dict[str, dict[str, float | str]]]:
    docs = [r["result"] for r in records]
    preds: dict[str, dict[str, float | str]] = {}
    for r in records:
        for name, v in (r.get("predictions") or {}).items():
            preds.setdefault(name, {})[r["result"]["hex"]] = v
    return docs, preds


def share(docs: list[dict]) -> dict:
    n = len(docs)
    ok = [d for d in docs if clean(d)]
    return {"blocks": n, "clean": len(ok), "share": len(ok) / n if n else 0.0,
            "mapping_dependent": sum(d.get("mapping_dependent", False) for d in ok),
            "aliased": sum(d.get("aliased", False) for d in ok),
            "reasons": reasons(docs).most_common()}


def share_table(s: dict) -> Table:
    t = Table("blocks not measured cleanly, by reason", [Column("reason"), Column("blocks", align="right")],
              [{"reason": why, "blocks": k} for why, k in s["reasons"]])
    t.notes.append(f"{s['clean']} of {s['blocks']} blocks measured cleanly ({100 * s['share']:.1f}%); "
                   f"{s['mapping_dependent']} of them depend on the mapping, {s['aliased']} map several pages onto one")
    return t


def error_view(name: str, docs: list[dict], pred: dict) -> Table:
    rows = error_table(docs, pred)
    return Table(f"{name} against the measurement (uiCA-style: MAPE and Kendall's tau per application)",
                 [Column("application"), Column("blocks", align="right"), Column("mape", "MAPE %", "right", 1),
                  Column("median_ape", "median APE %", "right", 1), Column("tau", "Kendall tau", "right", 3)],
                 [{"application": r.application, "blocks": r.n,
                   "mape": None if r.mape is None else 100 * r.mape,
                   "median_ape": None if r.median_ape is None else 100 * r.median_ape, "tau": r.tau} for r in rows])


def scatter(name: str, docs: list[dict], pred: dict, cpu: str) -> Figure:
    pts = [(d["cycles"], pred[d["hex"]]) for d in docs
           if clean(d) and isinstance(pred.get(d["hex"]), float) and d["cycles"] > 0 and pred[d["hex"]] > 0]
    p = Panel("", "measured cycles per iteration (TSC-calibrated, log scale)",
              f"{name}: predicted cycles per iteration (log scale)", xlog=10, ylog=True)
    if pts:
        lo, hi = min(min(pts)), max(max(pts))
        p.series.append(Series(f"{len(pts)} blocks", [x for x, _ in pts], [y for _, y in pts],
                               {"linestyle": "none", "marker": ".", "alpha": 0.5}))
        p.series.append(Series("predicted = measured", [lo, hi], [lo, hi], {"color": "gray", "linestyle": "--"}))
    return Figure("scatter", f"{name} against cyclebench's measurement ({cpu})", [p], size=(7.5, 7))
