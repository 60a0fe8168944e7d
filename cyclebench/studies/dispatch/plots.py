"""The figures: cycles per iteration by dispatcher for each build (fixed target), and cost against
the number of targets for each pattern (round-robin, random)."""
from __future__ import annotations

from cyclebench.reports.model import Figure, Panel, Series

from . import analysis as an
from .experiments import ONE_TARGET
from .tables import ORDER

Y = "cycles per iteration (fastest 10%)"


def by_dispatcher(v: dict, builds: list[str], cpu: str) -> Figure:
    p = Panel(f"Fixed target, by build ({cpu}, TSC-calibrated)", "dispatcher (position)", Y)
    for b in builds:
        pts = [(i, v["fixed"][(b, d, ONE_TARGET[d])]["iter"]) for i, d in enumerate(ORDER)
               if (b, d, ONE_TARGET[d]) in v["fixed"]]
        if pts:
            xs, ys = zip(*pts)
            p.series.append(Series(b, list(xs), list(ys), {"marker": "o"}))
    p.title += ": " + ", ".join(f"{i}={d}" for i, d in enumerate(ORDER))
    return Figure("by_dispatcher", "Cycles per iteration by dispatcher", [p], size=(12, 6))


def by_targets(v: dict, builds: list[str], cpu: str) -> Figure:
    panels = []
    for b in builds:
        for pattern in ("roundrobin", "random"):
            p = Panel(f"{b}, {pattern}", "targets k (log scale)", Y, xlog=2)
            for d in an.pattern_dispatchers(v, b):
                pts = sorted((k, pt["iter"]) for (bb, dd, pp, k), pt in v["pattern"].items()
                             if bb == b and dd == d and pp == pattern)
                if pts:
                    xs, ys = zip(*pts)
                    p.series.append(Series(d, list(xs), list(ys), {"marker": "o"}))
            panels.append(p)
    return Figure("by_targets", f"Cost against the number of targets ({cpu})", panels,
                  size=(4.5 * max(1, len(panels)), 4.5))
