"""HTML: one self-contained page (no network, no server) from a Report and its sections: the
machine block, sortable and filterable tables, figures as inline SVG with how each was made.

The page is a Jinja2 template (``templates/page.html.j2``) with its stylesheet and a small script
(``templates/table.js``: filter, sort, row details) inlined. Rows are rendered once as HTML; the
script only hides and reorders them, which keeps 13,000-row instruction tables fast. A row's
``_detail`` (command, code, flags, warnings) goes into one JSON block per table and is shown when
the row is clicked; a row's ``_class`` becomes its class (``differs`` highlights it).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from .base import Reporter
from .fmt_plot import draw
from .model import Report, Table

TEMPLATES = Path(__file__).resolve().parent / "templates"


class HtmlReporter(Reporter):
    name = "html"
    suffix = ".html"

    def export(self, report: Report) -> str:
        import jinja2                      # only when a page is written: start-up stays fast
        from markupsafe import Markup      # jinja2's own dependency, likewise
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                                 trim_blocks=True, lstrip_blocks=True)
        sections = report.sections or [report]
        counter = iter(range(1 << 30))
        return env.get_template("page.html.j2").render(
            title=report.title or "cyclebench report", meta=report.meta,
            notes=report.findings.get("notes", []),
            sections=[_section(s, counter, Markup) for s in sections],
            style=(TEMPLATES / "page.css").read_text(), script=(TEMPLATES / "table.js").read_text())


def _section(r: Report, counter, Markup) -> dict:
    return {"title": r.title, "meta": r.meta, "findings": r.findings,
            "tables": [_table(t, next(counter), Markup) for t in r.tables],
            "figures": [{"name": f.name, "title": f.title, "about": f.about,
                         "svg": Markup(_inline_svg(draw(f, "svg").decode()))} for f in r.figures],
            "text": r.data.get("text")}


def _table(t: Table, n: int, Markup) -> dict:
    details = [r.get("_detail") for r in t.rows]
    rows = [{"cells": [t.cell(r, c.key) for c in t.columns], "cls": r.get("_class", ""),
             "detail": i if details[i] else None} for i, r in enumerate(t.rows)]
    data = json.dumps(details, ensure_ascii=False, default=str).replace("</", "<\\/")
    return {"id": f"t{n}", "title": t.title, "columns": t.columns, "rows": rows, "notes": t.notes,
            "details": Markup(data) if any(details) else None}


_PROLOG = re.compile(r"^.*?(?=<svg)", re.S)


def _inline_svg(svg: str) -> str:
    """matplotlib's SVG file without its XML prolog and DOCTYPE, to sit inside the page."""
    return _PROLOG.sub("", svg, count=1)
