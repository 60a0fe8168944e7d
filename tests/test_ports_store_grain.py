"""The span two stores a cycle share (ports/store_grain.py, predict.store_lines), on fabricated
figures: the span read from the probe's times, the record it keeps, and the stores' runs charged
by that span."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import store_grain
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict
from cyclebench.instructions.ports import run as ports_run
from ports_fake import empty_results, timed

# two stores a cycle to one span, one a cycle to two (model.lines over model.alone: k = 2)
STORES = {"MOV (M64, R64)": 0.5, "MOV (M32, R32)": 0.5}
MODEL = Model(["R0"], {f: {"R0": t} for f, t in STORES.items()}, 6, dict(STORES), {f: 1.0 for f in STORES})
HALVES = {"one address": 1.0, "two lines": 2.0, "16": 1.0, "32": 1.0, "64": 2.0}   # Zen 4's reading


def test_the_span_is_the_largest_whose_pair_runs_as_one_address():
    assert store_grain.grain(HALVES) == 32
    assert store_grain.grain({**HALVES, "64": 1.0}) == 64              # pairs anywhere on a line
    assert store_grain.grain({**HALVES, "32": 2.0, "64": 2.0}) == 16
    # no pairing at all: nothing tells spans apart
    assert store_grain.grain({k: 2.0 for k in HALVES}) is None


def test_the_probe_straddles_the_half_of_each_span_and_keeps_its_times(tmp_path):
    blocks = store_grain.blocks()
    assert blocks["32"] == ["mov qword ptr [r14+0x208], rax", "mov qword ptr [r14+0x210], rax"]
    assert blocks["64"] == ["mov qword ptr [r14+0x218], rax", "mov qword ptr [r14+0x220], rax"]
    by_code = {tuple(code): HALVES[k] for k, code in blocks.items()}
    session = timed(by_code)
    path = empty_results(tmp_path / "ports.jsonl")
    assert store_grain.stored(path)[0] == store_grain.LINE              # no probe: the line
    rec = ports_run.record(path, "store_grain", session)
    assert rec["grain"] == 32 and rec["times"]["64"] == 2.0
    assert store_grain.stored(path)[0] == 32                           # the file loads with it
    assert ports_run.record(path, "store_grain", None)["grain"] == 32               # kept, not measured again


@pytest.mark.parametrize("block, line, half", [
    # one 32-byte half: one cycle however the span is drawn
    ("mov [r14+0x240], rax; mov [r14+0x258], rax", 1.0, 1.0),
    # one line, two halves
    ("mov [r14+0x258], rax; mov [r14+0x260], rax", 1.0, 2.0),
    # a gcc -O2 block's stores: 0x260 | 0x218 | 0x258, round the loop 0x258 and 0x260 share a line
    # (runs of 1 and 2 stores: 2 cycles) but no half (three runs: 3 cycles)
    ("mov dword ptr [r14+0x260], r8d; mov [r14+0x218], rax; mov [r14+0x258], rax", 2.0, 3.0),
])
def test_stores_are_charged_by_runs_within_the_span(block, line, half):
    assert predict(block, MODEL).resource_bound == pytest.approx(line)
    assert predict(block, MODEL, grain=store_grain.LINE).resource_bound == pytest.approx(line)
    assert predict(block, MODEL, grain=32).resource_bound == pytest.approx(half)
