"""Resources the upper-state rule kept apart: one pipe group probed twice, read as two.

mixes.py never mixes a legacy-SSE form with a form that names a 256- or 512-bit register (the
mix would measure the legacy write's wait for the upper vector state, not shared resources).  So
where one group of pipes is probed by a legacy-SSE blocker and again by a wide one, the model
holds two resources for it, and neither side's usage of the other's resource was ever read: the
legacy forms load one, the wide forms the other, and a block of both loads each with half its
work.  On the 133-form Zen 4 model the FP23 pipes are probed by ``cmpss`` (R7) and by the
512-bit ``vcvtpd2qq zmm{k}, [m64]{1to8}`` (R21); ``addpd``, ``cvtsi2sd`` and ``cmpless`` take
R7, ``vcvttps2dq zmm{k}{z}, [m512]`` R21, and random mixes of them read a cycle more than either
resource says (``addpd xmm1; ...; vcvttps2dq zmm1{k1}{z}, [m]; add rcx, [m]; cvtsi2sd xmm1, [m]``:
3.00 cycles, the model 2.17; the two doubled legacy writes, 1.00 each under the ZMM write, and
the conversion's 1.00 add up to 3.00).

The forms that may be mixed with both probes (neither legacy-SSE nor wide: an EVEX XMM form, an
FP compare, a convert to a GPR) were read beside both, and tell whether the two resources are
one (:func:`twins`).  Its witnesses are those forms that hold a whole unit of either resource
(crowding.whole), neither usage a crowding share (crowding.py: a fast form's spread over a
narrower resource says nothing of which pipes it is); at least :data:`WITNESSES` of them, and
the median of their usages' relative differences within :data:`ALIKE` (the median, since a
pair's fit can leave one form a third above a unit-cycle on one side).  On Zen 4 R7 and R21:
``ucomisd``, ``ucomiss``, ``comiss``, ``cvttsd2si r32, [m64]``, 0.50 each on both; the FP0123
resources of ``andps`` (R13) and the 256-bit ``vpcmpeqd`` (R10): three EVEX XMM forms at 0.25 on
both, ``cvttsd2si`` 0.27 and 0.25, the three compares 0.35-0.38 and 0.25.  No other pair of the
model's resources comes within 10%.  :func:`view` then gives each form whose usage of one twin
was never read its usage of the other, where that usage is one of the form's own pipes (within
upper.BINDING of its time alone: a fitted share the form does not need alone says nothing about
the twin).
"""
from __future__ import annotations

from dataclasses import replace
from statistics import median

from .crowding import crowding, whole
from .mixes import upper_state_apart
from .model import FRONT_END, USED, Model
from .upper import BINDING

ALIKE = 0.10          # the witnesses' median relative difference at most this: one resource
WITNESSES = 2         # forms read beside both probes, holding a unit of one, needed at least

_views: dict[int, tuple[Model, Model]] = {}


def _apart(model: Model, catalogue, name: str, resource: str) -> bool:
    """No reading put the form beside the resource's probe (upper_state_apart)."""
    form, probe = catalogue.by_name.get(name), catalogue.by_name.get(model.probes.get(resource, ""))
    return form is not None and probe is not None and upper_state_apart(form, probe)


def twins(model: Model, catalogue) -> list[tuple[str, str]]:
    """Pairs of resources whose probes were never mixed with each other and which every form read
    beside both uses alike (module docstring)."""
    crowd = crowding(model)
    out = []
    probes = sorted(model.probes)
    for i, a in enumerate(probes):
        for b in probes[i + 1:]:
            if not _apart(model, catalogue, model.probes[a], b):
                continue
            gaps = []
            for name, use in model.usage.items():
                if name in (model.probes[a], model.probes[b]) or catalogue.by_name.get(name) is None:
                    continue
                if _apart(model, catalogue, name, a) or _apart(model, catalogue, name, b):
                    continue
                ua, ub = use.get(a, 0.0), use.get(b, 0.0)
                if {a, b} & crowd.get(name, {}).keys() or not (whole(model, name, a) or whole(model, name, b)):
                    continue
                gaps.append(abs(ua - ub) / max(ua, ub))
            if len(gaps) >= WITNESSES and median(gaps) <= ALIKE:
                out.append((a, b))
    return out


def view(model: Model, catalogue) -> Model:
    """The model with each form's unread usage of a twin resource set to its own pipe usage of the
    other (module docstring); the model itself where nothing changes.  Kept per model object."""
    old = _views.get(id(model))
    if old is not None and old[0] is model:
        return old[1]
    pairs = twins(model, catalogue)
    usage = model.usage
    if pairs:
        usage = {}
        for name, use in model.usage.items():
            own = {r: u for r, u in use.items() if r != FRONT_END}
            bound = model.alone.get(name) or max(own.values(), default=0.0)
            new = dict(use)
            for a, b in pairs:
                for blind, read in ((a, b), (b, a)):
                    u = use.get(read, 0.0)
                    if (u >= USED and u >= BINDING * bound and _apart(model, catalogue, name, blind)
                            and not _apart(model, catalogue, name, read)):
                        new[blind] = max(new.get(blind, 0.0), u)
            usage[name] = new
    out = model if usage is model.usage else replace(model, usage=usage)
    _views[id(model)] = (model, out)
    return out
