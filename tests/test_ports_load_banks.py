"""Loads of one 8-byte L1 bank (ports/load_banks.py), on fabricated and recorded figures: what the
probe's times say, the block's busiest bank, and the floor the predictor takes from the record."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from cyclebench.instructions.ports import load_banks, predict
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.naming import decode
from ports_fake import empty_results

# an Emerald Rapids core's times (docs/ports-findings.md, "Loads of one bank, two a cycle")
EMR = {"one address": 3.024, "banks": 2.001, "lines": 3.023}
# a core whose loads share only an address (made up), and one with no limit of their own (made up)
ADDRESS = {"one address": 3.02, "banks": 2.0, "lines": 2.01}
NONE = {"one address": 2.04, "banks": 2.0, "lines": 2.02}


def test_the_times_give_the_loads_a_bank_serves_and_what_they_share():
    assert load_banks.served(EMR) == (2, "bank")
    assert load_banks.served(ADDRESS) == (2, "address")
    assert load_banks.served(NONE) == (None, None)


def _six(offsets, ins="mov r{k}, qword ptr"):
    return "; ".join(f"{ins.format(k=8 + k)} [r14+{o:#x}]" for k, o in enumerate(offsets))


@pytest.mark.parametrize("block, by, most", [
    (_six([0x40] * 6), "bank", 6),
    (_six([0x40 + 8 * k for k in range(6)]), "bank", 1),
    (_six([0x40 + 0x40 * k for k in range(6)]), "bank", 6),          # six lines, one bank
    (_six([0x40, 0x60, 0xa0] * 2), "bank", 4),                       # banks 0, 4, 4
    (_six([0x40, 0x60] * 3, "vmovups ymm{k},"), "bank", 3),          # banks 0-3 and 4-7 in turn
    (_six([0x40, 0x148] * 3, "vmovups ymm{k},"), "bank", 6),         # banks 0-3 and 1-4: 1-3 in all
    (_six([0x40 + 0x40 * k for k in range(6)]), "address", 1),
    ("add qword ptr [r14+0x40], rax; mov rbx, qword ptr [r14+0x80]", "bank", 2),   # a read-modify-write reads
    ("mov qword ptr [r14+0x40], rax; mov qword ptr [r14+0x80], rbx", "bank", 0),   # stores read nothing
])
def test_the_busiest_bank(block, by, most):
    assert load_banks.busiest(decode(block), False, by) == most


def test_reads_through_different_registers_meet_only_where_the_start_state_puts_them():
    ins = decode("mov rax, qword ptr [rdi+0x8]; mov rbx, qword ptr [rsi+0x8]; mov rcx, qword ptr [rdx+0x10]")
    assert load_banks.busiest(ins, False) == 1      # registers unknown: each expression on its own
    assert load_banks.busiest(ins, True) == 2       # all registers equal: rdi+8 and rsi+8 one bank


def test_the_probe_record_and_the_floor_it_gives(tmp_path):
    blocks = load_banks.blocks()
    session = SimpleNamespace(measure=lambda code, init, per=1: SimpleNamespace(
        value=EMR[next(k for k, c in blocks.items() if c == code)], modes=(), stable=True))
    path = empty_results(tmp_path / "ports.jsonl", [])
    rec = ports_run.record(path, "load_banks", session)
    assert (rec["per"], rec["by"], rec["times"]) == (2, "bank", EMR)
    bound, why = load_banks.stored(path)
    assert "2 loads a cycle of one 8-byte bank" in why and "3.024" in why
    v, label = bound.floor_of(decode(_six([0x40] * 6)), {})
    assert v == pytest.approx(3.0) and label == load_banks.LABEL
    assert bound.floor_of(decode("add rax, rbx"), {}) == (0.0, None)
    assert ports_run._check({"type": "load_banks", "per": 2, "by": "line", "times": {}}) is not None
    assert ports_run._check({"type": "load_banks", "per": None, "by": None, "times": NONE}) is None


def test_no_floor_without_a_limit_or_a_record(tmp_path):
    assert load_banks.stored(empty_results(tmp_path / "none.jsonl", []))[0] is None
    path = empty_results(tmp_path / "zen.jsonl", [])
    with open(path, "a") as f:
        f.write(json.dumps({"type": "load_banks", "per": None, "by": None, "times": NONE}) + "\n")
    bound, why = load_banks.stored(path)
    assert bound is None and "no limit of their own" in why


def test_the_predictor_takes_the_busiest_bank_as_a_bound(tmp_path):
    path = tmp_path / "ports.jsonl"
    source = Path(__file__).parent.parent / "bench" / "data" / "emr" / "ports.jsonl"
    path.write_text("".join(line for line in source.open() if '"type":"load_banks"' not in line.replace(" ", "")))
    block = _six([0x40] * 6)
    before = predict.load(path)
    with open(path, "a") as f:      # one load a cycle a bank (made up): above what the model says
        f.write(json.dumps({"type": "load_banks", "per": 1, "by": "bank", "times": EMR}) + "\n")
    loaded = predict.load(path)
    assert before.banks is None and loaded.banks is not None and loaded.banks in loaded.bounds
    p = predict.predict(block, loaded.model, floors=loaded.bounds)
    assert p.cycles == pytest.approx(6.0) and p.binding_resource == load_banks.LABEL
    spread = predict.predict(_six([0x40 + 8 * k for k in range(6)]), loaded.model, floors=loaded.bounds)
    assert spread.binding_resource != load_banks.LABEL
