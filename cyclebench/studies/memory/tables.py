"""The memory study's tables as shown (text, Markdown). Cycles are TSC-calibrated core cycles;
a trailing ``!`` marks a figure from a measurement flagged unstable, ``~`` a variable cost (the
median of repetitions that vary by nature), ``~p`` a figure that varies between processes (the
median over processes, processes.py); ``-`` is not measured."""
from __future__ import annotations

from cyclebench.reports.model import Column, Table

from .measuring import BEST_AGREE, BEST_PROCESSES, VARYING_PROCESSES
from .processes import MAX_BETWEEN, MIN_PROCESSES


def h(n) -> str:
    if n is None:
        return "-"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} B"


def f(v, d=1, stable=True, variable=False, between=False) -> str:
    if v is None:
        return "-"
    return f"{v:.{d}f}" + ("" if stable else " !") + (" ~p" if between and stable else " ~" if variable else "")


def table(title, headers, rows, notes) -> Table:
    cols = [Column(f"c{i}", hd, "left" if i == 0 else "right") for i, hd in enumerate(headers)]
    return Table(title, cols, [{c.key: ("-" if v is None else str(v)) for c, v in zip(cols, r)} for r in rows], notes)


UNSTABLE = "'!': the measurement was flagged unstable (noisy host): treat it with care."
VARIABLE = ("'~': a variable cost: its repetitions vary by more than 2% in three or more processes with clean host "
            "gauges (cache, TLB and prefetch state, page placement); the figure is their median, known to within "
            "5% at 95% (latency.csv: pm, and p10-p90 of the repetitions).")
BETWEEN = (f"'~p': varies between processes (page placement, the share of a shared cache): no process was stable, so "
           f"the figure is the median of at least {MIN_PROCESSES} processes' own figures, whose 95% interval (order "
           f"statistics) reaches no further than {MAX_BETWEEN:.0%} from it (latency.csv: pm; p10-p90 there is the "
           "range of the processes).")


def latency_view(lat: dict) -> Table:
    keys = sorted(lat["curves"])
    sizes = sorted({r["size"] for r in lat["rows"]})
    idx = {(r["layout"], r["page"], r["size"]): r for r in lat["rows"]}
    rows = []
    for s in sizes:
        cells = [h(s)]
        for k in keys:
            r = idx.get((k[0], k[1], s))
            cells.append(f(r["cycles"], 1, r["stable"], r["variable"], r["between"]) if r else None)
        rows.append(cells)
    return table("Load-to-use latency (cycles per load, TSC-calibrated) against working-set size",
                 ["size"] + [f"{a} {b}" for a, b in keys], rows,
                 ["One `mov rax, [rax]` chase per chain; median over repetitions; each run starts at a random "
                  "element. ns per load are in latency.csv.", UNSTABLE, VARIABLE, BETWEEN])


def levels_view(lv: dict) -> Table:
    rows = []
    for r in lv["rows"]:
        rng = f"{h(r['last'])} .. {h(r['edge_hi'])}" if r["edge_hi"] else f"from {h(r['first'])}"
        agree = {True: "yes", False: "NO", None: "-"}[r["agrees"]]
        flag = (" (sloped)" if r.get("sloped") else " (thin)" if r["thin"] else "") + (f" ({r['unstable_points']} unstable pts)" if r["unstable_points"] else "")
        rows.append([r["level"], f(r["latency"], 1) + flag, f(r["ns"], 1), rng, h(r["sysfs"]), h(r["cpuid"]), agree])
    return table("Detected levels (change points of the latency curve) beside sysfs and CPUID",
                 ["level", "cycles", "ns", "edge between", "sysfs", "CPUID", "agree"], rows,
                 [f"Curve: {lv['curve']}. 'edge between': the last size on the level's plateau and the first size "
                  "above it; 'agree': the described size lies in that range (x1.5 either way); 'sloped': no flat plateau, "
                  "thin pieces joined (levels.py). In a VM the described topology can be synthetic, and a shared L3 may "
                  "be smaller in effect."])


