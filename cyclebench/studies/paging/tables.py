"""The paging study's tables as shown (text, Markdown). Cycles are TSC-calibrated core cycles per
call, option or access; normalised columns divide by the baseline (the normal build, the plain
array), as the reference plotted. A trailing ``!`` marks a flagged figure (unstable, or a spread
above 5% of the median); ``-`` is not measured."""
from __future__ import annotations

from cyclebench.reports.model import Column, Table

FLAG = ("'!': flagged (time_program marked it unstable, or its repetitions' interquartile range exceeds 5% "
        "of the median): treat it with care.")


def kib(n) -> str:
    return "-" if n is None else (f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB")


def c(f, d=2, key="cycles") -> str:
    """A figure's cycles, flagged."""
    if not f or f.get(key) is None:
        return "-"
    return f"{f[key]:.{d}f}" + (" !" if f.get("flag") else "")


def x(v, flag=False, d=3) -> str:
    return "-" if v is None else f"{v:.{d}f}" + (" !" if flag else "")


def table(title, headers, rows, notes) -> Table:
    cols = [Column(f"c{i}", h, "left" if i == 0 else "right") for i, h in enumerate(headers)]
    return Table(title, cols, [{col.key: ("-" if v is None else str(v)) for col, v in zip(cols, r)} for r in rows], notes)


def splitstack_view(s: dict) -> Table:
    rows = []
    for r in s["rows"]:
        what = f"fib({r['arg']})" if r["bench"] == "fib" else f"sum, depth {r['arg']:,}"
        rows.append([what, c(r["normal"], 3), c(r.get("split_on"), 3), x(r.get("ratio_on"), r.get("ratio_on_flag")),
                     c(r.get("split_off"), 3), x(r.get("ratio_off"), r.get("ratio_off_flag")),
                     "-" if r.get("switches_per_iteration") is None else f"{r['switches_per_iteration']:,.0f}",
                     r.get("segments")])
    return table("Split stacks: cycles per call (TSC-calibrated), and normalised to the normal build",
                 ["benchmark", "normal", "split", "split/normal", "split, no sig. blocking", "/normal",
                  "segment switches per run", "segments allocated"], rows,
                 ["One iteration is one fib(ARG) or one sum(DEPTH); cycles per call divide it by the calls it makes "
                  "(2 fib(ARG+1) - 1, or DEPTH + 1). 'split': gcc -fsplit-stack linked by gold, libgcc's default "
                  "of blocking signals around each segment switch; 'no sig. blocking': "
                  "__splitstack_block_signals turned off.",
                  "Segment switches: __morestack's calls of __generic_morestack (counted through -Wl,--wrap) in one "
                  "iteration; segments allocated: distinct segments it handed out over the whole 2n run (kept and "
                  "reused after the first descent).", FLAG])


def hot_view(s: dict) -> Table:
    names = {"normal": "normal build, same loop", "split_no_crossing": "split build, one level above the edge",
             "split_crossing": "split build, every call crosses the edge",
             "split_crossing_nosig": "same, no signal blocking"}
    rows = [[names[k], c(f, 1), c(f, 1, "extra") if "extra" in f else "-"] for k, f in s["hot"].items()]
    return table("Hot split: one call per iteration at a segment edge (cycles per call, TSC-calibrated)",
                 ["case", "cycles per call", "extra over no crossing"], rows,
                 ["The program descends until a call of a 1 KiB-frame probe needs a new segment, then calls it in a "
                  "loop there: every call allocates-or-reuses a segment on the way in and releases it on the way out.",
                  FLAG])


def tree_view(t: dict) -> Table:
    rows = []
    for r in t["rows"]:
        rows.append([f"{r['input']} {r['layout']}", kib(r["page"]), c(r["plain"]), c(r["tree"]),
                     x(r["tree_ratio"], r["tree_flag"]), r["tree_depth"], c(r["tree3"]), x(r["tree3_ratio"], r["tree3_flag"])])
    return table("Blackscholes over tree arrays: cycles per option (TSC-calibrated), normalised to plain arrays",
                 ["input, layout", "page", "plain", "tree", "tree/plain", "depth", "no branches (depth 3)", "/plain"],
                 rows, ["soa: five input arrays (spot, strike, rate, volatility, time) plus type and price, each its own "
                        "array (the reference's base case); aos: one array of 32-byte structs (its 'Modified "
                        "Blackscholes'). One option priced once is one iteration; passes n and 2n are differenced, so "
                        "building the arrays is not counted. plain: one malloc per array.", FLAG])


def random_view(rd: dict) -> Table:
    rows = [[f"{r['size']} ({r['elements']:,} x 4 B)", c(r["plain"]), c(r["tree"]), x(r["tree_ratio"], r["tree_flag"]),
             r["tree_depth"], c(r["tree3"]), x(r["tree3_ratio"], r["tree3_flag"])] for r in rd["rows"]]
    return table("Random access: cycles per dependent access (TSC-calibrated), normalised to a plain array",
                 ["array", "plain", "tree", "tree/plain", "depth", "no branches (depth 3)", "/plain"], rows,
                 ["x -> a[x] with a[i] = (i * 1,000,000,009 + 1) mod n; 4 KiB tree pages; the small array is one "
                  "data page.", FLAG])


def huge_view(h: dict) -> Table:
    rows = []
    for r in h["rows"]:
        what = (f"chase, {r['what']} array ({r['size']:,} x 4 B)" if r["bench"] == "chase"
                else f"blackscholes {r['what']}, {r['input']}")
        to = r.get("tree_overhead")
        saved = r["k4"]["cycles"] - r["m2"]["cycles"] if r.get("resolved", True) else None
        rows.append([what, c(r["k4"]), c(r["m2"]), x(r["ratio"], r["flag"]), "-" if saved is None else f"{saved:.2f}",
                     f"{to['cycles']:.2f} ({to['kind']}, {kib(to['page'])})" if to else "-",
                     f"{r['huge_kb_4k']} / {r['huge_kb_2m']}"])
    return table("Huge pages: plain arrays on 4 KiB pages (MADV_NOHUGEPAGE) against 2 MiB pages (MADV_HUGEPAGE)",
                 ["workload", "4 KiB pages", "2 MiB pages", "2M/4K", "cycles saved", "tree's extra cycles",
                  "AnonHugePages kB (4K / 2M)"], rows,
                 ["Cycles per access or per option (TSC-calibrated). AnonHugePages: what the program's "
                  "/proc/self/smaps_rollup showed after building its arrays, so a 2 MiB figure says whether it got "
                  "huge pages. 'tree's extra cycles': the tree array's cost over plain on the same workload (from the "
                  "random-access and tree tables), to set beside what 2 MiB pages save.", FLAG])


def instructions_view(rows: list[dict]) -> Table:
    def what(r):
        if r["bench"] in ("fib", "sum"):
            return f"{r['bench']}({r['arg']}) {r['build']}, per call"
        if r["bench"] == "hot":
            return f"hot split {'crossing' if r['arg'] else 'no crossing'}, signals {r['signals']}, per call"
        if r["bench"] == "chase":
            return f"chase small {r['kind']}, per access"
        return f"blackscholes {r['layout']} {r['input']} {r['kind']}" + (f" {kib(r['page'])}" if r["kind"] != "plain" else "") + ", per option"
    return table("Instructions executed (valgrind callgrind Ir: an exact count, not an estimate)",
                 ["what", "instructions"], [[what(r), f"{r['instructions']:.1f}"] for r in rows],
                 ["No PMU here, so no instruction counter: these are callgrind's counts of the user-space instructions "
                  "executed (system calls count as one; the kernel's work is not seen), from runs at n and 2n "
                  "iterations, differenced."])
