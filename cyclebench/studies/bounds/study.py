"""The bounds study, run: ``cyclebench study bounds [--quick] [--experiments LIST] [--out DIR] [--resume]``.

The cost of bounds checking from Intel MPX to what replaced it, after "Intel MPX Explained".
This CPU has no MPX, so:

1. ``instructions``: every bnd* form measured as the reference did (1,000 copies in a loop),
   labelled "runs as a NOP on this CPU", beside the published Skylake table and the software
   check that replaces each form.
2. ``sequences``: IPC of the reference's ten check sequences (load or store; one or both bounds;
   register or address-expression form) for the bnd NOP, cmp/jcc and ASan's shadow check.
3. ``overhead``: arraywrite, arrayread, struct and ptrcreation (c/kernels.c) in six builds
   (native, ASan, ASan writes only, UBSan bounds trapping, inline checks, emulated MPX), beside the
   published GCC-MPX and ICC-MPX slowdowns.
4. ``tables``: the OS cost of bounds tables, published, beside an analogue (c/tables.c).
5. ``race``: the multithreading false negatives and positives with the emulated MPX, and ASan.

snippets.py and c/ say what runs; programs.py builds it, checks.py checks it before any timing,
experiments.py plans the tasks; analysis, tables, plots and summary make the outputs."""
from __future__ import annotations

from cyclebench.machine.cpu import cpu_info
from cyclebench.study.base import Analysis, OutputFile, Prepared, Study
from cyclebench.study.outputs import records_csv
from cyclebench.study.programs import program_figures
from cyclebench.study.registry import register

from . import analysis as an
from . import checks, programs
from . import summary as summ
from . import tables as tb
from .config import EXPERIMENTS, FULL, QUICK, StudyConfig
from .experiments import plan
from .plots import overhead_figure, sequences_figure


@register
class BoundsStudy(Study):
    name = "bounds"
    title = "bounds-checking study (Intel MPX and what replaced it)"
    description = ("bnd* instructions (hint-NOPs here) and their software stand-ins, check-sequence IPC, four "
                   "overhead microbenchmarks in six builds (native, ASan, ASan writes only, UBSan bounds, inline "
                   "checks, emulated MPX), the OS cost of bounds tables and the multithreading race, beside the "
                   "reference's published MPX figures.")
    experiments = EXPERIMENTS
    presets = (QUICK, FULL)

    def prepare(self, cfg: StudyConfig) -> Prepared:
        progs = programs.build_all()
        facts = {"mpx": cpu_info().has_mpx, "checksums": checks.checksums(progs),
                 "out_of_bounds": checks.out_of_bounds(progs)}
        return Prepared(progs, facts)


    def plan(self, cfg: StudyConfig, prepared: Prepared):
        return plan(cfg, prepared.state)

    def analyse(self, cfg: StudyConfig, records: list[dict], facts) -> Analysis:
        cpu = facts.machine.get("cpu_model_name", "")
        f = an.analyse(records)
        a = Analysis(findings=f, data=f)
        views = []
        if f["instructions"]:
            views.append(tb.instructions_view(f["instructions"]))
            a.files.append(OutputFile("instructions.txt", [views[-1]]))
        if any(r[k] for r in f["sequences"] for k in ("bnd", "cmp", "asan")):
            views.append(tb.sequences_view(f["sequences"]))
            a.files += [OutputFile("sequences.txt", [views[-1]]),
                        OutputFile("sequences.png", figure=sequences_figure(f["sequences"], cpu))]
        if f["overhead"]:
            views.append(tb.overhead_view(f["overhead"]))
            a.files += [OutputFile("overhead.txt", [views[-1]]),
                        OutputFile("overhead.png", figure=overhead_figure(f["overhead"], cpu))]
        if f["tables"]:
            views.append(tb.tables_view(f["tables"]))
            a.files.append(OutputFile("os_tables.txt", [views[-1]]))
        if f["race"]:
            views.append(tb.race_view(f["race"]))
            a.files.append(OutputFile("race.txt", [views[-1]]))
        a.files.append(records_csv(records, _figures))
        a.console = a.summary_tables = views
        return a

    def machine(self, cfg, facts):
        oob = facts.prepared.get("out_of_bounds") or {}
        caught = "; ".join(f"{k}: " + (", ".join(b for b, c in v.items() if c) or "none") for k, v in oob.items())
        return ["- MPX: " + ("present" if facts.prepared.get("mpx") else
                             "absent (CPUID 7:EBX[14] clear): bnd* instructions run as hint-NOPs."),
                f"- Out-of-bounds access caught (checked before timing, in a child process): {caught}."]

    def method(self, cfg, facts):
        return [f"- Parts 1-2: measure() through instructions.sequence: {cfg.unroll} copies in a loop of {cfg.loop}, "
                f"{cfg.reps} repetitions, n and 2n differenced, TSC-calibrated core cycles (the reference: 1,000 "
                "copies, loop of 100, 10 runs).",
                f"- Parts 3-4: whole C programs (c/) timed by routines.program.time_programs, builds of one kernel "
                f"interleaved in every repetition, n and 2n passes differenced; {cfg.reps} repetitions (tables: "
                f"{cfg.table_reps}); the fastest 2n run minus the fastest n run (the least disturbed figure on this "
                "bursty host). Part 3's headline ratios come from the thread CPU time per pass each program measures "
                "itself (CLOCK_THREAD_CPUTIME_ID, fastest of 20 slices, fastest over the runs): the wall-clock "
                "differences moved 2x between identical builds here. '!' when the two disagree by over 10%. "
                "Every build's checksum equals native's (checked before timing).",
                f"- Part 5: {cfg.race_runs} plain runs per test and build, reader and writer pinned to CPUs 0 and 1."]

    def caveats(self, cfg, facts):
        return ["- This CPU has no MPX: every bnd* figure is a hint-NOP's, and the MPX columns are the reference's "
                "published figures for a Skylake; the emulated MPX is a software analogue (c/mpxemu.h), not MPX.",
                "- The emulated MPX keeps bounds in registers and narrows them with two address computations; GCC's "
                "MPX spilled bounds with bndmov and made them with bndmk, so its struct cost does not carry over.",
                "- Placement can outweigh a check: here the same arrayread machine code (checked by disassembly) ran "
                "at about 2 cycles per read with glibc's allocator and about 1 with ASan's, in every run; not "
                "explained here. A verdict resting on a checking build well below native's time is 'not resolved'.",
                "- UBSan's bounds checks see array types only: the kernels pass pointers to array types "
                "(char (*)[n]) so that they apply; through a plain pointer UBSan checks nothing.",
                f"- Sizes: {', '.join(f'{k} {n:,}' for k, n in cfg.sizes)} elements"
                + (" (quick: L1-resident, not the reference's 1 GiB arrays, so DRAM traffic is absent)"
                   if cfg.name == "quick" else " (the reference's)") + "."]

    def summarise(self, cfg, analysis, facts):
        return summ.sections(analysis.findings)


def _figures(res: dict, rec: dict) -> dict:
    if "per_iteration" in res:
        return program_figures(res)
    if rec["experiment"] == "race":
        return {k: res[k] for k in ("accesses", "flagged", "false_outcomes", "init_bounds", "caught_runs")}
    return {"cycles": res["cycles"], "ipc": res["ipc"], "stable": res["stable"]}
