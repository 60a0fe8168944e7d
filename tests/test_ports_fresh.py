"""A form's time with its merge input written afresh (ports/fresh.py), on fabricated figures: the
probe's blocks, the record it keeps, which times become floors and the floor a block takes."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.ports import fresh
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.model import Model
from ports_fake import empty_results

CONVERT, ADD, LOAD = "CVTSI2SS (XMM, R64)", "ADDSS (XMM, XMM)", "MOVSD (XMM, M64)"
MODEL = Model(["R0"], {CONVERT: {"R0": 1.08}, ADD: {"R0": 0.25}, LOAD: {"R0": 0.5}}, 6,
              {CONVERT: 1.08, ADD: 0.25, LOAD: 0.5})


def test_each_copy_follows_a_whole_write_of_the_register_it_merges_into():
    code, _ = fresh.block(Catalogue.load().get(CONVERT))
    assert len(code) == 2 * fresh.COPIES
    for move, form in zip(code[::2], code[1::2]):
        reg = move.split()[1].rstrip(",")
        assert move == f"movaps {reg}, xmm15" and form.split()[-2] == f"{reg},"
    assert len({m.split()[1] for m in code[::2]}) == fresh.COPIES          # a register each
    # a form that reads no register it writes has no probe
    assert fresh.block(Catalogue.load().get(LOAD)) is None


def test_the_probe_keeps_a_time_per_merging_form_in_the_results_file(tmp_path):
    seen = []
    session = SimpleNamespace(avx512=True, measure=lambda code, init, per=1: (
        seen.append(code), SimpleNamespace(value=1.26 if "cvtsi2ss" in code[1] else 0.33, modes=(), stable=True))[1])
    path = empty_results(tmp_path / "ports.jsonl", [CONVERT, ADD, LOAD])
    rec = ports_run.record(path, "fresh", session)
    assert rec["times"] == {CONVERT: 1.26, ADD: 0.33}
    n = len(seen)
    assert ports_run.record(path, "fresh", session) == rec and len(seen) == n     # kept, not measured again
    floor, _ = fresh.stored(path, MODEL)
    assert floor.times == {CONVERT: 1.26}


@pytest.mark.parametrize("times, kept", [
    ({CONVERT: 1.26}, {CONVERT: 1.26}),          # slower than alone: a floor
    ({CONVERT: 1.10}, {}),                       # within OVER of its time alone
    ({ADD: 0.33}, {}),                           # the probe's two instructions' front-end share
    ({"NOT IN THE MODEL": 2.0}, {}),
])
def test_a_fresh_time_is_a_floor_only_above_the_form_alone_and_the_front_end(times, kept):
    assert fresh.floors(times, MODEL) == kept


def test_the_floor_charges_each_copy_its_fresh_time():
    v, why = fresh.FreshFloor({CONVERT: 1.26}).floor({CONVERT: 2, ADD: 3})
    assert v == pytest.approx(2.52) and "fresh" in why
    assert fresh.FreshFloor({CONVERT: 1.26}).floor({ADD: 3})[0] == 0.0
