"""Burst detection on known figures (no timing): spread, calibration drift, a slow clock, and a
busy SMT sibling seen by the contention gauge; and the per-machine history they compare with."""
import json
import os

import pytest

from cyclebench.measurement import clock_history, stability
from cyclebench.measurement.stability import assess, two_modes

QUIET = [3.0] * 20
GHZ = [3.69] * 20


def test_a_quiet_run_is_stable():
    st = assess(QUIET, GHZ, 3.69, contention=1.0, reference_contention=1.0)
    assert st.stable and st.reasons == []


def test_each_burst_signal_names_itself():
    assert "spread" in assess([3.0] * 10 + [3.5] * 10).reasons[0]
    assert "drifted" in assess(QUIET, [3.69] * 10 + [3.4] * 10).reasons[0]
    assert "below this machine's recent" in assess(QUIET, [3.5] * 20, 3.69).reasons[0]


def test_one_repetition_left_of_several_is_no_figure():
    st = assess([2.39], [3.69], 3.69, asked=2)
    assert not st.stable and "1 of 2 repetitions were interrupted" in st.reasons[0]
    assert assess([1.0], [3.69], 3.69).stable          # one asked for (-n 1): the caller's choice


def test_contention_gauge_above_the_machines_best_is_a_burst():
    # 4 independent adds per chain add: 1.0 on a quiet 4-ALU core; a busy sibling slows the gauge
    st = assess(QUIET, GHZ, 3.69, contention=1.33, reference_contention=1.0)
    assert not st.stable and "SMT sibling" in st.reasons[0] and "33.0%" in st.reasons[0]
    assert assess(QUIET, GHZ, 3.69, contention=1.01, reference_contention=1.0).stable
    # a CPU with three ALUs has a higher quiet ratio: only the rise over its own history counts
    assert assess(QUIET, GHZ, 3.69, contention=1.34, reference_contention=1.333).stable
    assert assess(QUIET, GHZ, 3.69, contention=1.33, reference_contention=None).stable


def test_history_keeps_the_best_of_each_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    for ghz, con in ((3.60, 1.05), (3.69, 1.00)):
        clock_history.record("cpu", ghz)
        clock_history.record("cpu", con, "contention")
    assert clock_history.reference("cpu") == pytest.approx(3.69)
    assert clock_history.reference("cpu", "contention") == pytest.approx(1.00)
    # from three values on, the second best: one lucky (or broken) record does not set the bar
    for ghz, con in ((3.65, 1.02), (3.95, 0.995)):
        clock_history.record("cpu", ghz)
        clock_history.record("cpu", con, "contention")
    assert clock_history.reference("cpu") == pytest.approx(3.69)
    assert clock_history.reference("cpu", "contention") == pytest.approx(1.00)
    clock_history.record("cpu", 0.55, "contention")      # below what the gauge can read: not kept
    assert clock_history.reference("cpu", "contention") == pytest.approx(1.00)
    # a history of slowed calibration chains (0.93-0.98) is no bar: read as none, a quiet 1.00 passes
    (tmp_path / "contention-cpu.json").write_text("[0.9785, 0.9713, 0.9332, 0.946, 0.9277, 0.931]")
    assert clock_history.reference("cpu", "contention") is None
    assert clock_history.reference("other") is None
    (tmp_path / "contention-cpu.json").write_text("not json")
    assert clock_history.reference("cpu", "contention") is None


def test_a_measurement_reports_its_contention_gauge():
    import cyclebench
    r = cyclebench.measure("add rax, rbx", n_measurements=10, budget=0.5)
    if r.backend["name"] != "tsc":
        pytest.skip("the gauge runs with the TSC backend")
    # recorded for the chosen attempt and for every attempt (the JSON field keeps its v1 name)
    assert 0 < r.stability["contention_probe"] and all("contention_probe" in a for a in r.attempts)


def test_a_spread_around_zero_or_beyond_the_figure_is_never_stable():
    # --unroll 1 "xor eax,eax" printed "stable (spread 200.02%)": the IQR was below 0.01 cycles
    st = assess([0.0, 0.005, 0.01] * 10, GHZ, 3.69)
    assert not st.stable and "spread 200.0%" in st.reasons[0]
    st = assess([-0.001, 0.0, 0.001] * 10)
    assert not st.stable and st.spread is None and "median of zero" in st.reasons[0]
    assert not assess([float("nan")] * 5).stable


