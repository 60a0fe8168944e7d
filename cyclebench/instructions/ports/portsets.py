"""Inferred resources beside a published ports column (uops.info's ``1*FP01+1*FP23``).

A resource is named after its blocker; where the blocker has published ports, the resource is
the port set of the blocker's bottleneck term (the term with the most µops per port; a tie
leaves the resource unmapped).  The comparison is then made in µops per mapped port set:

* inferred: usage x the blocker's µops per cycle, rounded (a blocker with one µop on two ports
  at 0.5 cycles makes 0.5 cycles of usage one µop);
* published: how many of the form's published µops have a port set inside the resource's.

The inferred µops are the few whose loads come nearest the usages (:func:`uops_of`), a set read
above its µops' load priced below one read short of it (a dispatching scheduler lets a µop of a
wide set crowd a narrower one inside it, a µop held to a set loads it in full), a pumped width's
µops in pumped pairs.

A form agrees when the two counts match on every mapped resource.  Forms with no published
ports (Zen's integer pipes) are not compared: their resources are the only ones there are.
Several resources may map to one port set (probes that cannot be mixed with each other); a form
reads the set through the cleanest of them it uses (:func:`seen`).  A resource whose probe crowds
a mapped set that shares no port with its own by most of a µop reads none (:func:`crossed`): its
published set does not describe its interference.  A form that holds a unit no blocker probes is
compared by the sets it issues to: its µops' where they explain its usages (a microcoded form),
else its port part (:func:`port_part`, a divider).

Two rules read from the published table itself, never from a list of forms:

* **Pumping** (:func:`pumping`): a core whose vector pipes are narrower than a register runs a
  µop of the wide registers through its pipe more than once (Zen 4: a 512-bit µop twice through
  256-bit pipes).  uops.info counts that µop once, but its measured throughput is then a multiple
  of the one computed from its ports.  The multiple per register width is the median ratio of the
  measured to the computed throughput over the table's register-only forms of that width; a
  form's published µops count that many times (:func:`scale`).
* **Slow units**: a resource whose blocker takes more than UNNAMED times the time its published
  ports account for is held by something the ports column does not name (a divider, the load of
  a memory form); it maps to no port set.

:func:`against` runs the whole comparison for a results file's model and a column: the one place
``bench/ports_accuracy.py``, ``cyclebench ports`` and ``cyclebench inst --ports FILE --compare``
take it from.
"""
from __future__ import annotations

import itertools
import re
import statistics
from dataclasses import dataclass

from ..published import Published, parse_ports
from .infer import MEMORY
from .model import Model

WIDTHS = ("ZMM", "YMM", "XMM")
BITS = {"ZMM": 512, "YMM": 256, "XMM": 128}
MAX_UOPS = 4         # µops a form is read as, at most (a 512-bit form's pumped halves count)
UNNAMED = 1.25       # a blocker this many times slower than its published ports has another bottleneck
EXCESS = 0.5         # the price of a set read above its µops' load, per µop squared, where below costs 1
CROSSED = 0.75       # µops a probe puts on a mapped set disjoint from its own, per its own µop: no probe of its set
FITS = 0.05          # a unit form's µops stand where they leave this share of its usages' squares unexplained
PACES = 0.95         # a usage this share of a form's time alone or more paces it alone: it has a µop there
ALONE = 1.2          # µops read may hold a form to this times its time alone (under 4/3: four pipes to three)

def port_set(term: str) -> frozenset[str]:
    """``FP0123`` -> {FP0, FP1, FP2, FP3}; ``p0156`` -> {p0, p1, p5, p6}."""
    m = re.match(r"^([A-Za-z]+?)([0-9][0-9A-Za-z]*)$", term)
    if not m:
        return frozenset({term})
    return frozenset(m.group(1) + ch for ch in m.group(2))


def terms(ports_text: str) -> list[tuple[frozenset[str], int]]:
    return [(port_set(p), n) for p, n in parse_ports(ports_text).items()]


