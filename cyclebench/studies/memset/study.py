"""The memset study, run: ``cyclebench study memset [--quick] [--out DIR] [--resume]``.

Experiments (each measurement is one record in ``results.jsonl``):

1. ``fixed``: one size at a time, the same arguments every call (trained predictors), 1 B to
   1 MiB, every implementation (the byte loop only up to ``byte_loop_max``), 1,000 calls per pass
   for small sizes and fewer for large ones (``fixed_bytes_per_pass``). Measured *serialized*
   (an ``lfence`` after every call, so each call is timed in isolation, as the reference timed
   single calls) and, in the full run, *back to back* (what a loop of calls pays: on the Zen 4 it was
   written on, a small memset hides entirely behind the ~5-cycle call overhead and costs about 0 net).
2. ``random``: the reference's random-size tests (``grid.RANDOM_SIZE_TESTS``), 50,000 seeded
   argument sets replayed per pass, L1d evicted before every call in the "clear L1" rows.
3. ``stores``: exact stores and conditional branches per call at the reference's sizes, every
   dst alignment 0..63, by single-stepping (``trace.py``); and ``learn``: the same size
   distribution replayed from a short array (5,000 calls, which a core's predictors may learn) and from
   50,000 calls (which they do not), the cost of unpredictable sizes. Branch *misses* need a PMU:
   with one, the random-size measurements also count ``branch-misses``.
4. ``threshold``: the new design's rep stosb cut-over, one shared object per threshold, one
   measurement each on random sizes around the cut-over; compared with the reference's 800 bytes and
   glibc's ``x86_rep_stosb_threshold`` (``ld.so --list-tunables``).

Every routine is checked for correctness (``correctness.py``) before anything is timed; a
wrong one stops the study with RoutineIncorrect (exit 11). Records are appended as they are made
(a killed run keeps them); ``resume=True`` skips every record whose key is already in the file.
A key names the experiment, the routine and its shared object (which carries a hash of its sources
and flags), the parameters and the timing options, so changed kernels or settings are measured
again. Outputs (tables, CSV, JSON, PNG plots, ``summary.md``) are written next to the results by
``analyse`` below and the framework (cyclebench/study/).
"""
from __future__ import annotations

import os
from dataclasses import replace

from cyclebench.errors import UsageError
from cyclebench.reports.model import Table
from cyclebench.study import engine
from cyclebench.study.base import Analysis, OutputFile, Prepared, Study, Task, comma_list
from cyclebench.study.facts import RunFacts
from cyclebench.study.registry import register

from . import summary as summ
from .analysis import (fixed_table, learn_table, random_table, summarize_findings, threshold_table,
                       trace_table)
from .config import EXPERIMENTS, FULL, QUICK, StudyConfig
from .experiments import plan
from .implementations import check_all, glibc_info, implementations, pmu_events, threshold_impls
from .library import KERNELS
from .plots import fixed_figure, threshold_figure
from .tables import fixed_view, learn_view, random_view, stores_view, threshold_view

RESULTS = engine.RESULTS