def test_a_figure_below_the_resolution_is_neither_stable_spread_nor_unstable_spread():
    st = assess([-0.001, 0.0, 0.001] * 10, GHZ, 3.69, below_resolution=True)
    assert st.stable and st.below_resolution and st.spread is None and st.to_dict()["below_resolution"]
    # the host checks still apply
    st = assess([-0.001, 0.0, 0.001] * 10, [3.5] * 20, 3.69, below_resolution=True)
    assert not st.stable and "below this machine's recent" in st.reasons[0]


@pytest.mark.parametrize("content", ["{}", "null", "5", '"str"', '["a"]', "[1e999]", "[NaN]", "[true]",
                                     "[0.01]", "[99.0]", "not json", "[" * 5000, "\xff\xfe"])
def test_a_damaged_history_file_is_ignored_then_rewritten(tmp_path, monkeypatch, content):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    for kind, good in (("clock", 3.69), ("contention", 1.0)):
        path = tmp_path / f"{kind}-cpu.json"
        path.write_text(content, errors="surrogateescape")
        assert clock_history.reference("cpu", kind) is None
        clock_history.record("cpu", good, kind)
        assert json.loads(path.read_text()) == [good] and clock_history.reference("cpu", kind) == good


def test_plausible_values_are_kept_and_implausible_ones_never_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    (tmp_path / "clock-cpu.json").write_text('[3.5, "x", 1e999, 3.6, 12.0]')
    assert clock_history.reference("cpu") == 3.6
    clock_history.record("cpu", float("inf"))
    clock_history.record("cpu", 0.0)
    clock_history.record("cpu", 3.7)
    assert json.loads((tmp_path / "clock-cpu.json").read_text()) == [3.5, 3.6, 3.7]


def test_a_folder_or_fifo_where_the_file_should_be_is_no_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    (tmp_path / "clock-cpu.json").mkdir()
    os.mkfifo(tmp_path / "contention-cpu.json")
    assert clock_history.reference("cpu") is None and clock_history.reference("cpu", "contention") is None
    clock_history.record("cpu", 3.7)
    clock_history.record("cpu", 1.0, "contention")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clock-cpu.json", "contention-cpu.json"]


def test_a_clock_that_moved_for_good_becomes_the_history(tmp_path, monkeypatch):
    # A live migration to a slower host: every run reads below the recorded best, so none is ever
    # recorded as stable. Runs steady in themselves at one lower level for MOVED_SPAN seconds
    # move the bar; fewer, shorter or scattered ones do not.
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    for _ in range(5):
        clock_history.record("cpu", 3.70)
    span = clock_history.MOVED_SPAN
    n = clock_history.MOVED_RUNS
    times = [i * span / (n - 1) for i in range(n)]
    assert not any(clock_history.note_low_clock("cpu", 3.40, t) for t in times[:-1])
    assert clock_history.reference("cpu") == pytest.approx(3.70)
    assert clock_history.note_low_clock("cpu", 3.41, times[-1])
    assert clock_history.reference("cpu") == pytest.approx(3.40, abs=0.011)
    # two quiet runs on a fast host again raise the bar back (the best is the highest)
    clock_history.record("cpu", 3.70)
    clock_history.record("cpu", 3.70)
    assert clock_history.reference("cpu") == pytest.approx(3.70)


def test_a_clock_moves_under_runs_of_many_attempts_a_second(tmp_path, monkeypatch):
    # a command's attempts come many a second: they must not crowd the span's first note out of
    # the notes kept, and a dip before the new level is no part of it
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    for _ in range(5):
        clock_history.record("cpu", 2.97)
    n, span = clock_history.MOVED_RUNS, clock_history.MOVED_SPAN
    assert not clock_history.note_low_clock("cpu", 2.37, 0.0)
    moved = [clock_history.note_low_clock("cpu", 2.54, 1 + t / 5) for t in range(int(5 * 1.5 * span))]
    assert any(moved) and not any(moved[:int(5 * span)])
    assert clock_history.reference("cpu") == pytest.approx(2.54)