def tlb_view(t: dict) -> Table:
    rows = [[r["page"], r["pages"], f(r["paged"], 1, r["stable"], between=r["between"]),
             f(r["dense"], 1, r["stable"], between=r["between"]), f(r["penalty"], 1, r["stable"])] for r in t["rows"]]
    d = t.get("cpuid") or {}
    said = (f"{d.get('source', 'CPUID')} says: L1 DTLB {d.get('l1_4k', '?')} (4K) / {d.get('l1_2m', '?')} (2M), "
            f"L2 DTLB {d.get('l2_4k', '?')} (4K) / {d.get('l2_2m', '?')} (2M) entries ('?': not described)."
            if d else "CPUID describes no data TLB here.")
    return table("TLB reach: one load per page against the same order over consecutive lines (cycles per load)",
                 ["pages", "count", "one line per page", "dense twin", "difference"], rows,
                 ["difference: what touching a new page costs beyond the cache (TLB misses and page walks; in a "
                  f"VM each walk is two-dimensional). {said}", UNSTABLE, BETWEEN])


def mlp_view(m: dict) -> Table:
    rows = [[r["chains"], f(r["cycles"], 1, r["stable"], between=r["between"]), f(r["ns"], 1), f(r["loads_per_cycle"], 4),
             f(r["gbs"], 2), f(r["outstanding"], 1)] for r in m["rows"]]
    return table("Memory-level parallelism: independent random chains at DRAM size (4 KiB pages)",
                 ["chains", "cycles per load per chain", "ns", "loads/cycle", "GB/s (lines)", "implied outstanding"],
                 rows, ["implied outstanding = loads per cycle x the one-chain latency (Little's law with the "
                        "unloaded latency): an estimate of the misses in flight. Chains beyond 13 go through stack "
                        "slots (one store-forward per load added).", UNSTABLE, BETWEEN])


def bandwidth_view(b: dict, missing: list[str]) -> Table:
    rows = []
    order = {"L1": 0, "L2": 1, "L3": 2, "DRAM": 3}
    for r in sorted(b["rows"], key=lambda r: (order.get(r["level"], 9), r["op"], r["width"], r["nt"], r["cpus"])):
        st, bt = r["stable"], r["between"]
        rows.append([r["level"], r["kernel"], r["cpus"], h(r["footprint"]), f(r["bpc"], 2, st, between=bt),
                     f(r["gbs"], 1, st, between=bt), f(r["gbs_alloc"], 1, st, between=bt),
                     f(r["overlap"], 2) if r["overlap"] is not None else None])
    notes = ["B/cycle per CPU and GB/s counted as STREAM does (each array once); 'with write-allocate' adds the "
             "read of every destination line a temporal store allocates (non-temporal stores do not). Best "
             "(STREAM): the fastest B run minus the fastest A run over the repetitions, after a dropped first run "
             f"(the median is in bandwidth.csv); on one CPU, the fastest best of {BEST_PROCESSES[0]}-"
             f"{BEST_PROCESSES[1]} processes that another process confirms within {BEST_AGREE:.0%}, '!' when none is; "
             "B/cycle at the run's calibrated clock; two CPUs = two measurements at once on two distinct physical "
             "cores (GB/s summed; 'overlap' = the share of the longer one they ran together; the pair's best "
             f"confirmed by a second pair in the same way, up to {VARYING_PROCESSES} pairs). '~p': no best was "
             f"confirmed in {VARYING_PROCESSES} processes (one CPU): the figure is then the median of their bests, "
             f"whose 95% interval reaches no further than {MAX_BETWEEN:.0%} from it (bandwidth.csv: range_gbs, the "
             "processes' range).", UNSTABLE]
    notes += missing
    return table("Bandwidth per level and kernel", ["level", "kernel", "CPUs", "footprint", "B/cycle", "GB/s",
                                                     "GB/s with write-allocate", "overlap"], rows, notes)


def loaded_view(l: dict) -> Table:
    rows = []
    for k in ("idle", "loaded"):
        r = l.get(k)
        if r:
            s = r.get("stream") or {}
            rows.append([k, f(r["cycles"], 1, r["stable"], between=r["between"]),
                         f(r["ns"], 1, r["stable"], between=r["between"]),
                         f"{s.get('kernel')} x{s.get('runs')}, {f(s.get('bytes_per_cycle'), 2)} B/cycle" if s else None,
                         f(s.get("busy_fraction"), 2) if s else None])
    return table("Loaded latency: the random chase on one core, idle and while another core streams from DRAM",
                 ["neighbour", "cycles per load", "ns", "stream on the other core", "stream busy (estimate)"], rows,
                 ["stream busy: the share of the chase's time the streaming CPU spent inside measurements (the "
                  "gaps between its runs are unloaded).", UNSTABLE, BETWEEN])
