"""inst --why (instructions/why.py): the variant experiments, with a fake measurement (no timing)."""
from types import SimpleNamespace

from cyclebench.instructions import Catalogue
from cyclebench.instructions.characterize import Session, characterize
from cyclebench.instructions.published import Published, Value
from cyclebench.instructions.why import explain, verdict


def fake(code, init=None, **kw):
    # per copy: an ALU flag breaker (test) makes ADC take 0.50, the zero idiom 0.33, and with no
    # breaker the copies chain through the carry flag (1.00)
    per = 0.5 if "test r" in code else 0.33 if "xor " in code else 1.0
    v = code.count("adc ") * per if "adc" in code else 1.0
    ev = SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)
    return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                           stability={"stable": True, "linearity": {"linear": True}},
                           backend={"name": "tsc", "reason": "no hardware PMU: test"})


def test_why_names_the_variant_that_reproduces_the_published_figure():
    form = Catalogue.load().get("ADC_11 (R64, R64)")
    s = Session(measure_fn=fake)
    doc = characterize(form, s)
    # the tables break the flags as uops.info does (test r, r: 0.50); a column measured with a
    # port-free breaker (0.33) is reproduced by the zero-idiom variant
    rec = Published(name=form.name, source="test", latency=Value(1, 1), throughput=Value(0.33, 0.33))
    r = explain(s, form, doc, rec)
    tp = next(f for f in r["figures"] if f["figure"] == "throughput")
    assert tp["match"] is False and tp["ours"] == 0.5
    hits = [v["variant"] for v in tp["variants"] if v["reproduces"]]
    assert hits == ["breakers: zero idiom (flags)"]      # bare copies chain through the carry
    assert doc["throughput"]["without_breakers"]["value"] == 1.0     # measured, slower: not kept
    lines = verdict(r)           # latency lines follow (the fake's latencies are not real ones)
    assert lines[0] == ("ADC_11 (R64, R64) throughput: ours 0.50, published 0.33; reproduced by: "
                        "breakers: zero idiom (flags) = 0.33")


def test_uops_infos_vector_chain_is_read_as_uops_info_reads_it():
    from cyclebench.instructions.why import vector_chain_runs
    from test_instructions_measure import Fake          # looks codes up by a part of their text
    form = Catalogue.load().get("VPEXPANDW (ZMM, ZMM)")
    s = Session(measure_fn=Fake({"vpandd": 11.5, "vandpd": 10.4}, default=5.0))
    got = {r["variant"]: r["value"] for r in vector_chain_runs(s, form)}
    assert sorted(got.values()) == [5.0, 6.0]          # int(10.4 + .2) - 5, int(11.5 + .2) - 5
    assert all("uops.info's chain" in k and "op1 (ZMM) -> op0 (ZMM)" in k for k in got)


def test_a_gathers_copies_without_their_mask_set_up_are_a_variant():
    from cyclebench.instructions.why import _mask_unset
    doc = {"throughput": {"value": 5.0, "mask_unset": {"value": 4.0, "stable": True}}}
    (v,) = _mask_unset(doc, 4.0, False, 0.07)
    assert v["variant"].startswith("mask not set again before each copy") and v["reproduces"] is True
    assert _mask_unset(doc, 5.0, False, 0.07)[0]["reproduces"] is False
    assert _mask_unset({"throughput": {"value": 0.5}}, 0.5, False, 0.07) == []      # not a gather


def test_a_shift_count_of_zero_is_a_variant():
    from cyclebench.instructions.session import COUNT_INIT
    from cyclebench.instructions.why import _count_zero

    def slow_flags(code, init=None, **kw):
        # count 0 and a flags read after the shift: the slow path (33 cycles a loop)
        v = 33.0 if "mov ecx, 0" in (init or "") and "cmov" in code else 2.0
        assert COUNT_INIT not in (init or "") or "mov ecx, 0" not in (init or "")
        return fake(code, init, **kw) if "sar" not in code else SimpleNamespace(
            events={"cycles": SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)}, stable=True,
            warnings=[], stability={"stable": True, "linearity": {"linear": True}},
            backend={"name": "tsc", "reason": "no hardware PMU: test"})

    cat = Catalogue.load()
    got = dict(_count_zero(Session(measure_fn=slow_flags), cat.get("SAR (R32, CL)")))
    flags = {k: v for k, v in got.items() if "-> flags" in k and "count CL = 0" in k}
    assert flags and max(flags.values()) > 30
    assert _count_zero(Session(measure_fn=slow_flags), cat.get("SAR (R32, I8)")) == []   # no count in CL


def test_a_mismatch_left_unexplained_gets_the_experiment_that_reproduces_it():
    # VPERMW through one register 5, uops.info's chain with five ANDs 11.17 cycles: 6, as published
    from cyclebench.instructions.why import REPRODUCED, experiment_cause
    from test_instructions_measure import Fake
    form = Catalogue.load().get("VPERMW (ZMM, ZMM, ZMM)")
    s = Session(measure_fn=Fake({"vandpd": 11.17, "vpandd": 11.17}, default=5.0))
    doc = characterize(form, s, throughput=False)
    rec = Published(name=form.name, source="test", latency=Value(6, 6), throughput=Value(1, 1))
    why = experiment_cause(s, form, doc, rec, "latency_min")
    assert why.startswith(REPRODUCED + ": latency pair op1 (ZMM) -> op0 (ZMM), uops.info's chain (vandpd x5")
    assert why.endswith("= 6.00")
    rec = Published(name=form.name, source="test", latency=Value(8, 8), throughput=Value(1, 1))
    assert experiment_cause(s, form, doc, rec, "latency_max") is None      # nothing reads 8
    calls = []
    cache = {}
    s.measure_fn = lambda code, init=None, **kw: calls.append(code) or Fake({"vandpd": 11.17}, default=5.0)(code)
    experiment_cause(s, form, doc, rec, "latency_min", cache)
    n = len(calls)
    experiment_cause(s, form, doc, rec, "latency_max", cache)    # the same experiments, not run again
    assert n and len(calls) == n


def test_the_no_dependency_test_is_listed_as_a_variant_with_the_figure_it_replaced():
    from cyclebench.instructions.why import _pair_variants
    moved = {"start": "op1", "end": "op0", "value": 1.0,
             "no_dependency_test": {"steps": 8, "step": "vand128", "breakers": ["vpxor xmm2, xmm2, xmm2"],
                                    "cycles": 9.0, "value": 1.0, "exact": True, "stable": True, "without": 3.0}}
    got = dict(_pair_variants(moved))
    assert got["no-dependency test: 8 one-cycle steps (vand128) on the start, the other inputs broken"] == 1.0
    assert got["the pair's own chain, before the no-dependency test"] == 3.0
    unsettled = {"start": "op1", "end": "op0", "value": 3.0,
                 "no_dependency_test": {"steps": 8, "step": "alu", "breakers": [], "cycles": 11.0,
                                        "value": 3.0, "exact": False, "stable": False}}
    assert _pair_variants(unsettled) == []
