"""Text: tables as rich console tables (boxed lines, no colour unless asked), measurement
Results nanoBench's way."""
from __future__ import annotations

import io

from .base import Reporter
from .measurement_text import results_text
from .model import Report

WIDE = 100_000     # width for files: a table as wide as it needs, never folded


class TextReporter(Reporter):
    name = "text"
    suffix = ".txt"

    def __init__(self, width: int | None = None, color: bool = False, verbose: bool = False):
        self.width = width or 200
        self.color = color
        self.verbose = verbose

    def export(self, report: Report) -> str:
        if report.results:
            return results_text(report.results, self.verbose)
        from rich import box
        from rich.console import Console
        from rich.table import Table as RichTable
        from rich.text import Text
        out = io.StringIO()
        console = Console(file=out, width=self.width, force_terminal=self.color,
                          no_color=not self.color, highlight=False, soft_wrap=False)
        for t in report.tables:
            rt = RichTable(title=Text(t.title) if t.title else None, box=box.SIMPLE_HEAVY, show_lines=False)
            for c in t.columns:
                rt.add_column(c.header, justify=c.align, overflow="fold")
            for row in t.rows:
                rt.add_row(*(Text(t.cell(row, c.key)) for c in t.columns))   # no markup: [rsi]
            console.print(rt)
            for n in t.notes:
                console.print(f"# {n}", markup=False)
        return out.getvalue()
