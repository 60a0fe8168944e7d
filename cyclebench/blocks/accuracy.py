"""A predictor's error against the measurements, in the style of uiCA's tables: per application
and overall, the number of blocks, MAPE (mean of |predicted - measured| / measured) and Kendall's
tau (scipy.stats.kendalltau, tau-b), over the blocks measured cleanly that the predictor has a
figure for. Also the run-to-run agreement of two measurement files."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from .measure import clean


@dataclass
class Row:
    application: str
    n: int
    mape: float | None          # fraction, e.g. 0.153
    tau: float | None
    median_ape: float | None


def _row(app: str, pairs: list[tuple[float, float]]) -> Row:
    if not pairs:
        return Row(app, 0, None, None, None)
    ape = [abs(p - m) / m for m, p in pairs]
    tau = None
    if len(pairs) >= 2:
        from scipy.stats import kendalltau
        t = kendalltau([m for m, _ in pairs], [p for _, p in pairs]).statistic
        tau = None if t != t else float(t)       # NaN when one side is constant
    return Row(app, len(pairs), sum(ape) / len(ape), tau, statistics.median(ape))


def error_table(docs: list[dict], predicted: dict[str, float | str]) -> list[Row]:
    """One row per application (sorted by name), then 'overall'."""
    by_app: dict[str, list[tuple[float, float]]] = {}
    for d in docs:
        p = predicted.get(d["hex"])
        if clean(d) and isinstance(p, float) and d["cycles"] > 0:
            by_app.setdefault(d.get("application") or "-", []).append((d["cycles"], p))
    rows = [_row(a, by_app[a]) for a in sorted(by_app)]
    rows.append(_row("overall", [x for v in by_app.values() for x in v]))
    return rows


def format_table(rows: list[Row], predictor: str) -> str:
    w = max([len(r.application) for r in rows] + [11])
    lines = [f"{predictor} against cyclebench's measurement",
             f"{'application':<{w}}  {'blocks':>6}  {'MAPE':>7}  {'median APE':>10}  {'Kendall tau':>11}"]
    for r in rows:
        pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"
        tau = "-" if r.tau is None else f"{r.tau:.3f}"
        lines.append(f"{r.application:<{w}}  {r.n:>6}  {pct(r.mape):>7}  {pct(r.median_ape):>10}  {tau:>11}")
    return "\n".join(lines)


def agreement(first: list[dict], second: list[dict]) -> dict:
    """Relative difference between two runs' figures for the blocks both measured cleanly."""
    a = {d["hex"]: d for d in first if clean(d)}
    diffs = sorted(abs(d["cycles"] - a[d["hex"]]["cycles"]) / a[d["hex"]]["cycles"]
                   for d in second if clean(d) and d["hex"] in a and a[d["hex"]]["cycles"] > 0)
    if not diffs:
        return {"n": 0}
    q = lambda f: diffs[min(len(diffs) - 1, int(f * len(diffs)))]
    return {"n": len(diffs), "median": q(0.5), "p90": q(0.9), "p95": q(0.95), "max": diffs[-1],
            "within_1pct": sum(x <= 0.01 for x in diffs) / len(diffs),
            "within_5pct": sum(x <= 0.05 for x in diffs) / len(diffs)}
