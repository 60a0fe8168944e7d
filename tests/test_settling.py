"""How a run settles, on fabricated readings (facts about the arithmetic, not timings): a slower
head of repetitions still warming up is left out, a run still getting faster at its end is re-run
longer, a cost that varies by nature becomes a variable figure over three processes, and a figure
the clock resolves is never turned into a bound by its own noise. In every case a real burst (a
slow clock, a busy SMT sibling) is still flagged."""
import math
from types import SimpleNamespace

import pytest

from cyclebench.counters.backends import Backend
from cyclebench.measurement import attempts, stability, stats
from cyclebench.measurement.clocks import TscCalibrated
from cyclebench.measurement.evaluate import evaluate as EVAL, pool
from cyclebench.measurement.stability import assess, still_falling, warming_up
from cyclebench.runner import RunnerOutput

GHZ = [3.69] * 20
CAL = 70000                   # TSC ticks per 1e5 calibration adds: 3.709 GHz at 2.596 GHz TSC
LOOP = 64


def fabricated(diffs, contention=None, cal=None) -> RunnerOutput:
    """One run: B - A ticks per repetition; the gauge's ticks relative to the chain per repetition
    (1.0: quiet); the calibration's ticks per repetition (CAL: this machine's clock)."""
    n = len(diffs)
    con = contention or [1.0] * n
    cal = cal or [CAL] * n
    return RunnerOutput(info={"loop": [str(LOOP)], "tsc_hz": ["2596000000"], "cpu": ["0"]}, done=True, samples={
        "ca": [[CAL]] * n, "cb": [[CAL + c] for c in cal],
        "pa": [[CAL]] * n, "pb": [[CAL + round(c * k)] for c, k in zip(cal, con)],
        "a": [[1000 + abs(d)] for d in diffs], "b": [[1000 + abs(d) + d] for d in diffs]})


def evaluate(out, ref_ghz=None, ref_con=None):
    return EVAL(out, Backend("tsc", "test"), TscCalibrated(), 1, False, "median", ref_ghz, ref_contention=ref_con)


def ticks(cycles_per_copy: float) -> int:
    """B - A ticks for a figure in cycles per copy at the fabricated clock."""
    return round(cycles_per_copy * LOOP * CAL / 100000)


# --- a head still warming up -------------------------------------------------------------------

FALLING = [5.61, 4.43, 4.10, 3.83, 3.51, 2.90, 2.36, 2.22, 2.20, 2.21, 2.20, 2.22, 2.22, 2.23, 2.22]


def test_a_slower_head_that_settles_is_left_out():
    # memset over a replayed stream of random sizes: the predictor learns it over ~7 repetitions
    assert warming_up(FALLING) == 5
    ev = evaluate(fabricated([ticks(v * 1000) for v in FALLING]))
    assert ev["stability"].stable and ev["raw"]["warming_up"] == [0, 1, 2, 3, 4]
    assert ev["events"]["cycles"].value == pytest.approx(2220, rel=0.01)
    assert any("warming up" in w for w in ev["warnings"])


@pytest.mark.parametrize("values", [
    [3.0] * 5 + [3.5] * 5 + [3.0] * 5,                # a burst in the middle
    [3.0] * 8 + [3.5] * 7,                            # a burst at the end: the head is the fast part
    [2.0] * 5 + [3.0] * 10,                           # a head faster than the rest: never dropped
    [3.5, 3.0, 3.5, 3.0, 3.5, 3.0, 3.5, 3.0, 3.5, 3.0],   # alternating: no settled tail
    [4.0] * 9 + [3.0] * 4,                            # settled part shorter than half the run
])
def test_no_head_is_dropped_unless_the_settled_rest_is_most_of_the_run(values):
    assert warming_up(values) == 0
    assert not evaluate(fabricated([ticks(v * 1000) for v in values]))["stability"].stable


def test_a_burst_in_the_settled_part_is_still_flagged():
    # the head falls, but the gauge shows a busy SMT sibling through the whole run
    ev = evaluate(fabricated([ticks(v * 1000) for v in FALLING], contention=[1.3] * 15), ref_con=1.0)
    assert not ev["stability"].stable and "SMT sibling" in " ".join(ev["stability"].reasons)
    # ... or through the settled part only: those repetitions are dropped, and the head alone
    # is no settled figure
    ev = evaluate(fabricated([ticks(v * 1000) for v in FALLING], contention=[1.0] * 5 + [1.3] * 10), ref_con=1.0)
    assert not ev["stability"].stable and len(ev["raw"]["burst_outliers"]) == 10


def test_a_run_still_falling_at_its_end_is_re_run_longer():
    still = [4.87, 4.66, 4.57, 4.49, 4.32, 3.93, 3.81, 3.65, 3.53, 3.34, 3.10, 2.58, 2.26, 2.21, 2.20]
    assert still_falling(still) and warming_up(still) == 0
    assert not still_falling([3.0, 3.1, 2.9] * 5) and not still_falling(FALLING[:5])
    args = ["blob", "--reps", "15", "--loop", "7"]
    attempts._grow_reps(args, 60)
    assert args[2] == "30"
    attempts._grow_reps(args, 60)
    attempts._grow_reps(args, 60)
    assert args[2] == "60"


