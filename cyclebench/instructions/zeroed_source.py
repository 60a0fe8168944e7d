"""A scalar form's pass-through source, measured as uops.info's configuration leaves it: zeroed.

A scalar vector form (``vroundsd x1, x2, x3``: x1 gets round(x3[63:0]) in its low element and
x2's upper lanes) reads its first source only for the lanes it passes through.  uops.info runs
every vector form after ``VZEROALL`` and also with its source registers written by the form itself
from a zeroed register (nanoBench ``tools/cpuBench/cpuBench.py``, ``getRegMemInit`` and "source
registers initialized by an instruction of the same kind"), closes the pair with ``VANDPD src,
dst, dst`` and more ``VANDPD src, src, src`` (``getChainInstrForVectorRegs``), and keeps the
lowest of its configurations.  Some cores do not wait for a source that the renamer knows is
zero: on Zen 4 that loop (five ``vandpd``) runs 8.00 cycles with 1.0 in every lane and 1.74
with the source zeroed by a zero idiom, faster than the five ``vandpd`` alone; ``vgetexpsd``
reads 8.00 either way, ``vaddss`` (which computes with the source's low element) 8.00.  A
loop faster than its own connector carries no dependency, and uops.info publishes the pair as 0
(``VROUNDSD (XMM, XMM, XMM, I8)`` ``[0;3]``, ``VGETEXPSD (XMM, XMM, XMM)`` ``3``).

So each such pair is measured that way too (:func:`measure`); when the loop runs faster than
its connector allows, the pair reads 0 with the label :data:`LABEL` and the reading with the
form's usual operand values is kept beside it (:func:`kept`); a loop that would read so but stayed
unstable leaves the pair unstable (its figure still to measure), not kept as a dependency.  Which forms: a write-only XMM
destination (no merge masking: a merge reads the destination, and its own chain stays), an XMM
first source, and a narrower last source (iced's ``XMMM64``, ``RM32``, ``M64`` ...), so the
first source is the one whose upper lanes pass through; not divide or square root (uops.info
gives those chains of their own).
"""
from __future__ import annotations

import re

from ..errors import CycleBenchError
from .forms import Form, divide_or_sqrt
from .instantiate import LatencyPair, instantiate, verified
from .renaming import ZERO_BELOW
from .session import Session, form_init, value_pattern

LINKS = 5               # VANDPD links, as uops.info's cRep + 1 for a form of throughput up to 2
LABEL = "no dependency on the source when it is zeroed (the pass-through lanes; value-dependent)"
METHOD = "source zeroed, vandpd chain (uops.info's configuration)"
_NARROW = re.compile(r"(XMMM|RM|R|M)(8|16|32|64)")


def _narrow_last_source(form: Form) -> bool:
    """The iced operand after the first source is narrower than a vector register."""
    tokens = form.code_name.split("_")
    try:
        i = next(i for i, t in enumerate(tokens) if t == "XMM")     # the destination
    except StopIteration:
        return False
    rest = [t for t in tokens[i + 1:] if not t.startswith("K1")]
    return len(rest) >= 2 and rest[0] == "XMM" and bool(_NARROW.fullmatch(rest[1]))


def applies(form: Form, pair: LatencyPair) -> bool:
    """A pair from a scalar VEX/EVEX form's first XMM source to its write-only XMM destination."""
    s, e = pair.start, pair.end
    if form.encoding not in ("VEX", "EVEX") or s.kind != "op" or e.kind != "op" or s.pos == e.pos:
        return False
    if divide_or_sqrt(form.name):
        return False
    src, dst = form.operands[s.pos], form.operands[e.pos]
    regs = [op for op in form.operands if op.kind == "reg" and not op.is_mask]
    return (src.kind == dst.kind == "reg" and src.cls == dst.cls == "XMM" and src.read and not src.write
            and dst.write and not dst.read and len(regs) >= 2 and regs[1].pos == src.pos
            and _narrow_last_source(form))


def _zero(reg: str) -> str:
    op = "vpxord" if int(re.sub(r"\D", "", reg)) >= 16 else "vpxor"
    return f"{op} {reg}, {reg}, {reg}"


LEGACY_INT = "pshufd/pand"     # uops.info's integer chain for a legacy SSE form


def vector_chain(text: str, src: str, dst: str, op: str = "vandpd", links: int = LINKS) -> list[str]:
    """uops.info's chain for a pair between two vector registers (nanoBench
    ``getChainInstrForVectorRegs``): the form, ``op src, dst, dst``, then ``links`` - 1 more
    ``op src, src, src``; for LEGACY_INT, ``pshufd src, dst, 0`` then ``pand src, src``."""
    if op == LEGACY_INT:
        return [text, f"pshufd {src}, {dst}, 0"] + [f"pand {src}, {src}"] * (links - 1)
    return [text, f"{op} {src}, {dst}, {dst}"] + [f"{op} {src}, {src}, {src}"] * (links - 1)


def code(form: Form, pair: LatencyPair):
    """(instance, loop lines, init lines): the form from the zeroed source into the destination,
    then LINKS ``vandpd`` back from the destination to the source."""
    inst = instantiate(form)
    src, dst = inst.regs[pair.start.pos], inst.regs[pair.end.pos]
    if src == dst:
        raise ValueError(f"{form.name}: one register for both ends of {pair}")
    return inst, vector_chain(inst.text, src, dst), [_zero(src)]


def measure(session: Session, form: Form, pair: LatencyPair, pattern: int | None = None) -> dict:
    """The pair in uops.info's zeroed-source configuration: {"value", "cycles", "code", ...}.
    ``value`` is 0 when the loop ran faster than its LINKS one-cycle links allow, else None (the
    configuration shows a dependency, and the pair keeps its own measurement)."""
    out = {"method": METHOD, "value": None, "cycles": None, "code": None, "stable": None, "error": None}
    try:
        inst, lines, zero = code(form, pair)
        verified([inst])
        m = session.measure(lines, form_init(form, inst) + zero,
                            pattern=value_pattern(form) if pattern is None else pattern)
    except (CycleBenchError, ValueError, KeyError) as e:
        out["error"] = str(getattr(e, "cause", e))
        return out
    link = session.step_bounds("vand128")[0]
    out.update(cycles=m.value, code=m.code, stable=m.stable, links=LINKS, link_latency=link)
    if m.value - LINKS * link < ZERO_BELOW:
        if m.stable:
            out["value"] = 0.0
        else:           # it would read 0 but stayed unstable: a reading still to make (kept)
            out["unsettled"] = True
    return out


def kept(doc: dict, zeroed: dict) -> dict:
    """``doc`` (the pair with the form's usual values), or 0 with LABEL when the zeroed source
    carries no dependency; the other reading is kept beside it either way."""
    doc["zeroed_source"] = zeroed
    if zeroed.get("unsettled"):
        doc["stable"] = False       # the pair's figure may be 0: the form is unsettled, measured again
    if zeroed.get("value") != 0.0 or doc.get("value") is None or doc["value"] < ZERO_BELOW:
        return doc
    usual = {k: doc.get(k) for k in ("value", "bound", "method", "code")}
    doc.update(value=0.0, bound="exact", lower=0.0, upper=0.0, label=LABEL, usual_values=usual)
    return doc
