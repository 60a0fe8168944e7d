"""Vector loads share one load path, whatever instruction carries them.

The model (infer.py) gives each form the resources its own readings show, and a load folded into
an EVEX operation was often fitted onto other resources than the plain vector loads' path: on
Zen 4 the model charges ``movsd xmm, [m]`` one of its vector-load pipe's two slots a cycle, and
``vpunpckhbw ymm{k}{z}, ymm, [m]`` none of it.  Measured with ``cyclebench asm`` on Zen 4 (cycles
per copy; two of each form, every load from its own address):

| block | cycles |
| --- | ---: |
| 2 ``vpunpckhbw ymm{k1}{z}, ymm2, [m256]`` | 1.00 |
| 2 ``movsd xmm, [m64]`` | 1.00 |
| both | 2.00 |
| 2 ``vpunpckhbw`` + 2 ``vmovntdqa xmm, [m128]`` | 2.00 |
| 2 ``vorps ymm{k1}{z}, ymm2, [m32]{1to8}`` + 2 ``movsd`` | 2.00 |
| 2 ``vpaddd ymm, ymm, [m256]`` + 2 ``movsd`` | 2.00 |
| 2 ``vpminuw zmm{k1}{z}, zmm2, [m512]`` + 2 ``movsd`` | 3.00 |
| 2 ``vmovdqu64 zmm, [m512]`` + 2 ``movsd`` | 3.00 |

So every load of a vector operand, broadcast or not, takes the path's slot as a plain vector load
does, a 512-bit one two.  :func:`view` gives every form that loads a vector operand at least the
share of the path that a plain vector load of the model (a form that only loads a vector
register) takes, of no wider a memory operand, for each plain load its memory operand counts as
(:func:`slots`: read from the load pipes the model's readings gave it, where a 512-bit load-op
form takes twice a plain load's share, counted only on resources whose probe the form was mixed
with: a 512-bit form is never read beside a legacy-SSE probe, and its nought there said one slot
where ``cyclebench asm`` on Zen 4 reads two: ``vcvttps2dq zmm{k}{z}, [m512]`` with two ``vmovsd
xmm, [m64]`` 2.00 cycles, with four 3.10, with two ``vcvtsi2sd xmm, xmm, [m64]`` 2.00); the path
is the resources that bound all the model's plain vector loads.  A memory operand no wider than
a plain load of the model counts one: the ratios read a multi-µop form's other µops too (two
instances of the 133 Zen 4 forms, measured from nothing, read ``mpsadbw xmm, [m128], imm``'s
2.0 cycles beside the plain loads' 0.33 as six loads, 3.0 cycles of the path where its readings
beside the path's probe gave 2.0).  Where the model holds no plain vector load, nothing changes.
"""
from __future__ import annotations

from dataclasses import replace

from .mixes import upper_state_apart
from .model import FRONT_END, Model
from .upper import BINDING      # a usage within this share of the form's time alone bounds the form
from ..operands import VECTOR_CLASSES as VECTOR

ALIKE = 0.1             # plain loads' usages of a resource this close count one load there

_views: dict[int, tuple[Model, Model]] = {}


def _memory(form):
    """The form's memory operand when it reads a vector's worth of data (its slot is a vector
    register's, broadcasts included), else None."""
    op = form.memory_operand
    if op is None or op.kind != "mem" or not op.read or op.slot is None or op.slot.cls not in VECTOR:
        return None
    return op


def _plain(form) -> bool:
    """A form that only loads a vector register: one written vector register besides the memory
    operand, no mask, nothing else read."""
    others = [op for op in form.operands if op.kind != "mem"]
    return (_memory(form) is not None and len(others) == 1 and others[0].kind == "reg"
            and others[0].cls in VECTOR and others[0].write and not others[0].read and not form.implicit)