def width(form: str) -> str | None:
    """The widest vector a form works on (``VADDPS (ZMM, ZMM, ZMM)`` -> ZMM), else None: its
    registers' and, in a form that names a vector or mask register, its memory operand's
    (``VCVTPD2DQ_Z (YMM, K, M512)`` reads 512 bits: ZMM; a broadcast ``M64_1to8`` too); a
    prefetch's ``M512`` is a cache line, no vector."""
    ops = form[form.find("("):] if "(" in form else ""
    bits = [BITS[w] for w in WIDTHS if w in ops]
    if bits or re.search(r"\bK\b", ops):
        bits += [int(a) * int(b or 1) for a, b in re.findall(r"\bM(\d+)(?:_1to(\d+))?\b", ops)]
    return next((w for w in WIDTHS if BITS[w] <= max(bits, default=0)), None)


def pumping(records: dict[str, Published]) -> dict[str, int]:
    """Register width -> how many times a µop of it passes its pipe (see the module docstring):
    the median measured / computed throughput over the register-only forms of that width."""
    ratios: dict[str, list[float]] = {}
    for name, rec in records.items():
        w = width(name)
        ops = name[name.find("("):]
        if w is None or "M" in ops.replace("MM", "") or rec.throughput is None or rec.throughput_computed is None:
            continue
        a, b = rec.throughput_computed.hi, rec.throughput.hi
        if a and b:
            ratios.setdefault(w, []).append(b / a)
    return {w: max(1, round(statistics.median(v))) for w, v in ratios.items() if v}


def holding(published: dict[str, Published], records: dict[str, Published]) -> dict[str, int]:
    """Form -> how many times its µops pass their pipe, where its own published figures say more
    than its width's pumping: a form of one port-set term whose measured throughput is a whole
    k >= 2 times the one its ports compute (Zen's ``VPMULLD (XMM, XMM, XMM)``, ``1*FP0`` at
    ``1.00 / 2.00``: one µop that holds its pipe two cycles), and no more µops than its ports
    count (Zen 3's ``MOVD (MM, R32)``, two µops and ``1*FP0123`` at ``0.25 / 1.00``: its other µop,
    a transfer's integer side, may pace it).  A memory form is read through its
    register twin (the memory operand as a register of its width): its own measured figure may be
    the load's.  ``published``: form name -> its record; ``records``: the whole column."""
    from ..catalogue import normalize_name
    pumps = pumping(records)
    out = {}
    for name, rec in published.items():
        if len(terms(rec.ports_text or "")) != 1:
            continue
        if MEMORY.search(name):
            w = width(name)
            if w is None:
                continue
            rec = records.get(normalize_name(re.sub(r"\bM\d+(_1to\d+)?\b", w, name)))
            if rec is None or len(terms(rec.ports_text or "")) != 1:
                continue
        if rec.throughput is None or rec.throughput_computed is None:
            continue
        if rec.uops is not None and rec.uops.hi and rec.uops.hi > sum(n for _, n in terms(rec.ports_text)):
            continue        # µops on ports the column leaves out (a transfer's integer side) may pace it
        a, b = rec.throughput_computed.hi, rec.throughput.hi
        if not (a and b):
            continue
        k = round(b / a)
        if k >= 2 and abs(b / a - k) <= 0.05 * k and k > pumps.get(width(name) or "", 1):
            out[name] = k
    return out


def scale(form: str, pumps: dict[str, int] | None) -> int:
    return (pumps or {}).get(width(form) or "", 1)


