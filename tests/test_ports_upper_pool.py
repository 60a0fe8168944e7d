"""Whether the legacy-SSE-beside-ZMM cost takes the vector pipes (cyclebench/instructions/ports/
upper_pool.py): the probe's reading, its record kept and read back, and what the floor then adds.
Facts only: the probe's times are given, as a session would read them."""
from __future__ import annotations

import json

import pytest

from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports import upper_loop, upper_pool
from cyclebench.instructions.ports.predict import load, predict
from ports_fake import model_file, timed

LEGACY_AND_WIDE = tuple(upper_loop.LEGACY + upper_loop.WIDE[:1])


def test_vex_writes_that_add_half_their_time_share_the_pipes():
    assert upper_pool.shares({"vex": 1.0, "legacy and wide": 2.65, "both": 3.5})
    assert not upper_pool.shares({"vex": 1.0, "legacy and wide": 2.65, "both": 2.7})    # hidden: a resource apart


def _session(both):
    s = timed({tuple(upper_pool.VEX): 1.0, LEGACY_AND_WIDE: 2.65, LEGACY_AND_WIDE + tuple(upper_pool.VEX): both})
    s.avx512 = True
    return s


def _model_file(path):
    return model_file(path, {"MOVAPS (XMM, XMM)": {"R0": 0.25}, "VPXORD (ZMM, ZMM, ZMM)": {"R1": 0.5},
                             "VPXOR (XMM, XMM, XMM)": {"R1": 0.25}, "ADD_01 (R64, R64)": {"R1": 0.25}})


def test_the_record_is_kept_read_back_and_adds_the_other_vector_work(tmp_path):
    path = _model_file(tmp_path / "m.jsonl")
    loop = timed({LEGACY_AND_WIDE: 4 * 0.55 + 0.45, tuple(upper_loop.LEGACY + upper_loop.WIDE): 4 * 0.55 + 4 * 0.45})
    loop.avx512 = True
    ports_run.record(path, "upper_loop", loop)
    # 4 legacy writes and 1 ZMM write at the floor's costs; 2 VEX writes and 1 integer add beside them
    block = ("movaps xmm5, xmm2; movaps xmm6, xmm2; movaps xmm7, xmm2; movaps xmm8, xmm2; vpxord zmm9, zmm2, zmm10; "
             "vpxor xmm3, xmm2, xmm10; vpxor xmm4, xmm2, xmm10; add rbx, rcx")
    before = load(path)
    assert before.loop.pool is None and "not measured" in upper_pool.stored(path)[1]
    assert predict(block, before.model, floors=before.bounds).resource_bound == pytest.approx(4 * 0.55 + 0.45)
    rec = ports_run.record(path, "upper_pool", _session(3.5))
    assert rec["shared"] is True and rec["times"]["both"] == 3.5
    assert ports_run.record(path, "upper_pool", None) == json.loads(json.dumps(rec))     # kept, not measured again
    after = load(path)
    assert after.loop.pool == "VPXORD (ZMM, ZMM, ZMM)"
    # the VEX writes add their usage of the ZMM form's pipe; the integer add names no vector register
    assert predict(block, after.model, floors=after.bounds).resource_bound == pytest.approx(4 * 0.55 + 0.45 + 0.5)
    # a block without a legacy write gets no floor, whatever vector work it holds
    assert predict("vpxord zmm9, zmm2, zmm10; vpxor xmm3, xmm2, xmm10", after.model,
                   floors=after.bounds).resource_bound == pytest.approx(0.75)


def test_a_core_whose_merges_take_a_resource_apart_adds_nothing(tmp_path):
    path = _model_file(tmp_path / "m.jsonl")
    assert ports_run.record(path, "upper_pool", _session(2.7))["shared"] is False
    assert upper_pool.stored(path)[0] is False
    bare = _model_file(tmp_path / "bare.jsonl")
    assert ports_run.record(bare, "upper_pool", type("S", (), {"avx512": False})())["shared"] is None
    assert upper_pool.stored(bare) == (False, "no AVX-512 on this CPU")
