"""Instruction results from several machines as one table with a column per CPU (uops.info's
layout): one latency and one throughput column per machine (vendor, family/model, microcode in
the header), rows whose figures differ between CPUs by more than compare's tolerance marked
``differs``, and optional published columns (``--compare FILE``, instructions/published.py).

Files are grouped by the machine in their header (machine_key); two files of one machine (a
fleet node that resumed into a second file) merge, the later file's form winning, unless their
headers record different measuring options (methods.py): one column would then pool two methods,
and that is refused (ResultFileError, exit 10). Machines measured with different options stay
apart, as they are: each column's options are a note under the table, and a warning says that a
difference may be the method's.
"""
from __future__ import annotations

from ..errors import ResultFileError
from ..instructions.compare import compare_published, within
from ..reports.model import NONE, Column, Table, num
from .loaders import Loaded, machine_key, machine_label
from .methods import describe, differences, method_of

TOLERANCE = 0.10           # two machines' figures further apart than this differ


def merge(items: list[Loaded]) -> list[tuple[str, dict, dict[str, dict], list[Loaded]]]:
    """[(label, machine, {form: doc}, files)] per machine, in first-seen order; ResultFileError when
    two files of one machine record different measuring options."""
    groups: dict[tuple, tuple[str, dict, dict, list]] = {}
    for it in items:
        key = machine_key(it.machine) if it.machine else ("file", str(it.path))
        label = machine_label(it.machine, f"unknown machine ({it.path.name})")
        _, _, forms, files = groups.setdefault(key, (label, it.machine, {}, []))
        for other in files:
            diff = differences(method_of(other), method_of(it))
            if diff:
                raise ResultFileError(
                    f"{other.path} and {it.path} are of one machine but were measured differently "
                    f"({'; '.join(diff)}): one column cannot hold both",
                    "report them separately, or measure one again with the other's options")
        files.append(it)
        forms.update({d["form"]: d for d in it.docs})
    return list(groups.values())


def method_notes(machines: list) -> list[str]:
    """One line per file of each column: the options it was measured with; a warning where the
    columns were measured differently."""
    notes = [f"{label}: {it.path.name} {describe(method_of(it))}" for label, _, _, files in machines for it in files]
    firsts = [method_of(files[0]) for _, _, _, files in machines]
    diff = sorted({d for m in firsts[1:] for d in differences(firsts[0], m)})
    if diff:
        notes.append(f"warning: the machines were measured with different options ({'; '.join(diff)}): "
                     "a difference between their columns may be the method's, not the CPU's")
    return notes


def machines_table(items: list[Loaded], published: dict | None = None, published_label: str = "published",
                   tolerance: float = TOLERANCE) -> Table:
    machines = merge(items)
    forms = list(dict.fromkeys(f for _, _, docs, _ in machines for f in docs))
    cols = [Column("form", code=True)]
    for i, (label, _, _, _) in enumerate(machines):
        cols += [Column(f"m{i}_lat", f"lat · {label}", "right"), Column(f"m{i}_tp", f"tp · {label}", "right")]
    pub_rows = {}
    if published is not None:
        firsts = [next(docs[f] for _, _, docs, _ in machines if f in docs) for f in forms]
        pub_rows = compare_published(firsts, published, published_label)["rows"]
        cols += [Column("pub_lat", f"lat · {published_label}", "right"),
                 Column("pub_tp", f"tp · {published_label}", "right")]
    cols.append(Column("differs", "differs between CPUs"))
    rows, differing = [], 0
    for f in forms:
        row, lats, tps = {"form": f}, [], []
        for i, (_, _, docs, _) in enumerate(machines):
            d = docs.get(f) or {}
            lat, tp = d.get("latency_max") or {}, d.get("throughput") or {}
            row[f"m{i}_lat"] = num(lat.get("value"), lat.get("bound"))
            row[f"m{i}_tp"] = num(tp.get("value"), tp.get("bound"))
            lats.append(lat.get("value"))
            tps.append(tp.get("value"))
        if published is not None:
            p = pub_rows.get(f) or {}
            row["pub_lat"], row["pub_tp"] = p.get("latency", NONE), p.get("throughput", NONE)
        what = [name for name, vals in (("latency", lats), ("throughput", tps)) if _differ(vals, tolerance)]
        row["differs"] = ", ".join(what)
        if what:
            row["_class"] = "differs"
            differing += 1
        rows.append(row)
    notes = [f"{len(machines)} machines, {len(forms)} forms; {differing} forms differ between CPUs by more "
             f"than {tolerance:.0%} (highlighted); ≤ marks an upper bound, — not measured there"]
    notes += method_notes(machines)
    return Table("instruction forms across machines", cols, rows, notes,
                 {"machines": [{"label": lb, "machine": m} for lb, m, _, _ in machines]})


def _differ(values: list, tolerance: float) -> bool:
    """True when two machines' figures for a form are not within the tolerance of each other."""
    vals = [v for v in values if v is not None]
    return any(within(a, b, tolerance) is False for a in vals for b in vals)
