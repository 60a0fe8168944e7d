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


def test_a_bound_describes_itself_by_default_with_its_docstring():
    assert Counted().describe() == "A rule with a floor from the counts alone."


def test_show_lists_the_bounds_the_predictor_takes(tmp_path, capsys):
    from cyclebench.cli.main import main
    from cyclebench.instructions.ports import run as ports_run
    from ports_fake import model_file
    path = model_file(tmp_path / "m.jsonl", {"MOVAPS (XMM, XMM)": {"R0": 0.25}, "VPXORD (ZMM, ZMM, ZMM)": {"R1": 0.5}})
    st = ports_run.store(path)
    st.start({}, resume=True)
    st.append({"type": "upper_loop", "legacy": 0.55, "wide": 0.45})
    st.append({"type": "fields", "cap": 6, "alus": 4, "times": {}})
    st.close()
    assert main(["ports", "--show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "probe records (each measured once on the model's CPU" in out
    bounds = out[out.index("the predictor's bounds beside the resources"):out.index("form  ")].splitlines()[1:]
    assert [line.split(":")[0].strip() for line in bounds] == [
        "repair.PairFloors", "shared.SharedFloors", "upper_loop.LoopFloor", "fields.FieldBound",
        "and 0 usages of the model below mended against the file's own readings (repair.py)"]
    assert "0 ratios of 0 class pairs" in bounds[0]
    assert "takes 0.55 cycles a legacy-SSE XMM write and 0.45 a ZMM write at least" in bounds[2]
    assert "holds at most 6 immediate and displacement values and 4 integer ALU operations" in bounds[3]


def test_each_bound_says_its_figures():
    assert fresh.FreshFloor({"CVTSI2SD (XMM, R64)": 1.26}).describe() == \
        "each copy at least its fresh time: CVTSI2SD (XMM, R64) 1.26"
    assert mul_loads.LoadFloor(2, frozenset({"A", "B"}), frozenset({"M"})).describe() == \
        "each of 1 one-pipe load-op forms with up to 2 of 2 plain GPR loads beside it on 2 load pipes"
    said = flag_order.FlagOrder(1.35, {"flags": 0.55, "flags even": 0.29}, None, None).describe()
    assert said == ("each compare to the flags right after a flag writer takes at least 1.35 cycles; a chained "
                    "writer beside a transfer to the flags 0.55 cycles later (0.29 on an even chain)")
    assert flag_order.FlagOrder(None, {"gpr": 0.6}, None, None).describe() == \
        "a chained writer beside a transfer to the gpr 0.60 cycles later"
