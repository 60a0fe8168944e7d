"""Writing a study's outputs through the reporters: each OutputFile in the format its suffix
names, ``tables.txt`` (what the run prints), ``summary.md`` and ``results.json`` (the metadata
block: machine, method, parameters; then findings and the study's tables); ``records_csv``, a
study's ``records.csv`` (its rows from ``flat``)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..errors import ResultFileError, UsageError
from ..reports.model import Report, Table
from ..reports.fmt_text import WIDE
from ..reports.registry import FORMATS, get_reporter
from .base import Analysis, OutputFile, Study
from .facts import RunFacts
from .summary import build_summary

BY_SUFFIX = {cls.suffix: name for name, cls in FORMATS.items()}


def reporter_for(path: Path):
    fmt = BY_SUFFIX.get(path.suffix)
    if fmt is None:
        raise UsageError(f"no output format writes {path.suffix or 'files without a suffix'} files",
                         "use one of " + ", ".join(sorted(BY_SUFFIX)))
    return get_reporter(fmt, width=WIDE) if fmt == "text" else get_reporter(fmt)


def metadata(study: Study, config, facts: RunFacts) -> dict:
    to_dict = getattr(config, "to_dict", None)
    return {"study": study.name, "machine": facts.machine,
            "method": {k: v for k, v in facts.to_dict().items() if k not in ("machine", "study")},
            "parameters": to_dict() if to_dict else {}}


def write_outputs(study: Study, config, analysis: Analysis, facts: RunFacts, out: Path) -> dict[str, Path]:
    paths: dict[str, Path] = {}
    for f in analysis.files:
        content = f.figure if f.figure is not None else Report(tables=f.tables)
        paths[f.name] = reporter_for(out / f.name).write(content, out / f.name)
    paths["tables"] = reporter_for(out / "tables.txt").write(analysis.console, out / "tables.txt")
    summary = out / "summary.md"
    _write_text(summary, build_summary(study, config, analysis, facts))
    paths["summary"] = summary
    doc = Report(meta=metadata(study, config, facts), findings=analysis.findings, data=analysis.data,
                 schema=f"cyclebench.{study.name}-study", schema_version=study.schema_version)
    paths["json"] = get_reporter("json").write(doc, out / "results.json")
    return paths


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as e:
        raise ResultFileError(f"cannot write {path}: {e.strerror}",
                              "check the path, its permissions and the free space") from None


def flat(records: list[dict], figures: Callable[[dict, dict], dict]) -> list[dict]:
    """``records.csv``'s rows: one per measured thing, a group record's members each, with its
    experiment, routine, parameters (a member's own beside the group's) and ``figures(result,
    record)``."""
    out = []
    for r in records:
        base = {"experiment": r.get("experiment"), "routine": r.get("routine"),
                **{k: v for k, v in (r.get("params") or {}).items() if k not in ("members", "builds")}}
        for m in r.get("members") or [r]:
            row = dict(base) if m is r else {**base, **(m.get("params") or {}),
                                              **({"build": m["build"]} if "build" in m else {})}
            out.append({**row, **figures(m["result"], r)})
    return out


def records_csv(records: list[dict], figures: Callable[[dict, dict], dict]) -> OutputFile:
    """A study's ``records.csv``: one table of ``flat(records, figures)``."""
    return OutputFile("records.csv", [Table.of_records("records", flat(records, figures))])
