"""The memory study's own summary sections: the quotable figures, each with how it was measured,
the published figures beside them (labelled as published, with the CPU they are for), and the
method and caveats lines."""
from __future__ import annotations

from cyclebench.study.base import Section

from .processes import MAX_BETWEEN, MIN_PROCESSES
from .tables import h


def _f(v, d=1):
    return "-" if v is None else f"{v:.{d}f}"


def quotable(findings: dict) -> list[str]:
    out = []
    for r in findings.get("levels", []):
        if r["level"].startswith("DRAM, step"):
            out.append(f"- A further step at {h(r['first'])}+: {_f(r['latency'])} cycles ({_f(r['ns'])} ns) per load "
                       f"({r['points']} sizes{', thin' if r['thin'] else ''}): a step within memory, not another cache; "
                       "TLB reach is the likely cause (see the TLB table), or noise when it rests on one unstable "
                       "size.")
            continue
        if ", step" in r["level"]:
            out.append(f"- A further step within {r['level'].split(',')[0]} at {h(r['first'])}+: {_f(r['latency'])} "
                       f"cycles ({_f(r['ns'])} ns) per load ({r['points']} sizes{', thin' if r['thin'] else ''}): "
                       "faster than memory and inside the cache's described size; the share of a shared cache "
                       "that other cores or tenants leave this one is the likely cause.")
            continue
        flag = " (plateau includes unstable points)" if r["unstable_points"] else ""
        if r.get("sloped"):
            flag += (" (no flat plateau: the latency climbs across these sizes, as a shared cache's does when the "
                     "share other cores or tenants leave this one varies; the figure is the median over them)")
        where = (f"working sets {h(r['first'])}-{h(r['last'])}" if r["edge_hi"] else f"working sets from {h(r['first'])}")
        out.append(f"- **{r['level']}: {_f(r['latency'])} cycles ({_f(r['ns'])} ns) per load**{flag}: median over "
                   f"the plateau ({r['points']} sizes, {where}) of the {findings.get('curve')} chase."
                   + (f" Its edge lies between {h(r['last'])} and {h(r['edge_hi'])}." if r["edge_hi"] else ""))
    for r in findings.get("bandwidth_best", []):
        several = r.get("processes", 1) > 1
        how = (f"the median of {r['processes']} processes' bests, which never agreed (processes "
               f"{_f(r['range_gbs'][0])}-{_f(r['range_gbs'][1])} GB/s)" if r.get("between") and r.get("range_gbs")
               else "best of the repetitions" + (f" of {r['processes']} processes" if several else ""))
        out.append(f"- **{r['level']} {r['op']}: {_f(r['bpc'], 2)} B/cycle, {_f(r['gbs'])} GB/s** on one CPU "
                   f"({r['kernel']}, {h(r['footprint'])} of arrays, {how}, STREAM counting"
                   + ("" if r["stable"] else "; the two fastest processes disagree" * several + "; flagged unstable")
                   + ").")
    for page, knees in (findings.get("tlb_knees") or {}).items():
        steps = [k for k in knees if k["next_pages"]]
        if steps:
            txt = "; ".join(f"after {k['last_pages']} pages (before {k['next_pages']}) from {_f(k['cycles'])} "
                            f"to {_f(k['cycles'] + k['step'])} cycles" for k in steps)
            out.append(f"- **TLB, {page} pages: the latency steps {txt}** (one load per page, random page order; "
                       "compare the CPUID entry counts in the TLB table).")
    m = findings.get("mlp_peak")
    if m:
        bound = "at least" if m["chains"] == m["max_chains"] and m["outstanding"] >= 0.8 * m["chains"] else "about"
        out.append(f"- **Memory-level parallelism: {_f(m['loads_per_cycle'] * 64 * m['ghz'], 1)} GB/s of random "
                   f"lines with {m['chains']} chains, {bound} {_f(m['outstanding'])} misses in flight** (Little's law "
                   "with the one-chain latency; an estimate"
                   + ("; throughput still grew at the most chains measured, so the limit was not reached" if bound ==
                      "at least" else "") + ").")
    ld = findings.get("loaded")
    if ld and ld.get("idle") and ld.get("loaded"):
        out.append(f"- **Loaded latency: {_f(ld['idle']['ns'])} ns idle, {_f(ld['loaded']['ns'])} ns while the "
                   "other CPU streams** (random chase over the loaded working set, 4 KiB pages).")
    for v in findings.get("prefetch", []):
        if v["layout"] != "random":
            out.append(f"- {v['layout']} chain at {h(v['size'])}: {_f(v['cycles'])} cycles per load, "
                       f"{_f(100 * v['vs_random'], 0)}% of the random chain's.")
    return out or ["- No figure was measured."]


