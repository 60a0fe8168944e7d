"""One pipe group probed by a legacy-SSE blocker and by a wide one (cyclebench/instructions/ports/
apart.py): the forms read beside both probes tell that the two resources are one, and each side
then takes its own pipe usage on the resource it was never read beside.  Facts only: fabricated
models, no timing."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import apart
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict

LEGACY = "CMPSS (XMM, XMM, I8)"                  # probes R7 (two pipes, 0.5 a copy)
WIDE = "VCVTPD2QQ (ZMM, K, M64_1to8)"            # probes R21 (the 512-bit op on both, 1.0)
ADD = "ADDPD (XMM, XMM)"                         # legacy-SSE: never read beside WIDE
CONVERT = "VCVTTPS2DQ_Z (ZMM, K, M512)"          # wide: never read beside LEGACY
WITNESS = ("UCOMISD (XMM, XMM)", "COMISS (XMM, XMM)")   # read beside both (write no XMM register)
ALU = "CMP_39 (R64, R64)"


def _model(witness: float = 0.5) -> Model:
    usage = {LEGACY: {"R7": 0.5}, WIDE: {"R21": 1.0}, ADD: {"R7": 0.5}, CONVERT: {"R21": 1.0, "R2": 0.1},
             WITNESS[0]: {"R7": 0.5, "R21": 0.5}, WITNESS[1]: {"R7": 0.5, "R21": witness},
             ALU: {"R2": 0.25, "R21": 0.17}}        # a crowding share: no witness either way
    alone = {LEGACY: 0.5, WIDE: 1.0, ADD: 0.5, CONVERT: 1.0, WITNESS[0]: 1.0, WITNESS[1]: 1.0, ALU: 0.25}
    return Model(["R2", "R7", "R21"], usage, 6, alone,
                 probes={"R2": ALU, "R7": LEGACY, "R21": WIDE})


def test_two_resources_kept_apart_are_one_where_every_form_read_beside_both_uses_them_alike(catalogue):
    assert apart.twins(_model(), catalogue) == [("R21", "R7")]
    assert apart.twins(_model(witness=0.3), catalogue) == []      # a witness that tells them apart
    one = _model()
    del one.usage[WITNESS[1]]
    assert apart.twins(one, catalogue) == []                      # one witness is not enough
    three = _model(witness=0.3)
    three.usage["CVTTSD2SI (R32, M64)"], three.alone["CVTTSD2SI (R32, M64)"] = {"R7": 0.5, "R21": 0.5}, 1.0
    assert apart.twins(three, catalogue) == [("R21", "R7")]      # the median: one fit a third off
    three.usage["CVTTSD2SI (R32, M64)"] = {"R7": 0.2, "R21": 0.2}
    assert apart.twins(three, catalogue) == []                   # under a unit of both: no witness


def test_each_side_takes_its_own_pipe_usage_on_the_twin_it_was_never_read_beside(catalogue):
    m = apart.view(_model(), catalogue)
    assert m.usage[ADD]["R21"] == 0.5 and m.usage[LEGACY]["R21"] == 0.5
    assert m.usage[CONVERT]["R7"] == 1.0 and m.usage[WIDE]["R7"] == 1.0
    assert "R7" not in m.usage[ALU] and m.usage[WITNESS[0]] == {"R7": 0.5, "R21": 0.5}   # read: kept
    assert apart.view(m0 := _model(), catalogue) is apart.view(m0, catalogue)
    plain = _model(witness=0.3)
    assert apart.view(plain, catalogue) is plain


def test_a_usage_beyond_two_of_the_probes_passes_is_no_pipe_usage_and_stays_on_its_side(catalogue):
    # Zen 4's cvtsi2ss xmm, r64 holds the four FP pipes' resource 1.08 cycles, its time alone: four
    # of orps's passes, set by something else than those pipes
    m = _model()
    m.usage["CVTSI2SS (XMM, R64)"], m.alone["CVTSI2SS (XMM, R64)"] = {"R7": 1.5}, 1.5       # three passes
    m.usage["CVTSI2SD (XMM, R64)"], m.alone["CVTSI2SD (XMM, R64)"] = {"R7": 1.0}, 1.0       # two: a pipe usage
    v = apart.view(m, catalogue)
    assert "R21" not in v.usage["CVTSI2SS (XMM, R64)"] and v.usage["CVTSI2SD (XMM, R64)"]["R21"] == 1.0


def test_predict_adds_both_sides_on_the_one_resource(catalogue):
    # Zen 4, cyclebench asm: addpd xmm1; ...; vcvttps2dq zmm1{k1}{z}, [m512]; cvtsi2sd xmm1, [m]
    # runs 3.00 cycles, the two legacy writes doubled under the ZMM write and the conversion adding
    # up on the FP23 pipes; here an addpd and the conversion, with no upper-state factor
    block = "addpd xmm1, xmm2; vcvttps2dq zmm3{k1}{z}, zmmword ptr [r14+0x40]"
    p = predict(block, _model(), catalogue)
    assert p.resource_bound == pytest.approx(1.5) and p.binding_resource in ("R7", "R21")


# The probe (apart.probe): a fabricated core where the legacy multiply and the 512-bit multiply
# share the multiply pipes, the legacy compare is on the add pipes, and a legacy-SSE write under
# a dirty ZMM state passes its pipes twice.
MUL, CMP, ZMUL = "MULSS (XMM, XMM)", "CMPSS (XMM, XMM, I8)", "VPMULLD (ZMM, ZMM, ZMM)"
PASSES = {"mulss": ("F0", "F1"), "cmpless": ("F2", "F3"), "vpmulld": ("F0", "F1")}     # cmpss by its alias


def _core(code, init, per=1):
    """Cycles per unit: each line's passes (two for a 512-bit µop, two for a legacy write while
    the init has dirtied a ZMM register) spread over its two pipes; the busiest pair sets the time."""
    from types import SimpleNamespace
    dirty = any("zmm" in line for line in init)
    busy: dict[tuple, float] = {}
    for line in code:
        op = next(t for t in line.split() if not t.startswith("{"))      # past {load}, {evex}
        twice = "zmm" in line or (dirty and op in ("mulss", "cmpless"))
        busy[PASSES[op]] = busy.get(PASSES[op], 0.0) + (2 if twice else 1) / 2
    return SimpleNamespace(value=max(busy.values()) / per, modes=None, stable=True)


def _probed():
    from types import SimpleNamespace
    usage = {MUL: {"R1": 0.5}, CMP: {"R2": 0.5}, ZMUL: {"R3": 1.0}}
    model = Model(["R1", "R2", "R3"], usage, 6, {MUL: 0.5, CMP: 0.5, ZMUL: 1.0},
                  probes={"R1": MUL, "R2": CMP, "R3": ZMUL})
    return model, apart.probe(SimpleNamespace(measure=_core, avx512=True), model)


def test_the_probe_reads_a_legacy_and_a_wide_probe_form_side_by_side_as_one_resource_where_their_times_add():
    _, rec = _probed()
    read = {(p["legacy"], p["wide"]): p for p in rec["pairs"]}
    assert set(read) == {(MUL, ZMUL), (CMP, ZMUL)}                 # only pairs the upper-state rule kept apart
    mul = read[(MUL, ZMUL)]
    assert mul["counts"] == [1, 1] and mul["times"] == {"legacy": 1.0, "wide": 1.0, "both": 2.0}
    assert mul["shared"] is True
    assert read[(CMP, ZMUL)]["times"]["both"] == 1.0 and read[(CMP, ZMUL)]["shared"] is False


def test_a_pair_read_as_one_is_a_twin_and_one_read_apart_is_none_whatever_the_witnesses(catalogue, tmp_path):
    model, rec = _probed()
    model.read_apart = {frozenset((p["legacy"], p["wide"])): p["shared"] for p in rec["pairs"]}
    assert apart.twins(model, catalogue) == [("R1", "R3")]
    witnessed = _model()
    assert apart.twins(witnessed, catalogue) == [("R21", "R7")]
    witnessed.read_apart = {frozenset((LEGACY, WIDE)): False}
    assert apart.twins(witnessed, catalogue) == []


def test_the_record_is_kept_and_read_back(tmp_path):
    from ports_fake import model_file
    from cyclebench.instructions.ports import run as ports_run
    path = model_file(tmp_path / "m.jsonl", {MUL: {"R1": 0.5}, CMP: {"R2": 0.5}, ZMUL: {"R3": 1.0}})
    assert apart.stored(path) == ({}, "not measured: the model file has no probe of the resources kept apart")
    _, rec = _probed()
    with ports_run.store(path) as st:
        st.start({}, resume=True)
        st.append(rec)
    read, where = apart.stored(path)
    assert read == {frozenset((MUL, ZMUL)): True, frozenset((CMP, ZMUL)): False}
    assert "2 pairs read side by side, 1 of them one resource" in where


def test_a_pair_far_above_its_sides_sum_read_a_state_switch_and_tells_nothing(catalogue, tmp_path):
    """Zen 3 switches its vector state at each legacy-SSE write after a 256-bit one: every pair read
    338-356 cycles where its sides took 0.5-3.7.  Such a pair is no reading of one resource: the
    witnesses decide, in the probe's record and in a file written before the rule alike."""
    assert apart.verdict({"legacy": 0.5, "wide": 0.5, "both": 338.7}) is None
    assert apart.verdict({"legacy": 0.5, "wide": 0.5, "both": 1.0}) is True
    assert apart.verdict({"legacy": 1.0, "wide": 1.0, "both": 1.29}) is False
    witnessed = _model()
    witnessed.read_apart = {frozenset((LEGACY, WIDE)): None}
    assert apart.twins(witnessed, catalogue) == [("R21", "R7")]
    witnessed = _model(witness=1.0)                  # the witnesses disagree: no twins
    witnessed.read_apart = {frozenset((LEGACY, WIDE)): None}
    assert apart.twins(witnessed, catalogue) == []
    from ports_fake import model_file
    from cyclebench.instructions.ports import run as ports_run
    path = model_file(tmp_path / "m.jsonl", {MUL: {"R1": 0.5}, ZMUL: {"R3": 1.0}})
    old = {"legacy": MUL, "wide": ZMUL, "counts": [1, 1], "times": {"legacy": 0.5, "wide": 0.5, "both": 342.2},
           "shared": True}                         # as the probe kept it before the rule
    with ports_run.store(path) as st:
        st.start({}, resume=True)
        st.append({"type": apart.RECORD, "pairs": [old]})
    read, where = apart.stored(path)
    assert read == {frozenset((MUL, ZMUL)): None} and "1 telling nothing (a state switch)" in where
