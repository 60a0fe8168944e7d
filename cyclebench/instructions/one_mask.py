"""Throughput copies of a form that writes a mask register from memory, with the core's mask
registers left to them: every copy writes one mask register (uops.info's single-instruction run
writes one too), and each mask register the copies do not name is zeroed ahead of them by the zero
idiom ``kxorw k, k, k``.

Such copies are limited by how many mask writes fit in flight (window.py), and a mask register
that holds a value keeps a rename register of its own while one zeroed by the idiom does not: on
a Zen 4 guest 16 ``vptestmq k2, ymm1, [m]`` read 0.61 a copy with the other mask registers holding
values and 0.50 with them zeroed, copies writing k1-k7 0.61, and 0.58 with k0 zeroed
(``bench/mask_memory_copies.py``, four rounds).  Of 12 runner processes of the zeroed copies, 2 read
0.63, as if unzeroed: setting the mask registers to their initial state by XRSTOR gives no such
gain, so an interrupt between the zeroing and the copies may undo it.  The copies are measured this
way too and the faster kept (throughput.py), with a note naming the register and the zeroing.
"""
from __future__ import annotations

import re

from ..errors import CycleBenchError
from .copies import independent_copies
from .fastest import faster
from .forms import Form
from .instantiate import verified
from .session import Session, form_init

MASKS = tuple(f"k{i}" for i in range(8))
ZERO = "kxorw {0}, {0}, {0}"       # AVX512F: every core with mask registers has it


def destination(form: Form, inst) -> str | None:
    """The mask register ``inst`` only writes (not a write mask, nor one it reads: copies writing
    that one register would chain), or None."""
    for op in form.operands:
        if op.kind == "reg" and op.cls == "K" and op.write and not op.read and not op.is_mask and op.pos in inst.regs:
            return inst.regs[op.pos].lower()
    return None


def named(lines: list[str], extra=()) -> set[str]:
    """The mask registers ``lines`` name (a .byte fallback's comment counts too: zeroing less
    is safe)."""
    return {k for k in MASKS if re.search(rf"\b{k}\b", "\n".join(lines), re.IGNORECASE)} | set(extra)


def build(form: Form, n: int, avoid: tuple[str, ...]):
    """(copies, init, register, zeroed) of ``n`` copies all writing one mask register, the mask
    registers they do not name zeroed at the end of the init; None if the form writes no mask
    register or the copies cannot be built so."""
    first = independent_copies(form, 1, avoid=avoid).instances[0]
    dest = destination(form, first)
    if dest is None:
        return None
    cps = independent_copies(form, n, avoid=tuple(avoid) + tuple(k for k in MASKS if k != dest))
    verified(cps.instances)
    if any(destination(form, i) != dest for i in cps.instances):
        return None
    init = form_init(form, cps.instances[0]) + [s for s in cps.init if s not in cps.instances[0].init]
    code = [i.text for i in cps.instances]
    zeroed = [k for k in MASKS if k not in named(code + list(init), ["k1"] if form.mask else [])]
    return cps, init + [ZERO.format(k) for k in zeroed], dest, zeroed


def kept(session: Session, form: Form, doc: dict, earlier: dict | None, usual: tuple, n: int,
         avoid: tuple[str, ...], pattern: int) -> tuple:
    """``usual`` (measurement, copies, init of the kept copies) or the one-register copies' in its
    place when they are faster beyond noise (fastest.faster); the earlier run's
    one-register copies where their reading was adopted.  ``doc["one_mask"]`` records the reading
    beside the usual copies' figure."""
    m, _, init = usual
    before = (earlier or {}).get("one_mask") or {}
    try:
        if before.get("kept") and m.code == earlier.get("code"):
            cps, init, _, _ = build(form, n, avoid)
            doc["one_mask"] = dict(before)
            return m, cps, init
        built = build(form, n, avoid)
        if built is None:
            return usual
        cps, init, dest, zeroed = built
        one = session.measure([i.text for i in cps.instances], init, per=n, pattern=pattern)
    except (CycleBenchError, ValueError, KeyError, IndexError, TypeError):
        return usual
    doc["one_mask"] = {"register": dest, "zeroed": zeroed, "value": one.value, "stable": one.stable,
                       "with": m.value, "kept": faster(m, one) is one}
    return (one, cps, init) if doc["one_mask"]["kept"] else usual


def notes(doc: dict) -> list[str]:
    """The note for a figure read from the one-register copies."""
    one = doc.get("one_mask") or {}
    if not one.get("kept"):
        return []
    return [f"every copy writes {one['register']}, and the mask registers the copies do not name "
            f"({', '.join(one['zeroed'])}) are zeroed ahead of them by the zero idiom kxorw k, k, k: a zeroed mask "
            "register holds no rename register, which leaves more for the copies in flight; copies rotating "
            f"through the mask registers read {one['with']:.2f}"]
