"""The operand model the latency pairs follow (uops.info's, from XED): which operands are inputs,
which same-register cases are measured, which other chains a pair's loop breaks.  No timing."""
import pytest

from cyclebench.instructions import Catalogue, latency_pairs
from cyclebench.instructions import connectors as C
from cyclebench.instructions.forms import flags_in
from cyclebench.instructions.instantiate import chain, instantiate
from cyclebench.instructions.isolate import breakers
from cyclebench.instructions.renaming import same_register_case


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def _pairs(form):
    return {str(p) for p in latency_pairs(form)}


def test_a_count_in_cl_makes_the_flags_an_input(cat):
    # a count of 0 leaves the flags as they were: they are only conditionally written
    shl_cl, shl_i8, rcl_cl = cat.get("SHL (R32, CL)"), cat.get("SHL (R32, I8)"), cat.get("RCL (R32, CL)")
    assert flags_in(shl_cl) and not flags_in(shl_i8)
    assert "flags -> op0 (R32)" in _pairs(shl_cl) and "flags -> flags" in _pairs(shl_cl)
    assert not any(p.startswith("flags ->") for p in _pairs(shl_i8))
    assert sum(p.startswith("flags ->") for p in _pairs(rcl_cl)) == 2     # read anyway: listed once
    assert not flags_in(cat.get("ADD_01 (R64, R64)"))


def test_a_zero_count_keeps_the_opcodes_flags_for_the_breakers(cat):
    # iced-x86 gives "rcl word [m], 0" no flags; XED's model (uops.info's) keeps them, conditionally
    # written, so the dependency-breaking configuration breaks them after the chain
    rcl0, rcl8 = cat.get("RCL (M16, 0)"), cat.get("RCL (M16, I8)")
    assert not rcl0.flags_written and rcl0.flags_if_counted >= {"CF"}
    assert not rcl8.flags_if_counted
    pair = next(p for p in latency_pairs(rcl0) if str(p).startswith("mem ") and str(p).endswith("(M16)"))
    inst = instantiate(rcl0)
    assert any(b.startswith("test ") for b in breakers(rcl0, inst, pair, "[r14+0x40]", set()))
    assert not any(p.startswith("flags ->") for p in _pairs(rcl0))      # no new pair: breakers only
    assert not cat.get("NOT (M16)").flags_if_counted


def test_a_merge_masked_vector_destination_is_read(cat):
    blend = cat.get("VBLENDMPD (YMM, K, YMM, YMM)")
    assert blend.operands[0].read and "op0 (YMM) -> op0 (YMM)" in _pairs(blend)
    zero = cat.get("VBLENDMPD_Z (YMM, K, YMM, YMM)")          # zero masking keeps nothing
    assert not zero.operands[0].read and "op0 (YMM) -> op0 (YMM)" not in _pairs(zero)
    cmp_ = cat.get("VPCMPQ (K, K, XMM, XMM, I8)")             # a mask destination is zeroed, not merged
    assert not cmp_.operands[0].read


def test_mask_registers_have_a_same_register_case(cat):
    case = same_register_case(cat.get("KXORB (K, K, K)"))
    assert case is not None and "k1, k1, k1" in case[2].text.replace("  ", " ")
    cmp_ = same_register_case(cat.get("VPCMPQ (K, K, XMM, XMM, I8)"))   # the write mask stays out
    assert cmp_ is not None and cmp_.start == "same register (op2=op3)" and cmp_.closed
    assert "k2{k1}, xmm1, xmm1" in cmp_.inst.text


def test_a_mask_destination_from_vector_sources_has_a_same_register_case(cat):
    # vpcmpgtq k, x, x is always 0 (uops.info's [0;3]): its sources the same register, closed back
    case = same_register_case(cat.get("VPCMPGTD (K, ZMM, ZMM)"))
    assert case is not None and case.closed and case.end == "op0 (K)"
    assert "vpcmpgtd k2, zmm1, zmm1" in case.inst.text
    assert same_register_case(cat.get("VPMOVQ2M (K, ZMM)")) is None            # one source
    assert not same_register_case(cat.get("VPXOR (XMM, XMM, XMM)")).closed


