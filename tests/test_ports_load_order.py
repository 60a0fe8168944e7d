"""A 512-bit load beside narrower vector loads (ports/load_order.py): what the probe's times say,
the record it keeps, and the floor the predictor takes from it.  Facts only: fabricated models
and times (Zen 4's readings), no timing."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cyclebench.instructions.ports import load_order
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict
from cyclebench.instructions.ports.run import store
from cyclebench.instructions.ports.vector_loads import view
from cyclebench.instructions.ports import run as ports_run

PLAIN = "MOVSD (XMM, M64)"
WIDE = "VPMINUW_Z (ZMM, K, ZMM, M512)"
BCST = "VORPS_Z (YMM, K, YMM, M32_1to8)"
GPR = "MOV (R64, M64)"
ZEN4 = {"wide": 1.0, "wide and one": 2.0, "wide and two": 2.04}


def _model(plain: bool = True) -> Model:
    # two plain vector loads a cycle on R14 (vector_loads.path), a 512-bit load-op form beside them
    usage = {WIDE: {"R16": 1.0, "R14": 1.0}, BCST: {"R16": 0.5}, GPR: {"R12": 0.33}}
    alone = {WIDE: 1.0, BCST: 0.5, GPR: 0.33}
    if plain:
        usage[PLAIN], alone[PLAIN] = {"R14": 0.5, "R12": 0.33}, 0.5
    return Model(["R12", "R14", "R16"], usage, 6, alone)


def test_the_probe_tells_a_cycle_to_itself_from_a_shared_one():
    assert load_order.alone_in_cycle(ZEN4)
    # a core that pairs a narrow load with the 512-bit one: the one costs half the two
    assert not load_order.alone_in_cycle({"wide": 0.5, "wide and one": 1.0, "wide and two": 1.5})
    assert not load_order.alone_in_cycle({"wide": 1.0, "wide and one": 1.0, "wide and two": 1.0})


def test_runs_of_narrow_loads_between_512_bit_ones_take_whole_cycles(catalogue):
    # Zen 4, cyclebench asm: the 512-bit conversion with 1 narrow load 2.00 cycles, with 3 3.00;
    # two of each 3.00 grouped and 4.00 alternating
    m = view(_model(), catalogue)
    assert load_order.in_order([WIDE, PLAIN], m, catalogue) == 2
    assert load_order.in_order([WIDE, PLAIN, BCST, PLAIN], m, catalogue) == 3     # a broadcast is a narrow load
    assert load_order.in_order([WIDE, WIDE, PLAIN, PLAIN], m, catalogue) == 3
    assert load_order.in_order([WIDE, PLAIN, WIDE, PLAIN], m, catalogue) == 4
    assert load_order.in_order([PLAIN, WIDE, GPR, PLAIN], m, catalogue) == 2      # round the loop; a GPR load is apart
    assert load_order.in_order([PLAIN, BCST, PLAIN], m, catalogue) == 0           # no 512-bit load: no floor
    plain = _model(plain=False)
    assert load_order.in_order([WIDE, BCST], view(plain, catalogue), catalogue) == 0    # no load path known


def test_the_record_is_kept_and_the_predictor_takes_the_floor_only_with_it(tmp_path, catalogue):
    codes = {"wide": [load_order.WIDE], "wide and one": [load_order.WIDE] + load_order.NARROW[:1],
             "wide and two": [load_order.WIDE] + load_order.NARROW}
    by_code = {tuple(c): ZEN4[k] for k, c in codes.items()}
    session = SimpleNamespace(avx512=True, measure=lambda code, init: SimpleNamespace(value=by_code[tuple(code)]))
    path = tmp_path / "ports.jsonl"
    st = store(path)
    st.start({"forms": []}, resume=False)
    st.close()
    assert load_order.stored(path)[0] is False                  # no probe: no floor
    assert ports_run.record(path, "load_order", session)["whole"] is True
    assert load_order.stored(path)[0] is True
    assert ports_run.record(path, "load_order", None)["times"]["wide and one"] == 2.0    # kept, not measured again
    block = ("vpminuw zmm1{k1}{z}, zmm2, zmmword ptr [r14+0x180]; movsd xmm4, qword ptr [r14+0xc0]; "
             "vpminuw zmm3{k1}{z}, zmm2, zmmword ptr [r14+0x200]; movsd xmm5, qword ptr [r14+0x100]")
    assert predict(block, _model(), catalogue).resource_bound == pytest.approx(3.0)       # the shares
    p = predict(block, _model(), catalogue, in_order=True)
    assert p.resource_bound == pytest.approx(4.0) and p.binding_resource == load_order.LABEL
    none = SimpleNamespace(avx512=False)
    assert load_order.probe(none)["whole"] is None
