"""The figures: cycles per iteration by dispatcher for each build (fixed target; grouped bars, the
dispatchers named on the axis), and cost against the number of targets for each pattern
(round-robin, random)."""
from __future__ import annotations

import textwrap

from cyclebench.reports.model import Figure, Panel
from cyclebench.study.plots import grouped_bars, line

from . import analysis as an
from .experiments import ONE_TARGET
from .tables import NAMES, ORDER

Y = "cycles per iteration (fastest 10%)"


def by_dispatcher(v: dict, builds: list[str], cpu: str) -> Figure:
    """Grouped bars: one group per dispatcher (named on the axis), one bar per build."""
    ds = [d for d in ORDER if any((b, d, ONE_TARGET[d]) in v["fixed"] for b in builds)]
    series = {b: [(v["fixed"].get((b, d, ONE_TARGET[d])) or {}).get("iter") for d in ds] for b in builds}
    p = Panel(f"Fixed target, by build ({cpu}, TSC-calibrated)", "dispatcher", Y)
    grouped_bars(p, [textwrap.fill(NAMES[d], 16) for d in ds], series)
    return Figure("by_dispatcher", "Cycles per iteration by dispatcher", [p], size=(13, 6))


def by_targets(v: dict, builds: list[str], cpu: str) -> Figure:
    panels = []
    for b in builds:
        for pattern in ("roundrobin", "random"):
            p = Panel(f"{b}, {pattern}", "targets k (log scale)", Y, xlog=2)
            for d in an.pattern_dispatchers(v, b):
                line(p, d, sorted((k, pt["iter"]) for (bb, dd, pp, k), pt in v["pattern"].items()
                                  if bb == b and dd == d and pp == pattern), marker="o")
            panels.append(p)
    return Figure("by_targets", f"Cost against the number of targets ({cpu})", panels,
                  size=(4.5 * max(1, len(panels)), 4.5))
