"""uops.info's own chains for a form's memory and general-register pairs, measured here and read
its way, so that ``inst --why`` can tell a published figure its method does not reach on this core
from one that a difference of method explains.

uops.info (nanoBench ``tools/cpuBench/cpuBench.py``, ``getLatConfigLists``) closes these pairs
with chains of its own and reads a loop as ``int(cycles + .2)`` less the chain's latency, keeping
the least of a pair's configurations:

* **memory -> the same memory operand**: the form alone, repeated on one address; and the form
  followed by ``mov r12, [m]``, ten ``movsx r12, r12`` and ``mov [m], r12``, less that round
  trip's own reading (``MOV_10MOVSX_MOV``: the same without the form, with ``movsx r12, r12w``);
* **address -> flags**: the form and ``cmovCC base, base`` (less 1);
* **general register -> flags**: the form, ``cmovCC t, t``, ``movsx reg, t`` and ``cRep`` more
  ``movsx reg, reg`` (less 2 + cRep; ``cRep`` is 2 + 2 * ceil(throughput / 2));
* **an AVX-512 gather's write mask -> itself** (:func:`gather_mask_chain`): the form and cRep + 1
  ``kmovq k, k``.

Zen 4 (KVM guest), ``NOT (M8)`` (published ``[6;≤11]``): ``not byte ptr [r14]`` alone 7.31 cycles
a copy (7 its way), with the round trip 25.34 against the round trip's 17.86 (25 - 18 = 7);
``BTS (M64, R64)`` (published ``[6;≤47]``): ``bts [r14], rbx; cmovc r14, r14`` 8.00 (7),
``bts [r14], rbx; cmovc r15, r15; movsx rbx, r15d; 6 x movsx rbx, ebx`` 16.00 (8).
"""
from __future__ import annotations

import math
import re

from ..errors import CycleBenchError
from .connectors import cmov_for, gpr, Port, scratch_gpr
from .forms import Form
from .operands import VECTOR_CLASSES
from .instantiate import instantiate, latency_pairs, verified
from . import vsib
from .mask_chain import whole
from .session import Session, form_init, used_gprs, value_pattern

ROUND_TRIP_MOVSX = 10           # uops.info's MOV_10MOVSX_MOV chain
_MEM = re.compile(r"\[([a-z0-9]+)[^\]]*\]")
_WRITE_MASK = re.compile(r"\{(k[1-7])\}")
_WIDTH = {8: "byte", 16: "word", 32: "dword", 64: "qword"}


def c_rep(throughput: float | None) -> int:
    """uops.info's chain length for a form of this reciprocal throughput (2 + 2 * ceil(tp / 2))."""
    return min(100, 2 + 2 * int(math.ceil((throughput or 1.0) / 2)))


def round_trip(mem: str, bits: int, t: str, with_form: bool) -> list[str]:
    """``mov t, [m]``, ten ``movsx`` and ``mov [m], t`` at the memory operand's width: after the
    form uops.info sign-extends at that width (up to 32 bits), alone (its reference) from 16 bits."""
    w = gpr(t, bits)
    ext = gpr(t, min(32, bits)) if with_form else gpr(t, 16)
    return [f"mov {w}, {mem}"] + [f"movsx {t}, {ext}"] * ROUND_TRIP_MOVSX + [f"mov {mem}, {w}"]


def gather_mask_chain(form: Form, throughput: float | None = None) -> list[dict]:
    """An AVX-512 gather's write mask -> itself, uops.info's way (``getLatConfigLists``: K -> K is
    ``kmovq k, k`` cRep + 1 times; the other operands broken, here the destination by a zero
    idiom): the gather clears the mask without waiting for its loads, so the loop shows the
    mask's own path.  Zen 4: ``vgatherqps ymm1{k1}, [r14+zmm15]`` with 15 ``kmovq`` 19.61 and 19.93
    cycles in two runs (4 and 5 its way, published smallest 3); the xmm-index form 17.00 (2,
    published 0), the ymm-index 16.01 (1, published 1)."""
    masks = [form.operands[i] for i in vsib.mask_positions(form)]
    if not masks or masks[0].cls != "K":
        return []
    inst = verified([instantiate(form)])[0]     # as assembled: GNU as lacks some iced names
    gather = inst.text.splitlines()[-1]        # not the mask's set-up before it: the chain is the mask
    k, dst = _WRITE_MASK.search(gather), inst.regs.get(0)
    if not k or not dst or form.operands[0].cls not in VECTOR_CLASSES:
        return []
    k, rep = k.group(1), c_rep(throughput)
    return [{"pair": f"mask {k} -> mask {k}", "what": f"{rep + 1} kmovq, destination zeroed",
             "links": rep + 1, "code": [f"vpxord {dst}, {dst}, {dst}", gather] + [f"kmovq {k}, {k}"] * (rep + 1),
             "reference": None}]


