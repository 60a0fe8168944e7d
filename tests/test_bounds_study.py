"""The bounds study: every build of every kernel computes native's checksum, an out-of-bounds
access is caught by exactly the checking builds (in a child process), the emulated MPX's race
gives a false outcome within a bounded number of rounds, and a tiny configuration writes its
outputs. No assertion reads a timing (the program clock is fixed, the snippet measurements are
replaced by fabricated ones: the instruction tables' plumbing, not their figures, is what is
tested here); the race test is marked `measured` all the same, because it needs both CPUs to
itself: beside another test worker its two threads seldom overlap."""
import time
from dataclasses import replace

import pytest

from cyclebench.routines import program
from cyclebench.study import engine
from cyclebench.studies.bounds import checks, experiments, programs
from cyclebench.studies.bounds.config import BUILDS, KERNELS, QUICK
from cyclebench.studies.bounds.study import BoundsStudy


@pytest.fixture(scope="session")     # built once: its measured test runs at the suite's end (conftest.py)
def progs():
    return programs.build_all()


def test_every_build_computes_natives_checksum(progs):
    sums = checks.checksums(progs, size=512)
    assert set(sums) == set(KERNELS) and all(isinstance(v, int) and v > 0 for v in sums.values())
    # the checksum depends on the data: a different size gives a different one
    assert checks.checksums(progs, kernels=("arrayread",), builds=("native",), size=1024)["arrayread"] != sums["arrayread"]


def test_out_of_bounds_is_caught_by_the_checking_builds_not_native(progs):
    caught = checks.out_of_bounds(progs, size=512)
    for k in KERNELS:
        assert caught[k]["native"] is False, k
        assert caught[k]["ubsan"] and caught[k]["mpx_emu"], k          # array-typed and narrowed bounds
        assert {b for b in BUILDS if caught[k][b]} == checks.CATCHES[k], k
    assert not caught["arrayread"]["asan_writes"]                      # reads uninstrumented
    assert not caught["struct"]["asan"] and not caught["struct"]["inline"]   # intra-object: needs narrowing


@pytest.mark.measured
def test_emulated_mpx_race_gives_a_false_outcome(progs):
    # a small array read many times: on a Zen 4 guest 2 x 10^4 pointers (160 KB) read 250 times
    # showed 1,200-2,000 false outcomes in the first round in 20 of 20 tries, where 10^6 pointers
    # read 5 times needed 1-150 rounds (up to 5 s); bounded by time, so that a core where the
    # writer never overlaps the reader fails
    deadline = time.monotonic() + 15
    while True:
        r = experiments.race(progs, "fn", "mpx_emu", 20_000, 250, 1)
        if r["false_outcomes"] > 0 or time.monotonic() > deadline:
            break
    assert r["false_outcomes"] > 0          # INIT bounds (entry of another pointer) or torn bounds
    assert r["flagged"] > 0                  # the checks run: most out-of-bounds reads are flagged


def _rows(**ratios):
    """Fabricated part-3 findings: kernel -> {build: ratio}."""
    from cyclebench.studies.bounds import published as pub
    return [{"kernel": k, "builds": {"native": {"ratio": 1.0, "ratio_flag": False},
                                     **{b: {"ratio": r, "ratio_flag": False} for b, r in builds.items()}},
             "published": {f"{c}_mpx": pub.slowdown(k, c) for c in ("gcc", "icc")}} for k, builds in ratios.items()]


def test_overhead_verdicts():
    from cyclebench.studies.bounds.summary import overhead_findings
    text = "\n".join(overhead_findings(_rows(arraywrite={"inline": 1.5}, arrayread={"inline": 1.45, "asan_writes": 1.02,
                                                                                    "asan": 1.8},
                                             struct={"inline": 1.1, "mpx_emu": 2.0},
                                             ptrcreation={"inline": 1.2, "mpx_emu": 5.0})))
    assert text.count("**holds**") == 5 and "does not hold" not in text
    text = "\n".join(overhead_findings(_rows(arraywrite={"inline": 1.5}, arrayread={"inline": 1.5, "asan_writes": 0.5,
                                                                                    "asan": 1.0})))
    assert "not resolved here" in text                 # a checking build at half native's time decides nothing


def _fake_sequence(code, init=None, **kw):
    n = code.count(";") + 1
    return {"cycles": 0.5 * n, "uncertainty": 0.01, "instructions": n, "ipc": 2.0, "branches": [], "stable": True,
            "warnings": [], "result": {"backend": {"name": "fake"}}}


TINY = replace(QUICK, name="tiny", reps=1, table_reps=1, loop=1, budget=0.0, kernels=("struct", "ptrcreation"),
               sizes=(("arraywrite", 4096), ("arrayread", 4096), ("struct", 1024), ("ptrcreation", 1024)),
               passes=2, chunks=(40,), asan_chunks=40, race_elements=20_000, race_iterations=(("fn", 2), ("fp", 2)),
               race_runs=1)


def test_tiny_study_writes_outputs(tmp_path, monkeypatch):
    monkeypatch.setattr(program, "clock", lambda cpu=None: (1.4, 2.6e9, 0))
    monkeypatch.setattr(experiments, "measure_sequence", _fake_sequence)
    run = engine.run_study(BoundsStudy(), TINY, tmp_path, progress=False)
    assert len(run.records) > 0
    for name in ("instructions.txt", "sequences.txt", "sequences.png", "overhead.txt", "overhead.png",
                 "os_tables.txt", "race.txt", "records.csv", "summary.md", "results.json", "tables.txt"):
        assert (tmp_path / name).is_file(), name
    ins = (tmp_path / "instructions.txt").read_text()
    assert ins.count("runs as a NOP on this CPU") >= 12 and "published" in ins
    summary = (tmp_path / "summary.md").read_text()
    for claim in ("2.33x", "ptrcreation", "cannot be tested here", "false negatives", "published, Skylake"):
        assert claim in summary, claim
    assert "holds**" in summary
    f = run.analysis.findings
    assert {r["kernel"] for r in f["overhead"]} == set(TINY.kernels)
    assert all(set(r["builds"]) == set(BUILDS) for r in f["overhead"])
    assert {(r["mode"], r["build"]) for r in f["race"]} == {(m, b) for m in ("fn", "fp")
                                                             for b in ("mpx_emu", "asan", "native")}
    emu = next(r for r in f["tables"] if r["variant"] == "alloc")["builds"]["mpx_emu"]
    assert emu["report"]["tables"] == 40                  # one bounds table per 1 MiB-aligned chunk
