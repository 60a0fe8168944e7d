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


def test_predict_adds_both_sides_on_the_one_resource(catalogue):
    # Zen 4, cyclebench asm: addpd xmm1; ...; vcvttps2dq zmm1{k1}{z}, [m512]; cvtsi2sd xmm1, [m]
    # runs 3.00 cycles, the two legacy writes doubled under the ZMM write and the conversion adding
    # up on the FP23 pipes; here an addpd and the conversion, with no upper-state factor
    block = "addpd xmm1, xmm2; vcvttps2dq zmm3{k1}{z}, zmmword ptr [r14+0x40]"
    p = predict(block, _model(), catalogue)
    assert p.resource_bound == pytest.approx(1.5) and p.binding_resource in ("R7", "R21")
