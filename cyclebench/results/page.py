"""The HTML report's content: one section (a Report) per input, built from what the loaders read.

* asm: the results table (one row per event) and a per-repetition plot of each snippet's cycles;
* inst: the instruction table (reports/tables.py); inst files from several machines become one
  table with a column per CPU (machines.py);
* study: the study's own tables and figures (analysed again from its records), every
  measurement as a row, the summary.

Every row and figure carries how it was made (figures.py): the command, the code, the warnings;
every table of figures says under it which measuring options made them (methods.py).
"""
from __future__ import annotations

import json
from collections import defaultdict

from ..machine.uarch import core_name
from ..reports.model import Column, Figure, Panel, Report, Series, Table, result_table
from ..reports.tables import instruction_table
from .figures import asm_command, measured
from .loaders import Loaded, machine_key
from .machines import machines_table
from .methods import describe, method_of


def build_page(items: list[Loaded], published: dict | None = None, published_label: str = "published") -> Report:
    """One Report whose sections the HTML reporter renders, in input order (inst inputs of several
    machines are merged into one section where the first of them stood)."""
    inst = [it for it in items if it.kind == "inst"]
    several = len({machine_key(it.machine) if it.machine else str(it.path) for it in inst}) > 1
    sections, merged = [], False
    for it in items:
        if it.kind == "inst" and (several or published is not None):
            if not merged:
                sections.append(_machines_section(inst, published, published_label))
                merged = True
        else:
            sections.append({"asm": _asm_section, "inst": _inst_section, "study": _study_section}[it.kind](it))
    notes = [f"inputs: {', '.join(str(it.path) for it in items)}"]
    notes += [n for it in items for n in it.notes]
    return Report(title="cyclebench report", sections=sections, findings={"notes": notes})


def _details(rows: list[dict], figures) -> None:
    by_key = {m.key: m.about for m in figures}
    for row, key in rows:
        if key in by_key:
            row["_detail"] = by_key[key]
            if by_key[key]["flags"]:
                row["_class"] = "unstable" if "unstable" in by_key[key]["flags"] else ""


def _asm_section(it: Loaded) -> Report:
    table = result_table(it.results)
    table.title = "measurements (per copy)"
    table.notes.append(f"{it.path.name}: {describe(method_of(it))}")
    figs = measured(it)
    keyed = [(row, f"{row['code']} [{row['event']}]") for row in table.rows]
    _details(keyed, figs)
    plots = []
    for n, r in enumerate(it.results):
        e = r.events.get("cycles")
        if e is None or not e.samples:
            continue
        m = next(f for f in figs if f.key == f"{r.parameters.get('code')} [cycles]")
        plots.append(Figure(f"asm{n}", f"{r.parameters.get('code')}: cycles per copy, each repetition",
                            [Panel(xlabel="repetition", ylabel="cycles per copy",
                                   series=[Series("repetitions", list(range(len(e.samples))), e.samples,
                                                  {"marker": "o", "linestyle": ""})], legend=False)],
                            size=(7.0, 3.0), about=m.about))
    return Report(title=f"asm: {it.path.name}", tables=[table], figures=plots,
                  meta={"machine": it.machine, "command": asm_command(it.results[0].parameters)},
                  findings={"warnings": list(dict.fromkeys(w for r in it.results for w in r.warnings))})


def _inst_section(it: Loaded) -> Report:
    where = f" measured on {core_name(it.machine)}" if it.machine else ""
    table = instruction_table(it.docs, title=f"instruction forms{where}")
    table.notes.append(f"{it.path.name}: {describe(method_of(it))}")
    _form_details(table, [it])
    return Report(title=f"inst: {it.path.name} ({len(it.docs)} forms)", tables=[table],
                  meta={"machine": it.machine})


def _machines_section(items: list[Loaded], published, label) -> Report:
    table = machines_table(items, published, label)
    _form_details(table, items)
    return Report(title=f"instruction forms: {len(table.data['machines'])} machine(s)", tables=[table],
                  meta={"machines": [(m["label"], m["machine"]) for m in table.data["machines"]]})


def _form_details(table: Table, items: list[Loaded]) -> None:
    """Each form row's command, code per latency pair and throughput, flags and warnings (from the
    first input that measured the form)."""
    per_form: dict[str, list] = {}
    for it in items:
        found = defaultdict(list)
        for m in measured(it):
            found[m.key.split(" latency ")[0].removesuffix(" throughput")].append(m)
        for form, ms in found.items():
            per_form.setdefault(form, ms)
    for row in table.rows:
        ms = per_form.get(row["form"])
        if not ms:
            continue
        row["_detail"] = {"command": ms[0].command, "code": "\n".join(f"{m.label}: {m.code}" for m in ms),
                          "flags": sorted({f for m in ms for f in m.flags}),
                          "warnings": list(dict.fromkeys(w for m in ms for w in m.warnings))}
        if "unstable" in row["_detail"]["flags"] and not row.get("_class"):
            row["_class"] = "unstable"


def _study_section(it: Loaded) -> Report:
    folder = it.study
    figs = measured(it)
    facts = folder.facts
    warnings = [f"{facts.unstable} of {facts.measurements} measurements unstable"] if facts.unstable else []
    warnings += [f"{text} ({n}×)" for text, n in facts.warnings[:20]]
    flags = sorted({f for m in figs for f in m.flags})
    params = json.dumps(folder.config.to_dict() if hasattr(folder.config, "to_dict") else {}, indent=1, default=str)
    about = {"command": folder.command, "flags": flags, "warnings": warnings,
             "code": f"cyclebench/studies/{folder.study.name}/ (analyse → plots), from "
                     f"{len(folder.records)} records in {folder.path / 'results.jsonl'}; config:\n{params}"}
    plots, tables, seen = [], [], set()
    for f in folder.analysis.files:
        if f.figure is not None:
            f.figure.about = about
            plots.append(f.figure)
        for t in f.tables:
            if id(t) not in seen and not f.name.endswith(".csv"):
                seen.add(id(t))
                tables.append(t)
    tables.append(_measurements_table(figs))
    tables[-1].notes.append(describe(method_of(it)))
    try:
        text = (folder.path / "summary.md").read_text()
    except OSError:
        text = None
    return Report(title=f"{folder.study.name} study: {folder.path}", tables=tables, figures=plots,
                  meta={"machine": it.machine, "command": folder.command, "parameters": params},
                  findings={"warnings": warnings[:1]}, data={"text": text})


def _measurements_table(figs) -> Table:
    cols = [Column("figure"), Column("value", "cycles", "right", 3), Column("n", "repetitions", "right"),
            Column("flags")]
    rows = [{"figure": m.label, "value": m.value, "n": len(m.samples) or None, "flags": ", ".join(m.flags),
             "_detail": m.about, "_class": "unstable" if "unstable" in m.flags else ""} for m in figs]
    return Table("every measurement (click a row for its command, code and warnings)", cols, rows)
