"""Crowding: a usage read where a wider resource was full binds only while that resource is full.

The mixes the model is inferred from keep every resource they load busy, and there a form whose
µop may go to many pipes loads the narrower resources among them too: a core picks a µop's pipe
when it is dispatched, spreading the form over all its pipes whether or not a narrower form needs
some of them.  The model keeps that as a small usage of the narrower resource (Zen 4: the ALU
forms take 0.13-0.16 of the multiplier's resource).  Below saturation the core has room
elsewhere and the narrow form runs unhindered.  Measured with ``cyclebench asm --cpu 1`` on Zen 4 (cycles an iteration, every
instruction on a register chain of its own), beside the 133-form model's prediction charging
every usage and charging crowding only where the forms' own resource is full:

| block | measured | every usage | crowding where full | and not nested |
| --- | ---: | ---: | ---: | ---: |
| 3 ``imul r, rbx`` | 3.00 | 3.00 | 3.00 | 3.00 |
| 3 ``imul`` + 3 ``add r, rbx`` | 3.00 | 3.47 | 3.00 | 3.00 |
| 3 ``imul`` + 6 ``add`` | 3.00 | 3.94 | 3.00 | 3.00 |
| 3 ``imul`` + 9 ``add`` | 5.00 | 4.41 | 3.00 | 3.00 |
| 3 ``imul`` + 12 ``add`` | 6.00 | 4.89 | 4.50 | 4.50 |
| 2 ``shl r, 5`` + 2 ``add`` | 1.00 | 1.50 | 1.50 | 1.00 |
| 2 ``shl`` + 4 ``add`` | 1.50 | 2.00 | 2.00 | 1.50 |

The multiplier is crowded once the ALUs are full (9 ``add`` and the three ``imul`` are 12 µops
on four ALUs in 3 cycles), and not before; the model puts no ``imul`` on an ALU, so it sees them
full only later.  The shifts are no such case (:func:`nested`, below).

A usage crowds (:func:`crowding`) where it is less than one unit-cycle of its resource (the
resource's units: the instances its probe runs a cycle alone) and the form runs alone faster than
that probe, so its µops have more pipes than the resource has; a trace below model.USED too (it
counts as no use: charging it in every block made it the firmest use of all).  A form's own
resources are the others that bound it alone.  :func:`relieved` drops a form's crowding usages from a block unless
its own resources are full: loaded, without any crowding, to within :data:`FULL` of the block's
bound.  A form with no own resource keeps them all.

A crowding usage of a resource whose every whole user also takes a whole unit of the crowding
form's own resource is never charged (:func:`nested`): the narrower resource is then a subset of
the wider one in the model too, whose load already counts both, and oldest-first issue gives the
narrow forms their units.  Zen 4's shifts and three-part LEAs hold a two-unit resource and an ALU
each, and the ALU forms' quarter of that resource (their even spread over the four ALUs) said 2
``shl`` + 2 ``add`` take 1.50 cycles where they run 1.00, at the ALUs' four a cycle.  The
multiplier stays crowded: the model has ``imul r, r`` take no ALU, so only the crowding says the two
meet (3 ``imul`` + 9 ``add`` run 5.00).  A resource and its twins (apart.py: one pipe group the
upper-state rule probed twice, :attr:`Model.twins`) count as one here: a wide form that holds the
four FP pipes' wide view holds the legacy forms' own resource (on Zen 4, once the 512-bit multiply
took the legacy multiply pair too, ``orps``'s crowding of that pair was no longer nested, and a
legacy kernel block of 2.17 cycles read 2.42).  Nor is a crowding usage charged in a block where no form
holds its resource whole (:func:`unneeded`): with no narrow form to lose a unit, the spread is
counted on the crowding forms' own resources (the shifts' 0.42 of the multiplier's resource put 2
``shl`` + 2 ``add`` at 1.15 once the ALU forms' share of the shifts' was gone).

A crowding usage of a one-unit pipe binds only where the pipe's group is full (:func:`pressed`):
the group is the resource its crowding forms hold whole (:func:`group`; Zen 4's multiplier: the
four ALUs), whose forms take the pipe only when no other unit is free.  A load-op ALU form's own
resource is the load path, and ``mov r8d, [m]; xor eax, eax; imul r8d, [m]; add r8d, [m]`` fills
that path (three loads a cycle) with the ALUs half used: it runs 1.00 cycles (cyclebench block),
where the add's 0.22 of the multiplier, charged for its full own resource, said 1.22.

A usage the readings show below saturation is no crowding (:func:`shown`, kept as
``Model.firm`` by predict.load for the resources of forms that move a vector result to the
integer side, shared.integer_side): the form is never relieved of it, though a block where no
form holds the resource whole still drops it.  Zen 4: ``ucomiss`` beside one, two or four ``add``
reads 1.38, 1.61 and 2.00 cycles (bench/transfer_grid.py), a cycle or more over the ALU forms
alone at every count, where the relief said 1.00, 1.00 and 2.00.  Taken for every probe's
resource, the readings mark 71 forms' usages of 16 resources and compiled blocks lose 42 of 617.
"""
from __future__ import annotations

