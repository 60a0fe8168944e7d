"""The bounds study's figures: slowdowns of every build over native per kernel (with the
published GCC-MPX and ICC-MPX bars), and the check sequences' IPC per kind of check (with the
published MPX IPC)."""
from __future__ import annotations

from cyclebench.reports.model import Figure, Panel
from cyclebench.study.plots import grouped_bars

from . import snippets
from .tables import BUILD_NAMES


def overhead_figure(rows, cpu: str) -> Figure:
    groups = [r["kernel"] for r in rows]
    series = {BUILD_NAMES[b] + " (ours)": [(r["builds"].get(b) or {}).get("ratio") for r in rows]
              for b in ("asan", "asan_writes", "ubsan", "inline", "mpx_emu")}
    series["GCC-MPX (published)"] = [r["published"]["gcc_mpx"] for r in rows]
    series["ICC-MPX (published)"] = [r["published"]["icc_mpx"] for r in rows]
    p = Panel("", "kernel", "time / native (log scale)", ylog=True)
    grouped_bars(p, groups, series)
    p.hlines.append((1.0, "native", {"color": "black", "linewidth": 0.8}))
    return Figure("overhead", f"Bounds checking: slowdown over native ({cpu}; MPX figures published, Skylake)",
                  [p], size=(11, 5))


def sequences_figure(rows, cpu: str) -> Figure:
    panels = []
    for access in ("load", "store"):
        rr = [r for r in rows if r["access"] == access]
        series = {f"{k} (ours{', NOP' if k == 'bnd' else ''})": [(r[k] or {}).get("ipc") for r in rr]
                  for k in snippets.KINDS}
        series["MPX (published)"] = [r["published_ipc"] for r in rr]
        p = Panel(f"{access}", "check sequence", "IPC")
        grouped_bars(p, [(snippets.CHECK_NAMES[r["check"]] or "none").replace(" +", "") for r in rr], series)
        panels.append(p)
    return Figure("sequences", f"IPC of bounds-check sequences ({cpu}; bnd* {snippets.NOP}; MPX published)",
                  panels, size=(13, 5))
