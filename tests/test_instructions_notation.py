"""Parsing user input into forms: uops.info names, Intel notation, concrete instructions."""
import pytest

from cyclebench.errors import UsageError
from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.notation import by_extension, by_mnemonic, resolve, resolve_one


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def test_every_name_round_trips(cat):
    for f in cat.forms:
        assert resolve(f.name, cat) == [f], f.name


@pytest.mark.parametrize("text,name", [
    ("IMUL (R64, R64)", "IMUL (R64, R64)"),
    ("imul ( r64 ,r64 )", "IMUL (R64, R64)"),
    ("vpermd zmm, zmm, zmm", "VPERMD (ZMM, ZMM, ZMM)"),
    ("add r64, imm32", "ADD (R64, I32)"),
    ("mov r64, m64", "MOV (R64, M64)"),
    ("lock add m64, r64", "ADD_LOCK (M64, R64)"),
    ("vpaddq zmm {k}{z}, zmm, zmm", "VPADDQ_Z (ZMM, K, ZMM, ZMM)"),
    ("vaddpd zmm, zmm, m64bcst", "VADDPD (ZMM, ZMM, M64_1to8)"),
    ("fadd st, st(i)", "FADD (ST(0), ST(i))"),
    ("cpuid", "CPUID"),
    ("cmovne r64, r64", "CMOVNZ (R64, R64)"),
])
def test_notations(cat, text, name):
    assert [f.name for f in resolve(text, cat)] == [name]


@pytest.mark.parametrize("text,name", [
    ("imul rax, rbx", "IMUL (R64, R64)"),
    ("add rax, 5", "ADD (R64, I8)"),
    ("add rcx, 100000", "ADD (R64, I32)"),
    ("vpaddq zmm1{k1}, zmm2, [rax]", "VPADDQ (ZMM, K, ZMM, M512)"),
    ("lea rax, [rbx+8]", "LEA_B_D8 (R64)"),
    ("mov rax, qword ptr [rsi]", "MOV (R64, M64)"),
])
def test_concrete_instructions(cat, text, name):
    assert resolve_one(text, cat).name == name


def test_rm_notation_gives_both(cat):
    assert {f.name for f in resolve("imul r64, r/m64", cat)} == {"IMUL (R64, R64)", "IMUL (R64, M64)"}


@pytest.mark.parametrize("text", ["IMUL (R64, R65)", "frobnicate rax", "imul zmm, k", ""])
def test_unknown_input_is_a_usage_error_with_hint(cat, text):
    with pytest.raises(UsageError) as e:
        resolve(text, cat)
    assert e.value.exit_code == 2
    assert "\n" not in e.value.cause
    assert e.value.hint


def test_close_matches_in_hint(cat):
    with pytest.raises(UsageError) as e:
        resolve("IMUL (R64, R65)", cat)
    assert "IMUL (R64, R64)" in e.value.hint


def test_ambiguous_resolve_one(cat):
    with pytest.raises(UsageError) as e:
        resolve_one("add r64, r64", cat)
    assert "ADD_01 (R64, R64)" in e.value.hint


def test_mnemonic_and_extension(cat):
    forms = by_mnemonic("imul", cat)
    assert {"IMUL (R64, R64)", "IMUL (R64)", "IMUL (R64, R64, I8)"} <= {f.name for f in forms}
    assert by_mnemonic("cmovne", cat) == by_mnemonic("CMOVNZ", cat)
    ext = by_extension("AVX512F", cat)
    assert ext and all("AVX512F" in f.cpuid_features for f in ext)
    with pytest.raises(UsageError):
        by_mnemonic("imull", cat)
    with pytest.raises(UsageError) as e:
        by_extension("AVX513F", cat)
    assert "AVX512F" in e.value.hint