from dataclasses import replace

from .model import FRONT_END, Model
from .upper import BINDING

FULL = BINDING        # a resource loaded within this share of the block's bound is full
WHOLE = 0.85          # a usage of this many unit-cycles or more is a µop held to the resource
SHOWN = 0.10          # a reading this much over both streams alone shows a usage below saturation

_cache: dict = {}
CACHE_MODELS = 16     # every prediction derives models of its own (without): keep the last few only


def _kept(key, model: Model, compute):
    """``compute()`` for ``model``, kept while it is one of the last CACHE_MODELS asked about."""
    old = _cache.get(key)
    if old is not None and old[0] is model:
        return old[1]
    if len(_cache) >= CACHE_MODELS:
        _cache.clear()
    _cache[key] = (model, compute())
    return _cache[key][1]


def units(model: Model, resource: str) -> int:
    """Instances of the resource's probe a cycle alone (1 where it has no probe or is slower)."""
    alone = model.alone.get(model.probes.get(resource, ""))
    return max(1, round(1 / alone)) if alone and alone < 1 else 1


def crowding(model: Model) -> dict[str, dict[str, float]]:
    """Form -> its crowding usages (see the module docstring), for the forms that have any.
    Kept per model object."""
    return _kept(id(model), model, lambda: _crowding(model))


def _crowding(model: Model) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for f, use in model.usage.items():
        alone = model.alone.get(f)
        if not alone:
            continue
        for r, u in use.items():
            probe = model.probes.get(r)
            if r == FRONT_END or u <= 0 or probe in (None, f) or probe not in model.alone:
                continue
            if u * units(model, r) < WHOLE and alone < BINDING * model.alone[probe]:
                out.setdefault(f, {})[r] = u
    return out


def shown(model: Model, mixes: list[tuple[dict[str, int], float]], probes=None) -> dict[str, set[str]]:
    """Form -> the resources of its crowding usages that its readings show it holds below
    saturation: read beside the resource's probe where its own stream is not full (under FULL of
    the slower of the two streams alone), the pair runs slower than that by more than
    :data:`SHOWN`, which no spread over idle pipes explains.  Zen 4: two ``add`` beside a
    ``ucomisd`` read 1.62 cycles where the compare alone takes 1.00 (one transfer to the integer
    side holds the ALUs at any ratio); two ``add`` beside an ``imul`` 1.00, as crowding says."""
    crowd = _crowding(model)
    out: dict[str, set[str]] = {}
    for counts, t in mixes:
        if len(counts) != 2 or not all(model.alone.get(f) for f in counts):
            continue
        for f, p in (tuple(counts), tuple(counts)[::-1]):
            for r in crowd.get(f, {}):
                if model.probes.get(r) != p or (probes is not None and p not in probes):
                    continue
                mine, bound = counts[f] * model.alone[f], max(counts[f] * model.alone[f], counts[p] * model.alone[p])
                if mine < FULL * bound and t > bound * (1 + SHOWN):
                    out.setdefault(f, set()).add(r)
    return out


def whole(model: Model, form: str, resource: str) -> bool:
    """The form holds at least one unit of the resource for the cycles it takes (no crowding)."""
    return model.usage.get(form, {}).get(resource, 0.0) * units(model, resource) >= WHOLE


def nested(model: Model) -> dict[str, dict[str, float]]:
    """The crowding usages (form -> resource -> cycles) whose resource's whole users all hold a
    whole unit of one of the crowding form's own resources: never charged (module docstring)."""
    return _kept(("nested", id(model)), model, lambda: _nested(model))


