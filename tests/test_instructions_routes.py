"""Latency bounds between operands of different kinds: the other connector routes (the lowest upper
bound over them is kept) and a bit offset's connector that keeps its value (fake readings, no timing)."""
import pytest

from cyclebench.instructions import Catalogue, latency_pairs
from cyclebench.instructions import connectors as C
from cyclebench.instructions.characterize import Session, measure_pair
from test_instructions_measure import Fake


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def _only_pair(form):
    (pair,) = latency_pairs(form)
    return pair


def test_other_routes_between_kinds():
    rbx, k1, mm1, xmm1 = (C.port_for_register(r) for r in ("rbx", "k1", "mm1", "xmm1"))
    assert [c.lines for c in C.alternatives(k1, rbx, {"rbx"})] == [["kmovd ebx, k1"]]
    assert [c.steps for c in C.alternatives(rbx, k1, {"rbx"})] == [["gpr2k32"]]
    assert [c.lines for c in C.alternatives(mm1, xmm1, set())] == [["movq2dq xmm1, mm1"]]
    assert [c.lines for c in C.alternatives(xmm1, mm1, set())] == [["movdq2q mm1, xmm1"]]
    # one route only: GPR <-> XMM; MMX <-> a register the legacy moves cannot name (EVEX-only),
    # or write whole (movq2dq into a YMM would leave its upper lanes)
    assert C.alternatives(rbx, xmm1, {"rbx"}) == []
    assert C.alternatives(mm1, C.port_for_register("xmm17"), set()) == []
    assert C.alternatives(C.port_for_register("xmm17"), mm1, set()) == []
    assert C.alternatives(mm1, C.port_for_register("ymm2"), set()) == []
    assert [c.lines for c in C.alternatives(C.port_for_register("ymm2"), mm1, set())] == [["movdq2q mm1, xmm2"]]
    # a shared reference loop for each new step and its inverse
    assert C.reference_of("vec2mm") == C.reference_of("mm2vec") == "mm2vec"
    assert C.reference_of("k2gpr32") == "gpr2k32"


def test_mmx_xmm_pair_keeps_the_lowest_upper_bound(cat):
    # through a GPR (two steps, loop 7) the pair is at most 5; through movq2dq (loop 3, as its own
    # round trip with movdq2q) at most 2, uops.info's ≤2 for MOVDQ2Q on Zen 4
    form = cat.get("MOVDQ2Q (MM, XMM)")
    d = measure_pair(Session(measure_fn=Fake({"movq2dq": 3.0}, default=7.0)), form, _only_pair(form))
    assert d["bound"] == "upper" and d["value"] == pytest.approx(2.0) and d["lower"] == pytest.approx(1.0)
    assert d["connector"]["code"] == "movq2dq xmm1, mm1" and "movq2dq" in d["code"]
    routes = d["connector"]["routes"]
    assert [r["upper"] for r in routes] == [pytest.approx(5.0), pytest.approx(2.0)]


def test_mask_gpr_pair_through_the_32_bit_move(cat):
    # kmovq rbx, k1 closes the loop in 10 cycles, kmovd ebx, k1 in 9 (Zen 4): at most 8
    form = cat.get("KMOVD (K, R32)")
    d = measure_pair(Session(measure_fn=Fake({"kmovd ebx, k1": 9.0}, default=10.0)), form, _only_pair(form))
    assert d["value"] == pytest.approx(8.0) and d["connector"]["steps"] == ["k2gpr32"]
    # the other route reading slower leaves the first one's bound
    d = measure_pair(Session(measure_fn=Fake({"kmovd ebx, k1": 11.0}, default=10.0)), form, _only_pair(form))
    assert d["value"] == pytest.approx(9.0) and d["connector"]["steps"] == ["k2gpr"]
    assert len(d["connector"]["routes"]) == 2


