"""Stores under 32 bits back to a line a few stores later (ports/narrow_stores.py), on fabricated
figures: the window the probe's times give, which blocks wait, and the floor they take."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cyclebench.instructions.ports import narrow_stores
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.naming import decode
from ports_fake import empty_results

# Zen 3's figures: byte stores on 2, 3, 4 lines wait three cycles, on 5 and 6 none
ZEN3 = {"byte 2": 5.0, "dword 2": 2.0, "byte 3": 6.0, "dword 3": 3.0, "byte 4": 7.0, "dword 4": 4.0,
        "byte 5": 5.0, "dword 5": 5.0, "byte 6": 6.1, "dword 6": 6.0}


def test_the_window_is_the_run_of_line_counts_that_wait_from_two():
    assert narrow_stores.window(ZEN3) == (4, 3.0, 1.0)
    # a core whose narrow stores wait only up to three lines back (Zen 1)
    assert narrow_stores.window({**ZEN3, "byte 4": 4.0})[0] == 3
    # none waits on two lines: no window, even if a longer loop reads slow
    assert narrow_stores.window({**ZEN3, "byte 2": 2.1}) == (None, None, None)


@pytest.mark.parametrize("block, hit", [
    ("mov byte ptr [r14+0x40], bl; mov byte ptr [r14+0x80], bl", True),
    ("setns byte ptr [r14+0x40]; add eax, 1; mov word ptr [r14+0x148], ax", True),
    ("mov byte ptr [r14+0x40], bl; mov word ptr [r14+0x48], bx", False),     # one line: right after it
    ("mov dword ptr [r14+0x40], ebx; mov dword ptr [r14+0x80], ebx", False),   # 32 bits wait for nothing
    ("mov byte ptr [r14+0x40], bl", False),
    ("mov dword ptr [r14+0x100], 1; mov byte ptr [r14+0x150], 2; mov qword ptr [r14+0x198], 0", True),
    ("; ".join(f"mov byte ptr [r14+{0x40 * i:#x}], bl" for i in range(1, 6)), False),   # five lines: beyond the window
])
def test_which_blocks_wait(block, hit):
    assert narrow_stores.waits(decode(block), False, 4)[0] is hit


def test_the_probe_keeps_its_times_and_the_floor_charges_the_stores_and_the_wait(tmp_path):
    session = SimpleNamespace(measure=lambda code, init, per=1: SimpleNamespace(
        value=ZEN3[f"{'byte' if 'byte' in code[0] else 'dword'} {len(code)}"], modes=(), stable=True))
    path = empty_results(tmp_path / "ports.jsonl", [])
    rec = ports_run.record(path, "narrow_stores", session)
    assert (rec["window"], rec["wait"], rec["per"]) == (4, 3.0, 1.0) and rec["times"] == ZEN3
    bound, why = narrow_stores.stored(path)
    assert "2 to 4 stores later" in why
    v, label = bound.floor_of(decode("mov byte ptr [r14+0x40], bl; mov byte ptr [r14+0x80], bl; add eax, 1"), {})
    assert v == pytest.approx(5.0) and "narrow" in label
    assert bound.floor_of(decode("mov dword ptr [r14+0x40], ebx; mov dword ptr [r14+0x80], ebx"), {}) == (0.0, None)
