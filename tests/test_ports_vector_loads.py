"""Vector loads share one load path in the predictor (cyclebench/instructions/ports/vector_loads.py):
every form that loads a vector operand takes at least a plain vector load's share of the resources
that bound the model's plain vector loads.  Facts only: fabricated models, no timing."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict
from cyclebench.instructions.ports.vector_loads import _views, path, slots, unread, view

PLAIN = "MOVSD (XMM, M64)"
WIDE = "VPMINUW_Z (ZMM, K, ZMM, M512)"
EVEX = "VPUNPCKHBW_Z (YMM, K, YMM, M256)"
BCST = "VORPS_Z (YMM, K, YMM, M32_1to8)"
GPR = "MOV (R64, M64)"


def _model(plain: bool = True) -> Model:
    usage = {EVEX: {"R16": 0.5, "R12": 0.33}, BCST: {"R16": 0.5, "R12": 0.33}, GPR: {"R12": 0.33},
             WIDE: {"R16": 1.0, "R12": 0.71}}
    alone = {EVEX: 0.5, BCST: 0.5, GPR: 0.33, WIDE: 1.0}
    if plain:
        usage[PLAIN], alone[PLAIN] = {"R14": 0.5, "R12": 0.33}, 0.5
    return Model(["R12", "R14", "R16"], usage, 6, alone)


def test_the_load_path_is_what_binds_every_plain_vector_load(catalogue):
    resources, shares, alike = path(_model(), catalogue)
    assert resources == {"R14"} and shares == [(64, 0.5)]
    assert alike == {"R12": 0.33}             # what one plain load takes of the load pipes
    assert path(_model(plain=False), catalogue) == (set(), [], {})


def test_a_load_counts_as_many_plain_loads_as_its_load_pipes_say():
    alike = {"R12": 0.33, "R2": 0.17}
    assert slots({"R12": 0.71, "R2": 0.33}, alike) == 2
    assert slots({"R12": 0.33, "R2": 0.33}, alike) == 1          # the least of the resources
    assert slots({"R16": 0.5}, alike) == 1 and slots({"R16": 0.5}, {}) == 1      # at least one


def test_every_vector_loading_form_takes_the_plain_loads_share(catalogue):
    m = view(_model(), catalogue)
    assert m.usage[EVEX]["R14"] == m.usage[BCST]["R14"] == 0.5      # broadcasts load a vector too
    assert "R14" not in m.usage[GPR]                                  # a GPR load is no vector load
    assert m.usage[EVEX]["R16"] == 0.5                                # its own usages stay
    assert m.usage[WIDE]["R14"] == 1.0                                # a 512-bit load: two
    assert view(m0 := _model(), catalogue) is view(m0, catalogue)     # one view per model object
    plain = _model(plain=False)
    assert view(plain, catalogue) is plain                            # no plain load: no change


def test_predict_adds_the_loads_on_the_shared_path(catalogue):
    # Zen 4, cyclebench asm: 2 vpunpckhbw ymm{k}{z}, ymm, [m256] and 2 movsd xmm, [m64] run 2.00 a
    # copy, each pair alone 1.00; the model's own usages put them on R16 and R14
    block = ("vpunpckhbw ymm1{k1}{z}, ymm2, ymmword ptr [r14+0x40]; vpunpckhbw ymm3{k1}{z}, ymm2, ymmword ptr [r14+0x80]; "
             "movsd xmm4, qword ptr [r14+0xc0]; movsd xmm5, qword ptr [r14+0x100]")
    p = predict(block, _model(), catalogue)
    assert p.resource_bound == pytest.approx(2.0) and p.binding_resource == "R14"
    assert predict(block, _model(plain=False), catalogue).resource_bound == pytest.approx(1.0)
    # 2 vpminuw zmm{k}{z}, zmm, [m512] and 2 movsd: 3.00 a copy (a 512-bit load takes two slots)
    wide = ("vpminuw zmm1{k1}{z}, zmm2, zmmword ptr [r14+0x180]; vpminuw zmm3{k1}{z}, zmm2, zmmword ptr [r14+0x200]; "
            "movsd xmm4, qword ptr [r14+0xc0]; movsd xmm5, qword ptr [r14+0x100]")
    assert predict(wide, _model(), catalogue).resource_bound == pytest.approx(3.0)


def test_a_resource_no_reading_put_beside_the_form_counts_no_slots(catalogue):
    # the plain loads share R12 (the load pipes) and R2, a legacy-SSE probe's resource that a
    # 512-bit form was never mixed with (mixes.py refuses the pair): its nought there is no reading
    usage = {PLAIN: {"R14": 0.5, "R12": 0.33, "R2": 0.25}, WIDE: {"R16": 1.0, "R12": 0.71}}
    model = Model(["R2", "R12", "R14", "R16"], usage, 6, {PLAIN: 0.5, WIDE: 1.0},
                  probes={"R2": "MULSS (XMM, XMM)", "R12": "CMP (M32, R32)", "R14": "XORPS (XMM, M128)"})
    wide = catalogue.by_name[WIDE]
    assert unread(model, wide, catalogue) == {"R2", "R14"}
    assert unread(model, catalogue.by_name[PLAIN], catalogue) == set()    # legacy beside legacy: read
    assert view(model, catalogue).usage[WIDE]["R14"] == 1.0               # two slots, not one
    model.probes["R2"] = "IMUL (R64, R64)"                                # a probe both were mixed with
    _views.clear()
    assert view(model, catalogue).usage[WIDE]["R14"] == 0.5               # its nought counts


def test_a_wide_plain_load_keeps_the_path_it_was_never_read_on(catalogue):
    # the path's probe R14 is legacy-SSE: a 256-bit plain load was never read beside it, and its
    # nought there neither drops the path nor sets the path's share
    ymm = "VMOVUPS (YMM, M256)"
    usage = {PLAIN: {"R14": 0.5, "R12": 0.33}, ymm: {"R12": 0.33}, WIDE: {"R16": 1.0, "R12": 0.71}}
    model = Model(["R12", "R14", "R16"], usage, 6, {PLAIN: 0.5, ymm: 0.5, WIDE: 1.0},
                  probes={"R12": "CMP (M32, R32)", "R14": "XORPS (XMM, M128)"})
    resources, shares, alike = path(model, catalogue)
    assert resources == {"R14"} and shares == [(64, 0.5)] and alike == {"R12": 0.33}
    assert view(model, catalogue).usage[ymm]["R14"] == 0.5


def test_an_operand_no_wider_than_a_plain_load_is_one_load(catalogue):
    # a multi-µop load-op form takes more of the load pipes for its other µops: MPSADBW's 2.0 of a
    # resource a plain load takes 0.33 of is no six loads; its 128-bit operand is no wider than a
    # plain 128-bit load, so it counts one
    many = "MPSADBW (XMM, M128, I8)"
    plain = "MOVAPS (XMM, M128)"
    usage = {plain: {"R14": 0.5, "R12": 0.33}, many: {"R14": 0.0, "R12": 2.0},
             WIDE: {"R16": 1.0, "R12": 0.71}}
    model = Model(["R12", "R14", "R16"], usage, 6, {plain: 0.5, many: 3.0, WIDE: 1.0})
    m = view(model, catalogue)
    assert m.usage[many]["R14"] == 0.5                    # one load, not six
    assert m.usage[WIDE]["R14"] == 1.0                    # wider than every plain load: read, two


def test_a_path_no_plain_load_was_read_on_is_no_path(catalogue):
    # the only plain load is 256-bit and binds on a legacy-SSE probe's resource it was never mixed
    # with: no reading gives a share of that path (a re-solved Zen 4 model had such a load, and
    # the predictor stopped on an empty min())
    ymm = "VMOVUPS (YMM, M256)"
    model = Model(["R12", "R14"], {ymm: {"R14": 0.5, "R12": 0.2}}, 6, {ymm: 0.5},
                  probes={"R12": "CMP (M32, R32)", "R14": "XORPS (XMM, M128)"})
    assert path(model, catalogue) == (set(), [], {})
    assert view(model, catalogue) is model
    assert predict("vmovups ymm1, ymmword ptr [r14+0x40]", model, catalogue).resource_bound == pytest.approx(0.5)


def test_a_share_never_exceeds_the_forms_own_time_alone(catalogue):
    # an Emerald Rapids model's only 512-bit "plain load" was a conversion, 2.0 cycles alone: its
    # share of the path may not make a 0.56-cycle 512-bit FMA or a 0.33-cycle movsd slower alone
    conv, fma = "VCVTNEPS2BF16 (YMM, M512)", "VFMADD213PS (ZMM, K, ZMM, M512)"
    usage = {conv: {"R16": 2.0}, fma: {"R2": 0.5, "R16": 0.24}, PLAIN: {"R12": 0.33}}
    alone = {conv: 2.0, fma: 0.56, PLAIN: 0.33}
    model = Model(["R2", "R12", "R16"], usage, 6, alone)
    model.probes = {"R16": "VPCMPUQ (K, YMM, M64_1to4, I8)"}     # a 256-bit probe: movsd never met it
    m = view(model, catalogue)
    assert m.usage[conv]["R16"] == 2.0
    assert m.usage[fma]["R16"] == pytest.approx(0.56) and m.usage[PLAIN]["R16"] == pytest.approx(0.33)
