"""A form that holds the dispatch (ports/held.py) on a fabricated model: which forms hold it, and
the whole front-end cycles the instructions after each held instance take."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import held
from cyclebench.instructions.ports.model import FRONT_END, Model
from cyclebench.instructions.ports.predict import decode, predict

SEQ = "MPSADBW (XMM, M128, I8)"
# A: four ALUs; V: four vector pipes; the sequenced form is 3.0 alone and holds 2.0 of each
MODEL = Model(["A", "V"],
              {SEQ: {"A": 2.0, "V": 1.0}, "ADD_01 (R64, R64)": {"A": 0.25}, "ANDPS (XMM, XMM)": {"V": 0.25},
               "UCOMISS (XMM, XMM)": {"V": 0.25}, "MOV_89 (R64, R64)": {}},
              6, {SEQ: 3.0, "ADD_01 (R64, R64)": 0.25, "ANDPS (XMM, XMM)": 0.25, "UCOMISS (XMM, XMM)": 0.25,
                  "MOV_89 (R64, R64)": 1 / 6})
LEAD = "mpsadbw xmm1, [r14+0x40], 2; "


def test_only_a_form_slower_alone_than_its_resources_by_a_whole_cycle_holds_the_dispatch():
    assert held.holds(MODEL) == {SEQ: (2.0, 1.0)}
    near = Model(["A"], {"DIVSS (XMM, XMM)": {"A": 2.6, FRONT_END: 0.2}}, 6, {"DIVSS (XMM, XMM)": 3.0})
    assert held.holds(near) == {}


def test_the_instructions_after_a_held_form_take_whole_front_end_cycles():
    seq = {SEQ: (2.0, 1.0)}
    six = [SEQ] + ["x"] * 6
    assert held.bound(six, [1 / 6] * 7, seq, [1] * 7) == pytest.approx(3.0)       # one shared cycle
    assert held.bound(six + ["x"], [1 / 6] * 8, seq, [1] * 8) == pytest.approx(4.0)   # seven: a second
    # a compute and a transfer µop take a slot each: six instructions, one of them two µops
    assert held.bound(six, [1 / 6] * 7, seq, [1, 2, 1, 1, 1, 1, 1]) == pytest.approx(4.0)
    # two held instances: each gap is rounded up on its own (1 and 5 instructions after them)
    two = [SEQ, "x", SEQ] + ["x"] * 5
    assert held.bound(two, [1 / 6] * 8, seq, [1] * 8) == pytest.approx(6.0)
    assert held.bound(["x"] * 7, [1 / 6] * 7, seq, [1] * 7) == 0.0


@pytest.mark.parametrize("k, cycles", [(4, 3.0), (6, 3.0), (7, 4.0), (12, 4.0), (13, 5.0)])
def test_predict_charges_the_held_dispatch(k, cycles):
    block = LEAD + "; ".join(f"mov r{8 + i % 6}, rsi" for i in range(k))
    p = predict(block, MODEL)
    assert p.resource_bound == pytest.approx(cycles)
    assert cycles == 3.0 or p.binding_resource == held.LABEL


def test_an_fp_compare_after_a_held_form_takes_two_slots():
    moves = "; ".join(f"mov r{8 + i}, rsi" for i in range(5))
    assert predict(LEAD + "andps xmm5, xmm6; " + moves, MODEL).resource_bound == pytest.approx(3.0)
    assert predict(LEAD + "ucomiss xmm5, xmm6; " + moves[:-len("; mov r12, rsi")], MODEL).resource_bound \
        == pytest.approx(3.0)
    assert predict(LEAD + "ucomiss xmm5, xmm6; " + moves, MODEL).resource_bound == pytest.approx(4.0)


def test_a_transfer_either_way_takes_a_second_slot():
    ins = decode("ucomiss xmm1, xmm2; cvtsi2ss xmm1, rbx; add rax, [r14+rcx]; lea rax, [r14+rsi+8]; movss [r14], xmm3")
    # dealt: the compare two (compute and flags), the convert its compute, the store its data
    assert held.slots(ins, [2, 1, 0, 0, 1]) == [2, 2, 1, 1, 1]
