"""Crowding usages (ports/crowding.py) on a fabricated model: which usages crowd, and that a block
charges them only where the crowding form's own resource is full."""
from __future__ import annotations

from dataclasses import replace

import pytest

from cyclebench.instructions.ports import crowding
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict

ADD, IMUL, DIV = "ADD (R64, I8)", "IMUL (R64, R64)", "DIV (R64)"


def model() -> Model:
    # four ALUs (ADD's resource), a one-unit multiplier that ADD crowds by 0.16 at saturation,
    # and a slow divider form that holds the multiplier's unit 3 cycles
    return Model(["ALU", "MUL"],
                 {ADD: {"ALU": 0.25, "MUL": 0.16}, IMUL: {"MUL": 1.0}, DIV: {"MUL": 3.0, "ALU": 0.2}},
                 6, {ADD: 0.25, IMUL: 1.0, DIV: 3.0}, probes={"ALU": ADD, "MUL": IMUL})


def test_a_share_of_a_narrower_resource_by_a_faster_form_crowds():
    m = model()
    # the divider's 3 cycles are a whole unit's work, and its ALU share is no faster form's
    assert crowding.crowding(m) == {ADD: {"MUL": 0.16}}
    assert crowding.own(m, ADD) == {"ALU"}
    assert crowding.units(m, "ALU") == 4 and crowding.units(m, "MUL") == 1


def test_crowding_is_relieved_only_below_saturation_of_the_forms_own_resource():
    m = model()
    assert crowding.relieved(m, {"ALU": 0.75, "MUL": 1.0}, 1.0) == {ADD}
    assert crowding.relieved(m, {"ALU": 1.0, "MUL": 1.0}, 1.0) == set()
    assert crowding.uncrowded(m, {ADD}).usage[ADD] == {"ALU": 0.25}
    assert crowding.uncrowded(m, {IMUL}) is m


def test_predict_charges_crowding_where_the_alus_are_full():
    m = model()
    three = "imul rax, rbx; add rcx, 1; add rdx, 1; add rsi, 1"
    four = three + "; add rdi, 1"
    eight = four + "; add r8, 1; add r9, 1; add r10, 1; add r11, 1"
    assert predict(three, m).resource_bound == pytest.approx(1.0)          # ALUs at 0.75: no crowding
    assert predict(four, m).resource_bound == pytest.approx(1.0 + 4 * 0.16)   # full: the mixes' reading
    assert predict(eight, m).resource_bound == pytest.approx(1.0 + 8 * 0.16)


SHL, LEA3 = "SHL (R64, I8)", "LEA_B_I_D8 (R64)"


def nested_model() -> Model:
    # four ALUs and a two-unit shift resource inside them: each shift holds one of each, the ALU
    # forms crowd the shift resource by a quarter and the one-unit multiplier by 0.16
    return Model(["ALU", "SH", "MUL"],
                 {ADD: {"ALU": 0.25, "SH": 0.25, "MUL": 0.16}, SHL: {"ALU": 0.25, "SH": 0.5},
                  LEA3: {"ALU": 0.5, "SH": 0.5}, IMUL: {"MUL": 1.0}},
                 6, {ADD: 0.25, SHL: 0.5, LEA3: 0.5, IMUL: 1.0},
                 probes={"ALU": ADD, "SH": LEA3, "MUL": IMUL})


def test_crowding_of_a_resource_nested_in_the_forms_own_is_never_charged():
    m = nested_model()
    assert crowding.crowding(m) == {ADD: {"SH": 0.25, "MUL": 0.16}}
    # every whole user of SH holds an ALU too; the multiplier's user holds none
    assert crowding.nested(m) == {ADD: {"SH": 0.25}}
    assert crowding.unnested(m).usage[ADD] == {"ALU": 0.25, "MUL": 0.16}
    plain = model()
    assert crowding.nested(plain) == {} and crowding.unnested(plain) is plain


def test_a_whole_user_that_holds_a_twin_of_the_crowding_forms_own_resource_keeps_it_nested():
    # a second view of the shift resource (SH2, a twin apart.view holds as one with SH) whose one
    # user holds a twin of the ALUs (ALU2): as nested as the users of SH itself
    m = nested_model()
    m.resources += ["ALU2"]
    m.usage["OR (R64, I8)"], m.alone["OR (R64, I8)"], m.probes["ALU2"] = {"ALU2": 0.25}, 0.25, "OR (R64, I8)"
    m.usage["SHR (R64, I8)"], m.alone["SHR (R64, I8)"] = {"ALU2": 0.25, "SH": 0.5}, 0.5
    assert crowding.nested(m) == {}                                      # ALU2 is no ALU to it
    assert crowding.nested(replace(m, twins=[("ALU", "ALU2")])) == {ADD: {"SH": 0.25}}