def path(model: Model, catalogue) -> tuple[set[str], list[tuple[int, float]], dict[str, float]]:
    """(the resources that bound every plain vector load of the model, [(memory bits, share)] per
    plain load, the least share of those resources it takes, {resource: share} of the resources
    every plain vector load takes alike, within :data:`ALIKE`: what one load counts there), or
    (set(), [], {}) where the model holds no plain vector load.  A plain load's nought on a
    resource whose probe it was never mixed with (:func:`unread`: a 256-bit plain load beside a
    legacy-SSE probe) is no reading and neither holds a resource out nor sets a share; where no plain
    load was read beside any of the path's probes, the model holds no path."""
    shared, plain, bounds = None, [], set()
    for name in model.usage:
        form = catalogue.by_name.get(name)
        if form is None or not _plain(form):
            continue
        use = {r: u for r, u in model.usage[name].items() if r != FRONT_END}
        bound = model.alone.get(name) or max(use.values(), default=0.0)
        top = {r for r, u in use.items() if bound and u >= BINDING * bound}
        blind = unread(model, form, catalogue)
        shared = top | blind if shared is None else shared & (top | blind)
        bounds |= top
        plain.append((name, _memory(form).bits, blind))
    shared = (shared or set()) & bounds
    if not shared:
        return set(), [], {}
    alike = {}
    for r in set.intersection(*(set(model.used(n)) | blind for n, _, blind in plain)) - shared:
        v = [model.usage[n][r] for n, _, blind in plain if r not in blind]
        if v and max(v) <= (1 + ALIKE) * min(v):
            alike[r] = sum(v) / len(v)
    shares = [(bits, min(model.usage[n][r] for r in shared - blind)) for n, bits, blind in plain if shared - blind]
    if not shares:      # no plain load was read beside the path's probes: no share of it is known
        return set(), [], {}
    return shared, sorted(shares), alike


def slots(use: dict[str, float], alike: dict[str, float], unread=frozenset()) -> int:
    """How many plain vector loads a form's memory operand counts as: the least, over the
    resources every plain load takes alike, of its usage there over a plain load's, rounded
    (Zen 4: a 512-bit load-op form takes 0.40 of the store probe's resource where a plain load
    takes 0.17, two; a broadcast none, one), at least one.  ``unread``: resources whose probe the
    form was never mixed with (:func:`unread`); its usage there is no reading and is left out."""
    ratios = [use.get(r, 0.0) / u for r, u in alike.items() if r not in unread]
    return max(1, round(min(ratios))) if ratios else 1


def unread(model: Model, form, catalogue) -> set[str]:
    """The resources whose probe no reading could put beside ``form``: a legacy-SSE probe beside
    a form that names a 256- or 512-bit register, or the other way round (mixes.py refuses such
    mixes: the legacy write waits for the upper vector state).  The model's usage of these is
    nought for want of a reading, not measured nought."""
    out = set()
    for r, name in model.probes.items():
        probe = catalogue.by_name.get(name)
        if probe is not None and upper_state_apart(probe, form):
            out.add(r)
    return out


def view(model: Model, catalogue) -> Model:
    """The model with every vector-loading form charged at least a plain vector load's share of the
    load path (the share of the widest plain load of no wider a memory operand) for each plain
    load its memory operand counts as (:func:`slots`); the model itself where nothing changes.
    Kept per model object."""
    old = _views.get(id(model))
    if old is not None and old[0] is model:
        return old[1]
    resources, shares, alike = path(model, catalogue)
    usage = model.usage
    if resources:
        widest = max(bits for bits, _ in shares)
        usage = {}
        for name, use in model.usage.items():
            form = catalogue.by_name.get(name)
            op = form and _memory(form)
            if op is None:
                usage[name] = use
                continue
            # no wider than a plain load of the model: one load, as that plain load is; only a
            # wider operand's count is read from the load pipes' ratios, which a multi-µop
            # form's other µops inflate (Zen 4: mpsadbw xmm, [m128] read as six)
            count = 1 if op.bits <= widest else slots(use, alike, unread(model, form, catalogue))
            share = max((s for bits, s in shares if bits <= op.bits), default=shares[0][1])
            # never more than the form's own time alone, which its busiest resource bounds (an
            # Emerald Rapids model's only 512-bit "plain load" was a conversion, 2.0 cycles: its
            # share had made every vector load 2.0, a 0.56-cycle FMA too)
            top = model.alone.get(name) or float("inf")
            usage[name] = dict(use, **{r: max(use.get(r, 0.0), min(share * count, top)) for r in resources})
    out = model if usage is model.usage else replace(model, usage=usage)
    _views[id(model)] = (model, out)
    return out