# --- a cost that varies by nature ----------------------------------------------------------------

SPREAD = [44.6, 47.0, 49.5, 50.7, 52.0, 55.1, 46.2, 48.8, 51.3, 53.9] * 2


def test_a_variable_cost_is_a_distribution_with_clean_gauges_in_three_processes():
    st = assess(SPREAD, GHZ, 3.69, 1.0, 1.0, variable_ok=True, runs=3, uncertainty=1.5)
    assert st.stable and st.variable and st.reasons == []
    assert st.range[0] < 46.1 and st.range[1] > 54 and st.to_dict()["range"] == list(st.range)


@pytest.mark.parametrize("kw, reason", [
    (dict(variable_ok=False, runs=3, uncertainty=1.5), "spread"),          # the caller did not say so
    (dict(variable_ok=True, runs=1, uncertainty=1.5), "spread"),           # one process proves nothing
    (dict(variable_ok=True, runs=2, uncertainty=1.5), "spread"),           # nor do two that agree by chance
    (dict(variable_ok=True, runs=3, uncertainty=3.0), "spread"),           # not settled within 5%
    (dict(variable_ok=True, runs=3, uncertainty=None), "spread"),
])
def test_a_variable_cost_needs_the_callers_word_three_processes_and_a_settled_median(kw, reason):
    st = assess(SPREAD, GHZ, 3.69, 1.0, 1.0, **kw)
    assert not st.stable and not st.variable and reason in st.reasons[0]


def test_host_noise_is_never_a_variable_cost():
    busy = assess(SPREAD, GHZ, 3.69, 1.3, 1.0, variable_ok=True, runs=3, uncertainty=1.5)
    slow = assess(SPREAD, [3.5] * 20, 3.69, None, None, variable_ok=True, runs=3, uncertainty=1.5)   # no gauge vouches
    drift = assess(SPREAD, [3.69] * 10 + [3.4] * 10, None, 1.0, 1.0, variable_ok=True, runs=3, uncertainty=1.5)
    for st, text in ((busy, "SMT sibling"), (slow, "below this machine's recent"), (drift, "drifted")):
        assert not st.stable and not st.variable and any(text in r for r in st.reasons)


def _runs(*per_run, contention=None):
    return [evaluate(fabricated([ticks(v) for v in run], contention=contention), 3.7, 1.0) for run in per_run]


def test_pooling_three_quiet_processes_makes_a_variable_figure():
    runs = _runs(SPREAD[:10], SPREAD[10:], SPREAD[:10])
    assert not runs[0]["stability"].stable        # one run alone: a spread of 7%
    assert not pool(runs[:2], 3.7, 1.0, 5, variable_ok=True)["stability"].stable     # two are not enough
    p = pool(runs, 3.7, 1.0, 5, variable_ok=True)
    assert p["stability"].stable and p["stability"].variable and p["pooled"] == {"runs": 3, "repetitions": 30}
    assert pool(runs, 3.7, 1.0, 5)["stability"].stable is False     # without the caller's word


def test_processes_that_disagree_widen_the_interval_and_stay_unstable():
    # page placement: each process tight, their medians 10% apart
    a = [45.0, 45.5, 44.8, 45.2, 46.0, 45.1, 44.9, 45.3, 45.6, 45.0]
    b = [50.0, 50.5, 49.8, 50.2, 51.0, 50.1, 49.9, 50.3, 50.6, 50.0]
    p = pool(_runs(a, b, a), 3.7, 1.0, 5, variable_ok=True)
    assert not p["stability"].stable and p["events"]["cycles"].uncertainty >= 5.0


def test_the_interval_of_a_few_process_medians_is_students():
    # two values d apart: t(1) x d / 2 = 6.35 d (a normal quantile with a robust sigma gave 1.3 d)
    assert stats.few_uncertainty([100.0, 104.0]) == pytest.approx(6.353 * 4, rel=1e-3)
    assert stats.few_uncertainty([100.0, 102.0, 104.0]) == pytest.approx(4.303 * 2 / 3 ** 0.5, rel=1e-3)
    assert stats.few_uncertainty([5.0, 5.0], quantum=0.12) > 0 and math.isnan(stats.few_uncertainty([5.0]))


def test_a_burst_through_every_process_is_still_flagged():
    runs = _runs(SPREAD[:10], SPREAD[10:], SPREAD[:10], contention=[1.3] * 10)
    p = pool(runs, 3.7, 1.0, 5, variable_ok=True)
    assert p is None or not p["stability"].stable


