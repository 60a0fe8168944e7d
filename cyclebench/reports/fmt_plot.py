"""Plots: a Figure drawn with matplotlib (Agg) as PNG or SVG. One figure per file."""
from __future__ import annotations

import io
import math

from ..errors import UsageError
from .base import Reporter
from .model import Figure, Report


class PlotReporter(Reporter):
    binary = True

    def export(self, report: Report) -> bytes:
        if len(report.figures) != 1:
            raise UsageError(f"a {self.name} file holds one figure, not {len(report.figures)}",
                             "write each figure to its own file")
        return draw(report.figures[0], self.name)


class PngReporter(PlotReporter):
    name = "png"
    suffix = ".png"


class SvgReporter(PlotReporter):
    name = "svg"
    suffix = ".svg"


def draw(fig: Figure, fmt: str) -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mfig, axes = plt.subplots(1, len(fig.panels), figsize=fig.size, squeeze=False)
    for ax, p in zip(axes[0], fig.panels):
        for s in p.series:
            if s.kind == "bar":
                ax.bar(s.x, s.y, label=s.label, **s.style)
            else:
                ax.plot(s.x, s.y, label=s.label, **s.style)
        for x, label, style in p.vlines:
            ax.axvline(x, label=label, **style)
        for y, label, style in p.hlines:
            ax.axhline(y, label=label, **style)
        if p.xticks:
            ax.set_xticks([x for x, _ in p.xticks], [t for _, t in p.xticks])
        if p.xlog:
            ax.set_xscale("log", base=p.xlog)
            _plain_log_labels(ax.xaxis, p.xlog)
        if p.ylog:
            ax.set_yscale("log")
            _plain_log_labels(ax.yaxis, 10)
        if p.ylim:
            ax.set_ylim(*p.ylim)
        ax.set_xlabel(p.xlabel)
        ax.set_ylabel(p.ylabel)
        ax.grid(True, which="both", alpha=0.3)
        if p.title:
            ax.set_title(p.title)
        if p.legend and (p.series or p.vlines or p.hlines):
            ax.legend(fontsize=8)
    if len(fig.panels) > 1:
        mfig.suptitle(fig.title)
    elif fig.title and not fig.panels[0].title:
        axes[0][0].set_title(fig.title)
    mfig.tight_layout()
    buf = io.BytesIO()
    # an SVG without a date and with fixed ids: the same figure gives the same file
    with matplotlib.rc_context({"svg.hashsalt": "cyclebench"}):
        mfig.savefig(buf, format=fmt, dpi=fig.dpi, metadata={"Date": None} if fmt == "svg" else None)
    plt.close(mfig)
    return buf.getvalue()


def _plain_log_labels(axis, base: int) -> None:
    """Plain tick labels on a log axis ("64", "4K", "1M" in base 2) instead of matplotlib's
    mathtext powers: easier to read, and laying out mathtext was a third of a figure's time.
    Minor ticks are labelled only when fewer than two major ticks are in view."""
    from matplotlib import ticker

    def majors_in_view() -> int:
        lo, hi = sorted(axis.get_view_interval())
        if lo <= 0:
            return 2
        return math.floor(math.log(hi, base) + 1e-9) - math.ceil(math.log(lo, base) - 1e-9) + 1

    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: _compact(v, base)))
    axis.set_minor_formatter(ticker.FuncFormatter(
        lambda v, _: _compact(v, base) if majors_in_view() < 2 else ""))


def _compact(v: float, base: int) -> str:
    if base == 2 and v >= 1024:
        for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
            if v >= scale:
                return f"{v / scale:g}{unit}"
    return f"{v:g}"