def test_crowding_of_a_resource_no_form_of_the_block_holds_is_dropped():
    m = nested_model()
    assert crowding.unneeded(m, {ADD: 2, SHL: 2}).usage[ADD] == {"ALU": 0.25, "SH": 0.25}
    assert crowding.unneeded(m, {ADD: 2, IMUL: 1}).usage[ADD] == {"ALU": 0.25, "MUL": 0.16}
    assert crowding.unneeded(m, {ADD: 2, IMUL: 1, SHL: 1}) is m
    # two shifts and two adds fill the ALUs and the shift resource, no more
    assert predict("shl rax, 5; shl rbx, 5; add rcx, 1; add rdx, 1", m).resource_bound == pytest.approx(1.0)
    assert predict("imul rax, rbx; add rcx, 1; add rdx, 1; add rsi, 1; add rdi, 1", m).resource_bound \
        == pytest.approx(1.0 + 4 * 0.16)


LOAD = "MOV (R64, M64)"


def test_a_trace_below_a_used_cycle_crowds_like_any_share():
    # an ALU form with 0.04 of the three load units (a trace of its spread the inference left)
    # crowds them like a larger share: charged only where the ALUs are full, not beside one load
    m = Model(["ALU", "LD"], {ADD: {"ALU": 0.25, "LD": 0.04}, LOAD: {"LD": 1 / 3}}, 6,
              {ADD: 0.25, LOAD: 1 / 3}, probes={"ALU": ADD, "LD": LOAD})
    assert crowding.crowding(m) == {ADD: {"LD": 0.04}}
    assert predict("mov rax, [r14]; add rcx, 1", m).resource_bound == pytest.approx(1 / 3)
    alus = "mov rax, [r14]; " + "; ".join(f"add {r}, 1" for r in ("rcx", "rdx", "rsi", "rdi"))
    assert predict(alus, m).resource_bound == pytest.approx(1.0)           # ALUs full at 1.0


def test_a_crowding_usage_the_readings_show_below_saturation_is_never_relieved():
    m = model()
    # two ADD beside the probe: 1.62 cycles, where the slower stream alone takes 1.00 (a hold at
    # any ratio); beside a form that is no probe of the resource, nothing is read of it
    read = [({ADD: 2, IMUL: 1}, 1.62), ({ADD: 4, IMUL: 1}, 2.0), ({ADD: 2, DIV: 1}, 3.5)]
    assert crowding.shown(m, read) == {ADD: {"MUL"}}
    assert crowding.shown(m, read, probes={DIV}) == {}          # only the probes named
    assert crowding.shown(m, [({ADD: 2, IMUL: 1}, 1.0), ({ADD: 4, IMUL: 1}, 1.63)]) == {}   # crowding
    m.firm = crowding.shown(m, read)
    assert crowding.crowding(m) == {ADD: {"MUL": 0.16}}           # still dropped where none holds it
    assert crowding.uncrowded(m, {ADD}).usage[ADD] == {"ALU": 0.25, "MUL": 0.16}
    assert predict("imul rax, rbx; add rcx, 1", m).resource_bound == pytest.approx(1.16)
    assert predict("add rcx, 1; add rdx, 1", m).resource_bound == pytest.approx(0.5)


def test_a_pipes_crowding_binds_only_where_its_group_is_full():
    # a load-op ALU form whose own resource is the load path (three a cycle) crowds the multiplier
    # through its ALU part: the load path full leaves the ALUs room, so the crowding goes
    m = model()
    LOADOP = "ADD (R32, M32)"
    m.resources.append("LOAD")
    m.usage[LOADOP] = {"LOAD": 0.333, "ALU": 0.25, "MUL": 0.22}
    m.alone[LOADOP] = 0.333
    assert crowding.group(m, "MUL") == "ALU"
    assert crowding.own(m, LOADOP) == {"LOAD"}
    assert crowding.relieved(m, {"LOAD": 1.0, "ALU": 0.5, "MUL": 1.0}, 1.0) == {ADD}   # its own is full
    assert crowding.pressed(m, {LOADOP: 3, IMUL: 1}, {"LOAD": 1.0, "ALU": 0.75, "MUL": 1.0}, 1.0) == {LOADOP: ["MUL"]}
    assert crowding.pressed(m, {LOADOP: 3, IMUL: 1}, {"LOAD": 1.0, "ALU": 1.0, "MUL": 1.0}, 1.0) == {}
