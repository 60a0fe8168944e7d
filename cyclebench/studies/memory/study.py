"""The memory study, run: ``cyclebench study memory [--quick] [--out DIR] [--resume]``.

Experiments (one record per measurement in ``results.jsonl``): ``latency`` (four chain layouts x
4 KiB / 2 MiB pages over log-spaced sizes, denser around the described cache sizes), the detected
levels (analysis of that curve), ``tlb`` (one load per page, 8..65,536 pages), ``mlp`` (1..16
independent chains at DRAM size), ``bandwidth`` (read/write/copy/triad, scalar to AVX-512,
temporal and non-temporal stores, one and two CPUs) and ``loaded`` (the chase while the other CPU
streams). See chains.py, chase.py, kernels.py and levels.py for how each is built."""
from __future__ import annotations

from dataclasses import replace

from cyclebench.machine.cpu import cpu_info
from cyclebench.measurement.stats import median
from cyclebench.reports.model import Table
from cyclebench.study.base import Analysis, OutputFile, Prepared, Study
from cyclebench.study.registry import register

from . import analysis as an
from cyclebench.machine.uarch import core_name, from_metadata

from . import cachespec, hugepages, kernels
from . import summary as summ
from .config import EXPERIMENTS, FULL, QUICK, StudyConfig
from .experiments import plan
from .plots import bandwidth_figure, latency_figure, tlb_figure
from .tables import bandwidth_view, latency_view, levels_view, loaded_view, mlp_view, tlb_view


