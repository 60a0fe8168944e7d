"""What each step of a latency connector costs (connectors.py builds the connectors).

Every step has a *reference loop*, itself and its inverse (``vmovq xmm1, rbx; vmovq rbx, xmm1``),
measured separately; a computing step takes at least a cycle, a store or a load at least none
where memory renaming bypasses it (:func:`lower_bound`).  A mask step is *pinned* (uops.info's
method): closed by a one-µop instruction whose own self-chain is measured, it costs the loop less
that instruction (:func:`pinned`).  The steps and their loops are tabled in connectors.py.
"""
from __future__ import annotations

import re

SIZE = {8: "byte", 16: "word", 32: "dword", 64: "qword", 128: "xmmword", 256: "ymmword",
        512: "zmmword"}
_M = "[r14+0x40]"


def _ref_store_gpr(bits):
    r = {8: "bl", 16: "bx", 32: "ebx", 64: "rbx"}[bits]
    return f"mov {SIZE[bits]} ptr {_M}, {r}; mov {r}, {SIZE[bits]} ptr {_M}"


def _ref_store_vec(bits):
    if bits == 16:
        return f"vpextrw word ptr {_M}, xmm1, 0; vpinsrw xmm1, xmm1, word ptr {_M}, 0"
    if bits == 8:
        return f"vpextrb byte ptr {_M}, xmm1, 0; vpinsrb xmm1, xmm1, byte ptr {_M}, 0"
    ins, reg = vec_move(bits)
    return f"{ins} {SIZE[bits]} ptr {_M}, {reg}1; {ins} {reg}1, {SIZE[bits]} ptr {_M}"


def vec_move(bits):
    return {32: ("vmovd", "xmm"), 64: ("vmovq", "xmm"), 128: ("vmovdqu", "xmm"),
            256: ("vmovdqu", "ymm"), 512: ("vmovdqu64", "zmm")}[bits]


_VEC_REGS = ((128, "xmm"), (256, "ymm"), (512, "zmm"))


def vand(reg: str) -> str:
    """``vpand`` (VEX) where it encodes the register, else ``vpandd`` (zmm, xmm16-31)."""
    return "vpandd" if reg.startswith("z") or int(re.sub(r"\D", "", reg)) >= 16 else "vpand"


# The VEC -> K step compares the chain's register with this one, zeroed in the connector's init
# (unsigned e >= 0 holds for every e: all ones), never with itself: a compare of one register with
# itself has a constant result, which a core may take as an idiom that waits for nothing (Zen 4
# does for vpcmpgtq k1, xmm1, xmm1: 0.33 cycles a loop with vpmovm2q, against 4.00 for vpcmpuq)
ZERO_VEC = 31


def vec2k(k: str, reg: str) -> str:
    """``vpcmpuq k, reg, v31, 5`` (not less than, unsigned): all ones in ``k`` from ``reg``'s value."""
    return f"vpcmpuq {k}, {reg}, {reg[0]}mm{ZERO_VEC}, 5"


ZERO_INIT = f"vpxord xmm{ZERO_VEC}, xmm{ZERO_VEC}, xmm{ZERO_VEC}"


