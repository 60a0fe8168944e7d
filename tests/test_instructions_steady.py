"""The fastest steady state among a measurement's repetitions (steady.py); fabricated readings, no timing."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import Catalogue
from cyclebench.instructions.characterize import Session
from cyclebench.instructions.steady import fastest_state
from cyclebench.instructions.throughput import measure_throughput

SLOW, FAST, MIXED = 0.851, 0.667, 1.035     # Zen 4, vcvttpd2dq xmm, ymm: per repetition


def test_a_state_is_one_several_repetitions_agree_on():
    reps = [SLOW] * 14 + [FAST, FAST, FAST] + [MIXED, 0.09, -0.16]
    assert fastest_state(reps, SLOW, 0.03) == (FAST, 3, 0.0)
    # two repetitions are not a state, nor are disturbances apart from each other
    assert fastest_state([SLOW] * 15 + [FAST, FAST, 0.09, 0.2, MIXED], SLOW, 0.03) is None
    # a state no faster than the aggregate beyond noise, or too few repetitions to tell
    assert fastest_state([SLOW] * 17 + [0.84] * 3, SLOW, 0.03) is None
    assert fastest_state([SLOW] * 5 + [FAST] * 3, SLOW, 0.03) is None
    # among many repetitions (runner processes pooled), a few close disturbances are not a state
    assert fastest_state([SLOW] * 137 + [0.300, 0.301, 0.302], SLOW, 0.03) is None
    assert fastest_state([SLOW] * 133 + [FAST] * 7, SLOW, 0.03)[:2] == (FAST, 7)


class _Bimodal:
    """measure() stand-in: each run of copies reads ``fast`` of its 20 repetitions in the fast state,
    the rest in the slow one (plus one mixture and one disturbance, a new one each run); the
    aggregate is the slow state."""

    def __init__(self, fast):
        self.fast, self.calls = fast, 0

    def __call__(self, code, init=None, **kw):
        self.calls += 1
        n = len(code.splitlines())
        reps = [SLOW] * (18 - self.fast) + [FAST] * self.fast + [MIXED, 0.09 + 0.05 * self.calls]
        ev = SimpleNamespace(value=SLOW * n, uncertainty=0.001, samples=[r * n for r in reps])
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                               stability={"stable": True, "linearity": {"linear": True}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})


@pytest.mark.parametrize("fast", [4, 2])
def test_copies_that_run_in_two_steady_states_report_the_faster(fast):
    form = Catalogue.load().get("VCVTTPD2DQ (XMM, YMM)")
    tp = measure_throughput(Session(measure_fn=_Bimodal(fast)), form)
    assert tp["value"] == pytest.approx(FAST) and tp["stable"] is True
    state = tp["states"][-1]
    assert state["fast"] == pytest.approx(FAST) and state["aggregate"] == pytest.approx(SLOW)
    # 4 of 20 in each run show the state at once; 2 only once the runner processes' are pooled
    assert state["repetitions"] == (fast if fast >= 3 else fast * len(tp["by_process"]))


def test_one_steady_state_keeps_its_aggregate():
    form = Catalogue.load().get("VCVTTPD2DQ (XMM, YMM)")
    tp = measure_throughput(Session(measure_fn=_Bimodal(0)), form)
    assert tp["value"] == pytest.approx(SLOW) and "states" not in tp



class _FewerFirst:
    """measure() stand-in: 4 copies read 0.75 in every repetition; 16 copies 1.00 in the first
    process, and in later ones a 0.667 state in 4 of 20 repetitions (``later_fast``) or 1.00 again."""

    def __init__(self, later_fast):
        self.later_fast, self.full_runs = later_fast, 0

    def __call__(self, code, init=None, **kw):
        n = len(code.splitlines())
        if n == 4:
            reps, value = [0.75] * 20, 0.75
        else:
            self.full_runs += 1
            reps, value = [1.0] * 16 + [FAST if self.full_runs > 1 and self.later_fast else 1.0] * 4, 1.0
        ev = SimpleNamespace(value=value * n, uncertainty=0.001, samples=[r * n for r in reps])
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                               stability={"stable": True, "linearity": {"linear": True}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})


def test_a_fewer_count_kept_sends_the_full_count_to_more_processes():
    from cyclebench.instructions.fastest import PROCESSES
    from cyclebench.instructions.throughput import FEW_COPIES
    form = Catalogue.load().get("VPEXPANDQ (XMM, XMM)")
    fake = _FewerFirst(later_fast=True)
    tp = measure_throughput(Session(measure_fn=fake), form)
    # the full count's first process held no fast state; a later one did, and it beats 4 copies' 0.75
    assert tp["value"] == pytest.approx(FAST) and tp["copies"] == 16 and len(tp["code"].splitlines()) == 16
    assert tp["by_copies"] == {"16": pytest.approx(1.0), str(FEW_COPIES): pytest.approx(0.75)}
    assert len(tp["by_process"]) == PROCESSES + 1 and fake.full_runs == PROCESSES + 1
    # no process of the full count does better: the fewer count stays, its code with it
    fake = _FewerFirst(later_fast=False)
    tp = measure_throughput(Session(measure_fn=fake), form)
    assert tp["value"] == pytest.approx(0.75) and tp["copies"] == FEW_COPIES
    assert len(tp["code"].splitlines()) == FEW_COPIES and fake.full_runs == PROCESSES + 1


class _SlowThenFast:
    """measure() stand-in: every count reads ``first`` in the first run of a form's copies, ``second``
    in the second (both one state, on or near the port grid), and 0.667 in every process after."""

    def __init__(self, first, second, runs_per_pass):
        self.first, self.second, self.per_pass, self.calls = first, second, runs_per_pass, 0

    def __call__(self, code, init=None, **kw):
        self.calls += 1
        n = len(code.splitlines())
        v = self.first if self.calls <= self.per_pass else self.second if self.calls <= 2 * self.per_pass else FAST
        ev = SimpleNamespace(value=v * n, uncertainty=0.001, samples=[v * n] * 20)
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                               stability={"stable": True, "linearity": {"linear": True}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})


def test_two_runs_apart_beyond_noise_send_the_copies_to_more_processes():
    from cyclebench.instructions.fastest import PROCESSES
    form = Catalogue.load().get("VCVTTPD2DQ (XMM, YMM)")
    # each run: the full count and 4 copies (0.83 < a cycle: no 8), no state, on the grid
    fake = _SlowThenFast(0.833, 0.875, 2)
    first = measure_throughput(Session(measure_fn=fake), form)
    assert first["value"] == pytest.approx(0.833) and "by_process" not in first
    tp = measure_throughput(Session(measure_fn=fake), form, earlier=first)
    # the earlier run (0.833) and this one (0.875) disagree: the copies' rate changes between runs
    assert tp["repeats"] == [pytest.approx(0.833), pytest.approx(0.875)]
    assert len(tp["by_process"]) == PROCESSES + 1 and tp["value"] == pytest.approx(FAST)
    # two runs that agree: no more processes
    fake = _SlowThenFast(0.833, 0.835, 2)
    tp = measure_throughput(Session(measure_fn=fake), form, earlier=measure_throughput(Session(measure_fn=fake), form))
    assert "by_process" not in tp and tp["value"] == pytest.approx(0.833)
