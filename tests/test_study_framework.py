"""The study framework with a fake study that measures nothing: the engine's resume, what an
interrupted run keeps, facts read from records, the summary built from them, and the registry."""
import json
from argparse import Namespace

import pytest

from cyclebench.errors import ResultFileError, UsageError
from cyclebench.reports.model import Table
from cyclebench.study import registry
from cyclebench.study.base import Analysis, OutputFile, Prepared, Section, Study, Task
from cyclebench.study.engine import run_study
from cyclebench.study.facts import run_facts
from cyclebench.study.summary import build_summary


def timing(backend="tsc", events=(), stable=True, warnings=(), n=5):
    """A record body shaped like a routines Timing."""
    return {"backend": {"name": backend, "reason": f"{backend} chosen", "calibrated_ghz": 3.7},
            "options": {"n_measurements": n}, "events": {e: {} for e in events}, "stable": stable,
            "warnings": list(warnings), "cycles": 1.0}


class Fake(Study):
    name = "fake"
    title = "fake study"

    def __init__(self, sizes=(1, 2, 3), stop_after=None, backend="tsc", events=()):
        self.sizes, self.stop_after, self.backend, self.events = sizes, stop_after, backend, events
        self.ran = []

    def configure(self, options):
        return Namespace(name="tiny", to_dict=lambda: {"sizes": list(self.sizes)})

    def prepare(self, config):
        return Prepared(facts={"lib": "fake 1.0"})

    def plan(self, config, prepared):
        def run(size):
            if self.stop_after is not None and len(self.ran) == self.stop_after:
                raise KeyboardInterrupt
            self.ran.append(size)
            return {"params": {"size": size}, "result": timing(self.backend, self.events, stable=size != 2,
                                                               warnings=["burst"] if size == 2 else [])}
        return [Task(f"size|{s}", "sizes", f"size {s}", lambda s=s: run(s)) for s in self.sizes]

    def analyse(self, config, records, facts):
        t = Table.of_records("sizes", [{"size": r["params"]["size"], "cycles": r["result"]["cycles"]}
                                       for r in records])
        return Analysis(files=[OutputFile("sizes.csv", [t]), OutputFile("sizes.txt", [t])], console=[t],
                        summary_tables=[t], findings={"n": len(records)}, data={"sizes": len(records)})

    def summarise(self, config, analysis, facts):
        return [Section("Sizes", [f"- {analysis.findings['n']} sizes."])]

    def caveats(self, config, facts):
        return ["- a fake caveat."]


def _records(path):
    return [json.loads(x) for x in path.read_text().splitlines()[1:]]   # after the header line


def test_a_run_writes_every_output_and_the_metadata_block(tmp_path):
    run = run_study(Fake(), Namespace(name="tiny", to_dict=lambda: {"k": 1}), tmp_path, progress=False)
    assert (run.measured, run.skipped) == (3, 0)
    assert [r["key"] for r in _records(tmp_path / "results.jsonl")] == ["size|1", "size|2", "size|3"]
    assert (tmp_path / "sizes.csv").read_text().startswith("size,cycles\n1,1.0\n")
    assert "sizes" in (tmp_path / "tables.txt").read_text()
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema"] == "cyclebench.fake-study" and doc["findings"] == {"n": 3} and doc["sizes"] == 3
    meta = doc["metadata"]
    assert meta["machine"]["cpu_model_name"] and meta["parameters"] == {"k": 1}
    assert meta["method"]["backends"] == {"tsc": 3} and meta["method"]["prepared"] == {"lib": "fake 1.0"}


def test_resume_measures_only_what_is_missing(tmp_path):
    cfg = Namespace(name="tiny")
    run_study(Fake(sizes=(1, 2)), cfg, tmp_path, progress=False)
    more = Fake(sizes=(1, 2, 3))
    again = run_study(more, cfg, tmp_path, resume=True, progress=False)
    assert (again.measured, again.skipped, more.ran) == (1, 2, [3])
    assert len(_records(tmp_path / "results.jsonl")) == 3
    fresh = run_study(Fake(sizes=(1,)), cfg, tmp_path, progress=False)     # no --resume: old file kept aside
    assert fresh.measured == 1 and len(_records(tmp_path / "results.1.jsonl")) == 3
    assert fresh.notes == [f"the earlier results in {tmp_path / 'results.jsonl'} are kept as {tmp_path / 'results.1.jsonl'}"]
    third = run_study(Fake(sizes=(1, 2)), cfg, tmp_path, progress=False)   # two runs back is never lost
    assert third.measured == 2 and len(_records(tmp_path / "results.1.jsonl")) == 3
    assert len(_records(tmp_path / "results.2.jsonl")) == 1


