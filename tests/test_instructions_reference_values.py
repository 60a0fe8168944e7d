"""uops.info's operand values for data-dependent forms (reference_values.py): which forms get
them (by operand shape), which values and code they run, and that the agreement compares the
figure measured with them, labelled (comparing.reference, causes, agreement).  No timing."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import Catalogue
from cyclebench.instructions import reference_values as R


@pytest.fixture(scope="module")
def forms():
    return {f.name: f for f in Catalogue.load().forms}


def _form(forms, name):
    if name not in forms:
        pytest.skip(f"{name} is not in this catalogue")
    return forms[name]


@pytest.mark.parametrize("name, bits", [
    ("DIV (R64)", 64), ("IDIV (M32)", 32), ("DIV (R16)", 16), ("DIV (M8)", 8), ("IDIV (R8h)", 8),
    ("MUL (R64)", None), ("IMUL (R32)", None), ("MUL (R8)", None), ("CQO", None),
    ("CMPXCHG16B (M128)", None), ("IMUL (R64, R64)", None)])
def test_an_integer_divider_is_found_by_its_double_width_dividend(forms, name, bits):
    assert R.divider_width(_form(forms, name)) == bits


@pytest.mark.parametrize("name, count", [
    ("STOSD_REPE", True), ("CMPSB_REPNE", True), ("MOVSB_REPE", True), ("STOSB", False),
    ("LODSB", False), ("LOOP (REL8)", False)])
def test_a_rep_string_form_is_found_by_its_count_register(forms, name, count):
    assert R.count_string(_form(forms, name)) == count


class _Fake:
    """A session that records what it is asked to measure and reads ``values`` in turn."""

    def __init__(self, values):
        self.values, self.seen = list(values), []

    def measure(self, code, init, per=1, pattern=None):
        self.seen.append((list(code), list(init), getattr(init, "head", {})))
        v = self.values.pop(0) if self.values else 3.0
        return SimpleNamespace(value=v, stable=True, code="\n".join(code))


def test_a_divider_runs_uops_infos_fast_and_slow_division_and_keeps_the_faster(forms):
    f = _form(forms, "DIV (R64)")
    fake = _Fake([7.0, 12.0] + [12.0, 3.0] * 6 + [22.0, 3.0] * 6)
    ref = R.measure(fake, f)
    tp = ref["throughput"]
    assert tp["value"] == 7.0 and tp["values"] == "fast division: RAX=0, RDX=0, divisor 1"
    assert [c["value"] for c in tp["configs"]] == [7.0, 12.0]
    assert tp["configs"][1]["values"] == "slow division: RAX=133, RDX=0x343a9ed744556677, divisor 0x75e6e44fccddeeff"
    code, init, _ = fake.seen[0]
    assert code[:3] == ["mov rax, 0", "mov rdx, 0", code[2]] and len(code) == 3 * R.COPIES
    slow = next(c for c, _i, _h in fake.seen if c[0].startswith("mov rax, 133"))
    assert slow[:2] == ["mov rax, 133", "mov rdx, 0x343a9ed744556677"]
    # six register pairs a configuration, each its chain less the same chain without the form
    assert len(ref["latency"]) == 12 and {p["value"] for p in ref["latency"]} == {9.0, 19.0}
    chain, bare = fake.seen[2][0], fake.seen[3][0]
    assert chain[1:] == bare and chain[1].startswith("and ")
    # cpuBench's cRep links: 2 + 2 * ceil(TP_single / 2), from the faster throughput (7.00)
    assert sum(line.startswith("or ") and line.split()[1].rstrip(",") == line.split()[2] for line in bare) == 10


def test_a_divisor_in_memory_starts_uops_infos_address_chains(forms):
    f = _form(forms, "IDIV (M32)")
    fake = _Fake([6.0, 12.0])
    ref = R.measure(fake, f)
    starts = [p["start"] for p in ref["latency"]]
    assert starts.count("addr op0") == 4 and "op0 (M32)" not in starts
    chain, bare = fake.seen[2][0], fake.seen[3][0]
    assert chain[1] == "movsx r12, eax" and bare[0] == "movsx r12, r14d"
    assert chain.count("xor r14, r12") == bare.count("xor r14, r12") == 8     # even: R14 as it was


def test_a_rep_string_form_runs_rcx_0_1_2_before_every_copy_with_its_pointers_set_back(forms):
    f = _form(forms, "STOSD_REPE")
    fake = _Fake([25.5, 15.0, 15.2])
    tp = R.measure(fake, f)["throughput"]
    assert tp["value"] == 15.0 and tp["values"] == "RCX=1 before every copy"
    assert [c[0][0] for c in fake.seen] == ["mov rcx, 0", "mov rcx, 1", "mov rcx, 2"]
    assert all(h.get("reset") == ("rsi", "rdi") for _c, _i, h in fake.seen)
    assert R.measure(fake, _form(forms, "IMUL (R64, R64)")) is None


def _rec(lat=None, tp=None):
    lo = hi = None
    if lat:
        lo, hi = lat
    latency = SimpleNamespace(lo=lo, hi=hi, lo_upper_bound=False, hi_upper_bound=False) if lat else None
    return SimpleNamespace(name="F", latency=latency, throughput_text=str(tp), ports_text="",
                           throughput=SimpleNamespace(hi=tp, hi_upper_bound=False) if tp else None)


def _divider_doc():
    pairs = [{"start": "rax", "end": "rax", "value": v, "bound": "exact", "stable": True, "values": k}
             for v, k in ((9.0, "fast division"), (19.0, "slow division"))]
    return {"form": "DIV (R64)", "status": "ok", "notes": ["data-dependent: measured with divisor 1"],
            "latency": [{"start": "rax", "end": "rax", "value": 17.0, "bound": "exact"}],
            "throughput": {"value": 9.0, "bound": "upper", "stable": True, "carried": []},
            "reference_values": {"throughput": {"value": 7.0, "bound": "exact", "stable": True,
                                                "values": "fast division",
                                                "configs": [{"values": "fast division", "value": 7.0},
                                                            {"values": "slow division", "value": 12.0}]},
                                 "latency": pairs}}


def test_the_report_compares_the_figures_measured_with_uops_infos_values():
    from cyclebench.instructions.comparing import match, ours, reference
    doc = _divider_doc()
    assert ours(doc, "throughput") == (7.0, "exact")
    assert ours(doc, "latency_min") == (9.0, "exact") and ours(doc, "latency_max") == (19.0, "exact")
    assert reference(doc, "latency_min")["values"] == "fast division, slow division"
    assert match(doc, _rec((9.0, 19.0), 7.0), "throughput")["match"]
    del doc["reference_values"]
    assert ours(doc, "throughput") == (9.0, "upper") and ours(doc, "latency_max") == (17.0, "exact")


def test_a_mismatch_on_uops_infos_values_names_them_and_every_configuration():
    from cyclebench.instructions.causes import REFERENCE_CAUSE, cause
    why = cause(_divider_doc(), _rec((9.0, 19.0), 5.0), None, "throughput")
    assert why.startswith(REFERENCE_CAUSE + " (fast division): 7.00 against the published 5")
    assert "12.00 with slow division" in why and "9.00 as reported" in why
    why = cause(_divider_doc(), _rec((9.0, 22.0), 7.0), None, "latency_max")
    assert "9.00 to 9.00 with fast division" in why and "19.00 to 19.00 with slow division" in why


def test_a_selector_in_a_register_and_an_empty_gather_mask_are_uops_infos_values():
    from cyclebench.instructions.comparing import MASK_EMPTY, ours, reference, unsettled
    sel = {"throughput": {"value": 56.0, "bound": "exact", "stable": True,
                          "reference": {"value": 97.9, "bound": "exact", "stable": True, "values": "null"}}}
    assert ours(sel, "throughput") == (97.9, "exact")
    scatter = {"throughput": {"value": 5.58, "bound": "exact", "stable": True,
                              "mask_unset": {"value": 7.0, "stable": True}}}
    assert ours(scatter, "throughput") == (7.0, "exact") and reference(scatter, "throughput")["values"] == MASK_EMPTY
    scatter["throughput"]["mask_unset"]["stable"] = False       # an unsettled reading is no reference
    assert ours(scatter, "throughput") == (5.58, "exact")
    doc = _divider_doc()
    doc["reference_values"]["throughput"]["stable"] = False
    assert unsettled(doc, "throughput")


def test_the_agreement_row_says_which_values_a_figure_was_compared_on(forms):
    from cyclebench.instructions.agreement import Target, agreement
    form = _form(forms, "DIV (R64)")
    rec = SimpleNamespace(name="DIV (R64)", extra={}, throughput_text="7.00", ports_text="",
                          latency=SimpleNamespace(lo=9.0, hi=19.0, lo_upper_bound=False, hi_upper_bound=False),
                          throughput=SimpleNamespace(hi=6.0, hi_upper_bound=False))
    a = agreement([Target(rec, form, "runnable")], {form.name: _divider_doc()}, "ZEN4", "here")
    row = a["rows"][0]
    assert row["latency_min"]["match"] and row["latency_min"]["values"] == "fast division, slow division"
    (mis,) = a["mismatches"]
    assert mis["figure"] == "throughput" and mis["values"] == "fast division" and mis["ours"] == 7.0


def test_swept_values_that_read_no_published_figure_leave_the_cause_to_the_other_experiments():
    """A fewer copy count kept that read faster than the full count (the published figure), on
    the same values: that is the cause, the swept values named beside it."""
    from cyclebench.instructions.causes import COPY_COUNT_CAUSE, cause
    tp = {"value": 4.5, "bound": "exact", "stable": True, "carried": [], "copies": 4,
          "by_copies": {"4": 4.5, "15": 5.0}, "by_process": [5.0],
          "values": [{"pattern": 1, "values": "1.0", "value": 4.5}, {"pattern": 2, "values": "denormals", "value": 7.9}]}
    doc = {"throughput": tp, "latency": [], "notes": ["data-dependent throughput: ..."]}
    why = cause(doc, _rec(None, 5.0), None, "throughput")
    assert why.startswith(COPY_COUNT_CAUSE) and why.endswith("none reads the published 5)")
    tp["values"][1]["value"] = 5.0            # a swept value reads it: that is the cause
    assert cause(doc, _rec(None, 5.0), None, "throughput").startswith("data-dependent: cost depends")


def test_inst_compare_says_which_figures_it_compared_on_uops_infos_values():
    from cyclebench.instructions.compare import compare_published
    rec = SimpleNamespace(name="DIV (R64)", latency="[9;19]", throughput_text="7.00", source="uops.info",
                          throughput=SimpleNamespace(hi=7.0, hi_upper_bound=False))
    rec.latency = SimpleNamespace(lo=9.0, hi=19.0, lo_upper_bound=False, hi_upper_bound=False)
    out = compare_published([_divider_doc()], {"DIV (R64)": rec})
    assert out["rows"]["DIV (R64)"]["match"] == "✓ (uops.info's operand values: lat 19.00, tp 7.00)"


def test_a_selector_reader_is_compared_on_the_null_selector_and_its_mismatch_names_both_readings():
    from cyclebench.instructions.causes import REFERENCE_CAUSE, cause
    tp = {"value": 59.0, "bound": "exact", "stable": True, "carried": [],
          "values": [{"values": "the null selector", "value": 101.0}, {"values": "a valid selector", "value": 59.0}],
          "reference": {"value": 101.0, "bound": "exact", "stable": True, "values": "the null selector: memory 0"}}
    why = cause({"throughput": tp, "latency": [], "notes": []}, _rec(None, 59.0), None, "throughput")
    assert why == (f"{REFERENCE_CAUSE} (the null selector: memory 0): 101.00 against the published 59; "
                   "101.00 with the null selector; 59.00 with a valid selector")
