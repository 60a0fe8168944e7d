"""The linearity check on known readings (no timing): 2A - B is the harness overhead only when the
cost grows linearly with the copies."""
from cyclebench.measurement.evaluate import evaluate as EVAL
from cyclebench.measurement.clocks import TscCalibrated
import pytest

from cyclebench.counters.backends import Backend
from cyclebench.measurement import api
from cyclebench.measurement import linearity
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


def two_speed_run(pattern, loop=1000, unroll=100) -> RunnerOutput:
    """A TSC-calibrated run (1e5 adds per 70000 ticks) of code that runs 1.0 or 2.0 cycles a copy,
    A and B each at its own: ``pattern`` holds one "SS", "SF", "FS" or "FF" per repetition (A's
    speed, B's), as `ucomiss xmm1, xmm2; movss [r14+0x40], xmm3; nop` read on a Zen 4 guest."""
    per = {"S": 2.0, "F": 1.0}
    copies, tick = unroll * loop, 1e5 / 70000
    a = [[round((150 + per[p[0]] * copies) / tick)] for p in pattern]
    b = [[round((150 + per[p[1]] * 2 * copies) / tick)] for p in pattern]
    n = len(pattern)
    return RunnerOutput(info={"loop": [str(loop)], "tsc_hz": ["2.6e9"], "cpu": ["0"]}, done=True,
                        samples={"ca": [[70000]] * n, "cb": [[140000]] * n, "pa": [[70000]] * n,
                                 "pb": [[140000]] * n, "a": a, "b": b})


def test_a_repetition_whose_a_and_b_ran_at_different_speeds_is_left_out():
    ev = EVAL(two_speed_run(["SF"] * 20 + ["SS"] * 30), Backend("tsc", "test"), TscCalibrated(), 100, False, "avg")
    assert ev["stability"].stable and ev["events"]["cycles"].value == pytest.approx(2.0, rel=0.01)
    assert ev["raw"]["unpaired"] == list(range(20)) and ev["raw"]["kept"] == list(range(20, 50))
    assert any("different speeds per copy in 20 of 50" in w for w in ev["warnings"])


def test_a_run_of_mostly_unpaired_repetitions_is_not_stable_however_tight():
    # A at 2.0 a copy and B at 1.0 in most repetitions: B - A reads 0.00 in each, a tight spread
    # that made "stable 0.00"; the few paired ones are too few to stand for the run
    ev = EVAL(two_speed_run(["SF"] * 42 + ["SS"] * 8), Backend("tsc", "test"), TscCalibrated(), 100, False, "avg")
    assert not ev["stability"].stable
    assert any("different speeds per copy in 42 of 50" in r for r in ev["stability"].reasons)
    # no repetition pairs at all (a capacity effect, or one speed each all run long): the same
    ev = EVAL(two_speed_run(["SF"] * 50), Backend("tsc", "test"), TscCalibrated(), 100, False, "avg")
    assert not ev["stability"].stable and ev["reps"] is None and not ev["linearity"].linear


def test_interrupted_repetitions_are_paired_unless_the_interrupt_outweighs_the_overhead():
    a, b = readings(3.0, 3.0, overhead=150, unroll=100, loop=1000, n=10)
    a[3] += 5000                     # a 5,000-cycle interrupt in A: within 10% of B - A (3e5)
    b[4] += 200_000                  # a preemption in B
    from cyclebench.measurement.linearity import paired
    assert paired(a, b, 1000) == [0, 1, 2, 3, 5, 6, 7, 8, 9]


@pytest.mark.measured
def test_code_that_runs_at_two_speeds_reads_what_its_a_and_b_ran_at_or_is_unstable():
    # Zen 4 guest, the instruction tables' init (vector registers written by VEX broadcasts):
    # A and B each ran 1.0 or 2.0 cycles a copy, and B - A read 0.02-0.4, "stable". A stable
    # figure is now the speed per copy its repetitions' A and B both ran at.
    import cyclebench
    from cyclebench.instructions.session import value_init
    code = ["ucomiss xmm1, xmm2", "movss dword ptr [r14+0x40], xmm3", "nop"]
    for _ in range(3):
        r = cyclebench.measure("\n".join(code), init="\n".join(value_init(code)), budget=0.5)
        if r.stable:
            lin, value = r.stability["linearity"], r.value("cycles")
            assert not r.below_resolution and lin["linear"]
            assert lin["per_copy_b"] == pytest.approx(value, rel=0.1) and lin["per_copy_a"] == pytest.approx(value, rel=0.1)


def test_unstable_advice_names_the_code_when_only_its_speeds_differ():
    # A and B at different speeds alone is the code's doing: a quieter host does not mend it
    only = [linearity.unpaired_reason(49, 49)]
    assert "quieter" not in linearity.unstable_advice(only) and "--unroll" in linearity.unstable_advice(only)
    noisy = only + ["repetitions spread 9.9% (interquartile range / median)"]
    assert "quieter" in linearity.unstable_advice(noisy)
    assert "quieter" in linearity.unstable_advice([])


def test_a_cost_that_varies_by_nature_keeps_every_repetition():
    # a pointer chase: A's and B's cost per copy each vary by 30% from repetition to repetition
    # (which part of the chain, cache and TLB state), so most repetitions' 2A - B is beyond 10%
    # of B - A; with measure(varies=True) none is left out, and the range covers them all
    per = [400, 520, 460, 380, 500, 430, 410, 490, 450, 470]
    pattern = [(per[i], per[(i * 3 + 1) % 10]) for i in range(10)] * 3
    loop, unroll, tick = 10, 16, 1e5 / 70000
    out = RunnerOutput(info={"loop": [str(loop)], "tsc_hz": ["2.6e9"], "cpu": ["0"]}, done=True,
                       samples={"ca": [[70000]] * 30, "cb": [[140000]] * 30, "pa": [[70000]] * 30,
                                "pb": [[140000]] * 30,
                                "a": [[round((150 + x * unroll * loop) / tick)] for x, _ in pattern],
                                "b": [[round((150 + y * 2 * unroll * loop) / tick)] for _, y in pattern]})
    args = (Backend("tsc", "test"), TscCalibrated(), unroll, False, "avg")
    assert len(EVAL(out, *args)["raw"]["unpaired"]) == 12          # 40% left out as two speeds
    ev = EVAL(out, *args, varies=True)
    assert "unpaired" not in ev["raw"] and ev["raw"]["kept"] == list(range(30))
    assert not any("different speeds" in w for w in ev["warnings"] + ev["stability"].reasons)
