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
the twin), and no more than :data:`PASSES` of the resource's probe form's own passes (its usage of
it): Zen 4's ``cvtsi2ss xmm, r64`` holds the four FP pipes' resource 1.08 cycles, its time alone,
four of ``orps``'s passes; something else sets that time (four copies on four registers run 6.38
cycles, 7.90 after a ZMM load), and two random mixes of it beside ``vcvtpd2qq zmm`` read 7.00 and
6.00 cycles where its transfer to the twin said 8.00 and 7.00 (without it 7.23 and 6.00).

Witnesses are few where the forms read beside both probes are few: Zen 4's multiply pipes have
none, and ``vpmulld zmm1, zmm2, zmm3; mulss xmm1, xmm2`` runs 2.00 cycles where the legacy
multiply's resource and the 512-bit one, held apart, said 1.00.  So :func:`probe` reads each pair of
the model's probe forms that the rule kept apart side by side, under a dirty upper state (the
upper-state probe's ZMM write in the init, as its own probe has it), beside each form alone under
the same state, in the ratio of copies that makes the two sides take about equal time: where the
two are one resource the pair reads the sum of the sides, where they are apart the larger side,
and where one is nested in the other (the multiply pair in the four FP pipes) between.  A pair that
reads at least the larger side and :data:`SHARE` of the smaller is one resource.  The load path's
resources are left out (a probe form bound by its loads, as ``xorps xmm, [m128]``, would read its
pipes' sharing as its loads').  ``cyclebench ports`` keeps the readings as a record of type
``apart``; predict.load sets them as :attr:`Model.read_apart`, and :func:`twins` takes a pair read
there for what it read, the witnesses only where the probe read nothing.  Zen 4: 35 pairs of 12
probe forms, 47 readings (each the better of two), about 5 seconds a results file; the legacy
side, the wide side and both, cycles a unit (``ports-again.jsonl``'s record; ``ports.jsonl``'s read
some sides 0.91-0.95 and the same verdicts): ``mulss`` and ``vpmulld zmm`` 1.00, 1.00, 2.00;
``cmpss`` and ``vcvtpd2qq zmm{k}, [m64]{1to8}`` 1.00, 1.00, 2.00 and ``orps`` and ``vpcmpeqd ymm``
0.52, 0.50, 1.00 (the two pairs the witnesses found); ``mulss`` and ``vpcmpeqd ymm`` 1.00, 1.00,
1.50 (nested); ``cmpss`` and ``vpmulld zmm`` 1.00, 1.00, 1.32 (apart).  Seven pairs read as one in
both files: those two, the multiply pair beside ``vpmulld zmm`` and ``vprolvq ymm``, ``orps`` beside
``vpxord zmm``, ``pmovsxwq`` beside ``vpermd zmm`` and ``vpmovswb``.
"""
from __future__ import annotations

import math
from dataclasses import replace
from statistics import median

from ...errors import CycleBenchError
from .crowding import crowding, whole
from .mixes import best_of_two, legacy_sse, mix_code, upper_state_apart
from .model import FRONT_END, USED, Model
from .upper import BINDING, DIRTY_ZMM

ALIKE = 0.10          # the witnesses' median relative difference at most this: one resource
WITNESSES = 2         # forms read beside both probes, holding a unit of one, needed at least
RECORD = "apart"      # the results-file record of cyclebench ports that holds the probe's readings
PER_MODEL = True      # run.record gives the probe the file's model
SHARE = 0.9           # the pair read this share of its faster side over its slower one: one resource
MOST = 4              # copies of either probe form in the pair's unit at most
PASSES = 2            # a usage above this many of the probe's passes is no pipe usage (module docstring)
SWITCH = 2.0          # a pair above this many times its sides' sum read a state switch, no sharing

_views: dict[int, tuple[Model, Model]] = {}


def _apart(model: Model, catalogue, name: str, resource: str) -> bool:
    """No reading put the form beside the resource's probe (upper_state_apart)."""
    form, probe = catalogue.by_name.get(name), catalogue.by_name.get(model.probes.get(resource, ""))
    return form is not None and probe is not None and upper_state_apart(form, probe)


def twins(model: Model, catalogue) -> list[tuple[str, str]]:
    """Pairs of resources whose probes were never mixed with each other and which the probe read
    as one (:attr:`Model.read_apart`), or, where it read none, which every form read beside both
    uses alike (module docstring)."""
    crowd = crowding(model)
    out = []
    probes = sorted(model.probes)
    for i, a in enumerate(probes):
        for b in probes[i + 1:]:
            if not _apart(model, catalogue, model.probes[a], b):
                continue
            read = model.read_apart.get(frozenset((model.probes[a], model.probes[b])))
            if read is not None:
                if read:
                    out.append((a, b))
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