def _nested(model: Model) -> dict[str, dict[str, float]]:
    crowd = crowding(model)
    users: dict[str, list[str]] = {}
    for f, use in model.usage.items():
        for r in use:
            if r != FRONT_END and r not in crowd.get(f, {}) and whole(model, f, r):
                users.setdefault(r, []).append(f)
    same: dict[str, set[str]] = {}             # a resource and its twins (apart.view): one resource
    for a, b in model.twins:
        same.setdefault(a, {a}).add(b)
        same.setdefault(b, {b}).add(a)
    out: dict[str, dict[str, float]] = {}
    for f, rs in crowd.items():
        mine = own(model, f)
        for r, u in rs.items():
            if users.get(r) and any(all(any(whole(model, w, t) for t in same.get(o, {o})) for w in users[r])
                                    for o in mine):
                out.setdefault(f, {})[r] = u
    return out


def unnested(model: Model) -> Model:
    """The model without its :func:`nested` usages (the model itself where it has none); its own
    crowding usages are the rest."""
    return _kept(("unnested", id(model)), model, lambda: without(model, nested(model)))


def unneeded(model: Model, forms) -> Model:
    """The model with the crowding usages dropped of every resource that none of ``forms`` holds
    whole: crowding is a narrow form losing its units to wider ones, and with no narrow form in
    the block the wider forms' spread over those units is counted on their own resources."""
    crowd = crowding(model)
    needed = {r for f in forms for r in model.usage.get(f, {}) if r not in crowd.get(f, {}) and whole(model, f, r)}
    drop = {f: [r for r in crowd[f] if r not in needed] for f in forms if f in crowd}
    drop = {f: rs for f, rs in drop.items() if rs}
    return without(model, drop)


def without(model: Model, drop) -> Model:
    """The model with the usages ``drop`` names (form -> resources) left out; the model itself
    where it names none."""
    if not drop:
        return model
    usage = dict(model.usage)
    for f, rs in drop.items():
        usage[f] = {r: u for r, u in usage[f].items() if r not in rs}
    return replace(model, usage=usage)


def own(model: Model, form: str) -> set[str]:
    """The resources that bound the form alone, its crowding usages left out."""
    crowd = crowding(model).get(form, {})
    use = {r: u for r, u in model.usage.get(form, {}).items() if r != FRONT_END and r not in crowd}
    bound = model.alone.get(form) or max(use.values(), default=0.0)
    return {r for r, u in use.items() if bound and u >= BINDING * bound}


def uncrowded(model: Model, forms) -> Model:
    """The model with the crowding usages of ``forms`` dropped (the model itself where none has any)."""
    crowd = crowding(model)
    return without(model, {f: [r for r in crowd[f] if r not in model.firm.get(f, ())] for f in forms if f in crowd})


def relieved(model: Model, loads: dict[str, float], bound: float) -> set[str]:
    """The forms of a block whose crowding usages do not bind: ``loads``, the block's resource loads
    under :func:`uncrowded` for all its forms, and ``bound``, the block's figure under it; a form
    is relieved when none of its own resources is full."""
    return {f for f in crowding(model)
            if own(model, f) and all(loads.get(r, 0.0) < FULL * bound for r in own(model, f))}


def group(model, pipe: str, loads=frozenset()) -> str | None:
    """The resource, the load resources ``loads`` apart, held whole by the most forms whose
    crowding usages take ``pipe`` (Zen 4: the four ALUs, whose forms spread over the multiplier's
    pipe): the pipe is one of its units, and the crowding stands for the two meeting.  None where
    no form crowds the pipe."""
    crowd = crowding(model)
    count: dict[str, int] = {}
    for g, rs in crowd.items():
        if pipe in rs:
            for r in model.usage[g]:
                if r != FRONT_END and r not in rs and r not in loads and whole(model, g, r):
                    count[r] = count.get(r, 0) + 1
    return max(count, key=count.get) if count else None


def pressed(model: Model, forms, loads: dict[str, float], bound: float) -> dict[str, list[str]]:
    """Form (of ``forms``) -> its crowding usages of a one-unit pipe whose group (:func:`group`)
    is not full (``loads`` and ``bound`` as :func:`relieved` takes them): the pipe's crowding is
    its group's forms finding no other unit, whatever else holds the crowding form (Zen 4: ``add
    r32, [m]`` beside a plain load and ``imul r32, [m]`` fills the load path, not the ALUs, and
    the four run 1.00 cycles, not the crowding's 1.22).  Usages the readings show stay."""
    groups = _kept(("groups", id(model)), model, lambda: {
        r: group(model, r) for r in model.resources if units(model, r) == 1 and model.probes.get(r)})
    out: dict[str, list[str]] = {}
    for f in forms:
        rs = [r for r in crowding(model).get(f, {}) if groups.get(r) and r not in model.firm.get(f, ())
              and loads.get(groups[r], 0.0) < FULL * bound]
        if rs:
            out[f] = rs
    return out