# step name -> (reference loop, number of other instructions on its path)
REFERENCES: dict[str, tuple[str, int]] = {
    "alu": ("add rbx, rcx; sub rbx, rcx", 1),
    # GPR -> FLAGS is a compare, not a logic op: on a Raptor Cove core (family 6 model 207) a
    # cmov or setcc after test/and/or/xor runs 2.83 cycles a loop, after cmp/sub/add/inc 2.00
    "cmp": ("cmp rbx, 0; cmovc rbx, rbx", 1),
    "gpr2vec": ("vmovq xmm1, rbx; vmovq rbx, xmm1", 1),
    "gpr2k": ("kmovq k1, rbx; kmovq rbx, k1", 1),
    **{f"vec2k{b}": (f"{vec2k('k1', f'{r}1')}; vpmovm2q {r}1, k1", 1) for b, r in _VEC_REGS},
    "gpr2mm": ("movq mm1, rbx; movq rbx, mm1", 1),
    "gpr2k32": ("kmovd k1, ebx; kmovd ebx, k1", 1),       # the other routes (alternatives)
    "mm2vec": ("movq2dq xmm1, mm1; movdq2q mm1, xmm1", 1),
    **{f"store_g{b}": (_ref_store_gpr(b), 1) for b in (8, 16, 32, 64)},
    **{f"store_v{b}": (_ref_store_vec(b), 1) for b in (8, 16, 32, 64, 128, 256, 512)},
    **{f"store_k{b}": (f"kmov{'bwdq'[(b // 8).bit_length() - 1]} {SIZE[b]} ptr {_M}, k1; "
                       f"kmov{'bwdq'[(b // 8).bit_length() - 1]} k1, {SIZE[b]} ptr {_M}", 1)
       for b in (8, 16, 32, 64)},
    "store_mm64": (f"movq qword ptr {_M}, mm1; movq mm1, qword ptr {_M}", 1),
    # fill steps (memory chains): a sign extension of a narrow GPR into a full one, and a vector
    # AND of a register with itself, each its own self-chain
    "movsx": ("movsx ebx, bx; movsx ebx, bx", 1),
    "cmc": ("cmc; cmc", 1),                 # carry-flag fill (issue_fill.py), its own self-chain
    **{f"vand{b}": (f"{vand(f'{r}1')} {r}1, {r}1, {r}1", 0) for b, r in _VEC_REGS},
    **{f"vandpd{b}": (f"vandpd {r}1, {r}1, {r}1", 0) for b, r in _VEC_REGS[:2]},   # FP domain
}
# steps that share a reference loop with their inverse
_SAME_REF = {"cmov": "cmp", "vec2gpr": "gpr2vec", "k2gpr": "gpr2k", "mm2gpr": "gpr2mm",
             "k2gpr32": "gpr2k32", "vec2mm": "mm2vec",
             **{f"k2vec{b}": f"vec2k{b}" for b, _ in _VEC_REGS}}

# Pinning a step (uops.info's method for mask chains): close the step's loop with a one-µop
# instruction whose latency its own self-chain measures, and take that instruction's latency to be
# the same from each of its inputs (one µop reads them all when it issues).  The step then costs
# loop - closing exactly, and its partner in the plain reference loop costs the rest.
# step -> (loop of the step and the closing instruction, the closing instruction's self-chain)
PINNING: dict[str, tuple[str, str]] = {
    f"vec2k{b}": (f"{vec2k('k1', f'{r}1')}; vmovdqu64 {r}1{{k1}}, {r}1", f"vmovdqu64 {r}1{{k1}}, {r}1")
    for b, r in _VEC_REGS}
PINNED_PARTNER = {f"k2vec{b}": f"vec2k{b}" for b, _ in _VEC_REGS}
PIN_SLACK = 0.1              # a pinned latency may read this far below its 1-cycle lower bound
PIN_WHOLE = 0.2              # a pinned latency this close to a whole cycle count is that count


def whole_cycles(value: float) -> float:
    """A step's latency is a whole number of cycles; a loop's excess within PIN_WHOLE (Zen 4:
    ``vpcmpuq`` with a 512-bit masked move, 6.14 = 5 + 1 + 0.14) belongs to no single step
    (uops.info rounds the same way).  Values farther from a whole number are kept as measured."""
    n = round(value)
    return float(n) if abs(value - n) <= PIN_WHOLE else value


def pinned(loop: float, closing: float) -> float | None:
    """The latency of a pinned step from its loop and its closing instruction's self-chain, or
    None when the closing instruction carried no dependency (eliminated: below a cycle) or the
    step would read below its 1-cycle lower bound (the closing instruction's inputs differ)."""
    value = loop - closing
    if closing < 1.0 - PIN_SLACK or value < 1.0 - PIN_SLACK:
        return None
    return max(whole_cycles(value), 1.0)


def partner_of_pinned(step: str) -> str | None:
    """The pinned step whose value fixes ``step``: itself, or the step it shares a loop with."""
    return step if step in PINNING else PINNED_PARTNER.get(step)


RENAMED_ROUND_TRIP = 2.5     # a store+load round trip this fast went through memory renaming


def lower_bound(step: str, round_trip: float | None = None) -> float:
    """The latency a step has at least: 1 cycle for every executed µop.  A store or a load may
    cost 0 when memory renaming (Zen 2+) bypasses it; ``round_trip`` (its reference loop, store
    then load) tells: a round trip slower than RENAMED_ROUND_TRIP went through the store queue,
    where the store and the load each take at least a cycle."""
    if step.startswith(("store_", "load_")):
        return 1.0 if round_trip is not None and round_trip > RENAMED_ROUND_TRIP else 0.0
    return 1.0


def reference_of(step: str) -> str:
    """The reference-loop key of a step (``load_g64`` shares ``store_g64``'s loop)."""
    if step.startswith("load_"):
        return "store_" + step[5:]
    return _SAME_REF.get(step, step)
