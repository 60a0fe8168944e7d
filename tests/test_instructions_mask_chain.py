"""uops.info's write mask -> mask chain (instructions/mask_chain.py): which pairs, what code, its
arithmetic; and the cause agreement.py gives from it (fabricated readings, no timing)."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import mask_chain
from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.instantiate import latency_pairs


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def _pairs(cat, name):
    f = cat.get(name)
    if f is None:
        pytest.skip(f"{name} is not in this catalogue")
    return f, latency_pairs(f)


def test_only_the_write_mask_into_a_mask_destination(cat):
    f, pairs = _pairs(cat, "VPTESTMB (K, K, YMM, M256)")
    hits = [str(p) for p in pairs if mask_chain.applies(f, p)]
    assert hits == ["op1 (K) -> op0 (K)"]
    f, pairs = _pairs(cat, "VPERMI2Q (ZMM, K, ZMM, ZMM)")   # the mask goes into a vector: not this chain
    assert not any(mask_chain.applies(f, p) for p in pairs)
    f, pairs = _pairs(cat, "KANDW (K, K, K)")               # mask sources, but no write mask
    assert not any(mask_chain.applies(f, p) for p in pairs)


def test_configuration_is_cpubench_s_kmovq_chain(cat):
    f, pairs = _pairs(cat, "VPCMPQ (K, K, XMM, M64_1TO2, I8)")
    pair = next(p for p in pairs if mask_chain.applies(f, p))
    inst, code = mask_chain.configuration(f, pair)
    assert "k2{k1}" in inst.text.replace(" ", "") and code[0] == inst.text
    assert code[1:] == ["kmovq k1, k2"] + ["kmovq k1, k1"] * mask_chain.C_REP
    assert mask_chain.short(code) == [inst.text, "kmovq k1, k2"]


def test_reading_rounds_as_uops_info_does():
    assert mask_chain.reading(10.61, 1.0) == 5.0      # int(10.81) - 5 * int(1.2)
    assert mask_chain.reading(9.50, 1.0) == 4.0
    assert mask_chain.reading(8.75, 1.0) == 3.0
    assert mask_chain.reading(3.0, 1.0) == 0.0


def test_a_mismatch_on_such_a_pair_gives_the_reading_as_its_cause():
    from cyclebench.instructions.agreement import cause
    pm = {"code": "...", "cycles": 10.61, "kmovq": 1.0, "stable": True, "value": 5.0}
    d = {"form": "VPTESTMB (K, K, YMM, M256)", "notes": [], "throughput": {"value": 0.5, "bound": "exact"},
         "latency": [{"start": "op1 (K)", "end": "op0 (K)", "value": 4.0, "bound": "exact", "stable": True,
                      "linear": True, "label": None, "published_method": pm},
                     {"start": "op2 (YMM)", "end": "op0 (K)", "value": 4.0, "bound": "exact", "stable": True,
                      "linear": True, "label": None}]}
    rec = SimpleNamespace(latency=SimpleNamespace(lo=4.0, hi=5.0, lo_upper_bound=False, hi_upper_bound=False))
    form = SimpleNamespace(name=d["form"], memory_operand=None, flags_read=frozenset())
    why = cause(d, rec, form, "latency_max")
    assert "5 kmovq" in why and "10.61" in why and "5.0" in why and "one kmovq" not in why
    pm["one_kmovq"] = {"cycles": 5.0, "stable": True}      # the form's 4 plus one kmovq: additive
    why = cause(d, rec, form, "latency_max")
    assert "one kmovq the loop reads 5.00" in why and "adds 1.61 cycles" in why
    pm.update(cycles=8.66, value=3.0)                       # a process in the chain's fast state
    why = cause(d, rec, form, "latency_max")
    assert "added nothing in this process" in why and "adds" not in why
    del d["latency"][0]["published_method"]
    assert cause(d, rec, form, "latency_max") == "unexplained"


def test_an_avx2_gather_s_smallest_bound_below_ours_is_its_mask_pair(cat):
    from cyclebench.instructions.agreement import cause
    from cyclebench.instructions.causes import GATHER_MASK_CAUSE
    d = {"form": "VGATHERQPD (YMM, VSIB_YMM, YMM)", "notes": [], "throughput": {"value": 5.0, "bound": "exact"},
         "latency": [{"start": "op0 (YMM)", "end": "op0 (YMM)", "value": 5.0, "bound": "upper", "stable": True,
                      "linear": True, "label": None}]}
    rec = SimpleNamespace(latency=SimpleNamespace(lo=0.0, hi=16.0, lo_upper_bound=True, hi_upper_bound=True))
    f = cat.get(d["form"])
    if f is None:
        pytest.skip("no AVX2 gather in this catalogue")
    assert cause(d, rec, f, "latency_min") == GATHER_MASK_CAUSE
    k = cat.get("VPGATHERDQ (XMM, K, VSIB_XMM)")              # a K mask: not this pair
    if k is not None:
        assert cause({**d, "form": k.name}, rec, k, "latency_min") != GATHER_MASK_CAUSE


def test_an_avx512_gather_s_smallest_below_ours_is_its_write_mask_pair(cat):
    from cyclebench.instructions.agreement import cause
    from cyclebench.instructions.causes import GATHER_K_MASK_CAUSE
    form = cat.get("VGATHERQPS (YMM, K, VSIB_ZMM)")
    d = {"form": form.name, "notes": [], "throughput": {"value": 9.3, "bound": "exact"},
         "latency": [{"start": "op0 (YMM)", "end": "op0 (YMM)", "value": 11.55, "bound": "exact", "stable": True,
                      "linear": True, "label": None}]}
    # published [3;<=25]: an exact smallest below every pair measured
    rec = SimpleNamespace(latency=SimpleNamespace(lo=3.0, hi=25.0, lo_upper_bound=False, hi_upper_bound=True))
    assert cause(d, rec, form, "latency_min") == GATHER_K_MASK_CAUSE
    # a published smallest above ours is not that pair; nor is a scatter's
    rec.latency.lo = 12.5
    assert cause(d, rec, form, "latency_min") != GATHER_K_MASK_CAUSE
    rec.latency.lo = 3.0
    scatter = cat.get("VPSCATTERDQ (VSIB_YMM, K, ZMM)")
    assert cause({**d, "form": scatter.name}, rec, scatter, "latency_min") != GATHER_K_MASK_CAUSE
