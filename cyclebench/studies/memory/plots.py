"""The memory study's figures as models (reports/model.py): the latency curves (log x, edges
marked), the TLB curves and the bandwidth per level."""
from __future__ import annotations

from cyclebench.reports.model import Figure, Panel, Series
from cyclebench.study.plots import line

STYLE = {"sequential": "#2ca02c", "lmbench": "#ff7f0e", "multichase": "#9467bd", "random": "#1f77b4"}


def latency_figure(lat: dict, lv: dict, cpu: str) -> Figure:
    p = Panel("", "working set (bytes, log scale)", "cycles per load (TSC-calibrated, log scale)", xlog=2, ylog=True)
    for (layout, page), pts in sorted(lat["curves"].items()):
        pts = [x for x in pts if x["cycles"] > 0]
        if pts:
            p.series.append(Series(f"{layout}, {page} pages", [x["size"] for x in pts], [x["cycles"] for x in pts],
                                   {"color": STYLE.get(layout), "linestyle": "-" if page == "4k" else "--",
                                    "marker": "."}))
    for r in lv.get("rows", []):
        if r["edge_hi"]:
            p.vlines.append((r["last"], f"{r['level']} edge (measured)", {"color": "gray", "linestyle": ":"}))
        if r.get("sysfs"):
            p.vlines.append((r["sysfs"], f"{r['level']} (sysfs)", {"color": "black", "linestyle": "-.", "alpha": 0.4}))
    return Figure("latency", f"Load-to-use latency against working-set size ({cpu})", [p], size=(11, 6))


def tlb_figure(t: dict, cpu: str) -> Figure:
    p = Panel("", "pages touched (log scale)", "cycles per load (TSC-calibrated)", xlog=2)
    for page in ("4k", "2m"):
        rows = [r for r in t["rows"] if r["page"] == page]
        for key, style in (("paged", "-"), ("dense", ":")):
            line(p, f"{page} pages, {'one line per page' if key == 'paged' else 'dense twin'}",
                 [(r["pages"], r[key]) for r in rows], linestyle=style, marker="o", markersize=3)
    d = t.get("cpuid") or {}
    for n, label in ((d.get("l1_4k"), "L1 DTLB (CPUID)"), (d.get("l2_4k"), "L2 DTLB (CPUID)")):
        if n:
            p.vlines.append((n, label, {"color": "gray", "linestyle": ":"}))
    return Figure("tlb", f"TLB reach ({cpu})", [p], size=(10, 5.5))


def bandwidth_figure(b: dict, cpu: str) -> Figure:
    p = Panel("", "footprint of all arrays (bytes, log scale)", "GB/s (STREAM counting, best width)", xlog=2, ylog=True)
    best: dict = {}
    for r in b["rows"]:
        if r["cpus"] != 1:
            continue
        key = (r["op"] + (" NT" if r["nt"] else ""), r["footprint"])
        best[key] = max(best.get(key, 0.0), r["gbs"])
    for op in sorted({k[0] for k in best}):
        line(p, op, sorted((fp, v) for (o, fp), v in best.items() if o == op), marker="o")
    return Figure("bandwidth", f"Bandwidth per level, one CPU ({cpu})", [p], size=(10, 5.5))