def resource_ports(blockers: dict[str, str], published: dict[str, str], alone: dict[str, float] | None = None,
                   pumps: dict[str, int] | None = None,
                   classes: dict[str, str] | None = None) -> dict[str, tuple[frozenset[str], float]]:
    """Resource -> (the published port set of its blocker's bottleneck, µops per cycle of usage).
    A blocker that puts n published µops (x its pumping) on its port set and takes t cycles alone
    makes one cycle of its resource n / t µops (|ports| when ``alone`` is not given).  A blocker
    more than UNNAMED times slower than that port set allows maps to none.  A blocker the column
    does not publish (an EVEX spelling, a form it left out) is read through the members of its
    class (``classes``: form -> the blocker whose class it joined): they compete for the same
    resource at the same width, so their bottleneck is its; the first member that maps stands."""
    out = {}
    for r, b in blockers.items():
        # only a blocker the column leaves out: one it publishes but that runs slower than its
        # ports say has another bottleneck (a load), and a member that shares that is no witness
        members = [b] + ([m for m, c in (classes or {}).items() if c == b] if not terms(published.get(b) or "") else [])
        for form in members:
            got = _bottleneck(form, published, alone, pumps)
            if got:
                out[r] = got
                break
    # the cleanest probes first (register-only before memory, which also holds a load; unpumped
    # before pumped): where several resources map to one set, :func:`seen` reads the first
    rank = {r: (bool(MEMORY.search(blockers[r])), scale(blockers[r], pumps)) for r in out}
    return {r: out[r] for r in sorted(out, key=rank.get)}


def _bottleneck(form: str, published: dict[str, str], alone: dict[str, float] | None,
                pumps: dict[str, int] | None) -> tuple[frozenset[str], float] | None:
    ts = terms(published.get(form, "") or "")
    if not ts:
        return None
    k = scale(form, pumps)
    score = sorted(((n * k / len(q), q, n * k) for q, n in ts), key=lambda x: -x[0])
    if len(score) > 1 and score[0][0] == score[1][0]:
        return None
    busy, q, n = score[0]
    t = (alone or {}).get(form)
    if t and t > UNNAMED * busy:
        return None
    return q, n / t if t else float(len(q))


def compare(form: str, model: Model, mapped: dict[str, tuple[frozenset[str], float]], ports_text: str,
            pumps: dict[str, int] | None = None, units=(), probed=None, memory=(),
            held: dict[str, int] | None = None) -> dict | None:
    """The comparison of one form in µops per published port set (None: no published ports, or
    nothing mapped).  The form's usages are read as µops (:func:`uops_of`), and each mapped port
    set counts the µops that fit inside it, as the published side counts its own.  Published µops
    count as many times as the form's register width is pumped, or as ``held`` (form -> times,
    :func:`holding`) says its own figures hold its pipe; a held form also agrees with its ports
    counted as published, since its figures do not say which of its resources paces it.

    Resources whose probe crowds a set apart from its own (:func:`crossed`) are left out.

    A form that holds a unit (``units``: the resources of units no blocker probes) is compared by
    the port sets it issues to, not a count: the sets of its µops where they explain its usages
    (all but :data:`FITS` of them, a microcoded form whose steps the unit paces), else its port
    part (:func:`port_part`: a divider's hold on its pipe is no count of µops).

    ``probed`` (optional): the resources whose blocker the form was measured with.  Only their
    sets are compared: of a set whose every probe the form could not be mixed with (a legacy-SSE
    probe beside a 256-bit form) no reading tells anything, and a usage of nought there is no
    reading of none.

    ``memory`` (optional): the resources whose blocker has a memory operand.  A memory form does
    not read its sets through them: the two load memory both, and a mix of them adds up through
    the loads as well as the pipe, which the probe's one resource does not tell apart (a
    0.5-cycle FP12 probe with a 128-bit load read an FP23 convert's load as an FP12 µop)."""
    off = crossed(mapped, model)
    mapped = {r: v for r, v in mapped.items() if r not in off and (probed is None or r in probed)}
    if MEMORY.search(form):
        mapped = {r: v for r, v in mapped.items() if r not in memory}
    ts = terms(ports_text or "")
    if not ts or not mapped or form not in model.usage:
        return None
    sets = {"".join(sorted(q)): q for q, _ in mapped.values()}
    unit = any(r in model.used(form) for r in units)
    # its own holding (:func:`holding`) where it has one; a form that holds a unit is paced by the
    # unit, not by its pipe: its width's pumping only
    own = scale(form, pumps)
    for k in dict.fromkeys(((None if unit else (held or {}).get(form)) or own, own)):
        uops, rest = fit(model.usage[form], mapped, k, model.alone.get(form))
        if unit and (not uops or rest > FITS):
            uops = port_part(model.usage[form], mapped)
        inferred = {name: sum(n for p, n in uops.items() if p <= q) for name, q in sets.items()}
        expected = {name: sum(n for p, n in ts if p <= q) * k for name, q in sets.items()}
        inferred = {name: v for name, v in inferred.items() if v}
        expected = {name: v for name, v in expected.items() if v}
        agree = set(inferred) == set(expected) if unit else inferred == expected
        if agree:
            break
    return {"form": form, "published": ports_text, "agree": agree, "unit": unit,
            "inferred": inferred, "expected": expected,
            "uops": {"".join(sorted(p)): n for p, n in uops.items()}}


