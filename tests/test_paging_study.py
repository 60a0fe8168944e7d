"""A tiny configuration of the paging study writes its outputs and resumes. Not measured: the
clock calibration is replaced by a fixed one and no assertion reads a timing (the programs still
run, a repetition each)."""
from dataclasses import replace

from cyclebench.routines import program
from cyclebench.study import engine
from cyclebench.studies.paging.config import QUICK
from cyclebench.studies.paging.study import PagingStudy

TINY = replace(QUICK, name="tiny", reps=1, native_reps=1, fib_arg=16, fib_iterations=2, sum_depths=(1000, 20000),
               sum_calls=100_000, hot_iterations=1000, pages=(4096, 16384), inputs=("simsmall",),
               passes=(("simsmall", 2),), chase_large=1 << 16, small_accesses=20_000, large_accesses=20_000,
               huge_input="simsmall", count_instructions=False)


def test_tiny_study_writes_outputs_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(program, "clock", lambda cpu=None: (1.4, 2.6e9, 0))
    run = engine.run_study(PagingStudy(), TINY, tmp_path, progress=False)
    assert run.measured == len(run.records) > 0
    for name in ("splitstack.txt", "splitstack.png", "tree.txt", "tree.png", "random.txt", "random.png",
                 "hugepages.txt", "records.csv", "summary.md", "results.json", "tables.txt", "results.jsonl"):
        assert (tmp_path / name).is_file(), name
    summary = (tmp_path / "summary.md").read_text()
    assert "## The reference's findings, here" in summary and "published for an Intel i7-7700" in summary
    for finding in ("about 15%", "about 17% at 8 KB", "32 KB the best", "3% for 16 KB", "large arrays is expensive"):
        assert finding in summary, finding
    assert "TSC-calibrated" in summary
    tree = (tmp_path / "tree.txt").read_text()
    assert "simsmall soa" in tree and "simsmall aos" in tree
    f = run.analysis.findings
    assert {r["size"] for r in f["random"]["rows"]} == {"small", "large"}
    assert all(r["huge_kb_4k"] == 0 for r in f["hugepages"]["rows"])       # MADV_NOHUGEPAGE held
    assert f["splitstack"]["rows"][-1]["switches_per_iteration"] > 0       # depth 20,000 switches segments
    again = engine.run_study(PagingStudy(), TINY, tmp_path, resume=True, progress=False)
    assert again.measured == 0 and again.skipped == len(run.records)
