"""A pair between two written register operands is measured with distinct registers too
(distinct.py), uops.info's configuration; checked with a fake measurement (no timing)."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import Catalogue, distinct, latency_pairs
from cyclebench.instructions.characterize import Session, measure_pair


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def _pair(form, text):
    return next(p for p in latency_pairs(form) if str(p) == text)


class Fake:
    """measure() stand-in: cycles per run of the code by the exact code text, else ``default``."""

    def __init__(self, table, default=1.0):
        self.table, self.default, self.calls = table, default, []

    def __call__(self, code, init=None, **kw):
        self.calls.append(code)
        v = self.table.get(code, self.default)
        ev = SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                               stability={"stable": True, "linearity": {"linear": True}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})


def test_which_pairs_get_distinct_registers(cat):
    xchg = cat.get("XCHG (R16, R16)")
    assert distinct.applies(xchg, _pair(xchg, "op0 (R16) -> op1 (R16)"))
    assert distinct.applies(xchg, _pair(xchg, "op1 (R16) -> op0 (R16)"))
    assert not distinct.applies(xchg, _pair(xchg, "op0 (R16) -> op0 (R16)"))    # one operand
    # the source is only read: one register takes one write, nothing to separate
    exp = cat.get("VPEXPANDB (ZMM, ZMM)")
    assert not any(distinct.applies(exp, p) for p in latency_pairs(exp))


def test_self_chain_swaps_the_two_registers(cat):
    xchg = cat.get("XCHG (R16, R16)")
    a, b = distinct.self_chain(xchg, _pair(xchg, "op0 (R16) -> op1 (R16)"))
    assert a.regs[0] == b.regs[1] and a.regs[1] == b.regs[0] and a.regs[0] != a.regs[1]
    # operands of different classes (R8H, R8L) cannot swap: the connector route measures them
    xadd = cat.get("XADD (R8H, R8L)")
    assert distinct.self_chain(xadd, _pair(xadd, "op0 (R8h) -> op1 (R8l)")) is None


def test_the_lower_of_one_register_and_distinct_registers_is_kept(cat):
    xchg = cat.get("XCHG (R16, R16)")
    pair = _pair(xchg, "op0 (R16) -> op1 (R16)")
    a, b = distinct.self_chain(xchg, pair)
    fake = Fake({a.text + "\n" + b.text: 2.0}, default=2.0)    # 2 cycles for the two copies
    d = measure_pair(Session(measure_fn=fake), xchg, pair)
    assert d["method"] == distinct.METHOD and d["value"] == pytest.approx(1.0) and d["bound"] == "exact"
    assert d["one_register"]["value"] == pytest.approx(2.0)
    # distinct registers no faster: the one-register chain stays, the other reading beside it
    fake = Fake({a.text + "\n" + b.text: 4.0}, default=2.0)
    d = measure_pair(Session(measure_fn=fake), xchg, pair)
    assert d["method"] == "chain" and d["value"] == pytest.approx(2.0)
    assert d["distinct_registers"]["value"] == pytest.approx(2.0)


def test_different_classes_go_through_a_connector(cat):
    xadd = cat.get("XADD (R8H, R8L)")
    pair = _pair(xadd, "op0 (R8h) -> op1 (R8l)")
    fake = Fake({}, default=2.0)
    measure_pair(Session(measure_fn=fake), xadd, pair)
    assert any("\n" in c and "xadd" in c for c in fake.calls)       # the form plus its connector


def test_a_mask_destination_with_equal_sources_is_closed_by_a_connector(cat):
    # renaming.same_register_case: vpcmpgtd k2, zmm1, zmm1, back to zmm1 through vpmovm2q (1 cycle)
    from cyclebench.instructions.characterize import measure_same_register
    form = cat.get("VPCMPGTD (K, ZMM, ZMM)")
    refs = {"vpcmpuq k1, zmm1, zmm31, 5\nvpmovm2q zmm1, k1": 5.0,            # vec2k 4 + k2vec 1
            "vpcmpuq k1, zmm1, zmm31, 5\nvmovdqu64 zmm1{k1}, zmm1": 5.0, "vmovdqu64 zmm1{k1}, zmm1": 1.0}
    loop, alone = "{evex} {load} vpcmpgtd k2, zmm1, zmm1\nvpmovm2q zmm1, k2", "{evex} {load} vpcmpgtd k2, zmm1, zmm1"
    d = measure_same_register(Session(measure_fn=Fake({**refs, loop: 0.33, alone: 0.17})), form)
    assert d["value"] == 0.0 and d["label"] == "dependency broken" and d["same_register"]
    assert d["cycles_per_copy"] == pytest.approx(0.17) and d["connector"]["steps"] == ["k2vec512"]
    d = measure_same_register(Session(measure_fn=Fake({**refs, loop: 6.0, alone: 1.0})), form)
    assert d["value"] == pytest.approx(5.0) and d["bound"] == "exact" and d["label"] is None