def crossed(mapped: dict[str, tuple[frozenset[str], float]], model: Model) -> set[str]:
    """The mapped resources whose probe (``model.probes``) crowds another mapped set it shares no
    port with by :data:`CROSSED` of a µop or more per µop of its own: its interference contradicts
    the set its published ports name (a GPR-to-vector insert published as one FP1 µop that loads
    the FP23 probe in full moves its data on a path the column does not count), so it reads none.
    The worst goes first, and the rest are judged without it."""
    off: set[str] = set()
    while True:
        worst, most = None, CROSSED
        for r, (q, per) in mapped.items():
            use = model.usage.get(model.probes.get(r, ""), {})
            own = use.get(r, 0.0) * per
            if r in off or not own:
                continue
            for x, (qx, px) in mapped.items():
                if x not in off and not q & qx and use.get(x, 0.0) * px / own >= most:
                    worst, most = r, use.get(x, 0.0) * px / own
        if worst is None:
            return off
        off.add(worst)


def memory_probes(blockers: dict[str, str]) -> set[str]:
    """The resources (of ``blockers``: resource -> its blocker) whose blocker has a memory operand."""
    return {r for r, b in blockers.items() if MEMORY.search(b)}


def seen(usage: dict[str, float], mapped: dict[str, tuple[frozenset[str], float]],
         cycles: bool = False) -> dict[frozenset[str], float]:
    """µops a form's usages put on each mapped port set (``cycles``: the usages themselves, in
    cycles per instance).  Several resources may probe one set (a 256-bit logic op and a
    legacy-SSE one both FP0123: the two do not mix, so each probes the forms the other cannot);
    the set reads the first of them (in ``mapped``'s order, the cleanest probe first) that the
    form uses at all.  Not the lowest of them: probes of one set load each other's resource, so
    the solve puts a form's µop on one of them and leaves the others at nought."""
    out: dict[frozenset[str], float] = {}
    for r, (q, per) in mapped.items():
        if not out.get(q):
            out[q] = usage.get(r, 0.0) * (1.0 if cycles else per)
    return out


def port_part(usage: dict[str, float], mapped: dict[str, tuple[frozenset[str], float]]) -> dict[frozenset[str], int]:
    """The port part of a form that holds a unit: one µop on the port set it crowds most (the
    largest load per port of the mapped resources), none when it crowds none by a tenth of a µop.
    A divider is a unit behind a pipe: its form issues there and then holds the unit for cycles,
    and the time its mixes with that pipe's blocker lose is the unit's hold on the pipe (its
    results' write-back, its scheduler entries), not a count of µops; so the set is read, not the
    count (uops.info, with counters, counts the µops: Zen 4's DIVSD one on FP01)."""
    load = {q: v / len(q) for q, v in seen(usage, mapped).items()}
    q = max(load, key=lambda q: (load[q], -len(q)), default=None)
    return {q: 1} if q is not None and load[q] * len(q) >= 0.1 else {}


