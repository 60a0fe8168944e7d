"""The paging study, run: ``cyclebench study paging [--quick] [--out DIR] [--resume]``.

What software pays to live without virtual addressing, after "Evaluating the Performance
Implications of Physical Addressing", on this CPU and in cycles:

* ``splitstack``: naive fib and a deep non-tail-recursive sum, built with and without
  ``-fsplit-stack`` (gold), with ``__morestack``'s segment switches counted; a hot split (a call
  exactly across a segment edge in a loop); libgcc's signal blocking on and off.
* ``tree``: blackscholes (single precision, from the formula) over the tree ``Array`` (c/tree_array.h,
  pages 4 KiB-1 MiB, depth picked by the constructor, and the fixed-depth-3 "no branches" variant)
  against plain malloc arrays, five separate arrays and one array of structs.
* ``random``: a dependent chase through a one-page and a 256 MiB array: plain, tree, no branches.
* ``hugepages``: the plain arrays on 4 KiB pages (MADV_NOHUGEPAGE) against 2 MiB (MADV_HUGEPAGE).
* instruction counts by valgrind's callgrind (exact counts; there is no PMU here).

Every timing is ``routines.program.time_program`` (n and 2n iterations, differenced). The programs
are in c/; programs.py builds them, experiments.py plans the tasks, analysis.py, tables.py,
plots.py and summary.py turn records into the outputs."""
from __future__ import annotations


from cyclebench.study.base import Analysis, OutputFile, Prepared, Study
from cyclebench.study.outputs import records_csv
from cyclebench.study.programs import program_figures
from cyclebench.study.registry import register

from . import analysis as an
from . import checks, instructions, programs
from . import summary as summ
from .config import EXPERIMENTS, FULL, QUICK, StudyConfig
from .experiments import expand, plan
from .plots import random_figure, split_figure, tree_figure
from .tables import huge_view, hot_view, instructions_view, random_view, splitstack_view, tree_view


@register
class PagingStudy(Study):
    name = "paging"
    title = "paging study (software costs of physical addressing)"
    description = ("Split stacks (fib, deep recursion, hot split, signal blocking), tree arrays under blackscholes "
                   "(pages 4 KiB-1 MiB, no-branches variant, two layouts), random access over plain and tree "
                   "arrays, and 4 KiB against 2 MiB pages; cycles per call, option and access, normalised as the "
                   "reference plotted them.")
    experiments = EXPERIMENTS
    presets = (QUICK, FULL)

    def add_options(self, group) -> None:
        super().add_options(group)
        group.add_argument("--no-instructions", action="store_true",
                           help="skip the instruction counts (valgrind callgrind)")

    def option_changes(self, options, base: StudyConfig) -> dict:
        return {"count_instructions": False} if options.no_instructions else {}

    def prepare(self, cfg: StudyConfig) -> Prepared:
        progs = programs.build_all()
        facts = checks.run_all(progs)          # correctness before anything is timed
        facts["valgrind"] = instructions.version() if cfg.count_instructions else None
        return Prepared(progs, facts)

    def plan(self, cfg: StudyConfig, prepared: Prepared):
        return plan(cfg, prepared.state)

    def analyse(self, cfg: StudyConfig, records: list[dict], facts) -> Analysis:
        cpu = facts.machine.get("cpu_model_name", "")
        records = expand(records)
        s, t, rd = an.splitstack(records), an.tree(records), an.random_access(records)
        hp, ins = an.hugepages(records, rd, t), an.instructions(records)
        a = Analysis(findings={"splitstack": s, "tree": t, "random": rd, "hugepages": hp, "instructions": ins})
        views = []
        if s["rows"]:
            views += [splitstack_view(s), hot_view(s)]
            a.files += [OutputFile("splitstack.txt", views[-2:]), OutputFile("splitstack.png", figure=split_figure(s, cpu))]
        if t["rows"]:
            views.append(tree_view(t))
            a.files += [OutputFile("tree.txt", [views[-1]]), OutputFile("tree.png", figure=tree_figure(t, cpu))]
        if rd["rows"]:
            views.append(random_view(rd))
            a.files += [OutputFile("random.txt", [views[-1]]), OutputFile("random.png", figure=random_figure(rd, cpu))]
        if hp["rows"]:
            views.append(huge_view(hp))
            a.files.append(OutputFile("hugepages.txt", [views[-1]]))
        if ins:
            views.append(instructions_view(ins))
            a.files.append(OutputFile("instructions.txt", [views[-1]]))
        a.files.append(records_csv(records, _figures))
        a.console = a.summary_tables = views
        a.data = a.findings
        self._findings = a.findings
        return a

    def machine(self, cfg, facts):
        p = facts.prepared
        return [f"- Transparent huge pages: {p.get('thp')}; valgrind: {p.get('valgrind') or 'not used'}.",
                f"- Split stacks: {p.get('split_check')}"]

    def method(self, cfg, facts):
        return ["- Each figure is a whole C program (c/) timed by routines.program.time_programs: pinned to one CPU, run "
                "at n and 2n iterations, a baseline and its variants interleaved within every repetition (so a burst of "
                "host noise falls on all of them alike), the TSC difference divided by the extra iterations (start-up, building the "
                "arrays and exit cancel), ticks converted to core cycles by measure()'s checked TSC calibration "
                "before and after. Headline: the median over repetitions of the paired differences.",
                f"- Repetitions: {cfg.reps} ({cfg.native_reps} on the native input). Builds: gcc -O2; split stacks "
                "add -fsplit-stack -fuse-ld=gold and -Wl,--wrap=__generic_morestack (to count segment switches).",
                "- Instruction counts: " + ("valgrind --tool=callgrind's Ir (instructions executed, exact for these "
                                            "deterministic programs), differenced the same way."
                                            if cfg.count_instructions else "not taken in this run (no PMU here).")]

    def caveats(self, cfg, facts):
        n, total = summ.flagged_counts(self._findings) if getattr(self, "_findings", None) else (0, 0)
        return [f"- {n} of {total} figures in the tables are flagged '!' (unstable, or an interquartile range above "
                "5% of the median over the repetitions): whole programs on this noisy host; a verdict resting on "
                "them says so.",
                "- The reference's figures are published ones for an Intel i7-7700 at 3.6 GHz (normalised times "
                "only); ours are core cycles on this CPU. Its blackscholes was PARSEC's; ours is written here from the "
                "formula, so absolute costs differ.",
                "- Tree pages are malloc'd, so the 'pages' are not physical: the experiment measures the software "
                "cost of the tree (more instructions, pointer loads, less locality), as the reference did, not a "
                "physically addressed machine.",
                "- The chase stores (i * P + 1) mod n, not i * P: with i * P alone element 0 maps to itself."]

    def summarise(self, cfg, analysis, facts):
        return summ.sections(analysis.findings)


def _figures(res: dict, rec: dict) -> dict:
    if "per_iteration" in res:
        return program_figures(res)
    return {"instructions_per_iteration": res.get("instructions")}
