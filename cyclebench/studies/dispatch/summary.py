"""summary.md's own sections: the answers to the issue's questions and Ertl's statements, each
"holds" / "does not hold here" with the numbers; and the Method/Caveats lines of this study."""
from __future__ import annotations

from cyclebench.study.base import Section

from .published import figure, label, span


def _f(x, d=2):
    return "-" if x is None else f"{x:.{d}f}"


def _pub(build: str, col: str) -> str:
    """Ertl's search-1 range vs table 2 in column ``col``, e.g. "6.01-8.01 vs 26.01"."""
    lo, hi = span("clang-retpoline", "1", col)
    return f"{lo:.2f}-{hi:.2f} vs {figure(build, '2', 6, col):.2f}"


def findings(a: dict, ertl: dict, cpu: str, col: str) -> list[Section]:
    """``cpu``: our column's label; ``col``: the published column compared with."""
    L = []
    r = a.get("search_vs_table/clang-retpoline")
    if r:
        L.append(f"- **Binary search vs checked indirect call, with retpolines:** search 1 (mean over its 7 "
                 f"targets) {_f(r['search1'])} vs table 2 {_f(r['table2'])} cycles per iteration: the search "
                 f"{'wins' if r['search_wins'] else 'does not win'} here (fixed targets). Ertl's {col} "
                 f"(published): {_pub('clang-retpoline', col)}.")
    r0 = a.get("search_vs_table/clang-Os")
    if r0:
        L.append(f"- Without retpolines: search 1 {_f(r0['search1'])} vs table 2 {_f(r0['table2'])}; Ertl: "
                 f"'competitive with the no-retpoline' table (his {col}, published, retpoline search vs plain "
                 f"table: {_pub('clang-Os', col)}) -- "
                 f"{'holds' if r0['search1'] <= r0['table2'] + 1.0 else 'does not hold'} here (within 1 cycle).")
    for b in ("clang-Os", "clang-retpoline"):
        c = a.get(f"random_crossover/{b}")
        if c:
            rows = "; ".join(f"k={x['k']}: best search ({x['best_search']}) {_f(x['search'])} vs table {_f(x['table2'])}"
                             + ("" if x["stable"] else " (unstable)") for x in c["rows"])
            k = c["first_k_search_loses"]
            L.append(f"- **Random targets, {b}:** {rows}. "
                     + (f"The tree search stops being worth it at k = {k} targets." if k else
                        "The tree search stays cheaper at every k measured.")
                     + ("" if all(x["stable"] for x in c["rows"]) else
                        " Some of these figures are flagged unstable: treat the crossover as tentative."))
    for b, what in (("clang-cfi-icall", "cfi-icall"), ("clang-kcfi", "kcfi"), ("clang-retpoline", "retpoline"),
                    ("gcc-thunk", "GCC thunks"), ("clang-retthunk", "retpoline + return thunk")):
        o = a.get(f"over_plain/{b}")
        if o:
            L.append(f"- **{what} over the plain clang -Os build** (fixed target, cycles per iteration): "
                     + ", ".join(f"{d}: {v:+.2f}" for d, v in o.items()) + ".")
    p = a.get("penalty")
    if p:
        L.append(f"- Misprediction penalty in this harness (estimate): {_f(p['cycles'], 1)} cycles "
                 f"(one-branch dispatcher: fixed {_f(p['fixed'])}, 50% random {_f(p['random'])})"
                 + ("" if p["stable"] else ", flagged unstable") + ".")
    E = []
    d = a.get("dense_branches/clang-retpoline")
    if d:
        E.append(f"- 'The effect of too many branches in a 16-byte block is not really noticeable': B-tree leaf 4 "
                 f"(up to 5 branches, pairs of jcc in 16 bytes) {_f(d['btree4'])} vs binary search 1 "
                 f"{_f(d['search1'])}: difference {d['diff']:+.2f} cycles -- "
                 f"{'holds' if d['diff'] <= 0.5 else 'does not hold'} here (threshold +0.5).")
    x = a.get("extra_level/clang-retpoline")
    if x:
        E.append(f"- 'Another B-tree level costs about 2-3 cycles': two-level 3 (mean {_f(x['btree3'])}, range "
                 f"{_f(x['lo'])}-{_f(x['hi'])}) minus one-level 4 ({_f(x['btree4'])}) = {x['diff']:+.2f} cycles -- "
                 f"{'holds' if 1.5 <= x['diff'] <= 3.5 else 'does not hold'} here (accepted 1.5 to 3.5).")
    C = []
    for row, val in ertl.items():
        z = figure(*row, col)
        if z is not None and val is not None and not isinstance(z, tuple):
            C.append(f"- `{label(*row)}`: ours {val:.2f}, Ertl's {col} {z:.2f} (published), "
                     f"difference {val - z:+.2f}.")
    if x:
        lo, hi = figure("clang-retpoline", "3", "*", col)
        C.append(f"- `{label('clang-retpoline', '3', '*')}`: ours {_f(x['lo'])}-{_f(x['hi'])}, Ertl's {col} "
                 f"{lo}-{hi} (published).")
    return [Section("Findings (cycles per iteration, TSC-calibrated, " + cpu + ")", L or ["- Nothing measured."]),
            Section("Ertl's statements, here", E or ["- Not enough measured to judge."]),
            Section(f"Ours beside Ertl's {col} column (published)", C or ["- Nothing comparable measured."])]


