"""The instruction catalogue: facts that hold on any modern x86-64 core (no timing)."""
import re
from collections import Counter

import pytest

from cyclebench.instructions.catalogue import Catalogue, normalize_name
from cyclebench.machine.cpu import cpu_info
from cyclebench.machine.features import BASELINE, FLAG_OF, CpuFeatures, this_cpu


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def test_catalogue_is_large_and_names_are_unique(cat):
    assert len(cat) > 10000
    names = Counter(f.name for f in cat)
    assert not [n for n, k in names.items() if k > 1]
    assert len(cat.offered()) > 1000


def test_offered_forms_only_use_features_this_cpu_has(cat):
    flags = cpu_info().flags
    for f in cat.offered():
        for feat in f.cpuid_features:
            if feat in BASELINE:
                continue
            assert feat in FLAG_OF or this_cpu().has(feat), (f.name, feat)
            if feat in FLAG_OF:
                assert all(fl in flags for fl in FLAG_OF[feat]), (f.name, feat)


def test_forms_the_cpu_lacks_say_which_feature(cat):
    cpu = this_cpu()
    for f in cat:
        lacks, unknown = cpu.missing(f.cpuid_features)
        if lacks:
            assert not f.offered
            assert f.unsupported.startswith("not supported by this CPU: lacks")
            assert lacks[0] in f.unsupported
        elif unknown:
            assert f.unsupported == "cannot tell whether this CPU supports " + ", ".join(unknown)


def test_unmappable_feature_is_cannot_tell():
    cpu = CpuFeatures(flags={"sse2"})
    assert cpu.has("SHA512") is None      # no flag mapping, no CPUID bit
    assert cpu.has("SSE2") is True
    assert cpu.has("AVX2") is False
    assert cpu.has("X64") is True
    assert cpu.missing(["SHA512", "AVX2", "SSE2"]) == (["AVX2"], ["SHA512"])


@pytest.mark.parametrize("mnemonic,reason", [
    ("HLT", "privileged"), ("WRMSR", "privileged"), ("RDMSR", "privileged"),
    ("LGDT", "privileged"), ("SYSCALL", "system entry"), ("SYSENTER", "system entry"),
    ("RETF", "far"), ("INT3", "interrupt"), ("UD2", "#UD"), ("IN", "port I/O"), ("OUT", "port I/O"),
    ("CLI", "OS permission"), ("WRFSBASE", "segment"), ("LDMXCSR", "control state"), ("SGDT", "UMIP"),
])
def test_dangerous_forms_are_skipped_with_reason(cat, mnemonic, reason):
    forms = cat.by_mnemonic[mnemonic]
    assert forms, mnemonic
    for f in forms:
        assert not f.offered
        assert f.skip_reason and re.search(reason, f.skip_reason), (f.name, f.skip_reason)


def test_forms_that_fault_in_the_harness_are_skipped(cat):
    # found by a full `inst --all` run: clzero eax addresses below 4 GiB, where nothing is mapped.
    # The 32-bit form is skipped for that reason on every CPU; the 64-bit one is offered where the
    # CPU has CLZERO (an AMD instruction) and skipped as missing elsewhere.
    from cyclebench.machine.cpu import cpu_info
    assert "32-bit address" in cat.get("CLZERO").skip_reason
    q = cat.get("CLZERO_CLZEROQ")
    assert q.offered == ("clzero" in cpu_info().flags), (q.offered, q.skip_reason)
    reg, mem = cat.get("RESERVEDNOP_0D (R64, R64)"), cat.get("RESERVEDNOP_0D (M64, R64)")
    assert mem.skip_reason is None                                   # a prefetch on AMD, a NOP on Intel
    if cpu_info().vendor == "AuthenticAMD":
        assert "#UD on AMD" in reg.skip_reason
    else:
        assert reg.skip_reason is None


def test_mpx_runs_as_hint_nop(cat):
    bnd = [f for f in cat if f.mnemonic.startswith("BND")]
    assert bnd
    if this_cpu().has("MPX"):
        pytest.skip("this CPU has MPX")
    for f in bnd:
        assert "hint NOP" in f.skip_reason


@pytest.mark.parametrize("keep", ["LFENCE", "MFENCE", "SFENCE", "CPUID", "RDTSC", "RDTSCP",
                                  "PAUSE", "NOP"])
def test_allow_listed_forms_are_offered(cat, keep):
    assert any(f.offered for f in cat.by_mnemonic[keep]), keep


