"""A tiny configuration of the memory study writes its outputs and resumes. It runs the runner
but asserts only on what was written, never on timings: not `measured`."""
from dataclasses import replace

import pytest

from cyclebench.machine.uarch import this_machine
from cyclebench.study import engine
from cyclebench.studies.memory.config import QUICK
from cyclebench.studies.memory.study import MemoryStudy

# settle: a chase no single process settles takes two more processes, not up to 32 (settling is
# test_memory_processes' fact; this test's is that the outputs are written and resumed)
TINY = replace(QUICK, name="tiny", reps=2, budget=0.0, chase_budget=None, max_processes=3, min_size=4096,
               max_size=64 << 10, per_octave=1,
               layouts=("random",), tlb_pages_4k=(8,), tlb_pages_2m=(8,), mlp_chains=(1, 2), mlp_size=1 << 20,
               widths=("scalar",), bw_levels=("L1",), nt_levels=(), two_cpu_levels=("L1",), two_cpu_widths=("scalar",),
               bw_reps=2, bw_pass_bytes=64 << 10, loaded_size=1 << 20, dram_cap=4 << 20, min_loads=2048,
               max_loads=2048)


def test_tiny_study_writes_outputs_and_resumes(tmp_path, monkeypatch):
    # times for real beside other tests but asserts no timing: a stated clock (no calibration to
    # fail its check three runs in a row while the other worker loads the machine)
    monkeypatch.setenv("CYCLEBENCH_CLOCK_MHZ", "3000")
    run = engine.run_study(MemoryStudy(), TINY, tmp_path, progress=False)
    assert run.measured == len(run.records) > 0
    for name in ("latency.txt", "latency.csv", "latency.png", "levels.txt", "tlb.txt", "tlb.png", "mlp.txt",
                 "bandwidth.txt", "bandwidth.csv", "bandwidth.png", "loaded.txt", "summary.md", "results.json",
                 "tables.txt", "results.jsonl"):
        assert (tmp_path / name).is_file(), name
    summary = (tmp_path / "summary.md").read_text()
    core = this_machine().uarch
    assert "## Quotable figures" in summary
    assert (f"Published for {core.label} (" if core and core.published else "No published figures") in summary
    assert "Detected levels" in (tmp_path / "tables.txt").read_text()
    again = engine.run_study(MemoryStudy(), TINY, tmp_path, resume=True, progress=False)
    assert again.measured == 0 and again.skipped == len(run.records)
