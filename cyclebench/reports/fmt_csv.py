"""CSV: one header row of column keys per Table, raw values at full precision, a blank row
between tables."""
from __future__ import annotations

import io

from .base import Reporter
from .model import Report


class CsvReporter(Reporter):
    name = "csv"
    suffix = ".csv"

    def export(self, report: Report) -> str:
        import csv          # here: every command imports the formats, few write CSV
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        for i, t in enumerate(report.tables):
            if i:
                w.writerow([])
            if not t.columns:
                continue
            w.writerow([c.key for c in t.columns])
            for row in t.rows:
                w.writerow([t.raw(row, c.key) for c in t.columns])
        return buf.getvalue()
