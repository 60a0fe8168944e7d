"""Every bad input: a one-line cause, a hint, the documented exit code, and no traceback."""
import importlib

import pytest

from cyclebench.errors import UsageError

CASES = [
    # (arguments, exit code, text in the error line)
    (["addq rax, rbxx"], 3, "'addq rax, rbxx'"),
    (["addd rax, rbx"], 3, "'addd rax, rbx'"),
    (["call some_function"], 3, "undefined symbol 'some_function'"),
    (["mov rax, offset 1f; 1:"], 3, "relocation"),
    (["rdpru"], 4, "'rdpru' needs RDPRU"),
    (["ud2"], 4, "SIGILL"),
    (["mov rax, [rbx]"], 5, "segmentation fault in 'mov rax, [rbx]'"),
    (["mov rax, [r14 + 0x100000]"], 5, "segmentation fault"),
    (["movaps xmm0, [r14 + 1]"], 5, "segmentation fault"),
    (["div rcx"], 5, "division error"),
    # a denormal operand with the denormal exception unmasked (MXCSR 0x1E80): a SIMD #XM, not a divide
    (["mulss xmm1, xmm2", "--init", "mov eax, 1; movd xmm1, eax; mov dword ptr [rsp-64], 0x1e80; "
      "ldmxcsr dword ptr [rsp-64]"], 5, "floating-point exception (underflow or a denormal operand) in 'mulss"),
    (["int3"], 5, "SIGTRAP"),
    (["mov eax, 60; xor edi, edi; syscall"], 5, "ended the runner process"),
    (["1: jmp 1b", "--timeout", "0.3"], 6, "did not finish within 0.3 s"),   # any timeout: it never ends
    (["imul rax, rax", "--unroll", "0"], 2, "unroll count 0"),
    (["imul rax, rax", "--loop", "-5"], 2, "loop count -5"),
    (["imul rax, rax", "--alignment-offset", "64"], 2, "alignment offset"),
    (["imul rax, rax", "-n", "0"], 2, "measurements"),
    (["imul rax, rax", "--cpu", "4096"], 2, "CPU 4096"),
    (["imul rax, rax", "--unroll", "9000000", "--loop", "1"], 2, "MiB"),
    ([""], 2, "no code"),
    (["|99"], 2, "NOP length"),
]


@pytest.mark.parametrize("argv,code,text", CASES, ids=[" ".join(c[0])[:40] for c in CASES])
def test_bad_input(cli, argv, code, text):
    rc, out, err = cli("asm", *argv)
    assert rc == code, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: ") and text in lines[0], err
    assert lines[1].startswith("hint: ")
    assert "Traceback" not in err


def test_fault_names_the_faulting_statement_among_several(cli):
    rc, _, err = cli("asm", "add rax, 1; mov rcx, [rax]; add rbx, 1")
    assert rc == 5 and "'mov rcx, [rax]'" in err


def test_fault_in_init_is_attributed_to_init(cli):
    rc, _, err = cli("asm", "--init", "mov rax, [rcx]", "nop")
    assert rc == 5 and "(init)" in err


def test_missing_pmu_is_explained_when_perf_is_forced(cli):
    import os
    if os.path.exists("/sys/bus/event_source/devices/cpu"):
        pytest.skip("this machine has a PMU")
    rc, _, err = cli("asm", "nop", "--counters", "perf")
    assert rc == 7 and "no hardware PMU" in err


def test_help_documents_every_exit_code(cli, capsys):
    from cyclebench.errors import EXIT_CODES
    with pytest.raises(SystemExit):
        cli("asm", "--help")
    out = capsys.readouterr().out
    for code in EXIT_CODES:
        assert f"\n  {code:3d}  " in out


def test_the_same_text_is_assembled_once_and_the_limit_still_holds(monkeypatch, tmp_path):
    asm = importlib.import_module("cyclebench.snippet.assemble")   # the package exports the function
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))         # nothing kept from an earlier run
    calls = []
    real = asm.run_as
    monkeypatch.setattr(asm, "run_as", lambda *a, **k: calls.append(a) or real(*a, **k))
    lines = [".intel_syntax noprefix", ".text", "lbl_a:", "imul rax, rax", ".rept 20", "nop", ".endr"]
    first = asm.assemble(lines)
    first.symbols.clear()                              # a caller's change is not remembered
    second = asm.assemble(lines)
    assert len(calls) == 1 and second.blob == first.blob and "lbl_a" in second.symbols
    with pytest.raises(UsageError):
        asm.assemble(lines, max_bytes=8)


def test_a_rept_block_over_several_statements_assembles():
    # every statement of the checked code carries a label; inside a .rept it must be defined once
    from cyclebench.measurement.api import prepare
    prepare(".rept 3; nop; .endr")
    prepare(".irp r, rax, rbx; add \\r, 1; .endr")


def test_the_cpu_check_speaks_before_a_later_error():
    """The CPUID check decodes in a thread while the harness is built: an instruction this CPU
    lacks is still the error given when a later step (here the unrolled size) would fail too."""
    from cyclebench.errors import UnsupportedInstruction
    from cyclebench.machine.features import missing
    from cyclebench.measurement.api import prepare
    if not missing(["D3NOW"]):
        pytest.skip("this CPU runs 3DNow! instructions")
    with pytest.raises(UnsupportedInstruction, match="pfadd"):
        prepare("pfadd mm0, mm1; .fill 1<<16, 1, 0x90", unroll=1000, loop=0)
    with pytest.raises(UsageError, match="unrolled code would be"):
        prepare("add rax, rax; .fill 1<<16, 1, 0x90", unroll=1000, loop=0)