@register
class MemsetStudy(Study):
    name = "memset"
    title = "memset study"
    description = ("The reference's old and new NT memset designs, their AVX widenings, rep stosb and an "
                   "RtlHeapZero-like routine against glibc: fixed sizes, the reference's random-size grid, "
                   "stores and branches per call, and the rep stosb cut-over.")
    experiments = EXPERIMENTS
    presets = (QUICK, FULL)

    def add_options(self, group) -> None:
        super().add_options(group)
        group.add_argument("--kernels", metavar="LIST",
                           help="comma-separated kernels to include (default: every one this CPU supports)")
        group.add_argument("--routine", action="append", default=[], metavar="NAME=LIB.so:SYMBOL",
                           help="add your own memset (void *fn(void *, int, size_t)); repeatable")

    def option_changes(self, options, base: StudyConfig) -> dict:
        extra = []
        for item in options.routine:
            name, sep, spec = item.partition("=")
            if not sep or not name or ":" not in spec:
                raise UsageError(f"--routine {item!r} is not NAME=LIB.so:SYMBOL",
                                 hint="e.g. --routine mine=./libmymemset.so:my_memset (or mine=libc:memset)")
            extra.append((name, spec))
        changes = {}
        if options.kernels is not None:
            changes["kernels"] = comma_list(options.kernels, "--kernels libc,nt_old,new_sse", KERNELS)
        if extra:
            changes["extra"] = tuple(extra)
        return changes

    def prepare(self, cfg: StudyConfig) -> Prepared:
        impls = implementations(cfg)
        if not impls:
            raise UsageError("no implementation to study on this CPU", hint="check --kernels")
        selected = [i.kernel for i in impls if i.kernel]
        sweep = threshold_impls(cfg, selected) if "threshold" in cfg.experiments else []
        check_all(impls + [i for _, _, i in sweep])        # correctness before any timing
        events, why = pmu_events() if "random" in cfg.experiments else ((), "")
        return Prepared((impls, sweep, events), {"glibc": glibc_info(), "pmu_events": list(events), "pmu": why,
                                                 "implementations": [i.name for i in impls]})

    def plan(self, cfg: StudyConfig, prepared: Prepared) -> list[Task]:
        impls, sweep, events = prepared.state
        return plan(cfg, impls, sweep, events)

    def analyse(self, cfg: StudyConfig, records: list[dict], facts: RunFacts) -> Analysis:
        impls = facts.prepared.get("implementations") or list(KERNELS)
        cpu = facts.machine.get("cpu_model_name", "")
        fixed, b2b = fixed_table(records, "serialized"), fixed_table(records, "back-to-back")
        if not fixed["long"] and b2b["long"]:
            fixed, b2b = b2b, {"long": [], "by_size": {}}
        rnd = random_table(records, impls)
        tr = trace_table(records, fixed)
        lt = learn_table(records)
        thr = threshold_table(records, summ.glibc_threshold(facts))
        a = Analysis(findings=summarize_findings(fixed, rnd, tr, lt, thr))
        md_titles: list[tuple[str, Table]] = []
        if fixed["long"]:
            views = [fixed_view(fixed, impls)]
            md_titles.append((f"fixed sizes, {fixed['mode']} (net cycles per call)", views[0]))
            a.files.append(OutputFile("fixed_sizes.png", figure=fixed_figure(
                fixed, impls, "fixed_sizes", f"memset, fixed sizes, {fixed['mode']}: net cycles per call ({cpu})")))
            if b2b["long"]:
                views.append(fixed_view(b2b, impls))
                md_titles.append(("fixed sizes, back to back", views[1]))
                a.files.append(OutputFile("fixed_sizes_back_to_back.png", figure=fixed_figure(
                    b2b, impls, "fixed_sizes_back_to_back",
                    f"memset, fixed sizes, back to back: net cycles per call ({cpu})")))
            a.files += [OutputFile("fixed_sizes.txt", views),
                        OutputFile("fixed_sizes.csv", [Table.of_records("fixed", fixed["long"] + b2b["long"])])]
            a.console += views
        if rnd["rows"]:
            view = random_view(rnd)
            md_titles.append(("random sizes", view))
            a.files += [OutputFile("random_sizes.txt", [view]),
                        OutputFile("random_sizes.csv", [Table.of_records("random", rnd["long"])])]
            a.console.append(view)
        if tr["long"] or lt["rows"]:
            views = []
            if tr["long"]:
                views.append(stores_view(tr, impls, summ.misses_text(facts)))
                md_titles.append(("stores and branches per call", views[-1]))
            if lt["rows"]:
                views.append(learn_view(lt))
                md_titles.append(("unpredictable sizes", views[-1]))
            a.files += [OutputFile("stores.txt", views), OutputFile("stores.csv", [Table.of_records(
                "stores", tr["long"] + [dict(r, kind="learn") for r in lt["rows"]])])]
            a.console += views
        if thr["columns"]:
            view = threshold_view(thr)
            md_titles.append(("rep stosb threshold", view))
            long = [{"kernel": c["kernel"], "stream": c["stream"], "threshold": t, "net_fastest10": v,
                     "best": t == c["best"]} for c in thr["columns"] for t, v in c["cycles"].items()]
            a.files += [OutputFile("threshold.txt", [view]),
                        OutputFile("threshold.csv", [Table.of_records("threshold", long)]),
                        OutputFile("threshold.png", figure=threshold_figure(
                            thr, "threshold", "memset: rep stosb cut-over sweep"))]
            a.console.append(view)
        a.summary_tables = [replace(t, title=title) for title, t in md_titles]
        a.data = {"tables": {"fixed": {str(k): v for k, v in fixed["by_size"].items()},
                             "fixed_back_to_back": {str(k): v for k, v in b2b.get("by_size", {}).items()},
                             "random": rnd["rows"],
                             "stores": {n: {str(k): v for k, v in d.items()} for n, d in tr["by_routine"].items()},
                             "learn": lt["rows"], "threshold": thr}}
        return a

    def machine(self, cfg, facts):
        return summ.machine_lines(facts)

    def method(self, cfg, facts):
        return summ.method_lines(cfg)

    def caveats(self, cfg, facts):
        return summ.caveat_lines(cfg)

    def summarise(self, cfg, analysis: Analysis, facts: RunFacts):
        return summ.sections(analysis.findings, facts)


def run_study(cfg: StudyConfig, out_dir: str | os.PathLike, *, resume: bool = False,
              progress: bool = True) -> engine.StudyRun:
    """Run (or resume) the memset study with ``cfg`` into ``out_dir`` (the CLI's path, for the API)."""
    return engine.run_study(MemsetStudy(), cfg, out_dir, resume=resume, progress=progress)


def load_records(path) -> dict[str, dict]:
    """The records of a memset results.jsonl by key (ResultFileError if it is not one)."""
    return {r["key"]: r for r in engine.results_store(MemsetStudy(), path).load()[1]}
