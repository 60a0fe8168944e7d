"""Bypass delays between vector execution domains: measured, and charged on the chains.

Some cores forward a vector result from one cluster of execution units to another a cycle late:
a value an integer-vector or shuffle unit computes reaches a floating-point unit after one more
cycle, and back.  Each form's latency (cyclebench inst) is read on a chain of the form with
itself, inside one domain, so a block whose chain crosses domains runs slower than its
latencies add up to.  Zen 3, ``cyclebench asm --cpu 0``, cycles an iteration:

| chain | cycles | latencies |
| --- | ---: | ---: |
| ``paddd xmm1, xmm2; paddd xmm1, xmm3`` | 2.00 | 1 + 1 |
| ``addss xmm1, xmm3; addss xmm1, xmm2`` | 5.95 | 3 + 3 |
| ``xorps xmm1, xmm2; addps xmm1, xmm3`` | 4.03 | 1 + 3 |
| ``vfmadd213ps xmm1, xmm2, xmm3; addps xmm1, xmm3`` | 6.99 | 4 + 3 |
| ``psrlq xmm1, xmm2; addss xmm1, xmm3`` | 5.95 | 1 + 3, and a cycle each way |
| ``unpcklps xmm1, xmm2; addss xmm1, xmm3`` | 5.94 | 1 + 3, and two |
| ``xorps xmm1, xmm2; paddd xmm1, xmm3`` | 3.98 | 1 + 1, and two |
| ``movaps xmm2, xmm1; addps xmm1, xmm2`` | 3.00 | 0 + 3 |

Which forms share a domain is published for no core, and a rule by mnemonic would be one vendor's;
:func:`probe` reads it.  Each vector form of the model with a chain through one vector register
(a register it reads and writes, or a VEX form's first source tied to its destination) is timed
alone on that chain (its latency, :func:`chain_code`) and beside reference forms, the two on one
register: a round trip more than :data:`CROSS` cycle above the two latencies crosses a
domain.  The references are taken as the forms come (register-only forms, VEX XMM ones first:
they can be read beside every other, where a legacy-SSE write never follows a 256-bit one): a
form in the domain of no reference so far becomes one, up to :data:`REFERENCES`; then every form
is read beside every reference it can follow.  A form
is in the domain of each reference it does not cross with (a renamed move is in all of them);
two forms with no reference in common cross, each way, at half the round trip of the closest
pair of references they are in.  ``cyclebench ports`` keeps the raw times (a record of type
``domains``); the predictor adds the delay to a consumer's latency from each vector register a
form of another domain wrote (:class:`Domains`, one of its bounds), for the chain bound and the
simulation.  A form the probe could not chain, or a file without the record, crosses nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from .bound import Bound
from ..operands import VECTOR_CLASSES as VECTOR

RECORD = "domains"
PER_FORM = True          # run.record gives probe() the results file's forms
CROSS = 1.0              # cycles a round trip is above its two latencies where it crosses: half a
                         # crossing each way (Zen 3: 1.9-2.5 crossing, up to 0.6 within a domain)
REFERENCES = 4           # references at most: a fifth domain would be left unread
_VECTOR = (iced_x86.Register.ZMM0, iced_x86.Register.ZMM31)     # full registers (dataflow's keys)
CHAIN = "xmm1"           # the register a probe's chain runs through (its YMM/ZMM alias where wider)


def _pair(form):
    """(start operand, end operand) of the form's chain through one vector register, or None."""
    from ..instantiate import latency_pairs
    for p in latency_pairs(form):
        if p.start.kind == p.end.kind == "op" and p.same_register:
            s, e = form.operands[p.start.pos], form.operands[p.end.pos]
            if s.cls in VECTOR and e.cls in VECTOR and not s.is_mask:
                return s, e
    return None


def _wide(form) -> bool:
    return any(op.kind == "reg" and op.cls in ("YMM", "ZMM") for op in form.operands) or \
        any(op.kind == "mem" and op.notation in ("M256", "M512") for op in form.operands)


def eligible(form) -> bool:
    """A form the probe reads: a chain through one vector register, no memory write, no set-up
    of its own before each copy."""
    if form is None or form.build_error or _pair(form) is None:
        return False
    mem = form.memory_operand
    return not (mem is not None and mem.kind == "mem" and mem.write)


def reference(form) -> bool:
    """A form that may be a reference: register operands only (and immediates), and no divide or
    square root, whose latency follows the data (``divsd`` beside an FP form read 0.5 cycle above
    its two latencies on Zen 3, beside ``sqrtss`` 1.0)."""
    from ..forms import divide_or_sqrt
    return all(op.kind in ("reg", "imm") for op in form.operands) and not divide_or_sqrt(form.name)


def chain_code(form) -> tuple[str, list] | None:
    """(one instance's text, its init) with the form's chain on :data:`CHAIN`, or None."""
    from ..instantiate import instantiate, sized_alias
    from ..operands import register_id
    from ..session import form_init
    s, e = _pair(form)
    reg = register_id(CHAIN)
    try:
        inst = instantiate(form, regs={e.pos: sized_alias(reg, e.cls), s.pos: sized_alias(reg, s.cls)})
    except ValueError:
        return None
    if inst.reset or inst.loop_init or inst.via_bytes:
        return None
    return inst.text, form_init(form, inst)


