"""A legacy-SSE write after a 256-bit write (ports/transition.py), on fabricated figures: which
writes of a block switch the state, the record the probe keeps, and the floor a block then takes."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports import transition
from cyclebench.instructions.ports.naming import decode
from ports_fake import empty_results


@pytest.mark.parametrize("block, n", [
    ("vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2", 1),                     # another register: still a switch
    ("vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2; paddb xmm5, xmm2", 1),   # the first after it only
    ("vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2; vpaddd xmm6, xmm2, xmm3; paddb xmm5, xmm2", 1),  # a VEX XMM write: none
    ("vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2; vpaddd ymm6, ymm2, ymm3; paddb xmm5, xmm2", 2),
    ("paddb xmm1, xmm2; vbroadcasti128 ymm1, [r14+0x40]", 1),           # the loop wraps round
    ("vpaddd ymm1, ymm2, ymm3; vzeroupper; paddb xmm4, xmm2", 0),
    ("vpaddd ymm1, ymm2, ymm3; movaps [r14+0x40], xmm5", 0),            # a legacy store writes no XMM register
    ("vpaddd xmm1, xmm2, xmm3; paddb xmm4, xmm2", 0),
    ("vextracti128 xmm1, ymm2, 1; paddb xmm4, xmm2", 0),                # reads a YMM register, writes none
    ("vpaddd ymm17, ymm2, ymm3; paddb xmm4, xmm2", 0),                  # beyond a legacy form's registers
])
def test_the_switches_an_iteration(block, n):
    assert transition.switches(decode(block)) == n


def fake(times):
    return SimpleNamespace(measure=lambda code, init, per=1: SimpleNamespace(
        value=times["dirty" if "ymm1" in code[0] else "clean"], modes=(), stable=True))


def test_the_probe_keeps_a_switch_and_the_floor_charges_it_each_time(tmp_path):
    path = empty_results(tmp_path / "ports.jsonl", [])
    rec = ports_run.record(path, "transition", fake({"clean": 1.0, "dirty": 336.4}))
    assert rec["cycles"] == pytest.approx(335.4) and rec["times"] == {"clean": 1.0, "dirty": 336.4}
    bound, why = transition.stored(path)
    assert "336.40 cycles" in why
    v, label = bound.floor_of(decode("vpaddd ymm1, ymm2, ymm3; paddb xmm4, xmm2; vpaddd ymm6, ymm2, ymm3; "
                                     "paddb xmm5, xmm2"), {})
    assert v == pytest.approx(2 * 335.4) and "transition" in label
    assert bound.floor_of(decode("vpaddd xmm1, xmm2, xmm3; paddb xmm4, xmm2"), {}) == (0.0, None)


def test_a_core_that_merges_the_kept_bits_has_no_switch(tmp_path):
    # Zen 4 merges the kept bits at a pipe's cost (upper.py): a cycle or two, no transition
    path = empty_results(tmp_path / "ports.jsonl", [])
    rec = ports_run.record(path, "transition", fake({"clean": 1.0, "dirty": 1.5}))
    assert rec["cycles"] is None and "no state switch" in rec["why"]
    assert transition.stored(path)[0] is None


def test_a_core_without_avx_is_said_to_have_none(tmp_path, monkeypatch):
    import cyclebench.machine.features as features
    monkeypatch.setattr(features, "this_cpu", lambda: SimpleNamespace(has=lambda f: False))
    rec = transition.probe(fake({"clean": 1.0, "dirty": 336.4}))
    assert rec == {"type": "transition", "cycles": None, "why": "no AVX on this CPU"}
