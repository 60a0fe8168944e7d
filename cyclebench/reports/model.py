"""What every exporter renders: tables (columns and rows of cells), figures (panels of series) and
a report that carries them with its metadata block (machine, method, parameters) and findings.

A row may carry ``_detail`` (command, code, flags, warnings: shown when the row is clicked in
HTML) and ``_class`` (an HTML row class such as ``differs``); only HTML reads them.

Cells hold either display strings (the instruction tables format their own numbers) or raw values:
a float is shown with its column's ``digits``, a bool as yes/no, None as ``—``; CSV keeps raw
values at full precision. Number notation follows uops.info: ``3.00`` exact, ``≤5.00`` an upper
bound, ``≥2.00`` a lower bound, ``—`` not measured.
"""
from __future__ import annotations

from dataclasses import dataclass, field

BOUND_MARK = {"exact": "", "upper": "≤", "lower": "≥", None: ""}
NONE = "—"


def num(value, bound=None, digits: int = 2) -> str:
    if value is None:
        return NONE
    return f"{BOUND_MARK.get(bound, '')}{value:.{digits}f}"


@dataclass
class Column:
    """A table column: its key in the rows, header, alignment and decimals."""
    key: str
    header: str = ""
    align: str = "left"          # left | right
    digits: int | None = None    # decimals for float cells in text and Markdown
    code: bool = False           # Markdown shows the cell as `code`

    def __post_init__(self):
        self.header = self.header or self.key


@dataclass
class Table:
    """A titled table of rows (dicts keyed by column) with notes."""
    title: str
    columns: list[Column]
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)     # extra JSON (comparison sources ...)

    def cell(self, row: dict, key: str) -> str:
        """The cell as displayed (text, Markdown)."""
        v = row.get(key)
        if v is None or v == "":
            return NONE
        if isinstance(v, bool):
            return "yes" if v else "no"
        col = self._column(key)
        if isinstance(v, float) and col is not None and col.digits is not None:
            return f"{v:.{col.digits}f}"
        return str(v)

    def raw(self, row: dict, key: str) -> str:
        """The cell for CSV: raw values at full precision, empty where nothing was measured."""
        v = row.get(key)
        return "" if v is None or v == NONE else str(v)

    def _column(self, key: str) -> Column | None:
        return next((c for c in self.columns if c.key == key), None)

    @classmethod
    def of_records(cls, title: str, records: list[dict], notes: list[str] | None = None) -> "Table":
        """A long-format data table: one column per key (in first-seen order), one row per record."""
        keys = list(dict.fromkeys(k for r in records for k in r))
        return cls(title, [Column(k) for k in keys], list(records), list(notes or []))


@dataclass
class Series:
    """One plotted line: label, x and y values and matplotlib style."""
    label: str
    x: list
    y: list
    style: dict = field(default_factory=dict)    # matplotlib plot() keywords: marker, linestyle ...
    kind: str = "line"                           # "line" (plot) or "bar" (style: width, color ...)


@dataclass
class Panel:
    """One plot panel: titles, axes and series."""
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    series: list[Series] = field(default_factory=list)
    xlog: int | None = None                      # log base of the x axis, None for linear
    ylog: bool = False
    ylim: tuple[float, float] | None = None
    vlines: list[tuple[float, str, dict]] = field(default_factory=list)   # (x, label, style)
    hlines: list[tuple[float, str, dict]] = field(default_factory=list)   # (y, label, style)
    xticks: list[tuple[float, str]] = field(default_factory=list)         # (x, label); empty: automatic
    legend: bool = True


@dataclass
class Figure:
    """A named figure of panels, saved as an image."""
    name: str                                    # file stem, e.g. "fixed_sizes"
    title: str
    panels: list[Panel]
    size: tuple[float, float] = (9.0, 5.0)       # inches
    dpi: int = 110
    about: dict = field(default_factory=dict)    # how it was made: command, code, flags, warnings (HTML)


@dataclass
class Report:
    """Everything one output holds. ``results`` are measurement Results (``cyclebench asm``): the
    text exporter prints them nanoBench's way and JSON as their own documents."""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    meta: dict = field(default_factory=dict)         # the metadata block (pyperf-style)
    findings: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)         # extra top-level JSON
    results: list = field(default_factory=list)
    sections: list = field(default_factory=list)     # sub-reports, one per input of an HTML page
    title: str = ""
    schema: str = "cyclebench.report"
    schema_version: int = 1


def as_report(obj) -> Report:
    """A Report from a Report, a Figure, or a list of Tables or of measurement Results."""
    if isinstance(obj, Report):
        return obj
    if isinstance(obj, Figure):
        return Report(figures=[obj])
    items = list(obj)
    if all(isinstance(t, Table) for t in items):
        return Report(tables=items)
    return Report(tables=[result_table(items)], results=items)


def result_table(results: list) -> Table:
    """One row per event of each measurement Result."""
    cols = [Column("code", code=True), Column("event"), Column("label"),
            Column("value", align="right", digits=4), Column("uncertainty", "±", "right", 4),
            Column("unit"), Column("aggregate"), Column("min", align="right", digits=4),
            Column("median", align="right", digits=4), Column("max", align="right", digits=4),
            Column("stable"), Column("upper_bound", "< (below resolution)", "right")]
    rows = [{"code": r.parameters.get("code"), "event": e.name, "label": e.label, "value": e.value,
             "uncertainty": e.uncertainty, "unit": e.unit, "aggregate": e.aggregate, "min": e.min,
             "median": e.median, "max": e.max, "stable": r.stable,
             "upper_bound": getattr(e, "upper_bound", None)}
            for r in results for e in r.events.values()]
    return Table("", cols, rows)
