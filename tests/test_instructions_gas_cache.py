"""The slots assemble_lines gives are kept in the cache folder: the same lines from the same tools
run no assembler and give the same slots and messages; a damaged entry or other tools assemble again."""
import pytest

from cyclebench import cache
from cyclebench.instructions import gas

LINES = ["add rax, rbx", "not an instruction", "imul rcx, rdx", "vaddps zmm1, zmm2, zmm3"]


@pytest.fixture
def runs(monkeypatch, tmp_path):
    """A cache folder of its own; the list of assembler runs made."""
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_fallback", None)
    calls = []
    real = gas.run_as
    monkeypatch.setattr(gas, "run_as", lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def _seen(assembled):
    return [(a.line, a.data, a.error) for a in assembled]


def test_the_same_lines_are_assembled_once(runs):
    first = gas.assemble_lines(LINES)
    assert len(runs) == 2                               # a rejected line: assembled again without it
    assert first[1].error and first[1].data is None
    assert all(a.data and not a.error for i, a in enumerate(first) if i != 1)
    assert _seen(gas.assemble_lines(LINES)) == _seen(first) and len(runs) == 2
    alone = gas.assemble_lines(LINES[:1])[0].data       # other lines: another entry (a last slot is unpadded)
    assert alone == first[0].data.rstrip(b"\xcc") and len(runs) == 3


@pytest.mark.parametrize("damage", [b"", b"not json\n", b'{"9": "x"}\n' + b"\xcc" * 128, b"{}\n"])
def test_a_damaged_entry_is_assembled_again_and_replaced(runs, tmp_path, damage):
    first = _seen(gas.assemble_lines(LINES))
    (entry,) = (tmp_path / gas.CACHE_KIND).iterdir()
    entry.write_bytes(damage)
    assert _seen(gas.assemble_lines(LINES)) == first and len(runs) == 4
    assert _seen(gas.assemble_lines(LINES)) == first and len(runs) == 4


def test_other_tools_assemble_again(runs, monkeypatch):
    gas.assemble_lines(LINES[:1])
    monkeypatch.setattr(gas, "_tools_stamp", lambda: b"/usr/bin/as:1:2")     # e.g. binutils upgraded
    gas.assemble_lines(LINES[:1])
    assert len(runs) == 2
