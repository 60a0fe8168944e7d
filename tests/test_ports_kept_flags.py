"""The flags the ISA leaves undefined that a form passes on (ports/kept_flags.py), on fabricated
figures: the probe's blocks, its reading of their times, the record it keeps, and the chain bound
that takes such a form as no writer of those flags."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import kept_flags
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.dataflow import chain_bound
from cyclebench.instructions.ports.predict import decode
from ports_fake import empty_results, timed

IMUL, SHL = "IMUL (R64, R64)", "SHL (R64, I8)"


def _blocks(catalogue, name):
    return kept_flags.blocks(catalogue.get(name))


def test_the_probe_reads_each_undefined_flag_a_condition_tests_beside_a_defined_one(catalogue):
    assert list(_blocks(catalogue, IMUL)) == ["SF", "ZF", "PF", "OF"]     # undefined, then the first defined
    assert list(_blocks(catalogue, SHL)) == ["OF", "SF"]                  # AF too, which no condition tests
    code, _ = _blocks(catalogue, IMUL)["ZF"]
    # the form's own chain set afresh, the loop through registers it does not name
    assert code == ["mov ebx, 1", "cmp rdx, r8", "{load} imul rbx, rcx", "setz dl"]
    assert _blocks(catalogue, IMUL)["OF"][0][-1] == "seto dl"
    assert _blocks(catalogue, "ADC_11 (R64, R64)") == {}                  # it reads the flags


def test_a_flag_two_cycles_slow_is_passed_on_and_the_record_loads(catalogue, tmp_path):
    # Zen 4's readings: imul passes SF, ZF and PF on (2.00 against its OF's 1.00), shl writes OF
    times = {tuple(c): (2.0 if f in ("SF", "ZF", "PF") else 1.0) for f, (c, _) in _blocks(catalogue, IMUL).items()}
    times.update({tuple(c): 1.0 for c, _ in _blocks(catalogue, SHL).values()})
    path = empty_results(tmp_path / "ports.jsonl", [IMUL, SHL, "ADD_01 (R64, R64)"])
    assert kept_flags.stored(path)[0] == {}                               # no probe: every flag written
    rec = ports_run.record(path, "kept_flags", timed(times))
    assert rec["kept"] == {IMUL: ["SF", "ZF", "PF"]} and rec["times"][f"{IMUL} ZF"] == 2.0
    kept, said = kept_flags.stored(path)
    assert kept == {IMUL: kept_flags.bits(["SF", "ZF", "PF"])} and f"{IMUL} SF ZF PF" in said
    assert ports_run._check({**rec, "kept": {IMUL: ["XF"]}}) is not None   # a hand-edited record is refused


def test_a_form_that_passes_a_flag_on_is_no_writer_of_it():
    # test, imul, setz: ZF is the test's where imul passes it on (Zen 4: 2.00 cycles, not 1.00)
    ins = decode("test rcx, rcx; imul rbx, rdx; setz cl; mov ebx, 5")
    passed = [0, kept_flags.bits(["SF", "ZF", "PF"]), 0, 0]
    assert chain_bound(ins, [1.0, 3.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert chain_bound(ins, [1.0, 3.0, 1.0, 1.0], passed=passed) == pytest.approx(2.0)
    # a defined flag stays the form's: setc after imul waits for it, not the test
    ins = decode("imul rbx, rcx; setc cl; mov ebx, 5")
    assert chain_bound(ins, [3.0, 1.0, 1.0], passed=[kept_flags.bits(["SF", "ZF", "PF"]), 0, 0]) == pytest.approx(4.0)
    ins = decode("imul rbx, rcx; setz cl; mov ebx, 5")
    assert chain_bound(ins, [3.0, 1.0, 1.0], passed=[kept_flags.bits(["ZF"]), 0, 0]) == pytest.approx(1.0)
