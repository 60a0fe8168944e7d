"""A 512-bit load beside narrower vector loads: the load path taken in program order, measured.

vector_loads.py gives every vector load its share of the load path (Zen 4: two loads of up to
256 bits a cycle, a 512-bit load both), and the resource bound adds the shares.  On Zen 4 that
is right for narrow loads alone, not beside a 512-bit one: a 512-bit load has a cycle of the path
to itself, and the narrow loads between two of them pair only with each other, in program order.
``cyclebench asm --cpu 1``, cycles an iteration (each narrow load from its own address):

| block | cycles | shares added |
| --- | ---: | ---: |
| ``vcvttps2dq zmm1{k1}{z}, [m512]`` alone; ``vmovdqu64 zmm1, [m512]`` alone | 1.00; 1.00 | 1.00 |
| the conversion + 1 ``vxorps xmm, xmm, [m128]`` (or ``vmovss``, ``vmovsd``, ``movss``, ``xorps``, a ``ymm`` load, a broadcast) | 2.00 | 1.50 |
| ``vmovdqu64 zmm1, [m512]`` + 1 ``vxorps`` | 2.00 | 1.50 |
| the conversion + 2, 3, 4 ``vxorps`` | 2.00, 3.00, 3.00 | 2.00, 2.50, 3.00 |
| 2 conversions, then 2 ``vxorps`` | 3.00 | 3.00 |
| conversion, ``vxorps``, conversion, ``vxorps`` | 4.00 | 3.00 |
| ``vmovdqu ymm1, [m256]`` + 1 ``vxorps`` | 1.00 | 1.00 |
| the conversion + 1 ``cmp dword ptr [m], ebx`` (an integer load) + 1 ``vxorps`` | 2.00 | |

:func:`probe` measures a 512-bit load alone, beside one narrow load and beside two; where the one
costs as much as the two (Zen 4: 1.00, 2.00, 2.00) the core takes the path so, and ``cyclebench
ports`` keeps that as a results-file record (type ``load_order``).  :func:`in_order` is then the
block's floor: each load of the probe's width a cycle, and each run of narrower vector loads between
two of them (the loop wrapping round) whole cycles of the path's loads a cycle.  A core that pairs
a narrow load with a 512-bit one (the one costing half the two) or a file without the record gets
no floor.
"""
from __future__ import annotations

import math

from .vector_loads import _memory, path

RECORD = "load_order"
LABEL = "vector loads in program order (load_order.py)"
WIDE = "vmovdqu64 zmm1, zmmword ptr [r14+0xc0]"              # the probe's 512-bit load
# The narrow loads on lines and 8-byte banks of their own: at 0x200 and 0x240 (one bank) the pair
# read 2.52 cycles beside the wide load in 1 of 5 processes (where the lines sit in the cache,
# redrawn at each fill) and flipped the record; at 0x248, 2.00-2.04 in 5 of 5.
NARROW = ["vmovsd xmm3, qword ptr [r14+0x200]", "vmovsd xmm4, qword ptr [r14+0x248]"]
BITS = 512                                                    # the width of the probe's load


def alone_in_cycle(times: dict[str, float]) -> bool:
    """Whether the probe's times (keyed as :func:`probe` keeps them) say a 512-bit load has its cycle
    of the path to itself: one narrow load beside it costs nearer two narrow loads' cost than one's half."""
    one, two = times["wide and one"] - times["wide"], times["wide and two"] - times["wide"]
    return two > 0.25 and one > 0.75 * two


def probe(session) -> dict:
    """The probe on this CPU (``session``: an instructions.session.Session): the record {"type":
    "load_order", "whole", "times"}; whole None, with the reason, where the CPU has no AVX-512."""
    if not session.avx512:
        return {"type": RECORD, "whole": None, "why": "no AVX-512 on this CPU"}
    times = {"wide": session.measure([WIDE], []).value,
             "wide and one": session.measure([WIDE] + NARROW[:1], []).value,
             "wide and two": session.measure([WIDE] + NARROW, []).value}
    return {"type": RECORD, "whole": alone_in_cycle(times), "times": {k: round(v, 3) for k, v in times.items()}}


def stored(path_) -> tuple[bool, str]:
    """(a 512-bit load has its cycle of the load path to itself, where that came from)."""
    from .run import stored_figure
    whole, t = stored_figure(path_, RECORD, "whole", "not measured: the model file has no load-order probe")
    if whole is None:
        return False, t
    return bool(whole), (f"measured by cyclebench ports: a 512-bit load {t.get('wide')} cycles, with one "
                         f"narrow load {t.get('wide and one')}, with two {t.get('wide and two')}")


def in_order(forms: list[str], model, catalogue) -> float:
    """Cycles the block's vector loads take on the load path in program order (the loop wrapping
    round): each load of :data:`BITS` a cycle to itself, each run of narrower vector loads between
    two of them whole cycles of the path's plain loads a cycle (``1 / share``, vector_loads.path);
    0.0 for a block without such a load, where the resources' shares say it.  ``model``: the
    vector_loads view."""
    resources, shares, _ = path(model, catalogue)
    if not resources:
        return 0.0
    per_cycle = round(1 / min(s for _, s in shares))
    seq = []
    for f in forms:
        form = catalogue.by_name.get(f)
        op = form and f in model.usage and _memory(form)
        if op:
            seq.append(op.bits >= BITS)
    if per_cycle < 2 or not any(seq):
        return 0.0
    start = seq.index(True)
    cycles, run = 0, 0
    for whole in seq[start:] + seq[:start]:
        if whole:
            cycles, run = cycles + 1 + math.ceil(run / per_cycle), 0
        else:
            run += 1
    return cycles + math.ceil(run / per_cycle)