def uops_of(usage: dict[str, float], mapped: dict[str, tuple[frozenset[str], float]],
            passes: int = 1, alone: float | None = None) -> dict[frozenset[str], int]:
    """The µops of :func:`fit`."""
    return fit(usage, mapped, passes, alone)[0]


def fit(usage: dict[str, float], mapped: dict[str, tuple[frozenset[str], float]],
        passes: int = 1, alone: float | None = None) -> tuple[dict[frozenset[str], int], float]:
    """The µops (per mapped port set) that best account for a form's usages of the mapped
    resources.  A µop on port set p loads every resource whose set holds p by one µop (1 / per
    cycles); the counts are the few (at most MAX_UOPS) whose loads come nearest the usages, in
    µops squared.  Reading all the mapped usages together keeps one noisy usage from changing the
    answer alone.

    A set read above what the µops load costs EXCESS of a set read below (of a form read as some
    µops): a core's scheduler picks a µop's pipe when it is dispatched, not as an optimal schedule
    would, so a µop that may go to four pipes still crowds a pair among them part of the time
    (half a µop, measured; a 512-bit µop crowds pipes outside its set too), while a µop held to a
    set loads it in full.  A form read as no µop crowds nothing: its usages count in full.  ``passes``: a µop of the form's register width passes
    its pipe that many times (:func:`pumping`), so its µops come in that many.  Between fits equal
    to a tenth of a µop squared, µops inside every set that paces the form alone stand (a usage
    of :data:`PACES` of its time alone or more: a form that runs alone at a resource's rate has a
    µop there, where a fit of none may tie with one µop whose wider set the solve left short);
    then the µops on the narrower port sets: a narrow resource's usage is seen directly, while a
    wide one's may be left short by the solve (the sparsest usages, where another resource
    explained a mix).

    ``alone`` (the form's own time, optional): µops that could not run that fast are no reading
    of it.  µops on a set of k ports take at least their count / k cycles, so a form that runs
    alone at 4 a cycle has no µop held to three pipes, however much it crowds their probe (the
    scheduler puts a four-pipe µop on the three now and then; in a stream of its own it spreads
    over all four).  Returns (µops, the share of the usages' squares they leave unexplained)."""
    res = list(seen(usage, mapped).items())
    kinds = sorted({q for q, _ in res}, key=lambda q: (len(q), sorted(q)))

    def err(counts):
        total = 0.0
        for q, v in res:
            d = v - sum(n for p, n in counts.items() if p <= q)
            total += d * d * (EXCESS if d > 0 and counts else 1.0)    # no µop, nothing to crowd
        return round(total, 1)

    def too_slow(counts):
        return alone is not None and any(sum(n for p, n in counts.items() if p <= q) / len(q) > ALONE * alone
                                         for q in kinds)

    pacing = [q for q, v in seen(usage, mapped, cycles=True).items() if alone and v >= PACES * alone]

    def unpaced(counts):        # sets that pace the form alone with none of its µops inside
        return sum(1 for q in pacing if not any(p <= q for p in counts))

    best, best_key = {}, (err({}), unpaced({}), 0)
    for size in range(1, MAX_UOPS // passes + 1):
        for pick in itertools.combinations_with_replacement(kinds, size):
            counts = {p: pick.count(p) * passes for p in set(pick)}
            if too_slow(counts):
                continue
            key = (err(counts), unpaced(counts), sum(n * len(p) for p, n in counts.items()))
            if key < best_key:
                best, best_key = counts, key
    rest = sum((v - sum(n for p, n in best.items() if p <= q)) ** 2 for q, v in res)
    return best, rest / max(sum(v * v for _, v in res), 1e-9)


def describe(form: str, model: Model, blockers: dict[str, str], mapped: dict | None = None) -> str:
    """One cell: the resources a form uses, in cycles per instance, named by port set or blocker."""
    parts, mapped = [], mapped or {}
    for r, v in sorted(model.used(form).items(), key=lambda x: -x[1]):
        name = notation("".join(sorted(mapped[r][0]))) if r in mapped else f"{r}[{blockers.get(r, '?')}]"
        parts.append(f"{v:.2f} {name}")
    return ", ".join(parts) or "-"


@dataclass
class Against:
    """A model's port sets beside a published column (:func:`against`)."""
    pumps: dict[str, int]              # width -> passes of a µop through its pipe (:func:`pumping`)
    held: dict[str, int]               # form -> its own holding (:func:`holding`)
    mapped: dict[str, tuple[frozenset[str], float]]   # resource -> its port set (crossed ones left out)
    off: set[str]                      # resources whose probe crowds a set apart from its own (:func:`crossed`)
    comparisons: list[dict]            # :func:`compare` of each form with published ports
    unpublished: list[str]             # the model's forms the column gives no ports

    @property
    def agree(self) -> int:
        return sum(c["agree"] for c in self.comparisons)

    def text(self, label: str) -> str:
        """One summary line, or "" where no form has published ports."""
        n = len(self.comparisons)
        return (f"port sets inferred from throughput vs {label} ports: {self.agree}/{n} forms agree "
                f"({self.agree / n:.1%}), read through {len(self.mapped)} resources mapped to published port "
                f"sets" if n else "")


def notation(ports: str) -> str:
    """A port set in the column's notation: ``FP2FP3`` -> ``FP23``, ``p0p1p5`` -> ``p015``."""
    parts = re.findall(r"([A-Za-z]+)([0-9][0-9A-Za-z]*?)(?=[A-Za-z]+[0-9]|$)", ports)
    prefixes = {p for p, _ in parts}
    return prefixes.pop() + "".join(d for _, d in parts) if len(prefixes) == 1 else ports


def read_as(comparison: dict) -> str:
    """A comparison's inferred µops in the column's notation (``{"FP2FP3": 1}`` -> ``1*FP23``)."""
    return "+".join(f"{n}*{notation(k)}" for k, n in sorted(comparison["uops"].items())) or "no µop"


def against(model: Model, report: dict, records: dict[str, Published], catalogue,
            forms=None) -> Against:
    """The port sets of ``model`` (with its results file's ``report``: cyclebench ports' load)
    beside the published column ``records`` (read_csv's), for ``forms`` (default: all the
    model's): the comparison bench/ports_accuracy.py prints and ``cyclebench inst --ports FILE
    --compare`` adds to its agreement report."""
    forms = sorted(model.usage) if forms is None else [f for f in forms if f in model.usage]
    pub = published_for(sorted(model.usage), records, catalogue)
    ports = {n: p.ports_text for n, p in pub.items()}
    pumps, held = pumping(records), holding(pub, records)
    blockers = report.get("blockers") or {}
    mapped = resource_ports(blockers, ports, report.get("alone"), pumps, report.get("classes"))
    units, probed = set(report.get("slow_units") or ()), report.get("probed") or {}
    memory = memory_probes(blockers)
    comps = [c for c in (compare(f, model, mapped, ports.get(f, ""), pumps, units, probed.get(f), memory, held)
                         for f in forms) if c]
    off = crossed(mapped, model)
    return Against(pumps, held, {r: v for r, v in mapped.items() if r not in off}, off, comps,
                   [f for f in forms if not ports.get(f)])


def published_for(forms, records: dict, catalogue) -> dict:
    """Form name -> its published record: by name, else by the catalogue's base name (uops.info
    names ``ADD (R64, R64)`` what the catalogue tells apart as ``ADD_01``/``ADD_03``)."""
    from ..catalogue import normalize_name
    out = {}
    for name in forms:
        rec = records.get(normalize_name(name))
        form = catalogue.get(name)
        if rec is None and form is not None and form.base_name:
            rec = records.get(normalize_name(form.base_name))
        if rec is not None:
            out[name] = rec
    return out