def test_a_burst_a_stable_run_between_or_a_scattered_level_moves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    for _ in range(5):
        clock_history.record("cpu", 3.70)
    n, span = clock_history.MOVED_RUNS, clock_history.MOVED_SPAN
    # many low runs within a minute: a burst
    assert not any(clock_history.note_low_clock("cpu", 3.40, t) for t in range(3 * n))
    # a stable run at the recorded level ends the notes: the old level is still reached
    clock_history.record("cpu", 3.70)
    assert not any(clock_history.note_low_clock("cpu", 3.40, 1000 + t * span / n) for t in range(n - 1))
    # levels that wander more than MOVED_LEVEL apart are bursts of several depths, not a new clock
    clock_history.record("cpu", 3.70)
    assert not any(clock_history.note_low_clock("cpu", g, 5000 + i * span) for i, g in enumerate([3.2, 3.5] * n))
    assert clock_history.reference("cpu") == pytest.approx(3.70)
    # foreign notes are ignored, not an error
    (tmp_path / "clock-low-cpu.json").write_text('[[1, "x"], "y", [null, 3.4], [2, 99.0]]')
    assert not clock_history.note_low_clock("cpu", 3.4, 9000)


def test_a_low_clock_with_the_gauge_at_its_best_is_the_hosts_clock_not_a_burst():
    # a burst slows the gauge's four chains more than the one chain: a quiet gauge vouches for
    # a run whose clock alone is below the history (a boosting host's clock wanders by 6%)
    st = assess(QUIET, [3.4] * 20, 3.69, contention=1.0, reference_contention=1.0)
    assert st.stable and not st.reasons
    assert assess(QUIET, [3.4] * 20, 3.69, contention=1.019, reference_contention=1.0).stable
    # a gauge above its best, or none to compare against, leaves the clock check in force
    for con, ref in ((1.03, 1.0), (1.0, None), (None, 1.0)):
        st = assess(QUIET, [3.4] * 20, 3.69, contention=con, reference_contention=ref)
        assert not st.stable and any("below this machine's recent" in r for r in st.reasons)
    # and a clock that drifts within the run is flagged whatever the gauge says
    assert not assess(QUIET, [3.69] * 10 + [3.4] * 10, 3.69, contention=1.0, reference_contention=1.0).stable


def test_only_a_run_flagged_for_its_clock_alone_is_noted():
    assert assess(QUIET, [3.4] * 20, 3.69).only_low_clock
    assert not assess([3.0] * 10 + [3.5] * 10, [3.4] * 20, 3.69).only_low_clock   # and a spread
    assert not assess(QUIET, [3.4] * 20, 3.69, contention=1.3, reference_contention=1.0).only_low_clock
    assert not assess(QUIET, GHZ, 3.69).only_low_clock


def test_two_crisp_levels_are_two_modes_and_a_spread_or_a_burst_is_not():
    # Zen 4, 12 unpcklps a copy: quiet repetitions at 3.95 or 5.38 per copy, stretch by stretch,
    # with interrupted ones scattered about (one below zero)
    jitter = [0.001 * (i % 5) for i in range(30)]
    reps = [3.95 + j for j in jitter] + [5.38 - j for j in jitter[:20]] + [10.4, -3.0, 4.6]
    fast, slow, share = two_modes(reps)
    assert fast == pytest.approx(3.95, abs=0.005) and slow == pytest.approx(5.38, abs=0.005)
    assert share == pytest.approx(0.6)
    # one level with a slower tenth (a burst the gauges let through) is no mode: too few
    assert two_modes([1.0] * 46 + [1.2] * 4) is None
    # levels closer than MIN_MODE_GAP, a wide spread, repetitions spread between two levels
    assert two_modes([1.0] * 25 + [1.03] * 25) is None
    assert two_modes([1.0 + 0.01 * i for i in range(50)]) is None
    assert two_modes([1.0] * 20 + [1.0 + 0.02 * i for i in range(1, 11)] + [1.3] * 20) is None
    assert two_modes([]) is None and two_modes([1.0, 2.0]) is None


def test_two_modes_the_calibration_made_are_not_the_codes():
    """Two runs whose calibrations read two clocks (a busy sibling slowing the calibration's add
    chain in one) while their A and B ran alike read two levels in cycles, each at its own clock
    by their ratio: not code that runs at two speeds. Levels at one clock are the code's."""
    from cyclebench.measurement.evaluate import modes

    def run(ticks, ghz):
        return {"reps": {"cycles": [t * ghz / 2.596 for t in ticks], "ticks": ticks, "ghz": [ghz] * len(ticks),
                         "contention": None}}
    runs = [run([1.30] * 20, 3.99), run([1.30] * 20, 3.69)]
    assert stability.two_modes([c for r in runs for c in r["reps"]["cycles"]]) is not None
    assert modes(runs) is None
    runs = [run([1.30] * 20, 3.99), run([1.20] * 20, 3.99)]
    assert modes(runs)["cycles"] == [pytest.approx(1.20 * 3.99 / 2.596), pytest.approx(1.30 * 3.99 / 2.596)]
