"""The paging study's figures in the reference's form: time normalised to the baseline as bars
(per page size for the tree arrays; per benchmark for split stacks and random access), with a line
at 1.0 for the baseline."""
from __future__ import annotations

from cyclebench.reports.model import Figure, Panel
from cyclebench.study.plots import grouped_bars

from .tables import kib

BASE = (1.0, "baseline (plain array / normal build)", {"color": "black", "linewidth": 0.8})
COLORS = {"soa tree": "#1f77b4", "aos tree": "#ff7f0e", "soa tree3": "#2ca02c", "aos tree3": "#d62728"}


def _bars(panel: Panel, groups: list[str], series: dict[str, list]) -> None:
    grouped_bars(panel, groups, series, COLORS)
    panel.hlines.append(BASE)


def tree_figure(t: dict, cpu: str) -> Figure:
    panels = []
    for inp in sorted({r["input"] for r in t["rows"]}):
        rows = [r for r in t["rows"] if r["input"] == inp]
        pages = sorted({r["page"] for r in rows})
        series = {}
        for layout in ("soa", "aos"):
            for kind in ("tree", "tree3"):
                by = {r["page"]: r[f"{kind}_ratio"] for r in rows if r["layout"] == layout}
                if any(v is not None for v in by.values()):
                    series[f"{layout} {kind}"] = [by.get(p) for p in pages]
        p = Panel(f"{inp} input ({cpu}); tree3 = no branches", "page size", "time per option / plain arrays")
        _bars(p, [kib(pg) for pg in pages], series)
        top = max((y for ys in series.values() for y in ys if y is not None), default=1.0)
        p.ylim = (0.0, max(1.2, top) * 1.35)                 # room for the legend above the bars
        panels.append(p)
    return Figure("tree", f"Blackscholes over tree arrays, normalised to plain arrays ({cpu}); "
                          "tree3 = no branches", panels or [Panel()], size=(6 + 4 * max(0, len(panels) - 1), 5))


def split_figure(s: dict, cpu: str) -> Figure:
    groups = [f"fib({r['arg']})" if r["bench"] == "fib" else f"sum {r['arg']:,}" for r in s["rows"]]
    p = Panel("", "benchmark", "time / normal build (log scale)", ylog=True)
    _bars(p, groups, {"split stack": [r.get("ratio_on") for r in s["rows"]],
                      "split, no signal blocking": [r.get("ratio_off") for r in s["rows"]]})
    return Figure("splitstack", f"Split stacks, time normalised to the normal build ({cpu})", [p], size=(9, 5))


def random_figure(rd: dict, cpu: str) -> Figure:
    groups = [f"{r['size']} array" for r in rd["rows"]]
    p = Panel("", "array", "time per access / plain array")
    _bars(p, groups, {"tree": [r.get("tree_ratio") for r in rd["rows"]],
                      "tree, no branches": [r.get("tree3_ratio") for r in rd["rows"]]})
    return Figure("random", f"Random access, normalised to a plain array ({cpu})", [p], size=(7, 5))
