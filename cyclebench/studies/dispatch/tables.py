"""The study's tables (reports.model.Table): Ertl's table beside ours, cycles per iteration and
increments by build, and the target patterns (code size: codesize.py). A figure flagged unstable carries ``*``;
a build that could not be made or measured says why."""
from __future__ import annotations

from cyclebench.reports.model import Column, Table

from . import analysis as an
from .builds import BY_NAME
from .experiments import ONE_TARGET
from .published import CPUS, ROWS, SOURCE, label

ORDER = ("direct", "0", "0m", "2", "1", "4", "3", "switch")
NAMES = {"direct": "direct call (baseline)", "0": "0 indirect, pointer in register",
         "0m": "0m indirect, pointer from memory", "2": "2 table + bounds check", "1": "1 binary search (7)",
         "4": "4 B-tree leaf (8)", "3": "3 two-level B-tree (73)", "switch": "C switch (73 cases)"}
STAR = "* flagged unstable: the host was noisy during that measurement (IQR above 10% or measure() said so)."


def fmt(pt: dict | None, key: str = "iter") -> str:
    if pt is None:
        return "-"
    return f"{pt[key]:.2f}" + ("" if pt.get("stable", True) else "*")


def _pub(x) -> str:
    return f"{x[0]}-{x[1]}" if isinstance(x, tuple) else f"{x:.2f}"


def ertl_table(v: dict, here: str, col: str) -> Table:
    cols = [Column("row", "row")] + [Column(c, f"{c} (pub.)", "right") for c in CPUS] + \
           [Column("ours", f"{here} (measured)", "right"), Column("inc", "ours - direct", "right")]
    rows = []
    for (b, d, t), pub in ROWS:
        pt = an.combine([p for (bb, dd, tt), p in v["fixed"].items() if bb == b and dd == d]) if t == "*" \
            else v["fixed"].get((b, d, t))
        ours = "-" if pt is None else (f"{pt['lo']:.2f}-{pt['hi']:.2f}" + ("" if pt["stable"] else "*")
                                       if t == "*" else fmt(pt))
        inc = an.increment(v, b, pt)
        row = {"row": label(b, d, t), **{c: _pub(x) for c, x in zip(CPUS, pub)}, "ours": ours,
               "inc": "-" if inc is None else f"{inc:+.2f}"}
        rows.append(row)
    for b in ("clang-Os", "clang-retpoline"):                    # our rows Ertl did not publish
        for d in ("direct", "0m", "switch"):
            pt = v["fixed"].get((b, d, ONE_TARGET[d]))
            if pt:
                inc = an.increment(v, b, pt)
                rows.append({"row": label(b, d, ONE_TARGET[d]) + " (ours only)", **{c: "" for c in CPUS},
                             "ours": fmt(pt), "inc": f"{inc:+.2f}" if inc is not None else "-"})
    n3 = sum(1 for (b, d, _) in v["fixed"] if b == "clang-retpoline" and d == "3")
    return Table("Ertl's table: cycles per iteration of the loop around one dispatch (fixed target)", cols, rows, [
        f"Published columns: {SOURCE}; CPUs as he names them. summary.md compares ours with his {col}.",
        f"Ours: TSC-calibrated core cycles (no PMU) on {here}; clang 16 -Os; the loop is "
        "cyclebench's routine pass (load index and x, indirect call of the dispatcher, dec, jnz): gross "
        "cycles per call, mean of the fastest 10% of repetitions.",
        f"'dispatch-retpol 3 *': the range over {n3} of the 73 targets measured.",
        "Our table (2, 0m) has 73 entries; Ertl's 8. Our 0 hides a constant pointer from the compiler.", STAR])


def builds_table(v: dict, builds: list[str], missing: dict, key: str) -> Table:
    cols = [Column("d", "dispatcher")] + [Column(b, b, "right") for b in builds] + \
           [Column(b, b, "right") for b in missing]
    rows = []
    for d in ORDER:
        row = {"d": NAMES[d]}
        for b in builds:
            pt = v["fixed"].get((b, d, ONE_TARGET[d]))
            if key == "iter":
                row[b] = fmt(pt)
            else:
                inc = an.increment(v, b, pt)
                row[b] = "-" if inc is None else f"{inc:+.2f}" + ("" if pt["stable"] else "*")
        for b in missing:
            row[b] = "not built"
        rows.append(row)
    what = "cycles per iteration" if key == "iter" else "increment over the same build's direct call (cycles)"
    notes = [f"Fixed target: {ONE_TARGET['2']} for direct/0/0m/2/switch/1, {ONE_TARGET['4']} for 4, "
             f"{ONE_TARGET['3']} for 3."]
    notes += [f"{b}: {' '.join(BY_NAME[b].cflags)} -- {BY_NAME[b].what}"
              + (f"; {BY_NAME[b].caveat}" if BY_NAME[b].caveat else "") for b in builds]
    notes += [f"{b}: not built here: {why}" for b, why in missing.items()]
    notes += ["1, 4 and 3 are hand-written assembly with direct branches: only ENDBR64 (cf-branch) "
              "changes them; under cfi-icall they reach each target through its CFI jump-table entry "
              "(one extra jmp), being outside the LTO unit.", STAR]
    return Table(f"By build: {what}, fixed target", cols, rows, notes)


def pattern_table(v: dict, build: str, ks: list[int], pen: dict | None) -> Table:
    cols = [Column("d", "dispatcher"), Column("fixed", "fixed", "right")]
    cols += [Column(f"rr{k}", f"rr {k}", "right") for k in ks]
    cols += [Column(f"rnd{k}", f"rand {k}", "right") for k in ks]
    cols += [Column(f"mp{k}", f"~mispred/call rand {k}", "right") for k in ks]
    rows = []
    for d in an.pattern_dispatchers(v, build):
        row = {"d": NAMES[d], "fixed": fmt(an.fixed_of(v, build, d))}
        for k in ks:
            row[f"rr{k}"] = fmt(v["pattern"].get((build, d, "roundrobin", k)))
            row[f"rnd{k}"] = fmt(v["pattern"].get((build, d, "random", k)))
            m = an.mispredictions(v, build, d, k, pen)
            row[f"mp{k}"] = "-" if m is None else f"{m:.2f}"
        rows.append(row)
    pen_txt = "not measured" if pen is None else f"{pen['cycles']:.1f} cycles" + ("" if pen["stable"] else " (unstable)")
    return Table(f"Target patterns, {build}: cycles per iteration", cols, rows, [
        "fixed: mean over the fixed targets measured; rr k: round-robin 0..k-1; rand k: uniform random "
        "indices from a long pre-generated array (replayed every repetition).",
        f"~mispred/call is an ESTIMATE (no PMU here): (rand - fixed) / penalty, with the penalty "
        f"measured as 2 x (50%-random - fixed) of a one-branch dispatcher in the same harness: {pen_txt}.",
        STAR])
