"""Published uops.info names -> catalogue forms (instructions/coverage.py), and the forms added so
that every published name has one or a stated reason: REP, _ER/_SAE, R8h with memory or a wider
register, _R0/_R4, LEA's addressing modes, gathers and scatters. Fixtures only: assembling and
instantiating, no timing."""
from types import SimpleNamespace

import iced_x86
import pytest

from cyclebench.instructions.agreement import NOT_IN_CATALOGUE, targets
from cyclebench.instructions.catalogue import Catalogue, normalize_name
from cyclebench.instructions.coverage import NO_FORM, Index, index_of, spellings, summary, summary_lines
from cyclebench.instructions.instantiate import check, instantiate, latency_pairs, verified
from cyclebench.instructions.copies import independent_copies
from cyclebench.instructions.published import read_csv
from cyclebench.instructions.reference import column


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


@pytest.fixture(scope="module")
def index(cat):
    return index_of(cat)           # the one targets() uses too


@pytest.mark.parametrize("published,catalogue", [
    ("VADDPS_EVEX (XMM, XMM, M32_1TO4)", "VADDPS (XMM, XMM, M32_1TO4)"),
    ("MOVAPD_0F28 (XMM, XMM)", "MOVAPD_28 (XMM, XMM)"),
    ("MOVSD_XMM_0F10 (XMM, XMM)", "MOVSD_10 (XMM, XMM)"),
    ("CMPSD_XMM (XMM, M64, I8)", "CMPSD (XMM, M64, I8)"),
    ("SHLD_CL (R64, R64, CL)", "SHLD (R64, R64, CL)"),
    ("MOV_CR (R64, CR)", "MOV (R64, CR)"),
    ("CALL_NEAR (REL32)", "CALL (REL32)"),
    ("MOV (R64, SEG)", "MOV (R64, SREG)"),
    ("MOV (AL, MOFFS8)", "MOV (AL, M8)"),
    ("OR_R4 (R8l, I8)", "OR_R4 (R8, I8)"),
    ("ADC (M8, R8h)", "ADC (M8, R8H)"),
    ("SHLD_IMMB (R64, R64, I8)", "SHLD (R64, R64, I8)"),
    ("PREFETCH_EXCLUSIVE (M512)", "PREFETCH (M512)"),
])
def test_spellings(published, catalogue):
    assert normalize_name(catalogue) in [s for s, _ in spellings(published)]


def test_an_encoding_suffix_must_match_the_encoding():
    """VADDPS_EVEX names the EVEX form; a VEX form of the same spelling is not it."""
    vex = SimpleNamespace(name="VADDPS (XMM, XMM, XMM)", base_name="VADDPS (XMM, XMM, XMM)",
                          encoding="VEX", offered=True)
    evex = SimpleNamespace(name="VADDPS_EVEX (XMM, XMM, XMM)", base_name="VADDPS (XMM, XMM, XMM)",
                           encoding="EVEX", offered=True)

    class Cat(list):
        def get(self, name):
            return next((f for f in self if f.name == normalize_name(name)), None)
    assert Index(Cat([vex])).find("VADDPS_EVEX (XMM, XMM, XMM)") == (None, "")
    assert Index(Cat([vex, evex])).find("VADDPS_EVEX (XMM, XMM, XMM)")[0] is evex
    assert Index(Cat([vex, evex])).find("VADDPS (XMM, XMM, XMM)")[0] is vex


def test_every_published_name_has_a_form_or_a_reason(cat):
    """On the CPU's column and on Intel's: nothing is left as a bare 'no catalogue form'."""
    for code in ("ZEN4", "ADL-P"):
        tg = targets(read_csv(str(column(code).path)), cat)
        missing = [t for t in tg if t.status == NOT_IN_CATALOGUE]
        assert not [t.published.name for t in missing if t.why == NO_FORM], code
        assert len(missing) <= 25, (code, len(missing))   # REPNE on non-comparing ops, _REX64, _W
        s = summary(tg)
        assert sum(s["status"].values()) == len(tg)
        lines = summary_lines(s)
        assert any(line.startswith(NOT_IN_CATALOGUE) and "REPNE without a comparison" in line
                   for line in lines)


@pytest.mark.parametrize("published", [
    "VADDPS_ER_Z (ZMM, K, ZMM, ZMM)", "VADDSD_EVEX_ER (XMM, XMM, XMM)", "VCMPSD_SAE (K, K, XMM, XMM, I8)",
    "STOSQ_REPE", "CMPSB_REPNE", "ADC_R4 (R8l, I8)", "SHL_R0 (R8l, 1)", "ADC_LOCK (M8, R8h)",
    "MOVZX (R32, R8h)", "LEA_R_D32 (R64)", "LEA_IS_D32 (R32)", "LEA_B_IS_D8 (R16)",
    "VPGATHERDD (XMM, VSIB_XMM, XMM)", "VSCATTERDPD (VSIB_YMM, K, ZMM)",
    "VCVTPD2DQ (XMM, K, M64_1TO4)", "VMOVAPD_EVEX (XMM, XMM)", "LSL (R64, R32)", "CLFLUSH (M512)",
])
def test_published_forms_now_have_a_catalogue_form(index, published):
    form, _ = index.find(published)
    assert form is not None, published


def _assembles(cat, names):
    forms = [cat.get(n) for n in names]
    assert all(forms), names
    insts = [instantiate(f) for f in forms]
    return insts, check(insts)


