"""The blocks study, run: ``cyclebench study blocks [--quick] [--out DIR] [--resume]``.

One record per block of BHive's 3,000 (cyclebench/blocks/data/bhive_blocks.csv): the block
measured with its pages mapped (``blocks.measure.measure_block``) and llvm-mca-16's prediction
for the same bytes. ``--quick`` takes every 100th block (30, deterministic)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from cyclebench.study.base import Analysis, OutputFile, Prepared, Section, Study, Task
from cyclebench.study.registry import register

from . import analysis as an

DATA = Path(__file__).resolve().parents[2] / "blocks" / "data" / "bhive_blocks.csv"


@dataclass(frozen=True)
class Config:
    name: str = "full"
    every: int = 1            # every k-th block of the file
    reps: int = 10
    predictors: tuple[str, ...] = ("llvm-mca",)

    def to_dict(self) -> dict:
        return asdict(self)


QUICK = Config("quick", every=100)
FULL = Config()


@register
class BlocksStudy(Study):
    name = "blocks"
    title = "basic blocks from real programs"
    description = ("BHive's 3,000 basic blocks measured with every page they touch mapped onto one page, "
                   "llvm-mca-16's predictions beside them: the share measured, MAPE and Kendall's tau per "
                   "application, and predicted against measured.")
    presets = (QUICK, FULL)

    def add_options(self, group) -> None:
        group.add_argument("--no-llvm-mca", action="store_true", help="measure only, no llvm-mca predictions")

    def option_changes(self, options, base: Config) -> dict:
        return {"predictors": ()} if getattr(options, "no_llvm_mca", False) else {}

    def prepare(self, cfg: Config) -> Prepared:
        from cyclebench.blocks import bulk
        from cyclebench.blocks.predictors import make
        rows = bulk.read_csv(DATA)[::cfg.every]
        predictors = [make(n) for n in cfg.predictors]       # llvm-mca missing: an error now, not later
        return Prepared((rows, predictors), {"blocks_file": DATA.name, "blocks": len(rows),
                                             "predictors": [p.name for p in predictors]})

    def plan(self, cfg: Config, prepared: Prepared) -> list[Task]:
        from cyclebench.blocks.measure import measure_block
        from cyclebench.blocks.predictors import PredictionFailed
        rows, predictors = prepared.state
        tasks = []
        for row in rows:
            def run(row=row):
                doc = measure_block(bytes.fromhex(row["hex"]), n_measurements=cfg.reps,
                                    application=row["application"], weight=row["weight"])
                preds = {}
                if doc["status"] == "ok":
                    from cyclebench.blocks.code import block
                    code = block(bytes.fromhex(row["hex"])).code
                    for p in predictors:
                        try:
                            preds[p.name] = p.predict(code)
                        except PredictionFailed as e:
                            preds[p.name] = str(e)
                return {"params": {"hex": row["hex"], "application": row["application"]},
                        "result": doc, "predictions": preds}
            tasks.append(Task(f"block|{row['hex']}|{cfg.reps}", "block", f"{row['application']} {row['hex'][:16]}", run))
        return tasks

    def analyse(self, cfg: Config, records: list[dict], facts) -> Analysis:
        docs, preds = an.docs_and_predictions(records)
        cpu = facts.machine.get("cpu_model_name", "")
        s = an.share(docs)
        st = an.share_table(s)
        a = Analysis(findings={"share": {k: v for k, v in s.items() if k != "reasons"}})
        a.files.append(OutputFile("measured.txt", [st]))
        a.console.append(st)
        for i, (name, pred) in enumerate(sorted(preds.items())):
            et = an.error_view(name, docs, pred)
            stem = "errors" if i == 0 else f"errors_{i}"
            a.files += [OutputFile(f"{stem}.txt", [et]), OutputFile(f"{stem}.csv", [et]),
                        OutputFile(f"{'scatter' if i == 0 else f'scatter_{i}'}.png", figure=an.scatter(name, docs, pred, cpu))]
            a.console.append(et)
            overall = et.rows[-1]
            a.findings.setdefault("errors", {})[name] = overall
        a.summary_tables = list(a.console)
        a.data = {"blocks": docs, "predictions": preds}
        return a

    def method(self, cfg, facts) -> list[str]:
        return ["- Each block runs as the measured code in its own loop of unrolled copies, registers and memory "
                "starting at 0x12345640, every page it touches mapped onto one shared page when it first faults "
                "(docs/block.md); cycles per iteration = (B - A) / copies, TSC-calibrated.",
                "- A final branch is dropped; a block with a branch before its end or a system call is not run.",
                "- Predictions: llvm-mca-16 with LLVM's own detection of this CPU (-mcpu), 200 iterations of the "
                "same bytes (final branch dropped), disassembled by llvm-mc."]

    def caveats(self, cfg, facts) -> list[str]:
        return ["- Mapping every page onto one physical page keeps data in L1 and can create memory dependencies "
                "(and 4K aliasing) the program does not have; such blocks are flagged, not dropped.",
                "- Without a PMU, cache and TLB misses cannot be ruled out the way BHive does; blocks that walk many "
                "pages are flagged."]

    def summarise(self, cfg, analysis: Analysis, facts) -> list[Section]:
        f = analysis.findings
        s = f["share"]
        lines = [f"{s['clean']} of {s['blocks']} blocks were measured cleanly ({100 * s['share']:.1f}%)."]
        for name, row in f.get("errors", {}).items():
            mape = "—" if row["mape"] is None else f"{row['mape']:.1f}%"
            tau = "—" if row["tau"] is None else f"{row['tau']:.3f}"
            lines.append(f"{name}: MAPE {mape}, Kendall's tau {tau} over {row['blocks']} blocks.")
        return [Section("Findings", lines)]
