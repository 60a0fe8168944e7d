"""Assembled objects and decoded instructions are kept in the cache folder, keyed by what they
depend on: a snippet measured again starts without as, readelf or iced-x86, and gets the
same bytes, symbols and features; a damaged or foreign entry is made again."""
import importlib
import os

import pytest

from cyclebench import cache
from cyclebench.snippet import features

asm = importlib.import_module("cyclebench.snippet.assemble")   # the package exports the function
LINES = [".intel_syntax noprefix", ".text", "cb_x:", "vpaddd ymm0, ymm1, ymm2", "lbl_b:", "syscall"]


def test_a_new_process_gets_the_object_from_the_cache_folder(fresh_assembler):
    calls, _ = fresh_assembler
    first = asm.assemble(LINES)
    asm._ASSEMBLED.clear()
    again = asm.assemble(LINES)
    assert len(calls) == 1
    assert (again.blob, again.symbols, again.warnings) == (first.blob, first.symbols, first.warnings)
    assert again.symbols["lbl_b"] == 4 and len(again.blob) == 6


@pytest.mark.parametrize("content", [b"", b"not json\n\x90", b'{"symbols": {"a": "1"}, "warnings": []}\n',
                                     b'{"symbols": {}}\n', b"[]\n"])
def test_a_damaged_entry_is_assembled_again_and_replaced(fresh_assembler, content):
    calls, root = fresh_assembler
    asm.assemble(LINES)
    (entry,) = (root / asm.CACHE_KIND).iterdir()
    entry.write_bytes(content)
    asm._ASSEMBLED.clear()
    assert asm.assemble(LINES).symbols["lbl_b"] == 4 and len(calls) == 2
    asm._ASSEMBLED.clear()
    asm.assemble(LINES)
    assert len(calls) == 2


def test_another_assembler_assembles_again(fresh_assembler, monkeypatch):
    calls, _ = fresh_assembler
    asm.assemble(LINES)
    asm._ASSEMBLED.clear()
    monkeypatch.setattr(asm, "_toolchain_stamp", lambda: b"/usr/bin/as:1:2")     # e.g. binutils upgraded
    asm.assemble(LINES)
    assert len(calls) == 2


def test_the_size_limit_holds_for_a_kept_object(fresh_assembler):
    asm.assemble(LINES)
    asm._ASSEMBLED.clear()
    with pytest.raises(asm.UsageError):
        asm.assemble(LINES, max_bytes=4)


def test_decoded_instructions_are_kept_and_match_a_fresh_decode(fresh_assembler, monkeypatch):
    blob = asm.assemble(LINES).blob
    chunks = [blob[:4], blob[4:]]
    first = features.decode_each(chunks)
    assert [[d.text for d in ds] for ds in first] == [["vpaddd ymm0,ymm1,ymm2"], ["syscall"]]
    assert "AVX2" in first[0][0].features
    monkeypatch.setattr(features, "decode", lambda *a: pytest.fail("decoded again"))
    assert features.decode_each(chunks) == first


def test_the_least_recently_used_entries_go_first(fresh_assembler, monkeypatch):
    monkeypatch.setattr(cache, "ENTRIES_KEPT", 4)
    for i in range(4):
        cache.store_entry("k", f"e{i}", b"x")
        os.utime(cache.cache_dir("k") / f"e{i}", (1000 + i, 1000 + i))    # the file clock is coarse
    assert cache.load_entry("k", "e0") == b"x"            # used: now the most recent
    cache.store_entry("k", "e4", b"y")                     # five entries: the oldest three go
    assert sorted(p.name for p in cache.cache_dir("k").iterdir()) == ["e0", "e4"]
    cache.store_entry("k", "big", b"z" * (cache.ENTRY_LIMIT + 1))
    assert cache.load_entry("k", "big") is None


def test_work_given_to_assemble_runs_while_its_tools_run_and_only_then(fresh_assembler, monkeypatch):
    calls, _ = fresh_assembler
    seen, tools = [], []
    real = asm.run_tool
    monkeypatch.setattr(asm, "run_tool", lambda cmd, **k: tools.append(cmd[0]) or real(cmd, **k))

    def work():     # once as has started, then once readelf has
        seen.append((len(calls), len(tools)))
    asm.assemble(LINES, while_running=work)
    asm._ASSEMBLED.clear()
    asm.assemble(LINES, while_running=work)             # kept: no as, no work
    assert seen == [(1, 0), (1, 1)] and len(calls) == 1


def test_a_failed_decoding_during_the_harness_assembly_is_raised_as_itself(fresh_assembler, monkeypatch):
    """The CPUID check's decoding runs while as assembles the harness: its failure must neither
    stop as nor become an assembler error, and it is raised where the check is made."""
    from cyclebench.measurement import api

    def broken(chunks):
        raise RuntimeError("iced-x86 failed")
    monkeypatch.setattr(api, "decode_each", broken)
    with pytest.raises(RuntimeError, match="iced-x86 failed"):
        api.prepare("add rax, rbx", counters="tsc")     # no counter probe: no runner needed
    calls, root = fresh_assembler
    assert len(calls) == 3                              # the check, the calibration and the harness, all made
    assert len(list((root / asm.CACHE_KIND).iterdir())) == 2


@pytest.mark.parametrize("lines", [LINES, [".intel_syntax noprefix", ".text", "nop", ".p2align 12", ".skip 5000", "ret"],
                                   [".intel_syntax noprefix", ".text", "cb_x:"],
                                   [".intel_syntax noprefix", ".data", ".quad 1", ".text", "add rax, rax"]])
def test_the_blob_is_what_objcopy_extracts(fresh_assembler, tmp_path, lines):
    """.text is read from the object where readelf places it, instead of starting objcopy."""
    import subprocess
    blob = asm.assemble(lines).blob
    src, obj, out = tmp_path / "c.s", tmp_path / "c.o", tmp_path / "c.bin"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run(["as", "--64", "-o", str(obj), str(src)], check=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(out)], check=True)
    assert blob == (out.read_bytes() if out.exists() else b"")