@register
class MemoryStudy(Study):
    name = "memory"
    title = "memory-hierarchy study"
    description = ("Load-to-use latency against working-set size (four chain layouts, 4 KiB and 2 MiB pages), "
                   "the cache levels it shows beside sysfs and CPUID, TLB reach, memory-level parallelism, "
                   "bandwidth kernels and loaded latency.")
    experiments = EXPERIMENTS
    presets = (QUICK, FULL)

    def prepare(self, cfg: StudyConfig) -> Prepared:
        spec = cachespec.describe()
        thp = hugepages.thp_status()
        flags = cpu_info().flags
        widths = [w for w in cfg.widths if all(f in flags for f in kernels.FEATURES[w])]
        lacking = [w for w in cfg.widths if w not in widths]
        caches = cachespec.data_caches(spec["sysfs"]) or cachespec.data_caches(spec["cpuid"])
        if "2m" in cfg.pages and not thp["usable"]:
            cfg = replace(cfg, pages=tuple(p for p in cfg.pages if p != "2m"))
        return Prepared((cfg, caches, widths), {"caches": spec, "thp": thp, "widths": widths, "lacking_widths": lacking,
                                                "described_sizes": {str(k): v for k, v in caches.items()}})

    def plan(self, cfg: StudyConfig, prepared: Prepared):
        cfg2, caches, widths = prepared.state
        return plan(cfg2, caches, widths)

    def analyse(self, cfg: StudyConfig, records: list[dict], facts) -> Analysis:
        prep = facts.prepared
        m = facts.machine
        ident = from_metadata(m)
        cpu = f"{m.get('cpu_model_name', '')}: {core_name(m)}"
        pub = cachespec.published_for(ident)
        lat = an.latency(records)
        lv = an.levels_table(lat, prep.get("caches", {}))
        tlb = an.tlb_table(records, prep.get("caches", {}).get("cpuid_tlb", {}))
        mlp = an.mlp_table(records)
        bw = an.bandwidth_table(records)
        ld = an.loaded_table(records)
        missing = [f"{w}: not available on this CPU (no {', '.join(kernels.FEATURES[w])} in /proc/cpuinfo)"
                   for w in prep.get("lacking_widths", [])]
        f = {"curve": lv["curve"], "levels": lv["rows"], "prefetch": an.prefetch_verdicts(lat), "loaded": ld,
             "tlb_knees": tlb["knees"], "mlp": mlp["rows"], "not_measured": list(missing),
             "bandwidth_best": _best_bw(bw["rows"])}
        if not prep.get("thp", {}).get("usable", True):
            f["not_measured"].append("2 MiB pages: transparent huge pages are off here "
                                     f"(enabled = {prep['thp'].get('enabled')})")
        if mlp["rows"]:
            ghz = median([r["cycles"] / r["ns"] for r in mlp["rows"] if r["ns"]])
            peak = max(mlp["rows"], key=lambda r: r["loads_per_cycle"] or 0)
            f["mlp_peak"] = {**peak, "ghz": ghz, "max_chains": max(r["chains"] for r in mlp["rows"])}
        f["disagreements"] = [f"- {r['level']}: measured edge between {_h(r['last'])} and {_h(r['edge_hi'])}, "
                              f"sysfs says {_h(r['sysfs'])}, CPUID says {_h(r['cpuid'])}."
                              for r in lv["rows"] if r["agrees"] is False]
        l3 = next((r for r in lv["rows"] if r["level"] == "L3"), None)
        l3_rows = [r["footprint"] for r in bw["rows"] if r["level"] == "L3"]
        if l3 and l3["edge_hi"] and l3_rows and min(l3_rows) > l3["edge_hi"]:
            missing.append(f"The L3 rows' footprint ({_h(min(l3_rows))}, from sysfs) is beyond the L3 edge measured "
                           f"here ({_h(l3['last'])} .. {_h(l3['edge_hi'])}): those rows measure mostly memory.")
        a = Analysis(findings=f)
        views = []
        if lat["rows"]:
            views += [latency_view(lat), levels_view(lv)]
            a.files += [OutputFile("latency.txt", views[:2]), OutputFile("latency.csv", [Table.of_records("latency", lat["rows"])]),
                        OutputFile("latency.png", figure=latency_figure(lat, lv, cpu)),
                        OutputFile("levels.txt", [views[1]])]
        if tlb["rows"]:
            views.append(tlb_view(tlb))
            a.files += [OutputFile("tlb.txt", [views[-1]]), OutputFile("tlb.csv", [Table.of_records("tlb", tlb["rows"])]),
                        OutputFile("tlb.png", figure=tlb_figure(tlb, cpu))]
        if mlp["rows"]:
            views.append(mlp_view(mlp))
            a.files.append(OutputFile("mlp.txt", [views[-1]]))
        if bw["rows"] or missing:
            views.append(bandwidth_view(bw, missing))
            a.files += [OutputFile("bandwidth.txt", [views[-1]]),
                        OutputFile("bandwidth.csv", [Table.of_records("bandwidth", bw["rows"])])]
            if bw["rows"]:
                a.files.append(OutputFile("bandwidth.png", figure=bandwidth_figure(bw, cpu)))
        if ld:
            views.append(loaded_view(ld))
            a.files.append(OutputFile("loaded.txt", [views[-1]]))
        a.console = ([views[1], views[0]] + views[2:]) if lat["rows"] else views
        a.summary_tables = a.console
        a.data = {"latency": lat["rows"], "levels": lv, "tlb": tlb, "mlp": mlp, "bandwidth": bw["rows"], "loaded": ld}
        self._pub, self._cpu = pub, cpu
        self._between = sum(an.varies_between(r["result"]) for r in records if "result" in r)
        return a

    def machine(self, cfg, facts):
        p = facts.prepared
        thp = p.get("thp", {})
        return [f"- Transparent huge pages: enabled = {thp.get('enabled')}, defrag = {thp.get('defrag')}.",
                "- Caches described (sysfs): " + ", ".join(f"L{c['level']} {c['type']} {_h(c['size'])}"
                                                          for c in p.get("caches", {}).get("sysfs", []))
                + "; vector widths measured: " + ", ".join(p.get("widths", [])) + "."]

    def method(self, cfg, facts):
        return summ.method_lines(cfg, facts)

    def caveats(self, cfg, facts):
        return summ.caveat_lines(cfg, facts, getattr(self, "_between", 0))

    def summarise(self, cfg, analysis, facts):
        return summ.sections(analysis.findings, getattr(self, "_cpu", ""), getattr(self, "_pub", None))


def _best_bw(rows):
    best = {}
    for r in rows:
        if r["cpus"] == 1 and not r["nt"]:
            k = (r["level"], r["op"])
            if k not in best or r["gbs"] > best[k]["gbs"]:
                best[k] = r
    order = {"L1": 0, "L2": 1, "L3": 2, "DRAM": 3}
    return sorted((v for (lvl, op), v in best.items() if op in ("read", "copy")), key=lambda r: (order[r["level"]], r["op"]))


def _h(n):
    from .tables import h
    return h(n)
