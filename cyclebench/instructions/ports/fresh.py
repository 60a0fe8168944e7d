"""A form's time with its merge input written afresh before each copy: measured, a floor.

A form's time alone (infer.py) is read with its copies rotating through a register pool, so a
form that reads the vector register it writes (a merge, ``cvtsi2ss xmm1, rbx``, or an operand,
``addss xmm1, xmm2``) chains each register through the copies that share it.  In a block another
instruction usually writes that register first, and the form then runs at another time, which
no resource of the model says.  Zen 4, ``cyclebench asm --cpu 1``, cycles a copy:

| block | copies of the form, written registers | cycles a copy |
| --- | --- | ---: |
| ``cvtsi2ss xmmN, rbx`` | 16 (the time alone) / 14 / 12 / 8 / 4 / 2 | 1.08 / 1.08 / 1.51 / 1.52 / 1.60 / 1.50 |
| ``movaps xmmN, xmm9; cvtsi2ss xmmN, rbx`` | 1 / 4 / 8 | 1.26 / 1.27 / 1.27 |
| ``movsd xmm1, [r14]; cvtsi2ss xmm1, rbx`` | 1 | 1.28 |
| ``vcvtsi2ss xmmN, xmm15, rbx`` (merges nothing) | 1 / 8 / 15 | 1.25 / 1.26 / 1.24 |
| ``movaps xmmN, xmm9`` and ``cvtss2sd xmmN, [r14]`` / ``cvtsi2sd xmmN, [r14]`` / ``movlhps`` / ``unpcklps`` | 4 | 0.50 / 0.50 / 0.33 / 0.33 (their times alone) |

The conversion from a general register runs 1.26 cycles whenever its merge input is not one of
14 or more chains of its own; the 1.08 of its time alone is that arrangement's.  :func:`probe`
times each vector form of the model that reads a register it writes, one copy after another on
four registers, each copy's register written before it by a full-width register move from a
register the form does not use; :func:`floors` keeps the times above the form's time alone and
the two instructions' front-end share by more than :data:`OVER`.  ``cyclebench ports`` keeps them
as a record of type ``fresh``; the predictor takes ``n`` copies of such a form at least ``n``
times its fresh time (:class:`FreshFloor`).  A file without the record predicts as before.
"""
from __future__ import annotations

from dataclasses import dataclass

from .bound import Bound
from ..operands import VECTOR_CLASSES as VECTOR

RECORD = "fresh"
PER_FORM = True            # run.record gives probe() the results file's forms
COPIES = 4                 # each on its own register: no chain, the form's own time
OVER = 0.10                # the fresh time counts where it is this much above the others
SOURCE = {"XMM": "xmm15", "YMM": "ymm15", "ZMM": "zmm15"}     # the moves' source, kept from the form


def merging(form) -> list:
    """The form's vector register operands that it reads and writes (masks excepted)."""
    return [op for op in form.operands if op.kind == "reg" and not op.fixed and not op.is_mask
            and op.cls in VECTOR and op.read and op.write]


def block(form) -> tuple[list[str], list[str]] | None:
    """(code, init) of the probe for one form: COPIES copies, each after a move that writes its
    merged register whole, or None where the form merges none (or its copies stay linked)."""
    from ..copies import independent_copies
    from ..session import form_init
    ops = merging(form)
    if not ops:
        return None
    cps = independent_copies(form, COPIES, avoid=tuple(SOURCE[op.cls] for op in ops))
    if cps.carried:
        return None
    move = "movaps" if form.encoding == "LEGACY" else "vmovaps"
    code = []
    for inst in cps.instances:
        code += [f"{move} {inst.regs[op.pos]}, {SOURCE[op.cls]}" for op in ops] + [inst.text]
    init = form_init(form, cps.instances[0])
    init += [s for s in cps.init if s not in init]
    return code, init


def probe(session, forms=()) -> dict:
    """The fresh times of ``forms`` (names) on this CPU: {"type": "fresh", "times": {form: cycles
    a copy}}; a form that merges nothing, or whose block does not measure, is left out."""
    from ..catalogue import Catalogue
    from ...errors import CycleBenchError
    from .mixes import best_of_two
    cat = Catalogue.load()
    times = {}
    for name in forms:
        f = cat.get(name)
        b = block(f) if f is not None and (not f.encoding.startswith(("EVEX", "MVEX")) or session.avx512) else None
        if b is None:
            continue
        try:
            times[name] = round(best_of_two(session, *b, COPIES).value, 3)    # as the mixes are read
        except CycleBenchError:
            continue
    return {"type": RECORD, "times": times}


def floors(times: dict[str, float], model) -> dict[str, float]:
    """Form -> its fresh time, where that is above its time alone and the probe's front-end share
    (two instructions a copy) by more than :data:`OVER`."""
    front = 2 / model.width if model.width else 0.0
    return {f: t for f, t in times.items() if f in model.usage
            and t > (1 + OVER) * max(model.alone.get(f, 0.0), front)}


@dataclass
class FreshFloor(Bound):
    """A block's copies of the forms :func:`floors` keeps, at their fresh times (one of the
    predictor's floors: predict.Loaded.bounds)."""
    times: dict[str, float]

    def describe(self) -> str:
        return "each copy at least its fresh time: " + ", ".join(f"{f} {t:.2f}" for f, t in sorted(self.times.items()))

    def floor(self, counts: dict[str, int]) -> tuple[float, str]:
        v = sum(n * self.times[f] for f, n in counts.items() if f in self.times)
        return v, "merge input written afresh (fresh.py)"


def stored(path, model) -> tuple[FreshFloor | None, str]:
    """(the floor of a results file's fresh record, where it came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no fresh-merge probe"
    kept = floors(r.get("times") or {}, model)
    if not kept:
        return None, f"measured by cyclebench ports: {len(r.get('times') or {})} forms, none slower than alone"
    return FreshFloor(kept), ("measured by cyclebench ports: " + ", ".join(
        f"{f} {t:.2f} (alone {model.alone.get(f, 0.0):.2f})" for f, t in sorted(kept.items())))