def test_bit_offset_register_keeps_its_value(cat):
    # bts [m], bx addresses m + bx/8: loading m's changing value into bx moves the access away from
    # m and the loop no longer runs through memory (Zen 4: 8.0 cycles, the mem -> mem chain alone,
    # read as "≤3" for op1 -> mem); the connector must carry the dependency but leave bx as it was
    form = cat.get("BTS (M16, R16)")
    pair = next(p for p in latency_pairs(form) if str(p) == "op1 (R16) -> mem op0 (M16)")
    d = measure_pair(Session(measure_fn=Fake({}, default=8.0)), form, pair)
    code = d["connector"]["code"]
    assert not any(line.split()[1].startswith(("bx", "ebx", "rbx")) and "ptr" in line for line in code.split("; "))
    assert code.endswith("add rbx, r13; sub rbx, r13")
    # a register that is no offset still takes the loaded value (the published method's chain)
    add = cat.get("ADD (M16, R16)")
    pair = next(p for p in latency_pairs(add) if p.start.kind == "op" and p.end.kind == "mem")
    d = measure_pair(Session(measure_fn=Fake({}, default=8.0)), add, pair)
    assert d["connector"]["code"].startswith("mov bx, word ptr")


def test_vector_to_vector_connector_is_one_exact_and(cat):
    # blendvpd's implicit XMM0 -> op0: through a GPR (vmovq twice) the pair was only a bound (≤5 on
    # Zen 4 against uops.info's 1); an AND of the output with itself into XMM0 is its own self-chain,
    # so the pair is exact, and of the integer and the FP AND the lower reading is kept
    xmm1, ymm2, zmm3 = (C.port_for_register(r) for r in ("xmm1", "ymm2", "zmm3"))
    assert C.connect(xmm1, C.port_for_register("xmm0"), set()).lines == ["vpand xmm0, xmm1, xmm1"]
    assert C.connect(xmm1, ymm2, set()).lines == ["vpand ymm2, ymm1, ymm1"]
    assert C.connect(ymm2, zmm3, set()).steps == ["vand512"]
    assert [c.lines for c in C.alternatives(xmm1, ymm2, set())] == [["vandpd ymm2, ymm1, ymm1"]]
    assert C.alternatives(ymm2, zmm3, set()) == []
    form = cat.get("BLENDVPD (XMM, XMM)")
    pair = next(p for p in latency_pairs(form) if str(p).startswith("xmm0"))
    fake = Fake({"vpand xmm1, xmm1, xmm1": 1.0, "vandpd xmm1, xmm1, xmm1": 1.0, "vandpd xmm0": 2.0}, default=3.0)
    d = measure_pair(Session(measure_fn=fake), form, pair)
    assert d["bound"] == "exact" and d["value"] == pytest.approx(1.0)
    assert d["connector"]["code"] == "vandpd xmm0, xmm1, xmm1"
    assert [r["upper"] for r in d["connector"]["routes"]] == [pytest.approx(2.0), pytest.approx(1.0)]


def test_an_upper_bound_says_what_was_subtracted(cat):
    form = cat.get("KMOVD (K, R32)")
    d = measure_pair(Session(measure_fn=Fake({"kmovd ebx, k1": 9.0}, default=10.0)), form, _only_pair(form))
    assert d["bound"] == "upper" and d["connector"]["note"].startswith("≤: the loop, 9.00 cycles, less")
    assert "least latency, 1:" in d["connector"]["note"]


def test_bound_only_says_where_the_published_figure_stands():
    from types import SimpleNamespace
    from cyclebench.instructions.causes import cause
    from cyclebench.instructions.published import Value

    def doc(lower, upper):
        return {"form": "BTS (M16, R16)", "notes": [], "throughput": None,
                "latency": [{"start": "mem op0 (M16)", "end": "flags", "value": upper, "bound": "upper",
                             "lower": lower, "stable": True, "linear": True}]}
    rec = SimpleNamespace(latency=Value(6, 47), throughput=None)
    assert cause(doc(0.51, 6.49), rec, None, "latency_min") == \
        "bound only (upper bound): ours between 0.51 and 6.49, published 6, within them"
    # an upper bound below the published figure is a contradiction to explain (the old BTS op1 -> mem ≤3)
    assert cause(doc(0.91, 3.0), rec, None, "latency_min").endswith("above our upper bound: a contradiction")