def published_lines(pub: dict | None, cpu: str) -> list[str]:
    """The published figures for this CPU's core (from the microarchitecture table), or why none."""
    out = []
    if pub is None:
        out.append("- No published figures: the microarchitecture table does not know this core.")
    else:
        lat = ", ".join(f"{n} {pub[k]}" for n, k in (("L1", "l1_latency"), ("L2", "l2_latency"),
                                                      ("L3", "l3_latency")) if pub.get(k))
        tlb = ", ".join(f"{n} DTLB {pub[k]} entries" for n, k in (("L1", "l1_dtlb"), ("L2", "l2_dtlb"))
                        if pub.get(k) is not None)
        out.append(f"- Published for {pub['cpu']}, {pub['source']}: "
                   + (f"latency {lat} cycles; " if lat else "latency not quoted here; ")
                   + (f"{tlb}; " if tlb else "") + f"L1d {pub['l1d']}, L2 {pub['l2']}, L3 {pub['l3']}.")
    out.append(f"- This machine reports itself as: {cpu}. Published figures are not measurements of it.")
    return out


def sections(findings: dict, cpu: str, pub: dict | None) -> list[Section]:
    s = [Section("Quotable figures", quotable(findings)),
         Section("Published figures (for comparison, not measured here)", published_lines(pub, cpu))]
    notes = findings.get("disagreements") or []
    if notes:
        s.append(Section("Where measurement and description disagree", notes))
    if findings.get("not_measured"):
        s.append(Section("Not measured in this run", [f"- {x}" for x in findings["not_measured"]]))
    return s


def method_lines(cfg, facts) -> list[str]:
    return [
        "- Latency: a chain of pointers (one per 64-byte line) is built in Python (numpy) and written into the "
        "runner's R14 area by the one-time init before any timing; the timed body is `mov rax, [rax]` per "
        "chain, unrolled 64 times inside a loop; each run starts where the walk so far got to (it advances by B's loads "
        "per run), so every run walks into the lines touched longest ago, as one endless walk would. Cycles per "
        "load = (B - A) / loads, median of the repetitions.",
        "- Pages: the region is madvised MADV_NOHUGEPAGE (4 KiB) or MADV_HUGEPAGE (2 MiB); the runner's "
        "AnonHugePages is watched during each 2 MiB measurement and recorded.",
        "- TLB: one line per page (its offset rotating through the page so the lines spread over the cache sets), "
        "pages in random order; the same order over consecutive lines is the cache-only twin.",
        f"- Bandwidth: each kernel passes over arrays written beforehand; best of {cfg.bw_reps} repetitions after "
        "a dropped first run (the fastest B run minus the fastest A run, so a preempted A cannot inflate it); "
        "DRAM arrays are at least "
        f"{cfg.dram_factor}x the L3 sysfs describes (capped at {h(cfg.dram_cap)}).",
    ]


def caveat_lines(cfg, facts, between: int = 0) -> list[str]:
    """``between``: how many figures are medians over processes (processes.py)."""
    return ([f"- {between} figures vary between processes ('~p' in the tables): no process of theirs was stable, "
             f"so each is the median of at least {MIN_PROCESSES} processes' own figures (a best, for bandwidth), "
             f"known to within {MAX_BETWEEN:.0%} at 95% by order statistics, with the processes' range beside it. They "
             "are not among the variable costs counted above."] if between else []) + ["- The L3 bandwidth row uses a quarter of the L3 that sysfs describes; where the detected L3 is "
            "smaller, that row measures beyond it (see the detected levels).",
            "- In a VM a TLB miss walks two sets of page tables (guest and host), so miss penalties are larger "
            "than on bare metal, and the host's backing pages (unknown to the guest) matter.",
            "- Every uncertainty here is within one run. On a shared host, figures bound by the L3 or by memory also "
            "move between runs minutes apart, beyond those uncertainties (the share of the L3 and of the memory "
            "bandwidth other tenants leave): compare two runs with bench/memory_repeat.py before quoting one."]
