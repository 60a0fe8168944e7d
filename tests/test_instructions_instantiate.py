"""Instantiated text assembles (GNU as) to the intended form, checked by decoding it back."""
import re

import pytest

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.instantiate import (chain, check, independent_copies, instantiate,
                                                 latency_pairs, verified)


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


@pytest.fixture(scope="module")
def offered_check(cat):
    forms = cat.offered()
    insts = [instantiate(f) for f in forms]
    return insts, check(insts)


def test_whole_catalogue_assembles_to_the_intended_form(offered_check):
    insts, results = offered_check
    ok = sum(r.ok for r in results)
    print(f"\n{ok}/{len(results)} offered forms: GNU as text decodes to the intended iced Code "
          f"and operands; the rest fall back to .byte")
    # alternate encodings GNU as never emits (SAL /6, TEST F7 /1, LFENCE E9..EF, reserved NOPs,
    # MOV C7 reg forms, ...) are the only failures. They are legacy and VEX forms every x86-64 of
    # ours offers (188 on a Zen 3 guest without AVX-512, where they are 5.5% of 3,404 forms), so
    # the bound is on their number, not on a share that depends on how many AVX-512 forms exist.
    failed = [r for r in results if not r.ok]
    assert len(failed) <= 200, len(failed)
    assert all(r.form.encoding in ("LEGACY", "VEX") for r in failed)


def test_fallback_makes_every_instance_exact(cat, offered_check):
    insts, results = offered_check
    bad = [i for i, r in zip(insts, results) if not r.ok]
    fixed = verified(bad)
    assert all(i.via_bytes and i.text.startswith(".byte ") for i in fixed)
    assert all(r.ok for r in check(fixed))


def test_registers_and_memory_follow_harness_rules(cat):
    for f in cat.offered():
        if any(op.kind == "implicit_mem" for op in f.operands):
            continue     # xlat [rbx+al], maskmovq [rdi]: init points those registers into an area
        inst = instantiate(f)
        text = inst.text.split("#")[0]
        for reg in inst.regs.values():
            assert reg not in ("r15", "rsp", "rbp", "r14", "r15d", "esp", "ebp"), (f.name, reg)
        for m in re.findall(r"\[([^\]]*)\]", text):
            assert m.startswith("r14"), (f.name, text)


def test_examples(cat):
    assert instantiate(cat.get("IMUL (R64, R64)")).text == "{load} imul rbx, rcx"
    assert instantiate(cat.get("ADD (R64, I32)")).text == "add rbx, 0x12345"
    assert instantiate(cat.get("VPADDQ_Z (ZMM, K, ZMM, ZMM)")).text == \
        "{evex} {load} vpaddq zmm1{k1}{z}, zmm2, zmm3"
    inst = instantiate(cat.get("VADDPD (ZMM, ZMM, M64_1to8)"))
    assert "[r14+0x40]{1to8}" in inst.text
    div = instantiate(cat.get("DIV (R64)"))
    assert "mov rbx, 1" in div.init            # non-zero divisor
    assert instantiate(cat.get("IMUL (R64, R64)"), regs={0: "rax", 1: "rdx"}).text == \
        "{load} imul rax, rdx"


def test_independent_copies_do_not_share_written_registers(cat):
    cps = independent_copies(cat.get("IMUL (R64, R64)"), 6)
    dests = [i.regs[0] for i in cps.instances]
    assert len(set(dests)) == 6
    assert cps.carried == []
    mul = independent_copies(cat.get("MUL (R64)"), 4)
    assert "rax" in mul.carried                 # RDX:RAX cannot be renamed apart
    adc = independent_copies(cat.get("ADC_11 (R64, R64)") or cat.get("ADC (R64, R64)"), 4)
    assert "flags" in adc.carried
    st = independent_copies(cat.get("MOV (M64, R64)") or cat.get("MOV_89 (M64, R64)"), 4)
    assert len({i.text for i in st.instances}) == 1     # plain stores share one address
    rmw = independent_copies(cat.get("ADD (M64, R64)"), 4)
    assert len({i.text for i in rmw.instances}) == 4    # read-modify-write: a line per copy
    zmm = independent_copies(cat.get("VPERMD (ZMM, ZMM, ZMM)"), 20)
    assert len({i.regs[0] for i in zmm.instances}) == 20  # EVEX may use zmm16-31


def test_latency_pairs(cat):
    pairs = {str(p): p for p in latency_pairs(cat.get("IMUL (R64, R64)"))}
    assert set(pairs) == {"op0 (R64) -> op0 (R64)", "op1 (R64) -> op0 (R64)",
                          "op0 (R64) -> flags", "op1 (R64) -> flags"}
    c = chain(cat.get("IMUL (R64, R64)"), pairs["op1 (R64) -> op0 (R64)"])
    assert c.regs[0] == c.regs[1]
    add_m = {str(p) for p in latency_pairs(cat.get("ADD (M64, R64)"))}
    assert {"mem op0 (M64) -> mem op0 (M64)", "addr op0 -> mem op0 (M64)",
            "op1 (R64) -> flags"} <= add_m
    adc = {str(p) for p in latency_pairs(cat.get("ADC_11 (R64, R64)") or cat.get("ADC (R64, R64)"))}
    assert "flags -> op0 (R64)" in adc and "flags -> flags" in adc
    movzx = {str(p): p for p in latency_pairs(cat.get("MOVZX (R64, R8)"))}
    c = chain(cat.get("MOVZX (R64, R8)"), movzx["op1 (R8) -> op0 (R64)"])
    assert c.text.endswith(f"{c.regs[0]}, {c.regs[1]}") and c.regs[1][:2] in c.regs[0] + "bl"
