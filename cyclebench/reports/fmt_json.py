"""JSON: a report with metadata is one document (schema, the metadata block, findings, tables);
bare tables are their row data; measurement Results are their own documents."""
from __future__ import annotations

import json

from .base import Reporter
from .model import Report, Table


def table_doc(t: Table) -> dict:
    """A table's raw rows (each row's ``_data`` when it has one), notes and extra data."""
    return {"title": t.title, **t.data, "notes": t.notes,
            "rows": [r.get("_data", {k: v for k, v in r.items() if not k.startswith("_")}) for r in t.rows]}


class JsonReporter(Reporter):
    name = "json"
    suffix = ".json"

    def __init__(self, indent: int = 2):
        self.indent = indent

    def export(self, report: Report) -> str:
        if report.results:
            docs = [r.to_dict() for r in report.results]
            return json.dumps(docs[0] if len(docs) == 1 else docs, indent=self.indent) + "\n"
        if not (report.meta or report.findings or report.data):
            docs = [table_doc(t) for t in report.tables]
            doc = docs[0] if len(docs) == 1 else docs
        else:
            doc = {"schema": report.schema, "schema_version": report.schema_version,
                   "metadata": report.meta, "findings": report.findings}
            doc.update(report.data)
            doc.setdefault("tables", [table_doc(t) for t in report.tables])
        return json.dumps(doc, indent=self.indent, ensure_ascii=False, default=_default) + "\n"


def _default(o):
    if hasattr(o, "tolist"):          # numpy scalars and arrays
        return o.tolist()
    return str(o)
