"""The predictor's bounds share one interface (ports/bound.py): a rule is one subclass that
overrides what it bounds, the defaults change nothing, and every bound of a results file is one.
Facts only: a fabricated model, no timing."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import bound, fields, flag_order, fresh, mul_loads, repair, shared, upper_loop
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict

ADD = "ADD_01 (R64, R64)"
BLOCK = "add rax, rbx; add rcx, rdx"


def _model() -> Model:
    return Model(["R1"], {ADD: {"R1": 0.25}}, 4, {ADD: 0.25})


class Counted(bound.Bound):
    """A rule with a floor from the counts alone."""
    def floor(self, counts):
        return 3.0 * counts.get(ADD, 0), "counted"


class Late(bound.Bound):
    """A rule that makes every instruction 5 cycles later on its chains."""
    def delayed(self, instructions, forms, latency):
        return [v + 5 for v in latency]


class Grouped(bound.Bound):
    """A rule over the dispatch slots: one cycle a slot."""
    def dispatch(self, instructions, slots):
        return sum(slots), "grouped"


def test_the_defaults_change_nothing(catalogue):
    plain = predict(BLOCK, _model(), catalogue)
    assert predict(BLOCK, _model(), catalogue, floors=[bound.Bound()]) == plain


def test_a_rule_is_one_subclass(catalogue):
    p = predict(BLOCK, _model(), catalogue, floors=[Counted()])
    assert (p.resource_bound, p.binding_resource) == (6.0, "counted")
    p = predict(BLOCK, _model(), catalogue, floors=Late())             # one bound, not a list
    assert p.chain_bound == pytest.approx(6.0)                         # add rax, rbx: 1 + 5 a step
    p = predict(BLOCK, _model(), catalogue, floors=(Counted(), Grouped()))
    assert (p.resource_bound, p.binding_resource) == (6.0, "counted")
    p = predict(BLOCK, _model(), catalogue, floors=[Grouped()])
    assert (p.resource_bound, p.binding_resource) == (2.0, "grouped")   # two slots


def test_every_bound_is_one():
    for cls in (repair.PairFloors, shared.SharedFloors, upper_loop.LoopFloor, flag_order.FlagOrder,
                mul_loads.LoadFloor, fresh.FreshFloor, fields.FieldBound):
        assert issubclass(cls, bound.Bound), cls