def method_lines(cfg) -> list[str]:
    return [
        "- Each dispatcher is `long cb_d_X(unsigned index, long x)` in a shared object built per build; the "
        "routine harness calls it once per record of an index stream (`time_routine`, paired with the empty "
        "routine in one runner process). Cycles per iteration = the pass's gross cycles per call (Ertl's "
        "figure); increments are against the same build's direct call.",
        "- Every dispatcher of every build was checked before timing: each index returns x + its target's "
        "constant (ctypes in a child process), an out-of-range index aborts (SIGABRT in a forked child).",
        f"- Fixed targets: {cfg.fixed_calls} calls per pass; round-robin over k; random: {cfg.random_calls} "
        f"pre-generated indices (seed {cfg.seed}) replayed each repetition -- shorter arrays were learnt "
        "by the predictors here (4,096 random 50% branches cost ~1.4 cycles; 65,536 cost ~9).",
        "- Code size: nm -S for totals; each dispatcher single-stepped (trap flag, not timed) once per valid "
        "index for the bytes a path executes, split into the dispatcher's own, thunks' and CFI jump-table "
        "entries'.",
        "- The machine's `spectre_v2` line is in Machine; the kernel's mitigation does not change user code "
        "compiled without retpolines.",
    ]


def caveat_lines(cfg, missing: dict, cpu: str, col: str, same: bool) -> list[str]:
    out = [f"- Our column is {cpu}, named by the microarchitecture table from /proc/cpuinfo's family, model "
           "and CPUID features; "
           + (f"it is compared with Ertl's {col} column, the same core." if same else
              f"Ertl published no column for it: it is compared with his {col} column, his newest of that "
              "vendor."),
           "- Our loop is not Ertl's: the harness calls the dispatcher through a register (well predicted) and "
           "reloads index and x from memory each call; compare increments rather than absolute figures.",
           "- Mispredictions are estimates: no PMU, so (random - fixed) / measured penalty.",
           "- Cold-code (I-cache vs D-cache) runs were not made: clflush of code lines is not ordered against "
           "instruction fetch (the front end may fetch the dispatcher before the flush completes), so a "
           "'cold' figure would have no clear meaning; code size per path (code_size.txt) is given instead.",
           "- kcfi is the kernel's scheme; it runs in user space here (the hash check is ordinary code; a "
           "mismatch would trap with ud2). ENDBR64 (cf-branch) is a NOP here (no user-space IBT).",
           "- The return thunk is ours (`ret; int3`): the kernel's Retbleed/SRSO thunks cost more."]
    out += [f"- {b} was not built: {why}." for b, why in missing.items()]
    return out
