"""The no-dependency test (instructions/unlinked.py) and the cause it gives a published 0
(causes.py), on fixtures: which steps lengthen which start, and what a lengthened loop decides
(no timing)."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import Catalogue, latency_pairs, unlinked
from cyclebench.instructions.causes import ZERO_CAUSE, ZERO_UNTESTED, cause


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def _pair(form, label):
    return next(p for p in latency_pairs(form) if str(p) == label)


def test_steps_fit_the_start_operand(cat):
    cx = cat.get("CMPXCHG (M32, R32)")
    lines, step = unlinked.steps_for(cx, _pair(cx, "op1 (R32) -> flags"), "cmovc rbx, rbx\nadd rbx, r13", 4)
    assert step == "alu" and lines == ["add rbx, r12", "sub rbx, r12"] * 2     # a register the code leaves alone
    lines, step = unlinked.steps_for(cx, _pair(cx, "eax -> flags"), "", 2)
    assert lines[0].startswith("add rax, ") and step == "alu"               # an implicit register
    assert unlinked.steps_for(cx, _pair(cx, "mem op0 (M32) -> flags"), "", 4) is None
    assert unlinked.steps_for(cx, _pair(cx, "addr op0 -> rax"), "", 4) is None
    rs = cat.get("ROUNDSS (XMM, XMM, I8)")
    lines, step = unlinked.steps_for(rs, _pair(rs, "op0 (XMM) -> op0 (XMM)"), "", 3)
    assert step == "vand128" and len(lines) == 3 and lines[0].startswith("vpand xmm")
    # flags: cmc on a carry flag the form reads, or keeps with a count of 0 (CL)
    shrd = cat.get("SHRD (R32, R32, CL)")
    assert unlinked.steps_for(shrd, _pair(shrd, "flags -> op0 (R32)"), "", 4) == (["cmc"] * 4, "cmc")
    cmov = cat.get("CMOVZ (R64, R64)")
    assert unlinked.steps_for(cmov, _pair(cmov, "flags -> op0 (R64)"), "", 4) is None   # ZF only


def _doc(form, values, tp=3.0):
    pairs = latency_pairs(form)
    lat = []
    for p in pairs:
        v = values.get(str(p))
        lat.append({"start": p.start.label, "end": p.end.label, "value": v, "bound": "exact" if v is not None else None,
                    "method": "chain + connector", "label": None, "stable": True, "code": "",
                    "connector": {"latency_lower": 1.0, "latency_upper": 1.0}})
    return pairs, {"form": form.name, "latency": lat, "throughput": {"value": tp, "bound": "exact"}}


class Steps:
    """Session stand-in: every step one cycle."""

    def step_bounds(self, step):
        return 1.0, 1.0


def _measure_with(extra_cycles):
    """measure_pair stand-in: the lengthened loop less its connector reads the steps plus ``extra_cycles``."""
    calls = []

    def measure_pair(session, form, pair, pattern, extra):
        calls.append(extra)
        steps = sum(1 for ln in extra if ln.startswith(("add ", "sub ", "vpand", "cmc")))
        return {"value": steps + extra_cycles, "bound": "exact", "stable": True, "code": "; ".join(extra)}, None
    return measure_pair, calls


def test_a_loop_no_longer_than_its_steps_carries_nothing(cat):
    form = cat.get("CMPXCHG (M32, R32)")
    pairs, doc = _doc(form, {"op1 (R32) -> flags": 2.0, "eax -> rax": 3.0})
    measure_pair, calls = _measure_with(0.0)
    unlinked.test_pairs(Steps(), form, pairs, doc, 0, measure_pair)
    p = next(p for p in doc["latency"] if p["start"] == "op1 (R32)" and p["end"] == "flags")
    assert p["value"] == 0.0 and p["label"] == unlinked.UNLINKED and p["bound"] == "exact"
    # the steps outlast every reading of the loop: the pair's 2 plus its 1-cycle connector, the issue interval 3
    assert p["no_dependency_test"]["steps"] == 2 * (1 + 4) and p["no_dependency_test"]["readings"] == 2
    assert len(calls) == 2 * 2      # every candidate is tested; a reading that moves a pair is taken twice


def test_one_fast_reading_moves_nothing(cat):
    """A loop read fast once (the clock moved during it) and then at the steps plus the pair: the
    larger reading holds, the pair keeps its dependency."""
    form = cat.get("CMPXCHG (M32, R32)")
    pairs, doc = _doc(form, {"op1 (R32) -> flags": 2.0})
    fast, _ = _measure_with(0.0)
    slow, _ = _measure_with(2.0)
    reads = iter([fast, slow])
    unlinked.test_pairs(Steps(), form, pairs, doc, 0, lambda *a: next(reads)(*a))
    p = next(p for p in doc["latency"] if p["value"] is not None)
    assert p["value"] == 2.0 and p["label"] is None and p["no_dependency_test"]["value"] == pytest.approx(2.0)


def test_a_loop_longer_than_its_steps_keeps_the_pair_and_its_figure(cat):
    form = cat.get("CMPXCHG (M32, R32)")
    pairs, doc = _doc(form, {"op1 (R32) -> flags": 2.0, "eax -> rax": 3.0})
    measure_pair, calls = _measure_with(3.0)
    unlinked.test_pairs(Steps(), form, pairs, doc, 0, measure_pair)
    for p in doc["latency"]:
        if p["value"] is not None:
            assert p["value"] in (2.0, 3.0) and p["label"] is None
            assert p["no_dependency_test"]["value"] == pytest.approx(3.0)
    assert len(calls) == 2
    # a lower exact reading replaces the pair's (the least configuration is kept, as uops.info keeps it)
    pairs, doc = _doc(form, {"op1 (R32) -> flags": 5.0})
    unlinked.test_pairs(Steps(), form, pairs, doc, 0, _measure_with(3.0)[0])
    p = next(p for p in doc["latency"] if p["value"] is not None)
    assert p["value"] == 3.0 and p["no_dependency_test"]["without"] == 5.0


def test_pairs_already_zero_or_past_the_limit_are_not_tested(cat):
    form = cat.get("CMPXCHG (M32, R32)")
    values = {"op1 (R32) -> flags": 2.0, "eax -> rax": 0.0, "op1 (R32) -> rax": 2.5, "eax -> flags": 3.0,
              "mem op0 (M32) -> rax": 9.0, "addr op0 -> rax": 7.0}
    pairs, doc = _doc(form, {**values, "op1 (R32) -> mem op0 (M32)": 7.5})
    measure_pair, calls = _measure_with(0.0)
    unlinked.test_pairs(Steps(), form, pairs, doc, 0, measure_pair)
    tested = [f"{p['start']} -> {p['end']}" for p in doc["latency"] if p.get("no_dependency_test")]
    # smallest first; no step fits a memory or address start; at most MAX_TESTED
    assert tested == ["op1 (R32) -> mem op0 (M32)", "op1 (R32) -> rax", "op1 (R32) -> flags", "eax -> flags"]
    assert len(calls) == 2 * unlinked.MAX_TESTED == 8      # each read twice: each reads 0


def _rec(latency):
    lo = SimpleNamespace(lo=0.0, hi=3.0, lo_upper_bound=False, hi_upper_bound=False)
    return SimpleNamespace(latency=lo if latency else None, throughput=None, name="F")


def test_the_published_zero_cause_gives_the_test_or_says_it_was_not_run():
    pair = {"start": "op0 (XMM)", "end": "op0 (XMM)", "value": 3.0, "bound": "exact", "stable": True}
    doc = {"form": "F", "latency": [dict(pair)], "notes": [], "throughput": {"value": 0.5, "bound": "exact"}}
    assert cause(doc, _rec(True), None, "latency_min").startswith(ZERO_UNTESTED + ":")
    doc["latency"][0]["no_dependency_test"] = {"steps": 8, "step": "vand128", "breakers": [], "cycles": 11.0,
                                               "value": 3.0, "exact": True, "stable": True}
    text = cause(doc, _rec(True), None, "latency_min")
    assert text.startswith(ZERO_CAUSE + ": op0 (XMM) -> op0 (XMM) with 8 one-cycle steps")
    assert "still reads 3.00" in text and "waits for that operand's old value" in text


def test_cmc_lengthens_only_a_carry_the_form_takes_in(cat):
    # CMPSQ reads the direction flag only: a cmc chain would run beside its flags, not through them
    cmps = cat.get("CMPSQ")
    assert unlinked.steps_for(cmps, _pair(cmps, "flags -> flags"), "", 4) is None
    adc = cat.get("ADC_11 (R64, R64)")
    assert unlinked.steps_for(adc, _pair(adc, "flags -> op0 (R64)"), "", 2) == (["cmc"] * 2, "cmc")


def test_equal_pairs_at_the_cut_are_tested_alike_whatever_the_noise(cat):
    """Five pairs read 1.00 to the fourth decimal: which of them the test reaches must not depend on
    that decimal.  flags -> flags reading 1.0001 was the fifth and untested (its 1.00 the form's own
    op0 chain), reading 0.9999 it was tested and read 0: a flip from run to run."""
    form = cat.get("SAL (R8, CL)")
    for noise in (1.0001, 0.9999):
        pairs, doc = _doc(form, {"op0 (R8) -> op0 (R8)": 1.00005, "op0 (R8) -> flags": 1.0,
                                 "op1 (CL) -> op0 (R8)": 1.0, "op1 (CL) -> flags": 1.0,
                                 "flags -> op0 (R8)": 0.0, "flags -> flags": noise})
        unlinked.test_pairs(Steps(), form, pairs, doc, 0, _measure_with(0.0)[0])
        p = next(p for p in doc["latency"] if p["start"] == p["end"] == "flags")
        assert p.get("no_dependency_test") and p["value"] == 0.0 and p["label"] == unlinked.UNLINKED
    # a level past the cut is not started: 4 pairs at 1, one at 3
    pairs, doc = _doc(form, {"op0 (R8) -> op0 (R8)": 1.0, "op0 (R8) -> flags": 1.0, "op1 (CL) -> op0 (R8)": 1.0,
                             "op1 (CL) -> flags": 1.0, "flags -> flags": 3.0})
    unlinked.test_pairs(Steps(), form, pairs, doc, 0, _measure_with(0.0)[0])
    assert sum(bool(p.get("no_dependency_test")) for p in doc["latency"]) == unlinked.MAX_TESTED
