"""Running a study: prepare (build and check), plan, measure what the results file lacks with one
progress bar, then analyse and write the outputs.

Every record is appended to ``OUT/results.jsonl`` (study/store.py) as soon as it is made, so a
killed or interrupted run keeps everything measured so far: Ctrl-C raises KeyboardInterrupt out of
here (the CLI exits 130) after the store is closed. ``resume=True`` skips every planned task whose
key the file already holds; without it an earlier run's file is kept under the first free numbered
name (``results.1.jsonl``, ...; store.keep_aside), and a file that is not ours stops the run first.
"""
from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ResultFileError
from ..machine.metadata import machine_metadata
from .base import Analysis, Study
from .facts import RunFacts, run_facts
from .outputs import write_outputs
from .progress import ProgressBar
from .store import ResultsStore, check_aside, keep_aside

RESULTS = "results.jsonl"


@dataclass
class StudyRun:
    out: Path
    measured: int
    skipped: int
    records: list[dict]
    facts: RunFacts | None = None
    analysis: Analysis | None = None
    outputs: dict[str, Path] = field(default_factory=dict)
    elapsed: float = 0.0
    notes: list[str] = field(default_factory=list)


def results_store(study: Study, path) -> ResultsStore:
    return ResultsStore(path, study.name, study.schema_version, check_record=study.check_record)


def run_study(study: Study, config, out_dir, *, resume: bool = False, progress: bool = True) -> StudyRun:
    """Run (or resume) ``study`` with ``config`` into ``out_dir``; see the module docstring."""
    t0 = time.monotonic()
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ResultFileError(f"cannot create {out}: {e.strerror}", "choose another --out") from None
    path = out / RESULTS
    if resume:
        results_store(study, path).load()    # a foreign or damaged file stops us before any work
    else:
        check_aside(path)
    with ProgressBar(study.name, enabled=progress) as bar:
        bar.stage("preparing: building the kernels and checking them")
        prepared = study.prepare(config)     # correctness before anything is timed
        tasks = study.plan(config, prepared)
        notes = []
        kept = None if resume else keep_aside(path)
        if kept is not None:
            notes.append(f"the earlier results in {path} are kept as {kept}")
            bar.note(notes[-1])
        store = results_store(study, path)
        meta = {"study": study.name, "config": getattr(config, "name", ""), "machine": machine_metadata(),
                "prepared": prepared.facts}
        try:
            done = {r["key"]: r for r in store.start(meta, resume=resume)}
            todo = [t for t in tasks if t.key not in done]
            bar.count(len(tasks), len(tasks) - len(todo))
            for task in todo:
                bar.show(task.label)
                rec = {"key": task.key, "experiment": task.experiment, **task.run(), "recorded": _now()}
                store.append(rec)
                done[task.key] = rec
                bar.advance()
        finally:
            store.close()
        bar.stage("analysing and writing outputs")
        records = [done[t.key] for t in tasks]
        facts = run_facts(study.name, meta["config"], store.meta, records, prepared.facts)
        analysis = study.analyse(config, records, facts)
        outputs = write_outputs(study, config, analysis, facts, out)
        outputs["results"] = path
        bar.stage("done")
    return StudyRun(out, len(todo), len(tasks) - len(todo), records, facts, analysis, outputs,
                    time.monotonic() - t0, notes)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")