def _pass(model: Model, resource: str) -> float:
    """One pass of the resource: its probe form's own usage of it (no limit where it has none)."""
    return model.usage.get(model.probes.get(resource, ""), {}).get(resource) or math.inf


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
                    if (u >= USED and u >= BINDING * bound and u <= PASSES * _pass(model, read)
                            and _apart(model, catalogue, name, blind) and not _apart(model, catalogue, name, read)):
                        new[blind] = max(new.get(blind, 0.0), u)
            usage[name] = new
    out = model if usage is model.usage else replace(model, usage=usage, twins=pairs)
    _views[id(model)] = (model, out)
    return out


def _time(session, forms, counts) -> float:
    """Cycles a unit of the mix ``counts`` (mixes.mix_code), legacy-SSE beside wide allowed, under
    a dirty upper state (a 256-bit one on a core without AVX-512)."""
    code, init, u = mix_code(forms, counts, upper=True)
    dirty = DIRTY_ZMM if session.avx512 else ["vpxor ymm9, ymm9, ymm10"]    # as upper.probe: once, in the init
    return best_of_two(session, code, init + dirty, u).value


def probe(session, model: Model) -> dict:
    """Each pair of the model's probe forms that the upper-state rule kept apart (a legacy-SSE form
    and a wide one), timed side by side under a dirty upper state, beside each alone under the
    same state: {"type": "apart", "pairs": [{"legacy", "wide", "counts", "times", "shared"}]}.
    The pair's copies are in the ratio that makes the two sides take about equal time, so a
    shared resource reads their sum and separate ones the larger side (module docstring)."""
    from ..catalogue import Catalogue
    from .repair import load_path
    from .vector_loads import path
    cat = Catalogue.load()
    loads = path(model, cat)[0] | load_path(model, cat)[0]      # the pipes are the question, not the loads
    forms = {f: cat.get(f) for r, f in model.probes.items() if r not in loads}
    sides = sorted((l, w) for l in forms for w in forms if forms[l] is not None and forms[w] is not None
                   and legacy_sse(forms[l]) and upper_state_apart(forms[l], forms[w]))
    alone: dict[str, float] = {}
    pairs = []
    for legacy, wide in sides:
        try:
            for f in (legacy, wide):
                if f not in alone:
                    alone[f] = _time(session, forms, {f: 1})
            tl, tw = alone[legacy], alone[wide]
            nl, nw = min(((a, b) for a in range(1, MOST + 1) for b in range(1, MOST + 1)),
                         key=lambda c: (round(abs(math.log(c[0] * tl / (c[1] * tw))), 2), c))   # the fewest copies
            both = _time(session, forms, {legacy: nl, wide: nw})
        except CycleBenchError:
            continue
        times = {"legacy": round(nl * tl, 3), "wide": round(nw * tw, 3), "both": round(both, 3)}
        pairs.append({"legacy": legacy, "wide": wide, "counts": [nl, nw], "times": times, "shared": verdict(times)})
    return {"type": RECORD, "pairs": pairs}


def verdict(times: dict) -> bool | None:
    """Whether a pair's readings (cycles of its legacy side, its wide side and both) show one
    resource: the pair took at least the larger side and :data:`SHARE` of the smaller.  A pair far
    above the sum of its sides (:data:`SWITCH`) read something no shared pipe does, and tells
    nothing (None): on Zen 3 each legacy-SSE write after a 256-bit one switches the vector state,
    and every pair read 338-356 cycles where its sides took 0.5-3.7 (transition.py); Sapphire
    Rapids read 226 and 449 times the sum."""
    hi, lo = max(times["legacy"], times["wide"]), min(times["legacy"], times["wide"])
    if times["both"] > SWITCH * (hi + lo):
        return None
    return times["both"] >= hi + SHARE * lo


def stored(path) -> tuple[dict[frozenset, bool | None], str]:
    """(probe-form pair -> read as one resource, or None where the pair told nothing, where that came
    from) of a results file."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return {}, "not measured: the model file has no probe of the resources kept apart"
    # the verdict read again from the times: files written before a state switch told nothing kept True
    read = {frozenset((p["legacy"], p["wide"])): verdict(p["times"]) if p.get("times") else p["shared"]
            for p in r.get("pairs") or ()}
    one, none = sum(v is True for v in read.values()), sum(v is None for v in read.values())
    return read, (f"measured by cyclebench ports: {len(read)} pairs read side by side, {one} of them one resource"
                  + (f", {none} telling nothing (a state switch)" if none else ""))
