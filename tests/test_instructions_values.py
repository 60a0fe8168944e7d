"""Which operand values the instruction tables sweep (values.alternative_values): denormals
for floating-point forms, every bit set for masked memory forms, nothing for integer forms."""
import pytest

from cyclebench.instructions import Catalogue
from cyclebench.instructions.values import ALL_ONES, DENORMALS, alternative_values


@pytest.fixture(scope="module")
def forms():
    return {f.name: f for f in Catalogue.load().forms}


@pytest.mark.parametrize("name, expected", [
    ("ADDPD (XMM, XMM)", [DENORMALS]), ("MULSS (XMM, XMM)", [DENORMALS]),
    ("VFMADD231PD (YMM, YMM, YMM)", [DENORMALS]), ("PADDQ (XMM, XMM)", []), ("ADD_01 (R64, R64)", []),
    ("VMASKMOVPS (M128, XMM, XMM)", [ALL_ONES, DENORMALS])])
def test_the_values_swept_follow_the_operand_types(forms, name, expected):
    if name not in forms:
        pytest.skip(f"{name} is not in this catalogue")
    assert alternative_values(forms[name]) == expected


def test_the_denormal_pattern_is_a_denormal_at_every_width():
    import struct
    raw = DENORMALS.to_bytes(8, "little")
    assert struct.unpack("<d", raw)[0] != 0 and abs(struct.unpack("<d", raw)[0]) < 2.3e-308
    assert all(0 < abs(x) < 1.2e-38 for x in struct.unpack("<2f", raw))
    assert all(0 < abs(x) < 6.2e-5 for x in struct.unpack("<4e", raw))


@pytest.mark.parametrize("name, selector", [
    ("LSL (R64, M16)", True), ("LAR (R32, R32)", True), ("VERR (M16)", True),
    ("MOVSXD (R64, R32)", False), ("MOV (R64, M64)", False), ("PINSRW (XMM, M16, I8)", False),
    ("SUB (R64, M64)", False)])
def test_forms_that_read_a_segment_selector_are_found_by_their_opcode(forms, name, selector):
    from cyclebench.instructions.values import selector_operand, sweeps_values
    if name not in forms:
        pytest.skip(f"{name} is not in this catalogue")
    assert (selector_operand(forms[name]) is not None) == selector
    if selector:
        assert sweeps_values(forms[name])


def test_the_selector_session_loads_ss_into_every_selector_operand_after_the_init():
    from cyclebench.instructions.session import Session
    from cyclebench.instructions.values import with_selector
    seen = {}

    def fake(code, init=None, **kw):
        seen["init"] = init
        raise RuntimeError("stop")

    s = with_selector(Session(measure_fn=fake), "LSL")
    with pytest.raises(RuntimeError):
        s.measure_fn("lsl rbx, word ptr [r14+0x40]\nlsl rcx, word ptr [r14+0x40]\n{load} lsl rdx, rax\n"
                     ".byte 0x66, 0x0f, 0x03, 0xcb  # lsl cx, bx", init="mov eax, 1")
    assert seen["init"].splitlines() == ["mov eax, 1", "mov word ptr [r14+0x40], ss", "mov rax, ss", "mov bx, ss"]


def test_a_selector_dependent_throughput_reports_the_valid_selector_and_keeps_the_null_one(forms, monkeypatch):
    """A valid selector is what real code passes, so its figure is reported; the null one is kept,
    and is uops.info's own figure (its registers hold 0, and its memory unless an earlier
    experiment stored there: the reference's label says so)."""
    from cyclebench.instructions import values
    mem, reg = forms.get("LSL (R64, M16)"), forms.get("LSL (R32, R32)")
    if mem is None or reg is None:
        pytest.skip("LSL is not in this catalogue")
    monkeypatch.setattr(values, "measure_throughput", lambda *a, **k: {"value": 59.1, "pattern": 0})
    session = values.Session(measure_fn=lambda *a, **k: None)
    doc, note = values.with_values(session, mem, {"value": 101.0, "pattern": 0, "bound": "exact"}, {})
    assert doc["value"] == 59.1 and doc["data_dependent"] and doc[values.SELECTOR] == "ss"
    assert [v["value"] for v in doc["values"]] == [101.0, 59.1]
    assert "101.00 with the null selector" in note and "59.10 with a valid selector" in note
    assert doc["reference"]["value"] == 101.0 and "unless an earlier experiment" in doc["reference"]["values"]
    assert doc[values.LATENCY_VALUES]["value"] == 101.0
    doc, _ = values.with_values(session, reg, {"value": 97.9, "pattern": 0, "bound": "exact"}, {})
    assert doc["value"] == 59.1 and doc["reference"]["value"] == 97.9
    assert "uops.info's register holds 0" in doc["reference"]["values"]
    monkeypatch.setattr(values, "measure_throughput", lambda *a, **k: {"value": 101.1, "pattern": 0})
    doc, note = values.with_values(session, mem, {"value": 101.0, "pattern": 0}, {})
    assert note is None and "data_dependent" not in doc


def test_the_latencies_see_the_throughput_of_their_own_operand_values():
    """issue_fill compares each chain with the issue interval: for a selector reader the
    latencies run with the null selector, so the null figure is their interval, not the reported one."""
    from cyclebench.instructions.values import LATENCY_VALUES, latency_view
    pairs = [{"value": 90.0}]
    doc = {"latency": pairs, "throughput": {"value": 59.0, "bound": "exact",
                                            LATENCY_VALUES: {"value": 100.0, "bound": "upper", "carried": []}}}
    view = latency_view(doc)
    assert view["throughput"]["value"] == 100.0 and view["throughput"]["bound"] == "upper"
    assert view["latency"] is pairs and doc["throughput"]["value"] == 59.0
    plain = {"latency": [], "throughput": {"value": 1.0}}
    assert latency_view(plain) is plain
