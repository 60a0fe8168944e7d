"""The dispatch study, run: ``cyclebench study dispatch [--quick] [--builds LIST] [--out DIR]``.

Ertl's control-flow-integrity microbenchmark on this CPU: the dispatchers of sources.py
built nine ways (builds.py), checked (checking.py), timed over fixed, round-robin and random target
patterns (experiments.py), and compared with his published table (published.py)."""
from __future__ import annotations

from pathlib import Path

from cyclebench.machine.uarch import from_metadata
from cyclebench.routines.build import compiler_version
from cyclebench.study.base import Analysis, OutputFile, Prepared, Study, comma_list
from cyclebench.study.outputs import records_csv
from cyclebench.study.registry import register

from . import analysis as an
from . import builds as bl
from . import codesize
from . import summary as summ
from .checking import problems, run_checks
from .config import ERTL_BUILDS, EXPERIMENTS, FULL, QUICK, StudyConfig
from .experiments import plan
from .plots import by_dispatcher, by_targets
from .published import ROWS, column_for
from .tables import builds_table, ertl_table, pattern_table

SPECTRE = Path("/sys/devices/system/cpu/vulnerabilities/spectre_v2")


@register
class DispatchStudy(Study):
    name = "dispatch"
    title = "indirect-call dispatch and control-flow integrity"
    description = ("Ertl's CFI microbenchmark: indirect call, bounds-checked table, binary and B-tree-like "
                   "searches, switch; clang -Os/-mretpoline, cfi-icall, kcfi, ENDBR64, SLS, return thunks, "
                   "GCC thunks; fixed, round-robin and random targets.")
    experiments = EXPERIMENTS
    presets = (QUICK, FULL)

    def add_options(self, group) -> None:
        super().add_options(group)
        group.add_argument("--builds", metavar="LIST", help="comma-separated subset of " + ",".join(bl.BY_NAME))

    def option_changes(self, options, base: StudyConfig) -> dict:
        if not getattr(options, "builds", None):
            return {}
        b = comma_list(options.builds, "--builds clang-Os,clang-retpoline", bl.BY_NAME)
        return {"builds": b, "pattern_builds": tuple(x for x in base.pattern_builds if x in b)}

    def prepare(self, cfg: StudyConfig) -> Prepared:
        built, missing, sizes, info = {}, {}, {}, {}
        for name in dict.fromkeys((*cfg.builds, *cfg.pattern_builds, "clang-Os")):
            b = bl.BY_NAME[name]
            why = bl.missing(b)
            if why:
                missing[name] = why
                continue
            bb = bl.make(b)
            bad = problems(run_checks(str(bb.path)))
            if bad:
                from cyclebench.errors import RoutineIncorrect
                raise RoutineIncorrect(f"build {name}: {bad[0]}", hint="see sources.py and the disassembly")
            built[name] = bb
            sizes[name] = codesize.measure(bb)
            info[name] = {"compiler": compiler_version(b.cc), "command": list(bb.command)}
        try:
            spectre = SPECTRE.read_text().strip()
        except OSError:
            spectre = "not readable"
        return Prepared(built, {"builds": info, "missing": missing, "sizes": sizes, "spectre_v2": spectre,
                                "checked": sorted(built)})

    def plan(self, cfg: StudyConfig, prepared: Prepared):
        return plan(cfg, prepared.state)

    def analyse(self, cfg: StudyConfig, records: list[dict], facts) -> Analysis:
        p = facts.prepared
        here, col, _ = machine_label(facts.machine)
        v = an.collect(records)
        builds = [b for b in cfg.builds if b in p.get("checked", [])]
        missing = dict(p.get("missing", {}))
        pen = an.penalty(v)
        ks = list(cfg.ks)
        ertl = ertl_table(v, here, col)
        t_iter = builds_table(v, builds, missing, "iter")
        t_inc = builds_table(v, builds, missing, "inc")
        pats = [pattern_table(v, b, ks, pen) for b in cfg.pattern_builds if b in builds]
        sizes = [codesize.detail_table(p.get("sizes", {}), [b for b in ERTL_BUILDS if b in builds]),
                 codesize.summary_table(p.get("sizes", {}), builds)]
        a = Analysis()
        a.files = [OutputFile("ertl.txt", [ertl]), OutputFile("ertl.csv", [ertl]),
                   OutputFile("builds.txt", [t_iter, t_inc]), OutputFile("patterns.txt", pats),
                   OutputFile("code_size.txt", sizes),
                   OutputFile("by_dispatcher.png", figure=by_dispatcher(v, builds, here)),
                   records_csv(records, _figures)]
        plot_builds = [b for b in ERTL_BUILDS if b in cfg.pattern_builds and b in builds]
        if v["pattern"] and plot_builds:
            a.files.append(OutputFile("by_targets.png", figure=by_targets(v, plot_builds, here)))
        a.console = [ertl, t_iter, t_inc, *pats, *sizes]
        a.summary_tables = a.console
        ertl_vals = {row: (v["fixed"].get(row) or {}).get("iter") for row, _ in ROWS if row[2] != "*"}
        a.findings = {"answers": an.answers(v, builds), "ertl": {" ".join(map(str, k)): x for k, x in ertl_vals.items()}}
        a.data = {"missing_builds": missing, "sizes": p.get("sizes", {})}
        self._ertl = ertl_vals
        return a

    def machine(self, cfg, facts):
        p = facts.prepared
        out = [f"- spectre_v2: `{p.get('spectre_v2')}`."]
        for name, info in p.get("builds", {}).items():
            out.append(f"- {name}: {info['compiler']}; `{' '.join(info['command'][1:])}`"[:400])
        return out

    def method(self, cfg, facts):
        return summ.method_lines(cfg)

    def caveats(self, cfg, facts):
        return summ.caveat_lines(cfg, facts.prepared.get("missing", {}), *machine_label(facts.machine))

    def summarise(self, cfg, analysis, facts):
        here, col, _ = machine_label(facts.machine)
        return summ.findings(analysis.findings["answers"], getattr(self, "_ertl", {}), here, col)


def machine_label(machine: dict) -> tuple[str, str, bool]:
    """(our column's label, Ertl's column to compare with, whether that is the same core): the core
    as the microarchitecture table names it ("AMD Zen 3, VM guest (family 25 model 1)")."""
    ident = from_metadata(machine)
    col, same = column_for(ident.uarch)
    return f"{ident.name} (family {ident.family} model {ident.model})", col, same


def _figures(res: dict, rec: dict) -> dict:
    pt = an.point(rec)
    return {"cycles_per_iteration": round(pt["iter"], 4), "net": round(pt["net"], 4), "stable": pt["stable"]}
