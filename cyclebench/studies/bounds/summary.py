"""The bounds study's summary: each finding of the reference, its figure labelled published (a
Skylake with MPX), our figure beside it, and "holds", "does not hold" or "cannot be tested here",
with the criterion and why."""
from __future__ import annotations

from cyclebench.study.base import Section

from . import published as pub

P = "published, Skylake with MPX"
NO_MPX = ("**cannot be tested here**: this CPU has no MPX (its bnd* opcodes run as hint-NOPs) and GCC has dropped "
          "-mmpx")


FASTER = 0.8     # a checking build this much faster than native differs by more than its checks


def _v(ok, flag=False, *ratios):
    """The verdict; "not resolved" when a ratio it rests on says a checking build ran well below
    native's time: then the builds differ by more than their checks (code or data placement)."""
    if any(r is not None and r < FASTER for r in ratios):
        return (f"**not resolved here** (a checking build ran below {FASTER}x native's time: the builds differ by "
                "more than their checks, e.g. where their allocators place the data)")
    return ("**holds**" if ok else "**does not hold**") + (" (on flagged figures: re-run before relying on it)"
                                                           if flag else "")


def _ratio(rows, kernel, build):
    r = next((x for x in rows if x["kernel"] == kernel), None)
    f = r and r["builds"].get(build)
    return (f["ratio"], f["ratio_flag"]) if f and f["ratio"] is not None else (None, False)


def instruction_findings(ins, seq) -> list[str]:
    out = [f"- bnd* latencies and throughputs (bndcl/bndcu r: 2 per cycle, m: 1 per cycle on port 1; bndldx 0.4, "
           f"bndstx 0.3 per cycle; {P}): {NO_MPX}. The table gives the hint-NOP figures, labelled, and the software "
           "stand-ins' costs."]
    soft = {r["replaces"]: r for r in ins if r["kind"] == "software"}
    if "bndcl b, r" in soft and "bndcl b, m" in soft:
        r, m = soft["bndcl b, r"], soft["bndcl b, m"]
        out.append(f"- Software checks here: cmp + jb {r['cycles']:.2f} cycles per copy, lea + cmp + jb "
                   f"{m['cycles']:.2f}; the emulated bndldx {soft.get('bndldx b, m', {}).get('cycles', float('nan')):.2f}, "
                   f"bndstx {soft.get('bndstx m, b', {}).get('cycles', float('nan')):.2f} (measured).")
    by = {(r["access"], r["check"]): r for r in seq}
    lr, lm = by.get(("load", "lu r")), by.get(("load", "lu m"))
    if lr and lm and lr["cmp"] and lm["cmp"]:
        slower = lm["cmp"]["cycles"] / lr["cmp"]["cycles"] if lr["cmp"]["cycles"] > 0 else None
        flag = lr["cmp"]["flag"] or lm["cmp"]["flag"]
        out.append(f"- The address-expression check is a bottleneck: 'bndcl m + bndcu m + load' at IPC 1.5 against "
                   f"3 for the register form ({P}). For MPX itself {NO_MPX.split(':')[0]}. For the software check "
                   f"here: both checks in the lea form {lm['cmp']['cycles']:.3f} cycles per load against "
                   f"{lr['cmp']['cycles']:.3f} in the register form (IPC {lm['cmp']['ipc']:.2f} against "
                   f"{lr['cmp']['ipc']:.2f}): for the software check {_v(slower is not None and slower > 1.10, flag)} "
                   "(criterion: over 10% more cycles per checked load; measured).")
    base = by.get(("load", None))
    if base and base["cmp"]:
        out.append(f"- Native loads at IPC 2 and stores at 1 ({P}); this CPU's own baselines: load IPC "
                   f"{base['cmp']['ipc']:.2f}, store IPC {by[('store', None)]['cmp']['ipc']:.2f} (measured).")
    out.append(f"- MPX does not raise IPC ({P}): {NO_MPX}.")
    return out


def _finding(claim: str, published: str, ours: str, verdict: str, criterion: str) -> str:
    """One finding: the reference's claim and figures (published), ours, the verdict and its criterion."""
    return f"- {claim} ({published}; {P}). {ours}: {verdict} (criterion: {criterion}; measured)."


