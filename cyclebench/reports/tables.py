"""Tables: one row model for instruction tables (``cyclebench inst``) and sequence IPC
(``cyclebench seq``), rendered by every format (reports/registry.py) from the same rows.

Rows are dicts of *display strings* keyed by column, plus a ``_data`` entry with the raw values
for JSON. Number notation follows uops.info (see reports/model.py).
"""
from __future__ import annotations

from .model import NONE, Column, Table, num
from .registry import get_reporter

# ------------------------------------------------------------------------------ instruction rows

def pair_text(p: dict) -> str:
    start = p["start"].split(" (")[0]
    end = p["end"].split(" (")[0]
    if p.get("value") is None:
        return f"{start}→{end} {NONE}"
    text = f"{start}→{end} {num(p['value'], p['bound'])}"
    return text + (f" ({p['label']})" if p.get("label") else "")


def _read_as(p: dict | None) -> str:
    """The µops a form's inferred resources read as, beside its published ports."""
    if not p:
        return NONE
    return f"{p['read_as']} ✓" if p["agree"] else f"{p['read_as']} ✗ (published {p['published']})"


def instruction_table(docs: list[dict], comparisons: dict[str, dict] | None = None,
                      summary: list[str] | None = None, title: str = "instruction forms") -> Table:
    """One row per form document (see instructions/characterize.py); ``comparisons``: column
    key -> {form name: {"latency": str, "throughput": str, "match": str}} from
    instructions/compare.py."""
    comparisons = comparisons or {}
    cols = [Column("form", "form", code=True), Column("extension", "extension"),
            Column("latency", "latency", "right"), Column("pairs", "latency per operand pair"),
            Column("throughput", "throughput", "right"), Column("uops", "µops", "right"),
            Column("ports", "ports")]
    if any("inferred_resources" in d for d in docs):
        cols.append(Column("inferred", "resources (inferred from throughput)"))
    if any("inferred_ports" in d for d in docs):
        cols.append(Column("inferred_ports", "read as µops (inferred)"))
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
               "inferred": d.get("inferred_resources") or NONE, "inferred_ports": _read_as(d.get("inferred_ports")),
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


# ------------------------------------------------------------------------- agreement

def agreement_tables(a: dict) -> list[Table]:
    """Match rates by extension and the mismatches with their causes (instructions/agreement.py)."""
    figs = (("latency_min", "smallest latency"), ("latency_max", "largest latency"), ("throughput", "throughput"))
    cols = [Column("extension", "extension")] + [Column(k, t, "right") for k, t in figs]
    rows = [{"extension": "all", **{k: a["figures"][k]["rate"] for k, _ in figs}}]
    rows += [{"extension": e, **{k: v[k]["rate"] for k, _ in figs}} for e, v in a["by_extension"].items()]
    title = f"agreement: {a['measured_on']} (measured) vs {a['published_label']} (published)"
    rates = Table(title, cols, rows, [f"counts: {a['counts']}"])
    mcols = [Column("form", "form", code=True), Column("figure", "figure"), Column("ours", "ours", "right"),
             Column("published", "published", "right"), Column("cause", "cause")]
    mrows = [{"form": m["form"], "figure": m["figure"], "ours": num(m["ours"], m["ours_bound"]),
              "published": m["published_text"], "cause": m["cause"], "_data": m} for m in a["mismatches"]]
    notes = [f"{k}: {v}" for k, v in a["causes"].items()]
    return [rates, Table(f"mismatches ({len(mrows)})", mcols, mrows, notes)]


# --------------------------------------------------------------------------------- sequence rows

def sequence_table(rows_in: list[dict], title: str = "instruction sequences") -> Table:
    """``rows_in``: per sequence {"sequence", "instructions", "cycles", "uncertainty", "ipc",
    "stable", "warnings"}."""
    cols = [Column("sequence", "sequence", code=True), Column("instructions", "instructions/copy", "right"),
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

def get_table_reporter(name: str, **kwargs):
    """The reporter for a format (cli/inst.py and cli/seq.py call it by this name)."""
    return get_reporter(name, **kwargs)