def test_the_end_of_a_pair_is_broken_too_only_the_start_is_kept(cat):
    shrd = cat.get("SHRD (R32, R32, CL)")
    pair = next(p for p in latency_pairs(shrd) if str(p) == "flags -> op0 (R32)")
    inst = instantiate(shrd)
    lines = breakers(shrd, inst, pair, None, set())
    assert f"mov {inst.regs[0]}, 0" in lines                  # the destination's own chain
    assert not any(x.startswith("test ") for x in lines)      # the start (flags) is left alone
    pair = next(p for p in latency_pairs(shrd) if str(p) == "op0 (R32) -> flags")
    lines = breakers(shrd, chain(shrd, pair) or inst, pair, None, {"rbx", "rcx"})
    assert not any(x.startswith("mov ") for x in lines) and any(x.startswith("test ") for x in lines)
    rol = cat.get("ROL (M64, CL)")                            # a memory end: stored over after the connector
    pair = next(p for p in latency_pairs(rol) if str(p) == "flags -> mem op0 (M64)")
    assert breakers(rol, instantiate(rol), pair, "[r14+0x40]", set()) == ["mov qword ptr [r14+0x40], 0"]
    pair = next(p for p in latency_pairs(rol) if str(p) == "addr op0 -> mem op0 (M64)")
    assert not any(x.startswith("mov qword") for x in breakers(rol, instantiate(rol), pair, "[r14+0x40]", set()))


def test_an_8_or_16_bit_register_destination_is_read(cat):
    # the write merges into the full register (uops.info lists such a destination as an input)
    mov16 = cat.get("MOV (R16, M16)")
    assert mov16.operands[0].read and "op0 (R16) -> op0 (R16)" in _pairs(mov16)
    mov32 = cat.get("MOV (R32, M32)")                          # a 32-bit write zeroes the upper half
    assert not mov32.operands[0].read


def test_an_implicit_register_read_and_written_under_two_names_is_broken(cat):
    # iced-x86 lists "cmpxchg ebx, ecx" as reading eax and writing rax: one register, read and written,
    # which carries its own chain through every other pair's loop
    from cyclebench.instructions.forms import divide_or_sqrt, read_and_written
    form = cat.get("CMPXCHG (R32, R32)")
    assert not any(i.read and i.write for i in form.implicit)
    assert read_and_written((i.register, i.read, i.write) for i in form.implicit) == {"rax": "rax"}
    pair = next(p for p in latency_pairs(form) if str(p) == "op0 (R32) -> op0 (R32)")
    assert "mov rax, 0" in breakers(form, chain(form, pair), pair, None, set())
    pair = next(p for p in latency_pairs(form) if str(p) == "eax -> rax")     # the start stays
    assert "mov rax, 0" not in breakers(form, chain(form, pair) or instantiate(form), pair, None, set())
    # the same rule for every form, by iced-x86's registers: each such register is broken in a pair
    # that does not start from an implicit register (not divide, square root, gathers or string pointers)
    missed = []
    for form in cat.offered():
        both = read_and_written((i.register, i.read, i.write) for i in form.implicit)
        head = form.mnemonic.upper()
        if not both or form.implicit_memory or divide_or_sqrt(head) or "GATHER" in head or "SCATTER" in head:
            continue
        for full, name in both.items():
            pair = next((p for p in latency_pairs(form) if p.start.kind != "implicit"), None)
            if pair is None or full.startswith("st"):         # nothing breaks the x87 stack
                continue
            lines = breakers(form, chain(form, pair) or instantiate(form), pair, "[r14+0x40]", set())
            # a narrow register is broken by its 32-bit name (isolate._register_breaker)
            names = {name, full} | ({C.gpr(full, 32)} if C.port_for_register(full).kind == "GPR" else set())
            if not any(any(f" {n}," in line for n in names) or line.split()[-1] in names for line in lines):
                missed.append(f"{form.name}: {pair} {lines}")
    assert not missed, "\n".join(missed[:20])
    # a VEX form's implicit vector registers (vzeroupper: xmm read, zmm written) are zeroed by VEX
    # idioms: the form runs on cores without AVX-512
    form = cat.get("VZEROUPPER")
    pair = latency_pairs(form)[0]
    lines = breakers(form, chain(form, pair) or instantiate(form), pair, None, set())
    assert lines and all(line.startswith("vpxor ") and "zmm" not in line for line in lines)


def test_a_narrow_register_is_broken_by_a_32_bit_write(cat):
    # `mov bl, 0` merges into rbx (Zen 4: `shl bl, cl; mov bl, 0` 2.00 cycles a copy, `mov ebx, 0`
    # 0.50): it adds a link to the chain it should break
    from cyclebench.instructions.isolate import _register_breaker
    sal = cat.get("SAL (R8, CL)")
    pair = next(p for p in latency_pairs(sal) if str(p) == "flags -> flags")
    lines = breakers(sal, instantiate(sal), pair, None, set())
    assert "mov ebx, 0" in lines and "mov bl, 0" not in lines
    assert _register_breaker(sal, "bx") == "mov ebx, 0" and _register_breaker(sal, "r9b") == "mov r9d, 0"
    # another operand in the same register (ch beside cl): only the operand's own width is written
    assert _register_breaker(sal, "ch", frozenset({"rcx"})) == "mov ch, 0"
