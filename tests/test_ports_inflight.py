"""The simulation's limit on instructions waiting in flight (ports/inflight.py, simulate.py), on
fabricated figures: the probe's bisection, the record it keeps, the simulation's jump at the
capacity the probe reads, and a block whose iterations overlap only as far as their waiters fit."""
from __future__ import annotations

import functools
import json

import pytest

from cyclebench.instructions.ports import inflight
from cyclebench.instructions.ports.predict import decode
from cyclebench.instructions.ports.run import store
from cyclebench.instructions.ports.simulate import simulate
from cyclebench.instructions.ports import run as ports_run

WIDE = 1 / 6


@functools.cache          # the check reads again the counts the bisection simulated
def probe_time(n: int, waiting: int) -> float:
    """The simulation's figure for the probe's block: 13-cycle divides on one divider."""
    ins = decode("; ".join(inflight.block(n)))
    lat = [13.0 if "divsd" in str(i) else 1.0 for i in ins]
    use = [{"div": 4.5} if "divsd" in str(i) else {} for i in ins]
    return simulate(ins, lat, use, [WIDE] * len(ins), {}, waiting=waiting)


def test_the_knee_is_the_least_count_whose_time_jumps():
    assert inflight.knee(lambda n: 100.0 if n < 40 else 180.0)[0] == 40
    assert inflight.knee(lambda n: 100.0 + n / 10)[0] is None         # never apart: no figure


@pytest.mark.parametrize("capacity", [40, 57])
def test_the_simulation_jumps_where_the_probe_reads_its_capacity(capacity):
    base = probe_time(inflight.SMALLEST, capacity)
    n = inflight.knee(lambda k: probe_time(k, capacity))[0]
    assert inflight.waiting(n) == capacity
    assert probe_time(n, capacity) >= inflight.KNEE * base > probe_time(n - 1, capacity)


def test_iterations_overlap_only_as_far_as_their_waiters_fit():
    # each iteration: a fresh 24-cycle path (8 dependent 3-cycle steps), no loop-carried chain;
    # one unit a step keeps it at 1 cycle an iteration of resources while every iteration overlaps
    block = "movaps xmm1, xmm7; " + "; ".join(["mulss xmm1, xmm7"] * 8)
    ins = decode(block)
    lat, use = [0.0] + [3.0] * 8, [{}] + [{"R0": 0.125}] * 8
    free = simulate(ins, lat, use, [WIDE] * len(ins))
    held = simulate(ins, lat, use, [WIDE] * len(ins), waiting=16)
    assert free == pytest.approx(1.5, rel=0.05)          # the front end: 9 instructions at 6 a cycle
    assert held > 2 * free                               # 16 waiters hold about two iterations of 24 cycles


def test_the_record_is_kept_in_the_results_file_and_read_back(tmp_path):
    path = tmp_path / "ports.jsonl"
    st = store(path)
    st.start({"forms": []}, resume=False)
    st.close()
    assert inflight.stored(path)[0] is None

    class Fake:
        def measure(self, code, init):
            n = code.count("pshufd xmm2, xmm0, 0")
            return type("M", (), {"value": 100.0 if n < 30 else 200.0})()
    rec = ports_run.record(path, "inflight", Fake())
    assert rec["waiting"] == inflight.waiting(30) and rec["n"] == 30
    assert inflight.stored(path)[0] == inflight.waiting(30)
    assert ports_run.record(path, "inflight", None) == json.loads(json.dumps(rec))     # kept: not measured again