def test_uops_info_style_names(cat):
    for name in ["IMUL (R64, R64)", "ADD (R64, I32)", "ADD (R64, I8)", "ADD_LOCK (M64, R64)",
                 "VADDPD (YMM, YMM, M256)", "MOV_89 (R64, R64)", "MOV_8B (R64, R64)",
                 "CMOVNZ (R64, R64)", "SHL (R64, 1)", "SHL (R64, CL)", "CPUID",
                 "VPERMD (ZMM, ZMM, ZMM)", "VPADDQ (ZMM, K, ZMM, ZMM)",
                 "VPADDQ_Z (ZMM, K, ZMM, ZMM)", "VPADDQ (ZMM, ZMM, M64_1to8)", "LEA_B_D8 (R64)"]:
        assert cat.get(name) is not None, name
    assert cat.get("imul(r64,r64)").name == "IMUL (R64, R64)"
    assert normalize_name(" fadd  (st(0),st(i)) ") == "FADD (ST(0), ST(i))"


def test_operands_flags_and_implicit_registers(cat):
    imul = cat.get("IMUL (R64, R64)")
    assert [(o.read, o.write) for o in imul.operands] == [(True, True), (True, False)]
    assert {"CF", "OF"} <= imul.flags_written
    assert imul.encoding == "LEGACY"
    adc = cat.get("ADC (R64, R64)") or cat.get("ADC_11 (R64, R64)")
    assert "CF" in adc.flags_read
    mul = cat.get("MUL (R64)")
    implicit = {i.register: (i.read, i.write) for i in mul.implicit}
    assert implicit["rax"] == (True, True) and implicit["rdx"] == (False, True)
    vp = cat.get("VPADDQ (ZMM, K, ZMM, ZMM)")
    assert vp.encoding == "EVEX" and vp.mask == "merge" and "AVX512F" in vp.cpuid_features
    assert vp.operands[1].is_mask and vp.operands[0].read   # merge masking reads the destination
    assert not cat.get("VPADDQ_Z (ZMM, K, ZMM, ZMM)").operands[0].read
    store = cat.get("MOV (M64, R64)") or cat.get("MOV_89 (M64, R64)")
    assert store.memory_operand.write and not store.memory_operand.read


def test_extension_lookup(cat):
    avx512f = cat.with_extension("avx512f")
    assert avx512f and all("AVX512F" in f.cpuid_features for f in avx512f)
    assert cat.with_extension("AVX512_VBMI2") == cat.with_extension("avx512vbmi2")


def test_a_zero_immediate_twin_is_its_own_form(cat):
    """uops.info lists `SHL (R64, 0)` beside `SHL (R64, I8)`: same encoding, immediate 0."""
    from cyclebench.instructions.instantiate import instantiate
    from cyclebench.instructions.notation import resolve_one
    twin, plain = cat.get("SHL (R64, 0)"), cat.get("SHL (R64, I8)")
    assert twin is not None and twin.imm_zero and not plain.imm_zero and twin.code == plain.code
    assert instantiate(twin).text.endswith(", 0x0") and not instantiate(plain).text.endswith(", 0x0")
    assert cat.get("SUB_LOCK (M32, 0)") is not None and cat.get("ADD (R64, 0)") is not None
    # only general-register forms with one 8-bit immediate have a twin
    assert not [f.name for f in cat if f.imm_zero and (f.encoding != "LEGACY" or "XMM" in f.name)]
    assert cat.get("ENTER (I16, 0)") is None
    assert resolve_one("shl rax, 0", cat) is twin and resolve_one("shl rax, 3", cat) is plain


def test_high_byte_registers_are_forms_of_their_own(cat):
    """uops.info's ADC_10 (R8h, R8l): every choice of high bytes for a register-only byte form."""
    names = {f.name for f in cat if f.mnemonic == "ADC" and f.high8}
    assert {"ADC_10 (R8h, R8l)", "ADC_10 (R8l, R8h)", "ADC_10 (R8h, R8h)", "ADC (R8h, I8)",
            "ADC (R8h, 0)"} <= names
    assert cat.get("ADC_10 (R8, R8)") is not None and not cat.get("ADC_10 (R8, R8)").high8
    hh = cat.get("ADC_10 (R8h, R8h)")
    assert [op.notation for op in hh.operands] == ["R8h", "R8h"] and hh.offered
    # never a 64-bit register beside a high byte (REX.W would make AH..BH SPL..DIL)
    assert not [f.name for f in cat if f.high8 and any(op.kind == "reg" and op.bits == 64
                                                       for op in f.operands)]
