"""Markdown: one pipe table per Table, its title as a heading and its notes as a list."""
from __future__ import annotations

from .base import Reporter
from .model import NONE, Report


class MarkdownReporter(Reporter):
    name = "markdown"
    suffix = ".md"

    def export(self, report: Report) -> str:
        out = []
        for t in report.tables:
            if t.title:
                out.append(f"### {t.title}\n")
            out.append("| " + " | ".join(c.header for c in t.columns) + " |")
            out.append("| " + " | ".join("---:" if c.align == "right" else "---" for c in t.columns) + " |")
            for row in t.rows:
                out.append("| " + " | ".join(_md(t.cell(row, c.key), c.code) for c in t.columns) + " |")
            if t.notes:
                out.append("")
                out += [f"- {n}" for n in t.notes]
            out.append("")
        return "\n".join(out)


def _md(text: str, code: bool) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return f"`{text}`" if code and text != NONE else text