def test_a_foreign_results_file_is_never_moved(tmp_path):
    (tmp_path / "results.jsonl").write_text("my own notes\n")
    with pytest.raises(ResultFileError, match="is not a cyclebench results file"):
        run_study(Fake(sizes=(1,)), Namespace(name="tiny"), tmp_path, progress=False)
    assert (tmp_path / "results.jsonl").read_text() == "my own notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl"]


def test_progress_is_a_line_per_stage_off_a_terminal(tmp_path):
    import io
    from cyclebench.study.progress import ProgressBar
    out = io.StringIO()
    with ProgressBar("fake", stream=out) as bar:
        bar.stage("preparing")
        bar.count(3)
        bar.show("first")
        bar.advance()
        bar.stage("writing outputs")
    assert out.getvalue().splitlines() == ["fake: preparing", "fake: measuring 3 of 3 tasks",
                                           "fake: writing outputs"]


def test_an_interrupted_run_keeps_what_it_measured(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_study(Fake(stop_after=2), Namespace(name="tiny"), tmp_path, progress=False)
    assert [r["key"] for r in _records(tmp_path / "results.jsonl")] == ["size|1", "size|2"]
    resumed = Fake()
    run = run_study(resumed, Namespace(name="tiny"), tmp_path, resume=True, progress=False)
    assert resumed.ran == [3] and run.skipped == 2


def test_a_foreign_results_file_is_refused_before_any_work(tmp_path):
    (tmp_path / "results.jsonl").write_text("garbage\n")
    fake = Fake()
    with pytest.raises(ResultFileError):
        run_study(fake, Namespace(name="tiny"), tmp_path, resume=True, progress=False)
    assert fake.ran == []


def test_facts_come_from_the_records():
    recs = [{"result": timing("perf", ("branch-misses",))}, {"result": timing("perf", n=7, stable=False,
                                                                             warnings=["w"])},
            {"result": {"traces": []}}]
    f = run_facts("x", "quick", {"machine": {"hypervisor": False}}, recs)
    assert (f.records, f.measurements, f.unstable) == (3, 2, 1)
    assert f.pmu and not f.tsc and f.counted("branch-misses") and f.repetitions == [5, 7]
    assert f.warnings == [("w", 1)]


def test_the_summary_is_built_from_facts_not_fixed_text(tmp_path):
    study = Fake()
    tsc = run_facts("fake", "tiny", {"machine": {"cpu_model_name": "Fake CPU", "hypervisor": True}},
                    [{"result": timing()}, {"result": timing(stable=False, warnings=["burst"])}])
    text = build_summary(study, None, Analysis(findings={"n": 2}), tsc)
    for part in ("# fake study: findings (tiny run)", "## Machine", "Fake CPU", "a virtual machine",
                 "## Method", "TSC-calibrated core cycles", "Extra events counted: none", "## Sizes",
                 "## Caveats", "1 of 2 measurements were flagged unstable", "1x: burst", "a fake caveat"):
        assert part in text, part
    assert text.index("## Method") < text.index("## Sizes") < text.index("## Caveats")
    pmu = run_facts("fake", "tiny", {"machine": {"cpu_model_name": "Fake CPU"}},
                    [{"result": timing("perf", ("branch-misses",))}])
    text = build_summary(study, None, Analysis(findings={"n": 1}), pmu)
    assert "counted by the hardware PMU" in text and "`branch-misses`" in text
    assert "TSC" not in text and "virtual machine" not in text


def test_the_registry_finds_study_folders():
    assert "memset" in registry.names()
    with pytest.raises(UsageError):
        registry.get("no_such_study")
    with pytest.raises(TypeError):
        registry.register(type("Nameless", (Study,), {}))


def test_cli_lists_studies_and_refuses_bad_options(cli):
    code, out, _ = cli("study", "--list")
    from cyclebench.study import registry
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == registry.names()
    assert "memset study" in out
    code, _, err = cli("study", "memset", "--no-such-option")
    assert code == 2 and err.startswith("error: unrecognized arguments") and "hint:" in err
    code, _, err = cli("study")
    assert code == 2 and "error: no study named" in err
    code, _, err = cli("study", "nope")
    assert code == 2 and "unknown study" in err
