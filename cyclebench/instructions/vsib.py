"""Gathers and scatters (VSIB memory operands): the index vector and the mask each copy needs.

A gather or scatter addresses ``[r14 + index*scale + disp]`` per lane, and clears its mask as the
lanes complete (the AVX2 forms' vector mask, the AVX-512 forms' K register). So:

* the index is register 15 of its class (``xmm15``/``ymm15``/``zmm15``), kept out of every other
  operand (catalogue.implicit_avoid) and zeroed once in init: every lane addresses the form's
  ``[r14+64]``, inside the data area (uops.info also runs them on a zero index);
* the mask is set to all ones before each copy (``vpcmpeqd m, m, m`` for the AVX2 forms,
  ``kxnorw k, k, k`` for AVX-512), so every copy loads or stores every lane. That instruction is
  part of the measured code: the figure includes one all-ones idiom per copy, and the form says so
  (throughput.py also runs the AVX2 copies with every set-up ahead of them all, which is cheaper);
* latency pairs through the mask, or through memory (a connector cannot store through a VSIB
  address), are not measured; the others are (instantiate.latency_pairs).
"""
from __future__ import annotations

from .forms import Form
from .operands import REGISTER_BY_NAME, full_register, register_name

NOTE = ("gather/scatter: index vector all zeros (every lane addresses the form's [r14+64]); the "
        "mask is set to all ones for each copy by one vpcmpeqd/kxnorw (all of them ahead of the copies "
        "where the masks allow), counted in the figure")


def vsib_operand(form: Form):
    return next((op for op in form.operands if op.slot is not None and op.slot.special == "vsib"), None)


def index_register(form: Form) -> int | None:
    """Register 15 of the index vector's class, or None for a form without VSIB memory."""
    op = vsib_operand(form)
    if op is None:
        return None
    cls = {"X": "XMM", "Y": "YMM", "Z": "ZMM"}[op.slot.name[-1]]
    return REGISTER_BY_NAME[f"{cls}15"]


def mask_positions(form: Form) -> set[int]:
    """Operand positions of the mask a gather or scatter clears: the K register (AVX-512), or
    the vector register after the VSIB operand (AVX2)."""
    op = vsib_operand(form)
    if op is None:
        return set()
    out = {o.pos for o in form.operands if o.is_mask}
    out |= {o.pos for o in form.operands if o.pos > op.pos and o.kind == "reg" and o.read and o.write}
    return out


def init(form: Form) -> list[str]:
    """Zero the index vector (a VEX xor clears the whole zmm register)."""
    reg = index_register(form)
    if reg is None:
        return []
    x = "xmm" + register_name(reg)[3:]
    return [f"vpxor {x}, {x}, {x}"]


def setup(form: Form, regs: dict[int, int], mask_reg: int) -> list[str]:
    """The per-copy lines that set the mask to all ones."""
    out = []
    for pos in sorted(mask_positions(form)):
        if form.operands[pos].is_mask:
            k = register_name(mask_reg)
            out.append(f"kxnorw {k}, {k}, {k}")
        else:
            v = register_name(regs[pos])
            out.append(f"vpcmpeqd {v}, {v}, {v}")
    return out


def avoid(form: Form) -> set[int]:
    """The index vector's full register: no operand may take it."""
    reg = index_register(form)
    return set() if reg is None else {full_register(reg)}
