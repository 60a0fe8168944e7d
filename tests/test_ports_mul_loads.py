"""A one-pipe load-op form beside plain GPR loads (ports/mul_loads.py): which forms are which by
operand shape, what the probe's times say, the record it keeps, the cap and the floor the
predictor takes from it.  Facts only: fabricated models and times (Zen 4's readings), no timing."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import crowding, mul_loads
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict
from cyclebench.instructions.ports import run as ports_run
from ports_fake import empty_results, timed

MUL = "IMUL (R64, M64, I32)"
LOAD = "MOV (R64, M64)"
ALU = "ADD (R64, M64)"
CVT = "CVTTSD2SI (R32, M64)"
ZEN4 = {"mul": 1.0, "loads": 0.667, "mul and loads": 1.509}


def _model() -> Model:
    # the load probe's resource R15: a plain load 0.33, the multiply 0.64 (its probe's ALU crowding)
    usage = {MUL: {"R5": 1.0, "R15": 0.64, "R19": 1.0}, LOAD: {"R15": 0.33, "R14": 0.25, "R5": 0.0, "R19": 0.0},
             "MOVSXD (R64, M32)": {"R15": 0.33, "R5": 0.22},
             ALU: {"R15": 0.33, "R2": 0.25}, CVT: {"R15": 0.33, "R16": 1.0}}
    alone = {MUL: 1.0, LOAD: 0.33, ALU: 0.33, CVT: 1.0, "MOVSXD (R64, M32)": 0.33}
    return Model(["R2", "R5", "R14", "R15", "R16", "R19"], usage, 6, alone)


def test_forms_by_operand_shape(catalogue):
    plains, ones = mul_loads.kinds(_model(), catalogue)
    assert plains == {LOAD, "MOVSXD (R64, M32)"}                       # a conversion from a vector-sized memory operand is no plain load
    assert ones == {MUL}                          # a load-op ALU form goes several a cycle: not one pipe
    assert mul_loads.plain(catalogue.get("MOVZX (R32, M8)"))


def test_the_probe_tells_shared_pipes_from_none():
    assert mul_loads.pipes(ZEN4) == 2
    assert mul_loads.pipes({"mul": 1.0, "loads": 0.667, "mul and loads": 1.0}) is None   # three pipes: no meeting


def test_the_cap_leaves_a_one_pipe_form_a_plain_loads_share(catalogue):
    m = mul_loads.capped(_model(), catalogue)
    # only the resources every plain load takes: one plain load's share of the multiplier is none
    assert m.usage[MUL] == {"R5": 1.0, "R15": 0.33, "R19": 1.0}
    assert m.usage[ALU] == _model().usage[ALU]


def test_the_record_is_kept_and_the_floor_comes_only_with_it(tmp_path, catalogue):
    codes = {"mul": [mul_loads.MUL], "loads": mul_loads.LOADS, "mul and loads": [mul_loads.MUL] + mul_loads.LOADS}
    by_code = {tuple(c): ZEN4[k] for k, c in codes.items()}
    session = timed(by_code)
    path = empty_results(tmp_path / "ports.jsonl")
    assert mul_loads.stored(path)[0] is None
    assert ports_run.record(path, "mul_loads", session)["pipes"] == 2
    assert mul_loads.stored(path)[0] == 2
    assert ports_run.record(path, "mul_loads", None)["times"]["mul and loads"] == 1.509    # kept, not measured again
    model = mul_loads.capped(_model(), catalogue)
    floor = mul_loads.LoadFloor(2, *map(frozenset, mul_loads.kinds(model, catalogue)))
    assert floor.floor({MUL: 1, LOAD: 2}) == (1.5, mul_loads.LABEL)
    assert floor.floor({MUL: 1, LOAD: 6})[0] == 1.5          # at most the probe's two loads with each
    assert floor.floor({MUL: 1, ALU: 2})[0] == 0.0           # load-op ALU forms do not meet it
    block = "mov rdx, qword ptr [r14+0x228]; mov rsi, qword ptr [r14+0x370]; imul rdx, qword ptr [r14+0x390], 0x12345"
    p = predict(block, model, catalogue, floors=[floor])
    assert p.resource_bound == pytest.approx(1.5) and p.binding_resource == mul_loads.LABEL


def test_the_cap_leaves_a_one_pipe_form_its_register_probes_share_of_the_pipes_group(catalogue):
    # R2: four ALUs whose forms crowd the multiplier R5 (0.13 each); the load-op multiply's 0.5 of
    # R2 was read beside them where R2 was full: the crowding again, so it takes the register
    # probe's share (none)
    m = _model()
    m.usage[MUL]["R2"] = 0.5
    m.usage["SUB_29 (R64, R64)"] = {"R2": 0.25, "R5": 0.13}
    m.usage["IMUL (R64, R64)"] = {"R5": 1.0}
    m.alone.update({"SUB_29 (R64, R64)": 0.25, "IMUL (R64, R64)": 1.0})
    m.probes = {"R2": "SUB_29 (R64, R64)", "R5": "IMUL (R64, R64)", "R15": LOAD}
    m.resources = sorted(set(m.resources) | {"R2"})
    assert crowding.group(m, "R5", {"R15"}) == "R2"       # the load path is no pipe group
    capped = mul_loads.capped(m, catalogue)
    assert "R2" not in capped.usage[MUL] or capped.usage[MUL]["R2"] == 0.0
    assert capped.usage[MUL]["R5"] == 1.0 and capped.usage[MUL]["R19"] == 1.0   # a meeting of its own stays


def test_the_cap_leaves_a_one_pipe_form_one_plain_vector_loads_share_of_the_vector_path(catalogue):
    # R17: the vector-load path, half a cycle a plain vector load; the multiply's 1.00 there was
    # read beside the path's probe, two loads' worth: its one load is one load on the path too
    m = _model()
    vector = "MOVSD (XMM, M64)"
    m.usage[vector] = {"R17": 0.5}
    m.alone[vector] = 0.5
    m.usage[MUL]["R17"] = 1.0
    m.resources = sorted(set(m.resources) | {"R17"})
    capped = mul_loads.capped(m, catalogue)
    assert capped.usage[MUL]["R17"] == pytest.approx(0.5)
    assert capped.usage[MUL]["R15"] == pytest.approx(0.33) and capped.usage[vector] == {"R17": 0.5}
    del m.usage[vector], m.alone[vector]                 # no plain vector load: no path, no cap there
    assert mul_loads.capped(m, catalogue).usage[MUL]["R17"] == 1.0
