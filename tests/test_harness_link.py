"""The harness's calibration functions are assembled once and spliced in: the result is the same
blob and symbols as assembling the whole generated source, and the kept calibration object is
made again when the assembler changes."""
import importlib

import pytest

from cyclebench.harness import HarnessSpec, generate
from cyclebench.harness.link import CACHE_KIND, assemble_harness
from cyclebench.snippet import parse_part

asm = importlib.import_module("cyclebench.snippet.assemble")   # the package exports the function
EMPTY = parse_part("none", None)


def _spec(code="add rax, rbx", **kw):
    one_time = kw.pop("one_time_init", None)
    base = dict(unroll=20, use_loop=True)
    base.update(kw)
    return HarnessSpec(parse_part("code", code), parse_part("init", "mov rbx, 1"), EMPTY,
                       parse_part("one_time_init", one_time), **base)


@pytest.mark.parametrize("spec", [
    _spec(),
    _spec("vpaddd ymm0, ymm1, ymm2; jnz 1f; 1:", use_loop=False, avx512=True, avx512bw=True),
    _spec("nop", basic_mode=True, avx=False, one_time_init="mov rcx, 3", symbols=["malloc"]),
    _spec(".rept 3; imul rax, rax; .endr", drain_frontend=True, alignment_offset=5, avx512=True),
    _spec("push rax", reset=("rsp",), loop_init=parse_part("loop_init", "push 0x8d5; popfq")),
])
def test_the_spliced_harness_is_the_whole_source_assembled(fresh_assembler, spec):
    lines, origin = generate(spec)
    whole = asm.assemble(lines, origin)
    asm._ASSEMBLED.clear()
    linked = assemble_harness(spec, lines, origin)
    assert linked.blob == whole.blob
    assert linked.symbols == whole.symbols and "cb_contention_b" in linked.symbols
    assert linked.warnings == whole.warnings


def test_the_calibration_is_assembled_once_and_again_for_another_assembler(fresh_assembler, monkeypatch):
    calls, root = fresh_assembler
    for code in ("add rax, rbx", "imul rax, rax"):
        spec = _spec(code)
        assemble_harness(spec, *generate(spec))
        asm._ASSEMBLED.clear()                  # as in a new process
    assert len(calls) == 3                      # the calibration, then each snippet's own part
    assert len(list((root / CACHE_KIND).iterdir())) == 1
    monkeypatch.setattr(asm, "_toolchain_stamp", lambda: b"/usr/bin/as:1:2")     # e.g. binutils upgraded
    spec = _spec("add rax, rbx")
    lines, origin = generate(spec)
    assert assemble_harness(spec, lines, origin).blob == asm.assemble(lines, origin).blob
    assert len(calls) == 6                      # the calibration, the snippet's part, the whole source


def test_a_harness_without_calibration_is_assembled_whole(fresh_assembler):
    calls, root = fresh_assembler
    spec = _spec(calibration=False)
    lines, origin = generate(spec)
    assert "cb_calib_a" not in assemble_harness(spec, lines, origin).symbols
    assert len(calls) == 1 and not (root / CACHE_KIND).exists()
