"""Forms that take more than one front-end slot, read from the mixes the inference measured.

The model gives every form one instruction's share of the front end, ``1 / width``.  A form the
core splits into two dispatch slots (Zen 4: ``lea rax, [rsi+rdi*8-0x1]``, a base, an index and a
displacement) runs alone as fast as its pipes allow, so its time alone cannot tell; beside a form
of other pipes it shows: one such ``lea`` with two ``vpcmpeqd ymm`` (four vector pipes) reads 0.67
cycles, the front end's (2 + 2) / 6, where neither stream alone takes more than 0.50 and one slot
says 0.50.  The inference's solve, holding the form to one slot, put such readings on other
resources instead.

:func:`front_slots` gives a form ``s`` slots (``s / width`` of the front end, up to
:data:`MOST`) where, among its readings beside one other form:

* none runs faster than the front end with ``s`` slots (within half the mending tolerance), and
* :data:`~.infer.CONFIRMED` of them are the front end's with ``s`` slots (within that tolerance),
  the front end with ``s - 1`` falls short of them, and neither form's stream alone explains them.

A form that passes the front end on another path (:func:`bypasses`) takes none of it here as
in the predictor.
"""
from __future__ import annotations

import math

from .infer import CONFIRMED, FASTER
from .model import FRONT_END, Model

MOST = 4              # slots a form may take: more would be a microcoded sequence, no mix reads it


def bypasses(model: Model, form: str) -> bool:
    """Whether the predictor charges ``form`` no front-end share: it uses no resource, runs alone
    faster than the front end could pass it (infer's rule, Zen 4's long NOPs), and the model names
    no share of its own; a model without a front end (no reading set its width) charges none."""
    return (bool(model.width) and form in model.usage and FRONT_END not in model.usage[form]
            and not model.used(form) and model.alone.get(form, math.inf) < FASTER / model.width)


def share(model: Model, form: str) -> float:
    """The front-end share one instance of ``form`` takes, as the predictor charges it."""
    if bypasses(model, form):
        return 0.0
    return model.usage.get(form, {}).get(FRONT_END, 1 / model.width)


def front_slots(model: Model, mixes: list[tuple[dict[str, int], float]], tolerance: float) -> list[str]:
    """On ``model`` in place: each form's front-end share raised to the slots its readings show
    (see the module docstring); one line per form changed.  Every form is judged with the others
    at the shares they had before, so the order of the forms does not count."""
    if not model.width:
        return []
    before = {f: share(model, f) for f in model.usage}
    found = {}
    for f in sorted(model.usage):
        if FRONT_END in model.usage[f] or bypasses(model, f):
            continue
        rows = [(c, t) for c, t in mixes if f in c and len(c) == 2 and all(g in before for g in c)]

        def front(counts, s):
            return sum(n * (s / model.width if g == f else before[g]) for g, n in counts.items())

        for s in range(2, MOST + 1):
            if any(front(c, s) > t * (1 + tolerance / 2) for c, t in rows):
                break                    # a reading ran faster than s slots allow
            shown = [t for c, t in rows
                     if front(c, s) >= t * (1 - tolerance / 2) > front(c, s - 1)
                     and max(n * model.alone.get(g, 0.0) for g, n in c.items()) < t * (1 - tolerance / 2)]
            if len(shown) >= CONFIRMED:
                found[f] = (s, len(shown))
    notes = []
    for f, (s, n) in found.items():
        model.usage[f][FRONT_END] = s / model.width
        notes.append(f"{f}: front end {s} slots ({n} readings the front end binds)")
    return notes
