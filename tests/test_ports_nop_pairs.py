"""What a NOP shares with the instruction before it (ports/nop_pairs.py), on fabricated figures:
the probe's reading of its times, the record it keeps, and the front-end slots predict() charges."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import nop_pairs
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.model import FRONT_END, Model
from cyclebench.instructions.ports.predict import decode, predict
from ports_fake import empty_results, timed

NOP, CMP, MOV, PXOR = "NOP (M16)", "CMP (R64, M64)", "MOV_89 (R64, R64)", "PXOR (XMM, XMM)"
# Zen 4's reading: six slots 1.00 cycle, a NOP with a slot of its own 1.17
ZEN4 = {"integer": 1.0, "vector": 1.0, "vector and nop": 1.167, "11": 1.0, "14": 1.0, "15": 1.0, "16": 1.167}
FILL = "; ".join(f"mov {r}, r9" for r in ("r8", "r10", "r11", "r12", "r13"))


def _model() -> Model:
    # the NOP runs alone faster than the six-wide front end passes it and uses nothing: it bypasses
    alone = {NOP: 0.1, CMP: 0.5, MOV: 1 / 6, PXOR: 0.25}
    return Model(["R0"], {NOP: {}, CMP: {"R0": 0.5}, MOV: {}, PXOR: {"R0": 0.25}}, 6, alone)


def test_the_longest_shared_pair_and_the_vector_rule_are_read_from_the_times():
    assert nop_pairs.read(ZEN4) == {"bytes": 15, "vector": True}
    assert nop_pairs.read({**ZEN4, "14": 1.167, "15": 1.167}) == {"bytes": 11, "vector": True}
    assert nop_pairs.read({**ZEN4, "11": 1.167}) == {"bytes": 0, "vector": True}       # never shared
    # a NOP that never takes a slot, as a core whose front end passes it beside anything
    assert nop_pairs.read({k: 1.0 for k in ZEN4}) == {"bytes": 16, "vector": False}
    # a longer pair that shares after a shorter that did not is no limit of the length
    assert nop_pairs.read({**ZEN4, "14": 1.167})["bytes"] == 11


def test_the_probe_pairs_nops_of_known_lengths_and_its_record_loads(tmp_path):
    blocks = nop_pairs.blocks()
    for total in nop_pairs.NOPS:
        first, nop = decode("; ".join(blocks[str(total)][:2]))
        assert first.len + nop.len == total
    path = empty_results(tmp_path / "ports.jsonl")
    assert nop_pairs.stored(path)[0] is None                            # no probe: as before
    rec = ports_run.record(path, "nop_pairs", timed({tuple(code): ZEN4[k] for k, code in blocks.items()}))
    assert (rec["bytes"], rec["vector"], rec["times"]["16"]) == (15, True, 1.167)
    assert nop_pairs.stored(path)[0] == nop_pairs.NopPairs(15, True)
    assert ports_run._check({**rec, "bytes": "15"}) is not None          # a hand-edited record is refused
    assert ports_run._check({**rec, "vector": 1}) is not None
    with open(path, "a") as f:                                         # a record with no figure loads as none
        f.write('{"type": "nop_pairs", "bytes": null, "why": "no filler"}\n')
    assert nop_pairs.stored(path) == (None, "no filler")


@pytest.mark.parametrize("before, slot", [
    ("cmp rbx, qword ptr [r14+0x40]", False),      # 4 + 9 bytes
    ("cmp rbx, qword ptr [r14+0x80]", True),       # 7 + 9 bytes
    ("pxor xmm1, xmm2", True),                     # a vector instruction
])
def test_a_nop_takes_a_slot_where_the_probe_read_one(catalogue, before, slot):
    block = f"{before}; nop word ptr [r14+0xc0]; {FILL}"
    plain = predict(block, _model(), catalogue)
    assert plain.resource_bound == pytest.approx(1.0)                   # six slots: the NOP bypasses
    p = predict(block, _model(), catalogue, nops=nop_pairs.NopPairs(15, True))
    assert p.resource_bound == pytest.approx(7 / 6 if slot else 1.0)
    assert (p.binding_resource == FRONT_END) or not slot
    # where the probe read no vector rule, a short pair after a vector instruction shares
    q = predict(block, _model(), catalogue, nops=nop_pairs.NopPairs(15, False))
    assert q.resource_bound == pytest.approx(7 / 6 if slot and "pxor" not in before else 1.0)


def test_the_nop_first_in_the_block_pairs_with_the_last_instruction(catalogue):
    # the loop wraps round: the NOP follows the vector instruction of the iteration before
    block = f"nop word ptr [r14+0xc0]; {FILL}; pxor xmm1, xmm2"
    assert predict(block, _model(), catalogue, nops=nop_pairs.NopPairs(15, True)).resource_bound \
        == pytest.approx(7 / 6)