def test_a_variable_cost_gets_its_processes_whatever_the_budget(monkeypatch):
    monkeypatch.setattr(attempts, "MAX_ATTEMPTS", 40)      # conftest caps it at 1 for unmeasured tests
    outs = iter([fabricated([ticks(v) for v in run]) for run in (SPREAD[:10], SPREAD[10:], SPREAD[:10], SPREAD[10:])])
    monkeypatch.setattr(attempts.runner, "run", lambda args, timeout: next(outs))
    monkeypatch.setattr(attempts, "raise_for", lambda *a, **k: None)
    monkeypatch.setattr(attempts.clock_history, "reference", lambda key, kind="clock": 3.7 if kind == "clock" else 1.0)
    monkeypatch.setattr(attempts.clock_history, "record", lambda *a, **k: None)
    p = SimpleNamespace(clock=TscCalibrated(), backend=Backend("tsc", "test"), spec=SimpleNamespace(unroll=1),
                        n_measurements=10, obj=None, parts={})
    kw = dict(cpu=0, timeout=1.0, budget=0.0, allow_syscalls=False, no_normalization=False, aggregate="median",
              no_slope=False)
    done = attempts.run(p, ["--reps", "10"], varies=True, **kw)
    # three processes, then their pool: a variable figure
    assert len(done) == 4 and done[-1]["pooled"]["runs"] == 3 and done[-1]["stability"].variable
    outs = iter([fabricated([ticks(v) for v in SPREAD[:10]])] * 2)
    assert len(attempts.run(p, ["--reps", "10"], varies=False, **kw)) == 1     # no budget: one run


# --- noise is not a bound -----------------------------------------------------------------------

def test_a_resolved_figure_within_its_noise_of_zero_is_unstable_not_a_bound():
    # a chase whose B - A spans millions of ticks but scatters around zero per copy: before, this
    # read "< 160 cycles, stable (below resolution)"
    per_copy = [-32.0, 183.0, 71.0, 150.0, -10.0, 120.0, 20.0, 95.0, 60.0]
    ev = evaluate(fabricated([ticks(v * 256) for v in per_copy]))
    assert ev["events"]["cycles"].upper_bound is None and not ev["stability"].below_resolution
    assert not ev["stability"].stable and "spread" in ev["stability"].reasons[0]


def test_the_stability_constants_say_what_the_docs_say():
    assert stability.MAX_VARIABLE_UNCERTAINTY == 0.05 and stability.MIN_VARIABLE_RUNS == 3
    assert stability.MIN_SETTLED_SHARE == 0.5
    assert (stability.MIN_MODE_SHARE, stability.MIN_MODE_REPS, stability.MIN_MODE_GAP, stability.MAX_MODE_BETWEEN) == \
        (0.1, 3, 0.05, 0.1)


def test_a_study_counts_its_variable_costs_apart_from_its_unstable_ones():
    from cyclebench.study.facts import run_facts
    from cyclebench.study.summary import caveat_lines
    backend = {"name": "tsc", "calibrated_ghz": 3.69}
    recs = [{"result": {"backend": backend, "stable": True, "variable": True, "warnings": []}},
            {"result": {"backend": backend, "stable": False, "warnings": ["unstable measurement (...)"]}},
            {"result": {"backend": backend, "stable": True, "warnings": []}}]
    f = run_facts("memory", "quick", {}, recs)
    assert (f.measurements, f.unstable, f.variable) == (3, 1, 1)
    text = "\n".join(caveat_lines(f))
    assert "1 of 3 measurements were flagged unstable" in text and "1 of 3 measurements are a variable cost" in text


def test_runs_below_a_history_the_host_no_longer_reaches_settle_once_the_clock_has_moved(tmp_path, monkeypatch):
    # the history says 3.9 GHz; the host now runs 3.71 for good: runs steady in themselves are
    # noted, and once they have held that level long enough the next run is judged by it
    from cyclebench.measurement import clock_history
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(attempts, "MAX_ATTEMPTS", 40)      # conftest caps it at 1 for unmeasured tests
    monkeypatch.setattr(clock_history, "MOVED_RUNS", 3)
    monkeypatch.setattr(clock_history, "MOVED_SPAN", 0.0)
    key = clock_history.machine_key(0)
    for _ in range(5):
        clock_history.record(key, 3.9)
    monkeypatch.setattr(attempts.runner, "run", lambda args, timeout: fabricated([ticks(2.0)] * 10))
    monkeypatch.setattr(attempts, "raise_for", lambda *a, **k: None)
    p = SimpleNamespace(clock=TscCalibrated(), backend=Backend("tsc", "test"), spec=SimpleNamespace(unroll=1),
                        n_measurements=10, obj=None, parts={})
    done = attempts.run(p, ["--reps", "10"], cpu=0, timeout=1.0, budget=60.0, allow_syscalls=False,
                        no_normalization=False, aggregate="median", no_slope=False)
    assert [a["stability"].stable for a in done] == [False, False, False, True]
    assert clock_history.reference(key) == pytest.approx(3.709, abs=0.01)