def chains(form: Form, throughput: float | None = None) -> list[dict]:
    """The loops to measure: [{pair, what, code, reference (or None), links}], each read as
    ``int(cycles + .2) - links`` (less the reference's own reading where there is one)."""
    if form.encoding != "LEGACY":
        return gather_mask_chain(form, throughput)
    inst = verified([instantiate(form)])[0]     # as assembled: GNU as lacks some iced names
    m = _MEM.search(inst.text)
    taken = used_gprs(inst.text)
    out = []
    for pair in latency_pairs(form):
        s, e = pair.start, pair.end
        if e.kind == "flags" and form.flags_written:
            cmov = cmov_for(Port("FLAGS", flags=frozenset(form.flags_written)))
            if s.kind == "addr" and m:
                base = m.group(1)
                out.append({"pair": str(pair), "what": f"{cmov} {base}, {base}", "links": 1,
                            "code": [inst.text, f"{cmov} {base}, {base}"], "reference": None})
            elif s.kind == "op" and form.operands[s.pos].cls in ("GPR16", "GPR32", "GPR64") \
                    and not form.operands[s.pos].fixed and s.pos in inst.regs:
                reg, bits = inst.regs[s.pos], form.operands[s.pos].bits
                t, rep = scratch_gpr(taken), c_rep(throughput)
                code = [inst.text, f"{cmov} {gpr(t, bits)}, {gpr(t, bits)}",
                        f"movsx {gpr(reg)}, {gpr(t, min(32, bits))}"] + \
                    [f"movsx {gpr(reg)}, {gpr(reg, min(32, bits))}"] * rep
                out.append({"pair": str(pair), "what": f"{cmov}, {rep + 1} movsx", "links": 2 + rep,
                            "code": code, "reference": None})
        elif s.kind == e.kind == "mem" and s.pos == e.pos and m:
            bits = form.operands[s.pos].bits
            out.append({"pair": str(pair), "what": "the form alone on one address", "links": 0,
                        "code": [inst.text], "reference": None})
            if bits in _WIDTH:
                t = scratch_gpr(taken)
                out.append({"pair": str(pair), "what": f"a mov, {ROUND_TRIP_MOVSX} movsx, mov round trip",
                            "links": 0, "code": [inst.text] + round_trip(m.group(0), bits, t, True),
                            "reference": round_trip(m.group(0), bits, t, False)})
    return out


def measure(session: Session, form: Form, throughput: float | None = None) -> list[tuple[str, float]]:
    """(variant text, uops.info's reading) for each chain of :func:`chains` that ran."""
    out = []
    try:
        todo = chains(form, throughput)
        inst = instantiate(form) if todo else None
    except (CycleBenchError, ValueError, KeyError):
        return []
    init = form_init(form, inst) if inst else None
    for c in todo:
        try:
            m = session.measure(c["code"], init, pattern=value_pattern(form))
            ref = session.measure(c["reference"], init) if c["reference"] else None
        except CycleBenchError:
            continue
        value = whole(m.value) - c["links"] - (whole(ref.value) if ref else 0)
        cycles = f"{m.value:.2f} cycles" + (f" less the round trip's {ref.value:.2f}" if ref else "")
        less = f" minus {c['links']}" if c["links"] else ""
        out.append((f"latency pair {c['pair']}, uops.info's chain ({c['what']}, {cycles}, read as "
                    f"int(cycles + .2){less})", float(max(0, value))))
    return out
