"""cyclebench.routines.build: cached builds, clear build errors, resolving routines."""
import os
import subprocess
import sys
import textwrap

import pytest

from cyclebench.errors import AssemblyError, UsageError
from cyclebench.routines import build


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(d))
    return d / "routines"


ADD1_S = textwrap.dedent("""\
    .intel_syntax noprefix
    .text
    .globl add1
    .type add1, @function
add1:
    lea eax, [rdi + ADDEND]
    ret
    .section .note.GNU-stack, "", @progbits
""")


def _write(path, text):
    path.write_text(text)
    return path


def _call_add1(lib, arg):
    """Call add1 from the built library in a child interpreter (routines never run in-process)."""
    code = f"import ctypes; print(ctypes.CDLL({str(lib)!r}).add1({arg}))"
    return int(subprocess.check_output([sys.executable, "-c", code], text=True))


def test_build_caches_by_content_and_flags(tmp_path, cache):
    src = _write(tmp_path / "add1.S", ADD1_S)
    b1 = build.build_shared([src], defines={"ADDEND": 1})
    assert not b1.cached and b1.path.exists() and b1.path.parent == cache
    mtime = b1.path.stat().st_mtime_ns
    b2 = build.build_shared([src], defines={"ADDEND": 1})
    assert b2.cached and b2.path == b1.path and b2.path.stat().st_mtime_ns == mtime
    b3 = build.build_shared([src], defines={"ADDEND": 2})
    assert b3.path != b1.path
    b4 = build.build_shared([src], defines={"ADDEND": 1}, cflags="-O0")
    assert b4.path != b1.path
    assert _call_add1(b1.path, 41) == 42
    assert _call_add1(b3.path, 41) == 43
    _write(src, ADD1_S.replace("ret", "nop\n    ret"))
    assert build.build_shared([src], defines={"ADDEND": 1}).path != b1.path


def test_included_file_is_part_of_the_key(tmp_path, cache):
    inc = _write(tmp_path / "addend.h", "#define ADDEND 5\n")
    src = _write(tmp_path / "add1.S", '#include "addend.h"\n' + ADD1_S)
    b1 = build.build_shared([src])
    assert _call_add1(b1.path, 1) == 6
    _write(inc, "#define ADDEND 7\n")
    b2 = build.build_shared([src])
    assert b2.path != b1.path and not b2.cached
    assert _call_add1(b2.path, 1) == 8
    # the dependencies are remembered in the process: a header that gains an include is read again
    _write(tmp_path / "more.h", "#define ADDEND 9\n")
    _write(inc, '#include "more.h"\n')
    assert _call_add1(build.build_shared([src]).path, 1) == 10
    _write(tmp_path / "more.h", "#define ADDEND 11\n")
    assert _call_add1(build.build_shared([src]).path, 1) == 12


def test_c_source_with_user_flags(tmp_path, cache):
    src = _write(tmp_path / "twice.c", "long twice(long x) { return 2 * x; }\n")
    b = build.build_shared([src], cflags=["-O3", "-march=x86-64"])
    r = build.resolve("twice", library=b.path)
    assert r.symbol == "twice" and r.library == str(b.path)
    assert "-O3" in b.command


def test_assembler_error_names_first_error_line_and_hints_intel_syntax(tmp_path, cache):
    src = _write(tmp_path / "att.s", ".globl f\nf:\n    mov rax, [rbx]\n    ret\n")
    with pytest.raises(AssemblyError) as e:
        build.build_shared([src])
    err = e.value
    assert err.exit_code == 3
    assert "att.s:3: Error:" in err.cause
    assert ".intel_syntax noprefix" in err.hint
    assert "Error" in err.details["output"]
    assert os.path.exists(err.details["log"])


def test_error_in_intel_syntax_file(tmp_path, cache):
    src = _write(tmp_path / "bad.S", ".intel_syntax noprefix\n.globl f\nf:\n    frobnicate rax\n")
    with pytest.raises(AssemblyError) as e:
        build.build_shared([src])
    assert "bad.S:4: Error: no such instruction" in e.value.cause
    assert "Intel syntax" in e.value.hint


def test_ambiguous_size_hint(tmp_path, cache):
    src = _write(tmp_path / "amb.s", ".intel_syntax noprefix\nf:\n mov [rax], 1\n")
    with pytest.raises(AssemblyError) as e:
        build.build_shared([src])
    assert "ambiguous operand size" in e.value.cause
    assert "ptr" in e.value.hint


def test_c_compile_error(tmp_path, cache):
    src = _write(tmp_path / "broken.c", "int f(void) { return undeclared_thing; }\n")
    with pytest.raises(AssemblyError) as e:
        build.build_shared([src])
    assert "broken.c:1" in e.value.cause and "error" in e.value.cause


def test_usage_errors(tmp_path, cache):
    with pytest.raises(UsageError):
        build.build_shared([])
    with pytest.raises(UsageError):
        build.build_shared([tmp_path / "missing.S"])
    odd = _write(tmp_path / "x.txt", "")
    with pytest.raises(UsageError):
        build.build_shared([odd])
    src = _write(tmp_path / "add1.S", ADD1_S)
    with pytest.raises(UsageError) as e:
        build.build_shared([src], cc="no-such-compiler-xyz")
    assert "not found" in e.value.cause


def test_resolve_libc_memset():
    r = build.resolve("libc:memset")
    assert r.symbol == "memset"
    assert os.path.isabs(r.library) and os.path.exists(r.library)
    assert "libc" in os.path.basename(r.library)
    assert r.name == "libc:memset"


def test_resolve_errors(tmp_path, cache):
    src = _write(tmp_path / "add1.S", ADD1_S + "\n    .data\n    .globl counter\n    .type counter, @object\n"
                 "counter: .quad 0\n")
    lib = build.build_shared([src], defines={"ADDEND": 1}).path
    assert build.resolve(f"{lib}:add1").symbol == "add1"
    with pytest.raises(AssemblyError) as e:
        build.resolve(f"{lib}:add2")
    assert "add1" in e.value.hint  # a close match is suggested
    with pytest.raises(AssemblyError) as e:
        build.resolve(f"{lib}:counter")
    assert "data" in e.value.cause
    with pytest.raises(UsageError):
        build.resolve("add1")
    with pytest.raises(UsageError):
        build.resolve(f"{tmp_path}/nope.so:add1")
    not_elf = _write(tmp_path / "fake.so", "not an ELF file")
    with pytest.raises(AssemblyError):
        build.resolve(f"{not_elf}:f")


def test_dynamic_symbols_match_nm(tmp_path, cache):
    src = _write(tmp_path / "add1.S", ADD1_S)
    lib = build.build_shared([src], defines={"ADDEND": 1}).path
    syms = build.dynamic_symbols(lib)
    assert syms["add1"].is_code
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True)
    if nm.returncode == 0:
        addr = next(int(l.split()[0], 16) for l in nm.stdout.splitlines() if l.endswith(" add1"))
        assert syms["add1"].value == addr


def test_empty_routine():
    r = build.empty_routine()
    assert r.symbol == "cb_routine_empty" and os.path.exists(r.library)
    code = (f"import ctypes; f = ctypes.CDLL({r.library!r}).cb_routine_empty; "
            "f.restype = ctypes.c_void_p; f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]; "
            "print(f(4096, 1, 100))")
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "4096"
