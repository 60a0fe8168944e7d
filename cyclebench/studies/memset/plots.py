"""The memset study's figures as models (reports/model.py); the PNG and SVG reporters draw them.

fixed_sizes: two panels, log-x: up to 1 KiB with a linear y (the byte loop clipped off the top),
and 1 B to 1 MiB log-log. threshold: net cycles per call against the rep stosb cut-over, with the
reference's 800 B and glibc's threshold marked."""
from __future__ import annotations

from cyclebench.reports.model import Figure, Panel, Series

from .analysis import BASE, NEW, OLD, order

# matplotlib's tab20: a dark colour for each of the first ten lines, then the light ones
TAB20 = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728", "#ff9896",
         "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f", "#c7c7c7",
         "#bcbd22", "#dbdb8d", "#17becf", "#9edae5")
Y_CYCLES = "net cycles per call (fastest 10%)"


def fixed_figure(fixed: dict, impls: list[str], name: str, title: str) -> Figure:
    by = fixed["by_size"]
    names = order({n for v in by.values() for n in v}, impls)
    small = [v[n] for s, v in by.items() for n in v if s <= 1024 and n != "byte_loop"] or [0.0, 1.0]
    lo, hi = min(min(small), 0.0), max(small)
    pad = 0.05 * (hi - lo or 1.0)
    panels = [Panel("1 B .. 1 KiB, linear y (byte_loop runs off the top)", "size (bytes, log scale)", Y_CYCLES,
                    xlog=2, ylim=(lo - pad, hi + 3 * pad)),
              Panel("1 B .. 1 MiB, log y", "size (bytes, log scale)", Y_CYCLES, xlog=2, ylog=True, legend=False)]
    for panel, limit, logy in ((panels[0], 1024, False), (panels[1], 1 << 30, True)):
        for k, n in enumerate(names):
            pts = [(s, v[n]) for s, v in by.items() if n in v and s <= limit and (v[n] > 0 or not logy)]
            if not pts:
                continue
            xs, ys = zip(*pts)
            main = n in (BASE, OLD, NEW)
            panel.series.append(Series(n, list(xs), list(ys), {
                "linestyle": "-" if main else "--", "marker": ".", "markersize": 3,
                "linewidth": 1.6 if main else 1, "color": TAB20[(2 * k) % 20 if k < 10 else (2 * k + 1) % 20]}))
    return Figure(name, title, panels, size=(15, 6))


def threshold_figure(thr: dict, name: str, title: str) -> Figure:
    p = Panel(title, "rep stosb threshold (bytes)", Y_CYCLES, xlog=2)
    for c in thr["columns"]:
        xs, ys = zip(*sorted(c["cycles"].items()))
        p.series.append(Series(f"{c['kernel']}, {c['stream']}", list(xs), list(ys), {"marker": "o"}))
    p.vlines.append((thr["reference"], f"reference ({thr['reference']} B)", {"color": "gray", "linestyle": ":"}))
    if thr.get("glibc"):
        p.vlines.append((thr["glibc"], f"glibc x86_rep_stosb_threshold ({thr['glibc']} B)",
                         {"color": "black", "linestyle": "--"}))
    return Figure(name, title, [p])
