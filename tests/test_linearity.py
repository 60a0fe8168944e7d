"""The linearity check on known readings (no timing): 2A - B is the harness overhead only when the
cost grows linearly with the copies."""
from cyclebench.measurement.evaluate import evaluate as EVAL
from cyclebench.measurement.clocks import TscCalibrated
import pytest

from cyclebench.counters.backends import Backend
from cyclebench.measurement import api
from cyclebench.measurement.linearity import check
from cyclebench.runner import RunnerOutput


def readings(per_copy_a, per_copy_b, overhead=150, unroll=100, loop=100, n=10):
    copies = unroll * loop
    a = [overhead + per_copy_a * copies + i for i in range(n)]
    b = [overhead + per_copy_b * 2 * copies + i for i in range(n)]
    return a, b


def test_linear_cost_gives_the_overhead_back():
    lin = check(*readings(3.0, 3.0), unroll=100, loop=100)
    assert lin.linear and lin.overhead == pytest.approx(150, abs=10)
    assert (lin.per_copy_a, lin.per_copy_b) == (pytest.approx(3.0, abs=0.02), pytest.approx(3.0, abs=0.02))


def test_b_dearer_per_copy_is_flagged():
    lin = check(*readings(1.0, 1.5), unroll=500, loop=100)
    assert not lin.linear and lin.reason == "B costs more per copy than A" and lin.overhead < 0


def test_a_dearer_than_any_overhead_is_flagged():
    lin = check(*readings(1.5, 1.0), unroll=1000, loop=100)
    assert not lin.linear and "harness overhead" in lin.reason


def test_small_deviations_and_noisy_runs_are_not_flagged():
    # 1% dearer per copy in B: rounding-level, not a capacity effect
    assert check(*readings(3.0, 3.03), unroll=100, loop=100).linear
    # a large positive overhead within the allowance (a long late-init, a drained front end)
    a, b = readings(3.0, 3.0, overhead=1500)
    assert check(a, b, unroll=100, loop=100).linear
    # an overhead far outside the allowance but inside the run's own noise
    a = [1e6 * (i % 2) + 30_000 for i in range(10)]
    b = [1e6 * ((i + 1) % 2) + 30_000 for i in range(10)]
    assert check(a, b, unroll=10, loop=1).linear


def test_the_result_warns_and_records_the_check():
    # TSC backend, 1 tick = 1e5 / 70000 cycles; 100 copies, no loop: A takes 3 cycles per copy,
    # B 6 per copy (plus 150 cycles of harness overhead each)
    n, cpt = 10, 1e5 / 70000
    out = RunnerOutput(info={"loop": ["0"], "tsc_hz": ["2.6e9"]},
                       samples={"ca": [[70000]] * n, "cb": [[140000]] * n,
                                "a": [[round((150 + 300) / cpt)]] * n, "b": [[round((150 + 1200) / cpt)]] * n})
    ev = EVAL(out, Backend("tsc", "test"), TscCalibrated(), 100, False, "avg")
    assert not ev["linearity"].linear
    assert any("changes with the number of copies" in w and "--unroll" in w for w in ev["warnings"])
    assert EVAL(out, Backend("tsc", "test"), TscCalibrated(), 100, False, "avg", no_slope=True)["linearity"] is None


def test_a_measured_result_carries_the_check():
    import cyclebench
    r = cyclebench.measure("add rax, rbx", n_measurements=10, budget=0.5)
    lin = r.stability["linearity"]
    assert set(lin) >= {"linear", "overhead_cycles", "allowance_cycles", "per_copy_a", "per_copy_b"}
    assert cyclebench.measure("add rax, rbx", basic_mode=True, n_measurements=5).stability["linearity"] is None
