import pytest

from cyclebench.errors import AssemblyError, UsageError
from cyclebench.snippet import assemble, parse_part
from cyclebench.snippet.parse import nop_bytes


def test_statements_split_on_semicolons_newlines_and_comments():
    p = parse_part("code", "add rax, rbx; imul rcx, rcx\n  # comment\nmov rdx, 1 # trailing")
    assert [s.text for s in p.statements] == ["add rax, rbx", "imul rcx, rcx", "mov rdx, 1"]


@pytest.mark.parametrize("n", range(1, 16))
def test_n_byte_nops_assemble_to_n_bytes_that_decode_as_one_nop(n):
    from cyclebench.snippet.features import decode
    obj = assemble([".intel_syntax noprefix", ".text"] + parse_part("code", f"|{n}").lines())
    assert obj.blob == nop_bytes(n) and len(obj.blob) == n
    decoded = decode(obj.blob)
    # 66 90 is the architectural 2-byte NOP, which disassemblers print as xchg ax,ax
    assert len(decoded) == 1 and (decoded[0].text.startswith("nop") or decoded[0].text == "xchg ax,ax")


def test_repeat_extension_expands_and_remembers_source():
    p = parse_part("code", "mov rax, 1; 3*|add rax, rbx; nop|; ret")
    texts = [s.text for s in p.statements]
    assert texts[0] == "mov rax, 1" and texts[-1] == "ret"
    assert texts[1:-1].count("add rax, rbx") == 3 and len(texts) == 8
    assert p.statements[1].source.startswith("3*|")


def test_bad_extension_and_bad_nop_length():
    with pytest.raises(AssemblyError):
        parse_part("code", "add rax, |x")
    with pytest.raises(UsageError):
        parse_part("code", "|16")


def test_raw_bytes_are_a_code_part():
    p = parse_part("code", b"\x48\x01\xd8")
    obj = assemble([".intel_syntax noprefix", ".text"] + p.lines())
    assert obj.blob == b"\x48\x01\xd8"


def test_assembler_error_names_the_users_statement():
    lines = [".intel_syntax noprefix", ".text", "nop", "frobnicate rax"]
    with pytest.raises(AssemblyError) as e:
        assemble(lines, {4: ("code", "frobnicate rax")})
    assert "'frobnicate rax'" in e.value.cause
