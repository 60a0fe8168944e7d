"""Tables: one row model for instruction tables (``cyclebench inst``) and sequence IPC
(``cyclebench seq``), rendered by every format from the same rows.

A :class:`Table` has columns (key, header, alignment) and rows (dicts of *display strings* keyed by
column, plus a ``_data`` entry with the raw values for JSON), and notes printed under it.  The
reporters here implement :class:`reports.base.Reporter`'s ``render()`` for tables: rich console
text, Markdown, CSV and JSON.

Number notation follows uops.info: ``3.00`` exact, ``≤5.00`` an upper bound, ``≥2.00`` a lower
bound, ``—`` not measured.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from ..errors import UsageError
from .base import Reporter

BOUND_MARK = {"exact": "", "upper": "≤", "lower": "≥", None: ""}
NONE = "—"


def num(value, bound=None, digits: int = 2) -> str:
    if value is None:
        return NONE
    return f"{BOUND_MARK.get(bound, '')}{value:.{digits}f}"


@dataclass
class Column:
    key: str
    header: str
    align: str = "left"       # left | right


@dataclass
class Table:
    title: str
    columns: list[Column]
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)     # extra JSON (schema, machine, summary ...)

    def cell(self, row: dict, key: str) -> str:
        v = row.get(key)
        return NONE if v is None or v == "" else str(v)


# ------------------------------------------------------------------------------ instruction rows

def pair_text(p: dict) -> str:
    start = p["start"].split(" (")[0]
    end = p["end"].split(" (")[0]
    if p.get("value") is None:
        return f"{start}→{end} {NONE}"
    return f"{start}→{end} {num(p['value'], p['bound'])}"


def instruction_table(docs: list[dict], comparisons: dict[str, dict] | None = None,
                      summary: list[str] | None = None, title: str = "instruction forms") -> Table:
    """One row per form document (see instructions/characterize.py); ``comparisons``: column
    key -> {form name: {"latency": str, "throughput": str, "match": str}} from
    instructions/compare.py."""
    comparisons = comparisons or {}
    cols = [Column("form", "form"), Column("extension", "extension"),
            Column("latency", "latency", "right"), Column("pairs", "latency per operand pair"),
            Column("throughput", "throughput", "right"), Column("uops", "µops", "right"),
            Column("ports", "ports")]
    for key, comp in comparisons.items():
        label = comp["label"]
        cols += [Column(f"{key}_latency", f"{label} lat", "right"),
                 Column(f"{key}_throughput", f"{label} tp", "right"),
                 Column(f"{key}_match", "match")]
    cols.append(Column("status", "status / notes"))
    rows = []
    reasons = set()
    for d in docs:
        lat = d.get("latency_max") or {}
        tp = d.get("throughput") or {}
        row = {"form": d["form"], "extension": ",".join(d.get("extensions") or []),
               "latency": num(lat.get("value"), lat.get("bound")),
               "pairs": "; ".join(pair_text(p) for p in d.get("latency") or []),
               "throughput": num(tp.get("value"), tp.get("bound")),
               "uops": num(d.get("uops")), "ports": d.get("ports") or NONE,
               "status": _status(d), "_data": d}
        if d.get("status") == "ok" and d.get("uops") is None and d.get("uops_reason"):
            reasons.add(d["uops_reason"])
        for key, comp in comparisons.items():
            c = comp["rows"].get(d["form"])
            row[f"{key}_latency"] = c["latency"] if c else NONE
            row[f"{key}_throughput"] = c["throughput"] if c else NONE
            row[f"{key}_match"] = c["match"] if c else NONE
        rows.append(row)
    notes = []
    for r in sorted(reasons):
        notes.append(f"µops and ports: not measured ({r})")
    notes.append("latency: the largest over operand pairs; ≤ is an upper bound (uops.info's notation); "
                 "throughput: cycles per instruction over independent copies")
    notes += summary or []
    data = {"comparison": {k: {kk: vv for kk, vv in v.items() if kk != "rows"} for k, v in comparisons.items()}}
    return Table(title, cols, rows, notes, data)


def _status(d: dict) -> str:
    st = d.get("status")
    if st != "ok":
        return f"{st}: {d.get('reason')}"
    bits = []
    if d.get("stable") is False:
        bits.append("UNSTABLE")
    tp = d.get("throughput") or {}
    if tp.get("note"):
        bits.append(tp["note"])
    bits += d.get("notes") or []
    errs = [p for p in d.get("latency") or [] if p.get("error")]
    if errs:
        bits.append(f"{len(errs)} pair(s) not measured: {errs[0]['error']}")
    return "; ".join(bits) or "ok"


# --------------------------------------------------------------------------------- sequence rows

def sequence_table(rows_in: list[dict], title: str = "instruction sequences") -> Table:
    """``rows_in``: per sequence {"sequence", "instructions", "cycles", "uncertainty", "ipc",
    "stable", "warnings"}."""
    cols = [Column("sequence", "sequence"), Column("instructions", "instructions/copy", "right"),
            Column("cycles", "cycles/copy", "right"), Column("ipc", "IPC", "right"),
            Column("stable", "stable")]
    rows, notes = [], []
    for r in rows_in:
        counted = r.get("instructions_source") == "counted"
        rows.append({"sequence": r["sequence"],
                     "instructions": f"{r['instructions']:.2f}" if counted else str(r["instructions"]),
                     "cycles": f"{r['cycles']:.3f} ± {r['uncertainty']:.3f}",
                     "ipc": ("≤" if r.get("ipc_bound") == "upper" else "") + f"{r['ipc']:.2f}",
                     "stable": "yes" if r["stable"] else "NO", "_data": r})
        for w in r.get("warnings") or []:
            if w not in notes:
                notes.append(w)
    how = ("retired instructions counted by the PMU" if rows_in and all(
        r.get("instructions_source") == "counted" for r in rows_in)
        else "instructions counted by decoding one copy with iced-x86 (static)")
    notes.insert(0, f"independent copies of each sequence, unrolled; {how}; IPC = instructions per "
                    "core cycle; ≤ marks an upper bound")
    return Table(title, cols, rows, notes)


# ------------------------------------------------------------------------------------ reporters

class TableTextReporter(Reporter):
    """A rich console table (boxed when the output is a terminal, plain ASCII otherwise)."""
    name = "text"

    def __init__(self, width: int | None = None, color: bool = False):
        self.width = width
        self.color = color

    def render(self, tables: list[Table]) -> str:
        from rich import box
        from rich.console import Console
        from rich.table import Table as RichTable
        from rich.text import Text
        out = io.StringIO()
        console = Console(file=out, width=self.width or 200, force_terminal=self.color,
                          no_color=not self.color, highlight=False, soft_wrap=False)
        for t in tables:
            rt = RichTable(title=Text(t.title), box=box.SIMPLE_HEAVY, show_lines=False)
            for c in t.columns:
                rt.add_column(c.header, justify=c.align, overflow="fold")
            for row in t.rows:
                rt.add_row(*(Text(t.cell(row, c.key)) for c in t.columns))   # no markup: [rsi]
            console.print(rt)
            for n in t.notes:
                console.print(f"# {n}", markup=False)
        return out.getvalue()


class TableMarkdownReporter(Reporter):
    name = "markdown"

    def render(self, tables: list[Table]) -> str:
        out = []
        for t in tables:
            out.append(f"### {t.title}\n")
            out.append("| " + " | ".join(c.header for c in t.columns) + " |")
            out.append("| " + " | ".join("---:" if c.align == "right" else "---" for c in t.columns) + " |")
            for row in t.rows:
                out.append("| " + " | ".join(_md(t.cell(row, c.key), c.key) for c in t.columns) + " |")
            if t.notes:
                out.append("")
                out += [f"- {n}" for n in t.notes]
            out.append("")
        return "\n".join(out)


def _md(text: str, key: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return f"`{text}`" if key in ("form", "sequence") and text != NONE else text


class TableCsvReporter(Reporter):
    name = "csv"

    def render(self, tables: list[Table]) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for i, t in enumerate(tables):
            if i:
                w.writerow([])
            w.writerow([c.key for c in t.columns])
            for row in t.rows:
                w.writerow(["" if t.cell(row, c.key) == NONE else t.cell(row, c.key) for c in t.columns])
        return buf.getvalue()


class TableJsonReporter(Reporter):
    """The raw row data (each row's ``_data``) plus the table's notes and extra data."""
    name = "json"

    def render(self, tables: list[Table]) -> str:
        docs = [{"title": t.title, **t.data, "notes": t.notes,
                 "rows": [r.get("_data", {k: v for k, v in r.items() if not k.startswith("_")})
                          for r in t.rows]} for t in tables]
        return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False) + "\n"


TABLE_FORMATS = {c.name: c for c in (TableTextReporter, TableMarkdownReporter, TableCsvReporter,
                                     TableJsonReporter)}


def get_table_reporter(name: str, **kwargs) -> Reporter:
    if name not in TABLE_FORMATS:
        raise UsageError(f"unknown output format '{name}'", "use one of " + ", ".join(TABLE_FORMATS))
    return TABLE_FORMATS[name](**kwargs) if name == "text" else TABLE_FORMATS[name]()
