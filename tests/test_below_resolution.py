"""Nearly free code (`asm --unroll 2 nop`: A and B both run at the loop's own speed) gets an
explicit answer, an upper bound, instead of `-0.0000 ± 0.0000 ... stable (spread inf%)`.
The runner's output is fabricated: these are facts about the arithmetic, not timings."""
from cyclebench.measurement.evaluate import evaluate as EVAL
from cyclebench.measurement.clocks import TscCalibrated
import json

import pytest

import cyclebench
from cyclebench.counters.backends import Backend
from cyclebench import runner
from cyclebench.measurement import api, stats
from cyclebench.runner import RunnerOutput

LOOP = 1 << 20


def fabricated(diffs, limited=None, loop=LOOP) -> RunnerOutput:
    """50 repetitions at 1e5 adds per 70000 TSC ticks; B - A of each repetition is given."""
    n = len(diffs)
    info = {"loop": [str(loop)], "tsc_hz": ["2596000000"], "cpu": ["0"]}
    if limited is not None:
        info["loop_limited"] = [str(limited)]
    return RunnerOutput(info=info, done=True, samples={
        "ca": [[70000]] * n, "cb": [[140000]] * n, "pa": [[70000]] * n, "pb": [[140000]] * n,
        "a": [[3_000_000]] * n, "b": [[3_000_000 + d] for d in diffs]})


JITTER = [26 * ((i % 3) - 1) for i in range(50)]      # B - A: -1, 0, +1 TSC quanta


def evaluate(out, unroll=2):
    return EVAL(out, Backend("tsc", "test"), TscCalibrated(), unroll, False, "avg", no_slope=True)


def test_the_bound_is_the_top_of_the_interval_and_at_least_one_quantum():
    assert stats.upper_bound(0.0001, 0.0005, 0.00001) == pytest.approx(0.0006)
    assert stats.upper_bound(-0.0001, 0.00001, 0.001) == pytest.approx(0.001)
    assert stats.upper_bound(0.25, 0.001, 0.0001) is None
    # rounded up to two significant digits: still a bound, and short when printed
    assert stats.upper_bound(0.25, 0.001, 0.0001, force=True) == 0.26
    assert stats.upper_bound(9.71e-06, 0.0, 0.0, force=True) == 9.8e-06


def test_a_difference_within_the_quantisation_is_an_upper_bound():
    ev = evaluate(fabricated(JITTER, limited=26))
    for name in ("cycles", "tsc", "ns"):
        e = ev["events"][name]
        assert e.upper_bound is not None and e.upper_bound > abs(e.value)
    assert ev["events"]["cycles"].upper_bound < 1e-4
    st = ev["stability"]
    assert st.below_resolution and st.stable and st.spread is None and ev["loop_limited"] == 26


def test_without_the_runners_line_the_figure_decides():
    assert evaluate(fabricated(JITTER))["events"]["cycles"].upper_bound is not None
    # 3 cycles per copy, resolved: no bound, even if the runner stopped growing the loop
    resolved = fabricated([3 * 2 * LOOP * 70000 // 100000] * 50, limited=30000)
    ev = evaluate(resolved)
    assert ev["events"]["cycles"].upper_bound is None and not ev["stability"].below_resolution
    assert ev["events"]["cycles"].value == pytest.approx(3.0, rel=1e-3)


def test_an_interrupted_repetition_is_noise_to_measure_again_not_a_bound():
    # two repetitions of 3 cycles a copy; an interrupt in the second one's A makes its B - A as
    # large, negative, and their mean near zero: once read "stable, below the resolution"
    b_minus_a = 3 * 2 * LOOP * 70000 // 100000
    ev = evaluate(fabricated([b_minus_a, -b_minus_a + 4000]))
    assert ev["events"]["cycles"].upper_bound is None and not ev["stability"].below_resolution
    assert not ev["stability"].stable


def test_a_loop_limited_run_with_tiny_b_minus_a_is_a_bound_even_if_it_looks_resolved():
    ev = evaluate(fabricated([260] * 50, limited=260))
    assert ev["events"]["cycles"].upper_bound >= ev["events"]["cycles"].value > 0


def test_measure_says_the_code_costs_less_than_the_resolution(monkeypatch, tmp_path):
    # a fabricated run must not become the clock history later real runs are judged against
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(runner, "run", lambda args, timeout: fabricated(JITTER, limited=26))
    r = cyclebench.measure("nop", unroll=2, counters="tsc", budget=0)
    assert r.below_resolution and r.stable and r.stability["below_resolution"]
    assert any("costs less than the resolution" in w and "raise --unroll" in w for w in r.warnings)
    doc = json.loads(r.to_json())
    assert doc["events"]["cycles"]["upper_bound"] == r.events["cycles"].upper_bound
    assert doc["stability"]["spread"] is None and doc["stability"]["loop_limited"] == 26
    assert cyclebench.Result.from_json(r.to_json()).below_resolution
    from cyclebench.reports import get_reporter
    text = get_reporter("text").render([r])
    bound = r.events["cycles"].upper_bound
    assert f": < {bound:.2g} per copy (upper bound" in text and "below resolution" in text
    assert "stable (spread" not in text and "inf%" not in text
    assert f"{bound:.2g}" in get_reporter("markdown").render([r])


def test_a_run_that_resolves_what_the_runners_trial_did_not_is_no_bound():
    # the runner's last trial saw B - A of 26 ticks (code that ran at two speeds, A at the slower),
    # the run's repetitions span far more than the runner's target: a figure, judged by its spread
    ev = evaluate(fabricated([3 * 2 * LOOP * 70000 // 100000] * 50, limited=26))
    assert ev["events"]["cycles"].upper_bound is None and not ev["stability"].below_resolution
    assert ev["events"]["cycles"].value == pytest.approx(3.0, rel=1e-3)
