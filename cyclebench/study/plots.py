"""The study kit's plots, on the report model (reports/model.py): grouped bars over labelled
categories, and lines from points.

Categories (builds, kernels, dispatchers, page sizes) go on the x axis by name as groups of bars,
one bar per series in each group, never as numbered positions explained in a title. Lines are for
quantities (sizes, counts, thresholds) on a numeric axis."""
from __future__ import annotations

from typing import Iterable

from ..reports.model import Panel, Series


def grouped_bars(panel: Panel, groups: list[str], series: dict[str, list], colors: dict | None = None,
                 width: float = 0.8) -> Panel:
    """One group of bars per category in ``groups`` (the x tick labels), one bar per series in each;
    a series holds one value per group, None where it has none (no bar)."""
    n = max(1, len(series))
    w = width / n
    for k, (label, ys) in enumerate(series.items()):
        if len(ys) != len(groups):
            raise ValueError(f"series {label!r} has {len(ys)} values for {len(groups)} groups")
        pts = [(i + (k - (n - 1) / 2) * w, y) for i, y in enumerate(ys) if y is not None]
        if pts:
            style = {"width": w}
            if colors and colors.get(label):
                style["color"] = colors[label]
            panel.series.append(Series(label, [p[0] for p in pts], [p[1] for p in pts], style, kind="bar"))
    panel.xticks = list(enumerate(groups))
    return panel


def line(panel: Panel, label: str, points: Iterable[tuple], **style) -> Panel:
    """A line through ``points`` ((x, y) pairs; those with y None are left out), when any remain."""
    pts = [(x, y) for x, y in points if y is not None]
    if pts:
        panel.series.append(Series(label, [x for x, _ in pts], [y for _, y in pts], style))
    return panel
