"""Inferring the resource model from throughput alone (Palmed's plan, on cyclebench's harness).

1. **Alone.**  Every form's throughput by itself (a mix of one form).
2. **Blockers** (chosen by rule, never by name), so that every interference class among the
   candidates is covered: candidates are the forms whose throughput is the reciprocal of a small
   integer (1, 1/2, 1/3, 1/4 cycles: k identical units busy), register-only forms first (each
   probes one pipe class; a memory form probes a load port and a pipe at once), and among them
   those that mix with every form (mixes.py refuses a legacy-SSE form beside a wide one).  Each is paired
   with the kept blockers of its own k, the largest class first, in the ratio that makes both
   take the same time alone (Palmed's "quadratic" benchmark).  It joins the first class whose
   blocker it adds up with (the two compete for one resource); one that adds up with none is a
   class of its own, and its bottleneck a resource.  No class waits for a turn, so the widest
   shared one (Zen 4's logic ops on all four FP pipes) is drawn as surely as the narrowest.
   A blocker that is a union of two narrower resources (a µop on each of two pipe pairs) adds
   up with both while they do not add up with each other: the two take its place.
3. **Front end.**  The width is the most instructions per cycle that two good readings reached,
   read with a good reading's 5% slack (5.23 a cycle is 5 wide; a mix that ran faster than its
   slowest part alone is a bad reading and is set aside; one reading faster than all others is
   no width until a second mix confirms it): among the blockers for their solve, then among all
   forms that use some resource.  A form that uses none and runs alone faster than that width
   (Zen 4's NOPs, about 10 per cycle) passes the front end on another path and takes no share of
   it.  The width bounds the solves only where a reading ran faster than every blocker alone: one
   at a blocker's own rate is as well its resource.
4. **Every form against every blocker** in two ratios (the blocker's stream alone taking about
   as long as the form's, and twice that).  Where a mix ran slower than its slower part alone and
   a form's copies chain through registers of a family the other form takes some of, with more
   copies on its busiest register than alone (mixes.cut), that form's stream of the mix is
   measured alone on the same registers: a floor of the mix, so that a chain the shared
   registers lengthened is not read as a shared resource (two MMX forms share eight registers).
5. **Solving** (model.solve, a MILP per problem): each blocker uses its own resource for its
   whole time alone, and its use of each other blocker's resource is solved pair by pair from
   the two's mixes, and must then fit every other mix of two blockers (:func:`cross.consistent`:
   a pair's partial interference is no share of a pipe).  Then one problem per form with the
   blockers known: every mix explained both ways (no load above its time; a resource the
   blocker loads, the form's own floor or the front end reaching it), the sparsest usages that
   do.  A form's usage is what its mixes ask for, never the most they allow; a reading flagged
   unstable, where the same forms read stable in another ratio, none (mixes.trusted), nor one
   slower than its parts one after the other (:meth:`Inference.penalty`: no sharing does that).
6. **Slow units** (a divider, a square-root unit): a form that takes at least :data:`SLOW` cycles
   alone while no resource found so far accounts for :data:`UNEXPLAINED` of that time is held by
   a unit no blocker probes.  Such forms are paired with each other in the quadratic ratio; a form
   whose pair with a unit's first form adds up shares that unit (its usage of it is what the pair
   leaves over), any other becomes a unit of its own.  Only these forms use the new resources.
7. **Store lines.**  Each form that writes memory, once more with its copies on distinct cache
   lines (the mixes keep a form's copies on one address): the predictor charges a block's stores
   per distinct line written (a core that writes two stores a cycle to one line may write one a
   cycle to two lines; Zen 4 does).

A form costs ``1 + 2 x blockers`` measurements, each the best of two runs (a slow form one more
per unit it is paired with, a store form one more for its lines, a form or blocker one more per
mix its chains may pace: the report counts these ``streams``), stored as made (study/store.py);
a resumed run measures only what is missing, and the model is rebuilt from the readings.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Callable

from .cross import consistent
from .mixes import trusted
from .model import FRONT_END, Mix, Model, solve
from .ratios import pair, ratios, units

KIND = "ports"
SCHEMA_VERSION = 1
ADDITIVE = 0.9             # a pair taking this share of the sum of its parts does not overlap
MAX_BLOCKERS = 32           # a guard: a class per distinct interference, rarely over 20
MEMORY = re.compile(r"\bM\d")   # a memory operand in a form's name (M64, M32_1to8)
FASTER = 0.95              # a mix faster than this share of its slowest part alone is a bad reading
SUPER = 1.1                # a mix this much slower than its parts one after the other: a penalty, no share
SLOWER = 1.05              # a mix this much slower than its slowest part alone: its streams' chains are read
SLOW = 1.0                 # cycles alone: a unit busy for at least a cycle per instance
UNEXPLAINED = 0.6          # ... and no resource takes this share of the time: a unit no blocker probes
SHARED = 0.5               # a slow form that takes this share of its time from a unit shares it
LOADS = 0.1                # cycles: a blocker usage that makes a resource a candidate bottleneck of its mixes
NARROWER = 10.0            # price factor of a wider blocker's use of a narrower one's resource
ASKED = 3                  # members of a class a register-only candidate is paired with (union split)
CONFIRMED = 2              # good readings (of distinct mixes) that must reach a front-end width


def _parts(r: dict, alone: dict[str, float]) -> list[float]:
    """The time alone of each part of the mix ``r`` whose form has one."""
    return [n * alone[f] for f, n in r["counts"].items() if f in alone]


def key(counts: dict[str, int]) -> str:
    return " + ".join(f"{n}x {f}" for f, n in sorted(counts.items()))


@dataclass
class Inference:
    """Readings (cached, stored as they come) and the steps above."""
    # counts -> cycles per unit (None: failed), or (cycles, whether the reading was labelled stable)
    measure: Callable[[dict[str, int]], float | None | tuple[float | None, bool | None]]
    record: Callable[[dict], None] = lambda rec: None
    measure_lines: Callable[[str], float | None] | None = None   # a store form, copies on distinct lines
    readings: dict[str, dict] = field(default_factory=dict)
    line_readings: dict[str, dict] = field(default_factory=dict)
    measured: int = 0              # readings made in this run (not read back)
    log: Callable[[str], None] = lambda msg: None
    mixes_with_all: Callable[[str], bool] = lambda form: True   # a form every other form mixes with
    # (counts, form) -> its stream's cycles per unit (None: nothing measured); the forms to stream
    measure_stream: Callable[[dict[str, int], str], float | None] | None = None
    cut: Callable[[dict[str, int]], list[str]] = lambda counts: []
    streams: dict[str, dict[str, dict]] = field(default_factory=dict)   # key(counts) -> form -> record
    parts: dict[str, float] = field(default_factory=dict)      # times alone, once read (step 1)

    def load(self, records: list[dict]) -> None:
        for rec in records:
            if rec.get("type") == "reading":
                self.readings[key(rec["counts"])] = rec
            elif rec.get("type") == "lines":
                self.line_readings[rec["form"]] = rec
            elif rec.get("type") == "stream":
                self.streams.setdefault(key(rec["counts"]), {})[rec["form"]] = rec

    def lines(self, stores: list[str]) -> dict[str, float]:
        """Step 7: each store form with its copies on distinct cache lines (a core may write
        several stores a cycle to one line and fewer to several): cycles per store to a new line."""
        out = {}
        for f in stores:
            if f not in self.line_readings and self.measure_lines is not None:
                rec = {"type": "lines", "form": f, "cycles": self.measure_lines(f)}
                self.line_readings[f] = rec
                self.measured += 1
                self.record(rec)
            t = self.line_readings.get(f, {}).get("cycles")
            if t:
                out[f] = t
        return out

    def cycles(self, counts: dict[str, int]) -> float | None:
        k = key(counts)
        if k not in self.readings:
            value = self.measure(counts)
            value, stable = value if isinstance(value, tuple) else (value, None)
            rec = {"type": "reading", "counts": dict(counts), "cycles": value}
            if stable is not None:      # files written before it was kept have none
                rec["stable"] = stable
            self.readings[k] = rec
            self.measured += 1
            self.record(rec)
        t = self.readings[k]["cycles"]
        if len(counts) == 2 and t and self.measure_stream is not None and t > SLOWER * max(
                (n * self.parts.get(f, 0.0) for f, n in counts.items()), default=0.0):
            self.chained(counts, measure=True)
        return t

    def chained(self, counts: dict[str, int], measure: bool = False) -> dict[str, float]:
        """Form -> cycles per unit of its stream of the mix alone on the mix's registers, for the
        forms whose chains may pace it (mixes.cut); ``measure``: those the file lacks (:meth:`cycles`)."""
        k = key(counts)
        if measure and self.measure_stream is not None:
            for f in self.cut(counts):
                if f not in self.streams.get(k, {}):
                    rec = {"type": "stream", "counts": dict(counts), "form": f,
                           "cycles": self.measure_stream(counts, f)}
                    self.streams.setdefault(k, {})[f] = rec
                    self.measured += 1
                    self.record(rec)
        return {f: r["cycles"] for f, r in self.streams.get(k, {}).items() if r.get("cycles")}

    # ---------------------------------------------------------------------------------- steps

    def alone(self, forms: list[str]) -> dict[str, float]:
        times = {f: self.cycles({f: 1}) for f in forms}
        self.parts = {f: t for f, t in times.items() if t is not None and t > 0}
        return dict(self.parts)

    def blockers(self, alone: dict[str, float], seed: int = 0) -> tuple[list[str], dict[str, str]]:
        """Step 2: (blockers in order, candidate -> the blocker whose class it joined).

        Every candidate is taken (register-only forms first: each probes one pipe class, where a
        memory form probes a load port and a pipe together; the order within is seeded), and
        paired with the kept blockers of its own width, the largest class first.  It joins the
        first class whose blocker it adds up with; one that adds up with none is a class of its
        own and a blocker.  So every interference class among the candidates is covered, the
        widest shared one (four FP pipes behind a logic op) as surely as the narrowest, whatever
        the order: no class is left out for want of a turn."""
        cands = [f for f, t in alone.items() if units(t)]
        random.Random(seed).shuffle(cands)
        # register-only forms first, and among them those every form mixes with (not a legacy-SSE
        # form, nor one with 256- or 512-bit registers: the two do not mix)
        cands.sort(key=lambda f: (bool(MEMORY.search(f)), not self.mixes_with_all(f)))
        kept: list[str] = []
        classes: dict[str, str] = {}
        unions: set[str] = set()
        queue = list(cands)
        while queue:
            c = queue.pop(0)
            size = {b: sum(1 for v in classes.values() if v == b) for b in kept}
            same = sorted((b for b in kept if units(alone[b]) == units(alone[c])), key=lambda b: -size[b])
            joined = next((b for b in same if self._additive(c, b, alone)), None)
            if joined is None:
                if len(kept) >= MAX_BLOCKERS:
                    self.log(f"blockers: {MAX_BLOCKERS} kept; {c} and later candidates left out")
                    break
                kept.append(c)
                continue
            # a blocker that is a union of narrower resources (a µop on each of two pipe pairs)
            # adds up with each of them while they do not add up with each other: the two become
            # blockers in its place, it joins the first one's class, and the rest of its class is
            # paired again.  A register-only candidate is paired with the class's first few
            # register-only members, not the first alone: where that one is a union too (Zen 1's
            # three-source forms hold a pipe on each side), only another tells the sides apart
            member = None if joined in unions else self._apart(
                c, [m for m, b in classes.items() if b == joined and m not in unions], alone)
            if member is None:
                classes[c] = joined
                continue
            rest = [m for m, b in classes.items() if b == joined and m != member]
            for m in rest + [member]:
                del classes[m]
            kept[kept.index(joined)] = member
            kept.append(c)
            unions.add(joined)
            classes[joined] = member
            queue[:0] = rest
        # a blocker kept before its narrower parts came up is a union too: one that adds up with
        # two blockers of its width that do not add up with each other joins the first's class
        for b in list(kept):
            same = [x for x in kept if x != b and units(alone[x]) == units(alone[b]) and self._additive(b, x, alone)]
            apart = next(((x, y) for i, x in enumerate(same) for y in same[i + 1:] if not self._additive(x, y, alone)),
                         None)
            if apart:
                kept.remove(b)
                classes[b] = apart[0]
        return kept, classes

    def _apart(self, c: str, members: list[str], alone: dict[str, float]) -> str | None:
        """The first of a class's ``members`` that ``c`` does not add up with: of a memory
        candidate only the first member is asked (it probes a load port besides), of a register
        one the first :data:`ASKED` register-only members (a pair each: a class of forty ALU
        forms would otherwise cost 780 pairs)."""
        if MEMORY.search(c):
            members = members[:1]
        else:
            members = [m for m in members if not MEMORY.search(m)][:ASKED]
        return next((m for m in members if not self._additive(c, m, alone)), None)

    def _additive(self, a: str, b: str, alone: dict[str, float]) -> bool:
        """The quadratic pair: each form's stream alone takes one cycle; do the two add up?"""
        counts = {a: units(alone[a]), b: units(alone[b])}
        t = self.cycles(counts)
        # a pair its register chains paced (mixes.cut) shows no shared resource
        return t is not None and t >= ADDITIVE * 2 and max(self.chained(counts).values(), default=0.0) < ADDITIVE * 2

    def good(self, r: dict, alone: dict[str, float]) -> bool:
        """A reading that can be true: adding work never makes a form's own stream faster, so a
        mix runs at least as long as its slowest part alone (within FASTER)."""
        return bool(r.get("cycles")) and r["cycles"] >= FASTER * max(_parts(r, alone), default=0.0)

    def penalty(self, r: dict, alone: dict[str, float]) -> bool:
        """Whether a mix ran more than SUPER times its parts one after the other, no stream of its
        own pacing it: no largest load of shared resources comes to that (each form alone takes
        at least its largest), and a solve that chases it swells both forms' uses of everything.
        It measures a cost of their meeting (Zen 3: one vector op of 0.5 cycle beside two
        GPR-to-vector inserts of 1.0 each, 2.9 cycles; Zen 1: an FMA beside a legacy-SSE op, each
        0.5, 1.4).  The solves leave it out; slow units (:meth:`slow_units`) still read a pair that
        adds up or more as sharing, and the predictor takes it as the pair's floor (repair.py)."""
        parts = _parts(r, alone)
        return (len(parts) == len(r["counts"]) > 1 and r["cycles"] > SUPER * sum(parts)
                and not self.paced(r))

    def width(self, alone: dict[str, float], forms) -> int | None:
        """The most instructions per cycle that :data:`CONFIRMED` good readings of ``forms`` (each
        of another mix) reached: one reading alone sets no model-wide figure.  A mix read 2% fast
        (within FASTER, so good) would otherwise lift a 6-wide front end to 7."""
        return self.front_end(alone, forms)[0]

    def front_end(self, alone: dict[str, float], forms) -> tuple[int | None, list[dict]]:
        """(the width, the good readings that ran faster than it: unconfirmed, for the report).
        A good reading may run up to 1 - FASTER fast (:meth:`good`), and a width is read with
        that slack (on Zen 1 a stable 5.23 a cycle and an unstable 6.07 had made 5 wide 6)."""
        s = set(forms)
        rated = sorted(((sum(r["counts"].values()) / r["cycles"], r) for r in self.readings.values()
                        if set(r["counts"]) <= s and self.good(r, alone)), key=lambda x: -x[0])
        if not rated:
            return None, []
        w = max(1, math.ceil(rated[min(CONFIRMED, len(rated)) - 1][0] * FASTER))
        return w, [{"counts": r["counts"], "cycles": r["cycles"]} for ipc, r in rated if ipc * FASTER > w]

    def mixes(self, forms: list[str], alone: dict[str, float]) -> list[Mix]:
        """Every good, trusted reading (mixes.trusted) that involves only ``forms``, no penalty."""
        s = set(forms)
        return [Mix(r["counts"], r["cycles"], self.floors(r)) for r in trusted(self.readings.values())
                if set(r["counts"]) <= s and self.good(r, alone) and not self.penalty(r, alone)]

    def floors(self, r: dict) -> dict[str, float]:
        """A mix's stream floors (:meth:`chained`), one that :meth:`paced` it at the mix's time: 0.2%
        of slack cost the solve more than a usage (Zen 3: ``pxor mm, [m]`` beside ``pmullw mm``)."""
        return {f: r["cycles"] if t >= FASTER * r["cycles"] else t for f, t in self.chained(r["counts"]).items()}

    def paced(self, r: dict) -> bool:
        """Whether a form's own stream ran within FASTER of the mix ``r``: its register chains
        paced it, and it reads no resource (no probe reading; repair.readings leaves it out)."""
        return any(t >= FASTER * r["cycles"] for t in self.chained(r["counts"]).values())

    def against(self, form: str, t: float, blockers: list[str], alone: dict[str, float]) -> None:
        for b in blockers:
            if b == form:
                continue
            for counts in ratios(form, t, b, alone[b]):
                self.cycles(counts)

    def run(self, forms: list[str], seed: int = 0, stores: list[str] = ()) -> tuple[Model, dict]:
        """Measure what is missing and build the model (``stores``: the forms that write memory).
        Returns (model, report)."""
        alone = self.alone(forms)
        self.log(f"alone: {len(alone)} of {len(forms)} forms read, {self.measured} of them measured now")
        blockers, classes = self.blockers(alone, seed)
        self.log(f"blockers: {len(blockers)}")
        resources = [f"R{i}" for i in range(len(blockers))]
        for f in alone:
            self.against(f, alone[f], blockers, alone)
        width = self.width(alone, blockers)
        # the front end bounds the solves only where some reading ran faster than every blocker
        # alone: where the widest reading is a blocker's own rate (a four-pipe logic op at 4 a
        # cycle, nothing faster), no mix tells the two apart, and its mixes read its resource
        fe = width if width and max(1 / alone[b] for b in blockers) < width - 0.1 else None
        model = Model(list(resources), self.solve_blockers(blockers, resources, alone, fe), width, dict(alone))
        misfits = {}
        base = {b: dict(model.usage[b]) for b in blockers}
        for f in alone:
            if f in base:
                continue
            ms = [m for m in self.mixes(blockers + [f], alone) if f in m.counts]
            # only the resources whose blocker the form was measured with: of the others (a pair
            # that cannot be mixed) no reading tells anything
            probed = [r for r, b in zip(resources, blockers) if any(b in m.counts for m in ms)]
            binding = [{r for g in m.counts if g != f for r, v in base[g].items() if v >= LOADS and r in probed}
                       or None for m in ms]
            try:
                u, misfits[f] = solve(ms, probed, [f], known=base, width=fe, floors=alone, binding=binding)
            except RuntimeError:
                continue
            model.usage[f] = {r: u[f].get(r, 0.0) for r in resources}
        # the front end: the most a mix of forms that use some resource passed per cycle; a form
        # that uses none and runs alone faster than that (Zen's NOPs) passes it on another path
        busy = [f for f in model.usage if model.used(f)]
        fast_width, unconfirmed = self.front_end(alone, busy)
        model.width = fast_width or width
        if unconfirmed:
            self.log(f"front end: {model.width} wide; {len(unconfirmed)} reading(s) alone ran faster, set aside")
        for f, u in model.usage.items():
            if f not in busy and model.width and alone[f] < FASTER / model.width:
                u[FRONT_END] = 0.0
        slow = self.slow_units(model, alone, seed)
        model.lines = self.lines([f for f in stores if f in model.usage])
        model.probes = {**dict(zip(resources, blockers)), **slow}
        report = {"blockers": model.probes, "classes": classes,
                  "slow_units": list(slow),
                  "width": model.width, "width_unconfirmed": unconfirmed, "alone": alone, "misfit": misfits,
                  "probed": self.probed(model.probes, alone),
                  "measurements_per_form": 1 + 2 * len(blockers), "readings": len(self.readings),
                  "streams": sum(len(v) for v in self.streams.values()),
                  "measured_now": self.measured,
                  "unstable": sum(1 for r in self.readings.values() if r.get("stable") is False),
                  "impossible": sum(1 for r in self.readings.values() if r.get("cycles") and not self.good(r, alone)),
                  "penalties": sum(1 for r in self.readings.values() if r.get("cycles") and self.penalty(r, alone))}
        return model, report

    def probed(self, blockers: dict[str, str], alone: dict[str, float]) -> dict[str, list[str]]:
        """Form -> the resources (``blockers``: resource -> its blocker or unit's form) whose
        blocker it was measured with in a good reading no stream paced and no :meth:`penalty`, its
        own among them.  Of the others (a legacy-SSE form beside a 256-bit one; chains pacing) no
        reading tells."""
        pairs: dict[str, set[str]] = {}
        for r in self.readings.values():
            if len(r["counts"]) == 2 and self.good(r, alone) and not self.paced(r) and not self.penalty(r, alone):
                a, b = r["counts"]
                pairs.setdefault(a, set()).add(b)
                pairs.setdefault(b, set()).add(a)
        return {f: [r for r, b in blockers.items() if b == f or b in pairs.get(f, ())] for f in alone}

    def solve_blockers(self, blockers: list[str], resources: list[str], alone: dict[str, float],
                       width: int | None) -> dict[str, dict[str, float]]:
        """Step 5 for the blockers: each uses its own resource for its whole time alone; how much
        each uses of another's is solved pair by pair, from the mixes of the two (the blocker
        against the other in two ratios, and the other way round): a pair's mixes load only the
        two resources, so the pairs are small problems of their own."""
        usage = {b: {r: 0.0 for r in resources} for b in blockers}
        for b, r in zip(blockers, resources):
            usage[b][r] = alone[b]
        for i, (a, ra) in enumerate(zip(blockers, resources)):
            for b, rb in zip(blockers[i + 1:], resources[i + 1:]):
                ms = [m for m in self.mixes([a, b], alone) if len(m.counts) == 2]
                # a µop that may go to more units never needs the narrower resource (a logic op on
                # four FP pipes leaves an FP23 add its two), while the narrow µop loads the wide
                # resource: where a mix allows either reading, the wide blocker's use of the
                # narrow one is the dearer
                ka, kb = units(alone[a]) or 0, units(alone[b]) or 0
                price = {(a, rb): NARROWER} if ka > kb else {(b, ra): NARROWER} if kb > ka else None
                try:
                    u, _ = solve(ms, [ra, rb], [a, b], fixed={(a, ra): alone[a], (b, rb): alone[b]},
                                 width=width, floors=alone, price=price)
                except RuntimeError:
                    continue
                usage[a][rb], usage[b][ra] = u[a][rb], u[b][ra]
        consistent(usage, [m for m in self.mixes(blockers, alone) if len(m.counts) == 2], blockers, resources, alone)
        return usage

    def slow_units(self, model: Model, alone: dict[str, float], seed: int = 0) -> dict[str, str]:
        """Step 6: adds a resource per slow unit to ``model`` (and its usages); returns resource ->
        the form that probes it."""
        slow = [f for f, t in alone.items() if t >= SLOW and f in model.usage
                and max(model.usage[f].values(), default=0.0) < UNEXPLAINED * t]
        random.Random(seed).shuffle(slow)
        kept: dict[str, str] = {}
        for c in slow:
            share = {}
            for r, b in kept.items():
                counts = pair(c, alone[c], b, alone[b])
                t = self.cycles(counts)
                if t is not None and self.good({"counts": counts, "cycles": t}, alone):
                    share[r] = min(alone[c], max(0.0, (t - counts[b] * alone[b]) / counts[c]))
            r = max(share, key=share.get, default=None)
            if r is None or share[r] < SHARED * alone[c]:
                r = f"R{len(model.resources)}"
                model.resources.append(r)
                kept[r] = c
                share[r] = alone[c]
            for u in model.usage.values():
                u.setdefault(r, 0.0)
            model.usage[c][r] = share[r]
        if kept:
            self.log(f"slow units: {len(kept)} (probed by {', '.join(kept.values())})")
        return kept


