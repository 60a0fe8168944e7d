"""Forms that take two front-end slots, read from the inference's mixes (ports/slots.py), on a
fabricated model and readings: the slots the readings show, a reading faster than them vetoes
them, one reading is not enough, a form's own stream explains nothing, NOPs that bypass the front
end take none of it, and the predictor charges the slots."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports.model import FRONT_END, Model
from cyclebench.instructions.ports.predict import predict
from cyclebench.instructions.ports.slots import bypasses, front_slots, share

LEA, VEC, LOGIC, MOVE, NOP = "LEA_B_IS_D8 (R64)", "VPCMPEQD (YMM, YMM, YMM)", "ANDPS (XMM, XMM)", \
    "MOV_89 (R64, R64)", "NOP (M32)"
TOL = 0.10


def _model():
    # R0: four ALUs (the lea two of them), R1: four vector pipes; a 6-wide front end
    return Model(["R0", "R1"], {LEA: {"R0": 0.5}, VEC: {"R1": 0.25}, LOGIC: {"R1": 0.25}, MOVE: {}, NOP: {}},
                 6, alone={LEA: 0.5, VEC: 0.25, LOGIC: 0.25, MOVE: 1 / 6, NOP: 0.1})


# the lea beside two vector operations: (2 + 2) / 6 cycles, where neither stream takes more than 0.5
TWO = [({LEA: 1, VEC: 2}, 2 / 3), ({LEA: 1, LOGIC: 2}, 2 / 3), ({LEA: 1, VEC: 4}, 1.0)]


def test_readings_the_front_end_binds_give_a_form_two_slots():
    m = _model()
    notes = front_slots(m, TWO, TOL)
    assert m.usage[LEA][FRONT_END] == pytest.approx(2 / 6)
    assert FRONT_END not in m.usage[VEC] and len(notes) == 1 and "2 slots" in notes[0]


def test_a_reading_faster_than_the_slots_allow_vetoes_them():
    m = _model()
    front_slots(m, TWO + [({LEA: 1, VEC: 4}, 0.84)], TOL)   # one slot: 5 / 6; two: 1.0
    assert FRONT_END not in m.usage[LEA]


def test_one_reading_is_not_enough():
    m = _model()
    front_slots(m, TWO[:1], TOL)
    assert FRONT_END not in m.usage[LEA]


def test_a_reading_one_stream_explains_shows_nothing():
    # the lea's own stream takes 1.0 with two of them: no evidence of a slot
    m = _model()
    front_slots(m, [({LEA: 2, VEC: 2}, 1.0), ({LEA: 2, LOGIC: 2}, 1.0)], TOL)
    assert FRONT_END not in m.usage[LEA]


def test_a_form_that_bypasses_the_front_end_takes_none_of_it():
    m = _model()
    assert bypasses(m, NOP) and share(m, NOP) == 0.0 and share(m, LEA) == pytest.approx(1 / 6)
    # five NOPs and a lea in 0.5: with the NOPs charged, even one slot would be too slow
    front_slots(m, TWO + [({LEA: 1, NOP: 5}, 0.5)], TOL)
    assert m.usage[LEA][FRONT_END] == pytest.approx(2 / 6)


def test_the_predictor_charges_the_slots():
    m = _model()
    block = "mov r8, rdx; lea rax, [rsi+rdi*8-0x1]; mov rdx, rsi"
    assert predict(block, m).resource_bound == pytest.approx(0.5)
    front_slots(m, TWO, TOL)
    p = predict(block, m)
    assert p.resource_bound == pytest.approx(4 / 6) and p.binding_resource == FRONT_END
