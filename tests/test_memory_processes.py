"""The memory study's statements over processes (studies/memory/processes.py) and the confirmed
best (measuring.confirmed), on fabricated process figures: no timing."""
import math

import pytest

from cyclebench.studies.memory import measuring, processes
from cyclebench.studies.memory.processes import Process


def test_a_burst_slowed_process_is_left_out_and_the_rest_settle():
    procs = [Process(v, 3.70) for v in (300, 305, 298, 310, 302, 299)] + [Process(900, 3.40)]
    b = processes.between(procs)
    assert b.n == 6 and b.seen == 7 and b.hi == 310          # the slow clock's process is not a figure
    assert b.settled and b.ci == (298, 310)                  # six processes: their range is the interval
    # the machine's recent clock counts too: when all of these ran in a burst, none is quiet
    assert processes.between(procs, reference_ghz=4.2) is None


def test_too_few_or_too_spread_processes_do_not_settle():
    assert not processes.between([Process(v, 3.7) for v in (300, 302, 301, 299, 300)]).settled   # 5 < 6
    wide = processes.between([Process(v, 3.7) for v in (109, 250, 300, 320, 400, 462)])
    assert wide.ci == (109, 462) and not wide.settled
    assert "varies between processes: median" in processes.statement(wide, "cycles")


def test_settle_adds_processes_until_settled_and_stops_at_the_cap():
    calls = []

    def more():
        calls.append(1)
        return [Process(100 + len(calls), 3.7), Process(101, 3.7), Process(99, 3.7)]
    procs = processes.settle([Process(100, 3.7), Process(102, 3.7), Process(101, 3.7)], more, 60, 40)
    assert len(calls) == 1 and len(procs) == 6 and processes.between(procs).settled

    spread = iter([[Process(50 * (i % 5 + 1), 3.7)] for i in range(100)])
    procs = processes.settle([Process(10, 3.7)], lambda: next(spread), 60, 5)
    assert len(procs) == 5 and not processes.between(procs).settled          # the cap
    # two modes far apart: once the interval is known, settling is out of reach, so no more are measured
    modes = iter([[Process(60, 3.7), Process(500, 3.7), Process(70, 3.7)]] * 20)
    procs = processes.settle([Process(480, 3.7), Process(65, 3.7), Process(510, 3.7)], lambda: next(modes), 60, 40)
    assert len(procs) == 6 and not processes.between(procs).settled


class _R:
    def __init__(self, ns):
        self.ns, self.backend = ns, {"calibrated_ghz": 3.7}


def test_confirmed_stops_at_agreement_or_states_the_median_of_bests():
    seq = iter([10.0, 10.2, 99.0])
    runs, k = measuring.confirmed(lambda: _R(next(seq)), lambda r: r.ns, measuring._ghz)
    assert k == 0 and [s for s, _ in runs] == [10.0, 10.2]
    # a faster best that no other process reproduces is passed over for the fastest confirmed one
    seq = iter([3.4, 24.6, 29.0, 25.0])
    runs, k = measuring.confirmed(lambda: _R(next(seq)), lambda r: r.ns, measuring._ghz)
    assert len(runs) == 4 and k == 1 and runs[k][0] == 24.6
    # bests 10% apart never agree within BEST_AGREE: more processes, and six so spread state nothing
    spread = iter([20, 22, 24.5, 27, 29.8, 33, 36.5, 40.3, 44])
    runs, k = measuring.confirmed(lambda: _R(next(spread)), lambda r: r.ns, measuring._ghz)
    assert k is None and len(runs) == measuring.VARYING_PROCESSES
    warning, b = measuring._unconfirmed(runs, measuring._ghz)
    assert "best not reproduced" in warning and b is None
    # bests 4% apart, none confirmed by another, but close enough together for their median to settle
    close = iter([10.0, 11.25, 10.4, 12.17, 10.82, 11.7, 13.0])
    runs, k = measuring.confirmed(lambda: _R(next(close)), lambda r: r.ns, measuring._ghz)
    warning, b = measuring._unconfirmed(runs, measuring._ghz)
    assert k is None and len(runs) == 6 and b.settled and b.median == pytest.approx((10.82 + 11.25) / 2)
    # a failed best (None) never counts as agreeing
    nones = iter([None] * 20)
    runs, k = measuring.confirmed(lambda: _R(next(nones)), lambda r: r.ns, measuring._ghz)
    assert k is None and all(math.isinf(s) for s, _ in runs)