def test_high_byte_forms_never_need_a_rex_prefix(cat):
    """AH..BH cannot be named with a REX prefix: memory uses RDI (its own area), wider registers
    are the legacy eight, and GNU as emits exactly the intended instruction."""
    forms = [f for f in cat if f.high8 and f.offered]
    assert any(f.rm == "mem" for f in forms) and any(op.bits == 32 for f in forms for op in f.operands)
    insts = [instantiate(f) for f in forms]
    for i in insts:
        ins = iced_x86.Decoder(64, i.encoding).decode()
        assert not any(0x40 <= b <= 0x4F for b in i.encoding[:ins.len - 1][:4]), i.text
        if i.form.rm == "mem":
            assert "[rdi+" in i.text
    assert all(r.ok or "assembled to" in r.detail for r in check(insts))   # SAL/MOV_C6 aliases


def test_byte_register_groups(cat):
    r0, r4 = instantiate(cat.get("AND_R0 (R8, I8)")), instantiate(cat.get("AND_R4 (R8, I8)"))
    assert r0.encoding[0] == 0x80 and r4.encoding[0] in range(0x40, 0x50)   # REX only for 4-7
    cps = independent_copies(cat.get("AND_R4 (R8, I8)"), 8)
    assert {t.split()[1].rstrip(",") for t in cps.code.splitlines()} <= {"sil", "dil", "r12b", "r13b"}


def test_rounding_and_lea_forms_assemble(cat):
    names = ["VADDPS_ER (ZMM, ZMM, ZMM)", "VCMPSD_SAE (K, XMM, XMM, I8)", "VSQRTPD_ER_Z (ZMM, K, ZMM)",
             "LEA_R_D32 (R64)", "LEA_D32 (R32)", "LEA_IS_D32 (R64)", "LEA_B_IS_D32 (R16)"]
    insts, res = _assembles(cat, names)
    assert all(r.ok for r in res), [(r.text, r.detail) for r in res if not r.ok]
    assert "{rn-sae}" in insts[0].text and "{sae}" in insts[1].text
    assert "rip" in insts[3].text and "*8" in insts[5].text


def test_rep_forms_run_with_no_element(cat):
    for name in ("STOSQ_REPE", "CMPSB_REPNE", "MOVSW_REPE"):
        f = cat.get(name)
        assert f.offered and any("data-dependent" in n and "RCX = 0" in n for n in f.notes)
        inst = verified([instantiate(f)])[0]
        assert "xor ecx, ecx" in inst.init and "cld" in inst.init and not inst.via_bytes
    # without REP each copy advances RDI: the harness sets it back every loop iteration
    stosq = verified([instantiate(cat.get("STOSQ"))])[0]
    assert cat.get("STOSQ").offered and stosq.reset == ("rsi", "rdi") and "cld" in stosq.init


def test_gathers_reload_the_mask_and_keep_the_index(cat):
    g = cat.get("VPGATHERDD (YMM, VSIB_YMM, YMM)")
    inst = verified([instantiate(g)])[0]
    setup, text = inst.text.splitlines()
    assert setup == "vpcmpeqd ymm2, ymm2, ymm2" and "[r14+ymm15+0x40], ymm2" in text
    assert "vpxor xmm15, xmm15, xmm15" in inst.init and not inst.via_bytes
    # no chain through the mask (reset each copy), the index (addresses) or memory (VSIB)
    assert [str(p) for p in latency_pairs(g)] == ["op0 (YMM) -> op0 (YMM)", "addr op1 -> op0 (YMM)"]
    cps = independent_copies(g, 6)
    assert "ymm15" not in " ".join(line.split("[")[0] for line in cps.code.splitlines())
    s = verified([instantiate(cat.get("VSCATTERQPD (VSIB_ZMM, K, ZMM)"))])[0]
    assert s.text.splitlines() == ["kxnorw k1, k1, k1",
                                   "{evex} vscatterqpd qword ptr [r14+zmm15+0x40]{k1}, zmm1"]


# ------------------------------------------------------------------------------ on the real CPU

@pytest.mark.measured
def test_rep_form_and_gather_run_and_are_labelled(cat):
    """The two new set-ups run in the harness: a REP form with RCX = 0 (microcoded: more than a
    cycle per copy on any core) and an AVX2 gather of 8 lanes, each a load (at most 4 load ports
    on any current core: at least 2 cycles per copy, which an empty mask would not need)."""
    from cyclebench.instructions.characterize import Session, measure_throughput
    session = Session(n_measurements=10, budget=1.0)
    rep = measure_throughput(session, cat.get("SCASB_REPE"))
    assert rep["value"] is not None and rep["value"] > 1.0, rep
    gather = cat.get("VPGATHERDD (YMM, VSIB_YMM, YMM)")
    if not gather.offered:
        pytest.skip(f"this CPU: {gather.reason}")
    g = measure_throughput(session, gather)
    assert g["value"] is not None and g["value"] >= 2.0, g


def test_a_catalogues_index_is_built_once_and_a_stand_in_gets_its_own(cat):
    assert index_of(cat) is index_of(cat)
    assert index_of(Catalogue(list(cat))) is not index_of(cat)      # another catalogue object

    class Cat(list):            # unhashable, as a stand-in catalogue may be: indexed anew each call
        def get(self, name):
            return next((f for f in self if f.name == normalize_name(name)), None)
    form = SimpleNamespace(name="NOP", base_name="NOP", encoding="LEGACY", offered=True)
    stand_in = Cat([form])
    assert index_of(stand_in) is not index_of(stand_in)
    assert index_of(stand_in).find("NOP")[0] is form
