"""Legacy-SSE writes beside ZMM writes in the loop (cyclebench/instructions/ports/upper_loop.py):
the probe's arithmetic, its record kept and read back, and which blocks the floor charges.
Facts only: the probe's times are given, as a session would read them."""
from __future__ import annotations

import json

import pytest

from cyclebench.instructions.ports import upper_loop
from cyclebench.instructions.ports.predict import decode, load, predict
from cyclebench.instructions.ports import run as ports_run
from ports_fake import model_file


def test_the_two_costs_solve_the_probes_two_blocks():
    # 4 legacy writes beside 1 ZMM write: 4 L + Z = 2.6; beside 4: 4 L + 4 Z = 4.1
    legacy, wide = upper_loop.costs(2.6, 4.1)
    assert wide == pytest.approx(0.5) and legacy == pytest.approx(0.525)
    assert upper_loop.costs(1.0, 0.9) == (pytest.approx(0.25), 0.0)     # never a negative cost


def test_the_floor_counts_legacy_writes_and_low_zmm_writes_only_together():
    f = upper_loop.LoopFloor(0.5, 0.5)
    got = f.floor_of(decode("movaps xmm5, xmm2; movaps xmm6, xmm2; vpxord zmm9, zmm2, zmm10"))
    assert got[0] == pytest.approx(1.5)
    # a ZMM register 16-31 dirties nothing; a VEX write is no legacy write; a store writes no ZMM register
    assert f.floor_of(decode("movaps xmm5, xmm2; vpxord zmm19, zmm20, zmm21"))[0] == 0.0
    assert f.floor_of(decode("vpxor xmm5, xmm2, xmm3; vpxord zmm9, zmm2, zmm10"))[0] == 0.0
    assert f.floor_of(decode("movaps xmm5, xmm2; vmovdqu64 zmmword ptr [r14], zmm1"))[0] == pytest.approx(0.5)


class _Fake:
    def __init__(self, avx512=True):
        self.avx512, self.calls = avx512, 0

    def measure(self, code, init):
        self.calls += 1
        wide = sum(1 for line in code if "zmm" in line)
        return type("M", (), {"value": 4 * 0.55 + wide * 0.45})()


def _model_file(path):
    return model_file(path, {"MOVAPS (XMM, XMM)": {"R0": 0.25}, "VPXORD (ZMM, ZMM, ZMM)": {"R1": 0.5}})


def test_the_record_is_kept_once_read_back_and_absent_keeps_todays_prediction(tmp_path):
    path = _model_file(tmp_path / "m.jsonl")
    block = "movaps xmm5, xmm2; movaps xmm6, xmm2; movaps xmm7, xmm2; movaps xmm8, xmm2; vpxord zmm9, zmm2, zmm10"
    before = load(path)
    assert before.loop is None and "not measured" in before.loop_source
    assert predict(block, before.model, floors=before.bounds).resource_bound == pytest.approx(5 / 6)  # front end
    s = _Fake()
    rec = ports_run.record(path, "upper_loop", s)
    assert rec["legacy"] == pytest.approx(0.55) and rec["wide"] == pytest.approx(0.45) and s.calls == 2
    assert ports_run.record(path, "upper_loop", s) == json.loads(json.dumps(rec)) and s.calls == 2   # not measured again
    after = load(path)
    assert after.loop == upper_loop.LoopFloor(0.55, 0.45)
    assert predict(block, after.model, floors=after.bounds).resource_bound == pytest.approx(4 * 0.55 + 0.45)
    bare = _model_file(tmp_path / "bare.jsonl")
    assert ports_run.record(bare, "upper_loop", _Fake(avx512=False))["legacy"] is None
    assert load(bare).loop is None and "AVX-512" in load(bare).loop_source


def test_show_prints_the_floor_or_its_absence(tmp_path, capsys):
    from cyclebench.cli.main import main
    path = _model_file(tmp_path / "m.jsonl")
    assert main(["ports", "--show", str(path)]) == 0
    assert "legacy-SSE beside ZMM writes in the loop: no floor (not measured" in capsys.readouterr().out
    ports_run.record(path, "upper_loop", _Fake())
    assert main(["ports", "--show", str(path)]) == 0
    assert "at least 0.55 cycles a legacy write and 0.45 a ZMM write" in capsys.readouterr().out