def overhead_findings(rows) -> list[str]:
    if not rows:
        return ["- The four microbenchmarks: not measured in this run."]
    out = []
    aw, awf = _ratio(rows, "arraywrite", "inline")
    ar, arf = _ratio(rows, "arrayread", "inline")
    gcc = f"GCC-MPX {pub.slowdown('arraywrite', 'gcc'):.2f}x and {pub.slowdown('arrayread', 'gcc'):.2f}x"
    if aw and ar:
        out.append(_finding("Bare checks in registers cost about 50% on arraywrite and arrayread", gcc,
                            f"For MPX {NO_MPX.split(':')[0]}; the same checks inlined in software here cost {aw:.2f}x "
                            f"and {ar:.2f}x", _v(1.25 <= aw <= 1.75 and 1.25 <= ar <= 1.75, awf or arf, aw, ar),
                            "both between 1.25x and 1.75x"))
        out.append(_finding("Writes and reads are slowed alike", gcc, f"The inline checks here: {aw:.2f}x on writes, "
                            f"{ar:.2f}x on reads", _v(abs(aw - ar) <= 0.15, awf or arf, aw, ar), "within 0.15"))
    sn, snf = _ratio(rows, "struct", "mpx_emu")
    si, sif = _ratio(rows, "struct", "inline")
    if sn and si:
        out.append(_finding("Narrowing bounds is expensive", f"struct {pub.slowdown('struct', 'gcc'):.2f}x (GCC), "
                            f"{pub.slowdown('struct', 'icc'):.2f}x (ICC), "
                            f"{pub.slowdown('struct', 'gcc', 'mpx_no_narrow_bounds'):.2f}x without narrowing",
                            f"The emulated MPX narrows in registers (two address computations; MPX paid bndmk and "
                            f"bndmov through the stack): {sn:.2f}x against {si:.2f}x for the same checks without",
                            _v(sn > 1.10 * si, snf or sif, sn, si), "narrowing adds over 10%"))
    pe, pef = _ratio(rows, "ptrcreation", "mpx_emu")
    if pe:
        largest = all(pe >= ((r["builds"].get("mpx_emu") or {}).get("ratio") or 0) for r in rows)
        out.append(_finding("Storing bounds is the most expensive MPX operation",
                            f"ptrcreation {pub.slowdown('ptrcreation', 'gcc'):.1f}x (GCC), "
                            f"{pub.slowdown('ptrcreation', 'icc'):.1f}x (ICC)", f"The emulated bndstx here: {pe:.2f}x",
                            _v(pe >= 2.5 and largest, pef), "at least 2.5x, and the emulated MPX's largest slowdown"))
    rw, rwf = _ratio(rows, "arrayread", "asan_writes")
    ra, raf = _ratio(rows, "arrayread", "asan")
    if rw and ra:
        out.append(_finding("Checking only writes makes arrayread's overhead negligible",
                            f"GCC-MPX only-writes {pub.slowdown('arrayread', 'gcc', 'mpx_only_write'):.2f}x",
                            f"ASan with reads uninstrumented here: {rw:.2f}x (full ASan {ra:.2f}x)",
                            _v(rw <= 1.05, rwf, rw, ra), "at most 5% over native"))
    out.append(f"- GCC's MPX pass blocks loop unrolling, 25% behind ICC on arraywrite ({P}): {NO_MPX}.")
    return out


def table_findings(rows) -> list[str]:
    out = [f"- Bounds-table management in the kernel costs 2.33x (allocation) and 2.25x (with de-allocation), "
           f"kernel instructions +160% / +139% ({P}): **cannot be tested here**: MPX's bounds tables needed kernel "
           "support removed in Linux 5.6, and there is no PMU for instruction counts."]
    for r in rows:
        e, n = r["builds"].get("mpx_emu"), r["builds"]["native"]
        if not e:
            continue
        if e["ratio"] is None:
            out.append(f"- Analogue ({r['variant']}, {r['chunks']:,} chunks): **not resolved in this run** (native's "
                       "figure was not positive: noise swamped the difference).")
            continue
        du = (e["report"].get("user_us") or 0) - (n["report"].get("user_us") or 0)
        ds = (e["report"].get("sys_us") or 0) - (n["report"].get("sys_us") or 0)
        out.append(f"- Analogue ({r['variant']}, {r['chunks']:,} chunks): the emulated shadow table costs "
                   f"{e['ratio']:.2f}x native{' !' if e['ratio_flag'] else ''}, {ds:,.0f} µs more system time against "
                   f"{du:,.0f} µs more user time per round: the extra cost is "
                   f"{'mostly in the kernel, as the reference found' if ds > du else 'mostly in user space, unlike the reference'} "
                   "(measured; getrusage).")
    return out


def race_findings(rows) -> list[str]:
    by = {(r["mode"], r["build"]): r for r in rows}
    out = []
    for mode, what, claim in (("fn", "false negatives", "fewer than all out-of-bounds reads are flagged"),
                              ("fp", "false positives", "in-bounds reads raise #BR now and then")):
        e = by.get((mode, "mpx_emu"))
        if not e:
            continue
        out.append(f"- MPX's non-atomic bounds give {what}: {claim} ({P}, GCC and ICC). Emulated MPX here, "
                   f"{e['runs']} runs of {e['elements']:,} x {e['iterations']} reads on two CPUs: {e['false_outcomes']:,} "
                   f"{what} in {e['runs_with_false']} run(s): {_v(e['false_outcomes'] > 0)}.")
        a = by.get((mode, "asan"))
        if a:
            out.append(f"  - ASan on the same program stopped {a['caught_runs']} of {a['runs']} runs with a report"
                       + ("" if mode == "fp" else f" (the objects are {a['object_distance']} bytes apart under ASan: "
                          "the read past one lands in addressable memory, so ASan, which knows no bounds per "
                          "pointer, misses the bug)" if not a["caught_runs"] else "") + ".")
    return out


def sections(f) -> list[Section]:
    return [Section("Findings: instructions and check sequences", instruction_findings(f["instructions"], f["sequences"])),
            Section("Findings: overhead microbenchmarks", overhead_findings(f["overhead"])),
            Section("Findings: OS cost of bounds tables", table_findings(f["tables"])),
            Section("Findings: multithreading", race_findings(f["race"]))]