def _together(a, b) -> bool:
    """Two forms whose chain may run one after the other: no legacy-SSE write after a wider one."""
    legacy = {f.encoding == "LEGACY" for f in (a, b)}
    return not (True in legacy and any(_wide(f) for f in (a, b)))


def probe(session, forms=()) -> dict:
    """{"type": "domains", "latency": {form: cycles}, "pairs": {"A|B": cycles}, "references": [...]}
    for the eligible vector forms among ``forms`` (module docstring)."""
    from ..catalogue import Catalogue
    from ...errors import CycleBenchError
    from .mixes import best_of_two
    cat = Catalogue.load()
    found = {}
    for name in forms:
        f = cat.get(name)
        if eligible(f) and (not f.encoding.startswith(("EVEX", "MVEX")) or session.avx512):
            code = chain_code(f)
            if code is not None:
                found[name] = (f, code)

    def read(lines, init) -> float | None:
        try:
            return round(best_of_two(session, lines, init, 1).value, 3)
        except CycleBenchError:
            return None

    latency, pairs = {}, {}
    for name, (f, (text, init)) in found.items():
        t = read([text], init)
        if t is not None:
            latency[name] = t
    order = sorted((n for n in latency if reference(found[n][0])),     # VEX XMM first: it meets all
                   key=lambda n: (found[n][0].encoding == "LEGACY", _wide(found[n][0]), n))
    refs: list[str] = []

    def pair(a: str, b: str) -> float | None:
        key = f"{a}|{b}"
        if key not in pairs and f"{b}|{a}" not in pairs and _together(found[a][0], found[b][0]):
            (ta, ia), (tb, ib) = found[a][1], found[b][1]
            t = read([ta, tb], list(ia) + [x for x in ib if x not in ia])
            if t is not None:
                pairs[key] = t
        return pairs.get(key, pairs.get(f"{b}|{a}"))

    for name in order:
        if len(refs) >= REFERENCES:
            break
        rounds = [pair(name, r) for r in refs]
        if not any(t is not None and t - latency[name] - latency[r] <= CROSS for t, r in zip(rounds, refs)):
            refs.append(name)            # in no domain found so far (or none it can be read beside)
    for name in latency:
        for r in refs:
            if r != name:
                pair(name, r)
    return {"type": RECORD, "latency": latency, "pairs": pairs, "references": refs}


@dataclass
class Domains(Bound):
    """A vector result a form of another domain reads arrives late: the bypass delay (domains.py)."""
    within: dict            # form -> frozenset of the references it does not cross with
    delay: dict             # (reference, reference) -> cycles each way

    @classmethod
    def build(cls, rec: dict) -> "Domains | None":
        lat, pairs, refs = rec.get("latency") or {}, rec.get("pairs") or {}, rec.get("references") or []

        def over(a, b):
            t = pairs.get(f"{a}|{b}", pairs.get(f"{b}|{a}"))
            return None if t is None or a not in lat or b not in lat else t - lat[a] - lat[b]
        within = {}
        for f in lat:
            z = {r for r in refs if r == f or ((e := over(f, r)) is not None and e <= CROSS)}
            if z:
                within[f] = frozenset(z)
        delay = {(a, b): e / 2 for a in refs for b in refs
                 if a != b and (e := over(a, b)) is not None and e > CROSS}
        return cls(within, delay) if delay else None

    def crossing(self, producer: str, consumer: str) -> float:
        """Cycles a value ``producer`` wrote reaches ``consumer`` late (0 within a domain, or unknown)."""
        a, b = self.within.get(producer), self.within.get(consumer)
        if not a or not b or a & b:
            return 0.0
        return min((self.delay[(r, s)] for r in a for s in b if (r, s) in self.delay), default=0.0)

    def describe(self) -> str:
        refs = sorted({r for pair in self.delay for r in pair})
        return (f"a vector value crossing domains arrives late: {len(self.within)} forms in "
                f"{len(refs)} domains ({', '.join(refs)}), " + ", ".join(
                    f"{d:.2f}" for d in sorted(set(round(v, 2) for v in self.delay.values()))) + " cycle each way")

    def delayed(self, instructions, forms: list[str], latency: list) -> list:
        from .dataflow import last_writers
        out = list(latency)
        for i, writers in enumerate(last_writers(instructions)):
            for reg, p in writers.items():
                d = self.crossing(forms[p], forms[i]) if _VECTOR[0] <= reg <= _VECTOR[1] else 0.0
                if d:
                    out[i] = _later_from(instructions[i], out[i], reg, d)
        return out


def _later_from(ins, lat, reg: int, d: float):
    """``lat`` (as dataflow.chain_bound takes it) with the time from register ``reg`` ``d`` later."""
    from ..operands import full_register
    lat = lat if isinstance(lat, tuple) else (lat, lat)
    by = dict(lat[2]) if len(lat) > 2 else {}
    for k in range(ins.op_count):
        if ins.op_kind(k) == iced_x86.OpKind.REGISTER and full_register(ins.op_register(k)) == reg:
            by[k] = by.get(k, lat[0]) + d
    return (lat[0], lat[1], by, *lat[3:])


def stored(path) -> tuple[Domains | None, str]:
    """(the delays of a results file's domains record, where they came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no probe of vector domains"
    d = Domains.build(r)
    if d is None:
        return None, (f"measured by cyclebench ports: {len(r.get('latency') or {})} vector forms, "
                      f"{len(r.get('pairs') or {})} pairs, no delay between domains")
    return d, "measured by cyclebench ports: " + d.describe()
