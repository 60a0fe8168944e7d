"""The scheduling simulation of the predictor (ports/simulate.py) on fabricated resources: it meets
the resource and chain bounds, a chain's step waits behind older work on its unit, and the units
come from the model's own figures."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports.dataflow import chain_bound
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import decode, predict
from cyclebench.instructions.ports.simulate import Units, simulate, units

WIDE = 1 / 6          # a front end of 6 a cycle


def sim(block, latency, usage, discrete=None):
    ins = decode(block)
    return simulate(ins, latency, usage, [WIDE] * len(ins), discrete)


def test_the_simulation_meets_the_resource_bound_and_the_chain_bound():
    # two independent adds, 0.75 of one resource each: the resource's 1.5 cycles, no chain
    assert sim("add rax, 1; add rbx, 1", [1, 1], [{"R0": 0.75}] * 2) == pytest.approx(1.5, rel=0.01)
    # one 3-cycle chain on a resource it uses a third of the time
    assert sim("imul rax, rbx", [3.0], [{"R0": 1.0}]) == pytest.approx(3.0, rel=0.01)
    # a unit held 5 cycles by each of two independent divides: 10 cycles, whatever their latency
    assert sim("vdivsd xmm1, xmm4, xmm2; vdivsd xmm3, xmm4, xmm2", [13, 13], [{"R0": 5.0}] * 2, {"R0": 1}) == \
        pytest.approx(10.0, rel=0.01)
    # the front end: 12 independent instructions at 6 a cycle
    assert sim("; ".join(f"add r{n}, 1" for n in range(8, 16)) + "; add rax, 1; add rbx, 1; add rcx, 1; add rdx, 1",
               [1] * 12, [{}] * 12) == pytest.approx(2.0, rel=0.01)


def test_a_chain_waits_behind_older_work_on_its_unit():
    # add rcx (the chain) and its consumers each take one of four units for a cycle, the unit
    # chosen as they enter: a consumer of the last step and the next step become ready together,
    # and where they share a unit the older goes first.  Both bounds say 1.0; pooled as one
    # resource (no units) nothing waits
    block, lat, use = "add rcx, 1; shl rax, cl; cmp rax, rdx", [1, 1, 1], [{"R0": 0.25}] * 3
    assert chain_bound(decode(block), lat) == pytest.approx(1.0)
    assert sim(block, lat, use) == pytest.approx(1.0, rel=0.01)
    assert sim(block, lat, use, {"R0": 4}) > 1.1


def test_units_come_from_the_forms_a_resource_bounds_alone():
    model = Model(["R0", "R1", "R2"], {"a": {"R0": 0.25, "R2": 0.05}, "b": {"R0": 0.5, "R1": 1.0},
                                       "c": {"R1": 0.2}}, 6, {"a": 0.25, "b": 1.0, "c": 0.5})
    # R0 bounds a alone at 4 a cycle; R1 bounds b at one a cycle; R2 bounds nothing (fluid)
    assert units(model) == {"R0": 4, "R1": 1}
    four = Units(4)
    assert four.whole(0.25) and not four.whole(0.5) and not four.whole(0.05)


def test_predict_shows_the_simulated_figure_beside_both_bounds():
    model = Model(["R0"], {"ADD (R64, I8)": {"R0": 0.5}}, 6, {"ADD (R64, I8)": 0.5})
    p = predict("add rax, 1; add rbx, 1; add rcx, 1", model)
    assert p.resource_bound == pytest.approx(1.5) and p.chain_bound == pytest.approx(1.0)
    assert p.simulated == pytest.approx(1.5, rel=0.01)
    assert p.cycles == pytest.approx(max(p.resource_bound, p.chain_bound, p.simulated))
    assert "simulated" in p.to_json()
