"""Floors from one resource that two forms' pair readings show they share, at any ratio.

A pair floor (repair.PairFloors) holds a block to a mix the inference read, but only in the ratio
it was read in.  Where the readings of two forms at two or more ratios are all explained by one
resource that each form uses a fixed amount of (``t = a x + b y``, fitted by least squares as
repair.py fits its shared usages, within half its tolerance), that resource's load is a floor at
every ratio: a block with ``x`` of the first and ``y`` of the second takes at least ``a x + b y``
cycles.  Only pairs whose readings the model explains too fast give one (others add nothing).
A form with no memory access shares nothing on the load path (repair.load_path) with a load-op
form: its fit beside one is the other µop's crowding, and plain loads of the load-op form's class
are not counted beside it (Zen 4: ``shr r, cl`` beside two and three ``cmp [m], r32`` 1.00 and
1.33 cycles, yet a kernel block of a ``shr r, cl``, three plain loads and an ``add r32, [m]``
runs 1.40, where counting the loads said 1.67).
A mix that ran no longer than its slower part alone (the two overlapped whole) fixes no point of
the line: it is left out of the fit and refutes a fit that charges it more (Zen 4: ``imul``
beside 2, 4, 8 ALU ops 1.00, 1.50, 2.25 cycles; a line through all three held one ``imul`` and
three ALU ops, which run 1.00, to 1.24).

A blocker probes the resource it is bound by alone, so every form whose fit beside it gives the
blocker its whole time alone shares that one resource: their loads add up too, each form at the
usage its own fit found, whether the blocker's class is in the block or not (Zen 4: ``test byte ptr [m], 2`` and ``cmp rbx, [m]`` beside ``cmp
r32, r32``, the ALU blocker, a quarter cycle each; with three forms of the blocker's class, ``cmp``
and ``add`` of registers, and a ``nop`` a block reads 1.25 cycles, where the model, which put the
memory forms' ALU work elsewhere, said 1.00).

A reading pairs a form with a blocker, and the blocker stands for its class (the inference's
classes: forms that load the resources as one blocker does), so a blocker's side counts every
form of its class in the block but the other side's (a form counts once, at its own fit: one
``vorps`` of ``vcvtpd2qq``'s class, fitted beside it too, is no mix of the two); the other side
counts its own form only (forms of one class can differ in what they share with a third: Zen 4's
``movmskpd`` beside 4 ``cmp r32, r32`` reads 1.39 cycles, ``ucomiss`` 2.00).

Zen 4: ``ucomiss xmm, xmm`` beside 4 and 8 ``cmp r32, r32`` reads 2.00 and 3.00 cycles, as if
each transfer of its result to the integer side took a cycle of all four ALUs, while the model
gives it two ALU-cycles (it explains ``ucomiss`` beside shifts, which lose nothing to it); a
block of a ``ucomiss`` and a ``test al, 2`` (the ``cmp`` class) then takes at least 1.25 cycles
(measured 1.34 with ``andn``, 2.00 with four).

Where such a fit gives a form the whole of a probed resource of several units for its time alone
and the model's own fit gives it less, the floor alone charges it that resource
(:meth:`SharedFloors.charged_whole`, applied by predict.load): the transfer takes the four ALUs'
cycle where the blocker's class fills them and costs nothing where a multiply or three-part
``lea`` leave ALUs idle, which a fitted share, charged in every block, cannot say.

That cycle falls only on the forms that write what the transfer writes on the integer side
(:func:`integer_side`, from its operands: the flags for a compare, a general register for a move
or conversion): readings of a class member beside a transfer that writes the same, in numbers
that keep it busy for the transfer's time alone, under the two times added tell that the member
loses none (:meth:`SharedFloors._apart`), and beside such a transfer the floor leaves it out.
Zen 4 (bench/transfer_grid.py): ``ucomiss`` beside 8 ``add``, ``cmp`` or ``and`` reads 3.00
cycles, beside 8 ``lea r, [r+d8]`` or ``movsxd``, which write no flags, 2.00 as they do alone;
``movd r32, xmm`` beside 8 ``add`` or ``lea`` 3.00, beside 8 ``cmp``, which writes only flags, 2.00.

Where usages of one resource overlap, a block's load of it is the larger part, not the sum
(:meth:`SharedFloors.overlapping`; predict() leaves the smaller part out of the final loads and
the simulation).  A transfer held whole beside two resources' classes keeps the model's whole
usage of each (no one hold explains both), but it takes those units beside the forms its readings
spare rather than after them (Zen 4: ``cvttsd2si r32, [m64]``, the ALUs' 1.00 cycle in the model,
beside 1, 2, 4 and 8 ``cmp r, r`` 1.03, 1.14, 1.40, 2.00 cycles, beside 8 ``add`` 3.00).  And the
resource a transfer blocker probes holds two things, the transfer path a compare and a vector
store share and the cycle the compare takes from the ALU forms (their shares of it): the vector
forms' part and the integer forms' part overlap (``ucomiss``, a vector store and 4 or 8 ``add``
1.99 and 3.00 cycles, where the sum of the usages said 2.41 and 3.32).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from .bound import Bound
from .model import USED, Model
from .dealing import vector_form
from .repair import TOLERANCE, model_cost, pair_shares
from ..operands import VECTOR_CLASSES as VECTOR


def integer_side(form) -> frozenset[str] | None:
    """What a form (a catalogue Form) moves from the vector side to the integer side, by its
    operands: "flags", "gpr" or both, for a form that reads a vector register (or memory in a
    vector register's place) and writes no vector register or memory; None for any other."""
    if not (any(o.read and o.kind == "reg" and o.cls in VECTOR for o in form.operands)
            or (form.memory_operand is not None and form.memory_operand.read
                and re.search(r"\b[xyz]mm\d*/m", form.instruction_string))):
        return None
    if any(o.write and (o.kind != "reg" or o.cls in VECTOR) for o in form.operands):
        return None
    out = {"flags"} if form.flags_written else set()
    if any(o.write and o.kind == "reg" and o.cls.startswith("GPR") for o in form.operands):
        out.add("gpr")
    return frozenset(out) or None


@dataclass
class SharedFloors(Bound):
    """(form, form) -> (usage of the first, of the second) of the resource they share;
    ``classes``: form -> its class (the blocker that stands for it)."""
    pairs: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)
    probed: dict[str, dict[str, float]] = field(default_factory=dict)   # blocker -> its usage, and
    # form -> usage, of the resource the blocker is bound by alone (the fits that give it its time alone)
    used: dict[str, set[str]] = field(default_factory=dict)   # form -> the resources the model has it use
    probes: dict[str, str] = field(default_factory=dict)      # blocker -> the resource it probes
    sides: dict[str, frozenset[str]] = field(default_factory=dict)   # transfer -> integer_side
    apart: dict[frozenset[str], set[str]] = field(default_factory=dict)   # what a transfer writes ->
    # the forms whose readings beside such a transfer, filling its time, lose no whole cycle to it
    path: set[str] = field(default_factory=set)        # the load path (repair.load_path)
    loadless: set[str] = field(default_factory=set)    # the forms with no memory access
    several: dict[str, set[str]] = field(default_factory=dict)   # transfer -> the resources whose
    # probes' classes it ran the two times added beside, more than one (_whole_beside)
    held: dict[str, tuple[str, float]] = field(default_factory=dict)   # form -> (the resource its
    # class's blocker probes, its time alone): where a pair's fit gives it that whole, the pair
    # shares that resource

    @classmethod
    def build(cls, model: Model, mixes: list[tuple[dict[str, int], float]],
              classes: dict[str, str], sides: dict[str, frozenset[str]] | None = None,
              loadless: tuple[set[str], set[str]] = (set(), set())) -> "SharedFloors":
        rows: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
        overlap: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
        short: set[tuple[str, str]] = set()
        for counts, t in mixes:
            if len(counts) != 2 or not all(f in model.usage for f in counts):
                continue
            a, b = sorted(counts)
            slower = max(counts[f] * model.alone.get(f, 0.0) for f in (a, b))
            # a mix no longer than its slower part alone overlapped whole: it bounds a shared
            # load from above but fixes no point of it
            (overlap if t <= slower * (1 + TOLERANCE / 2) else rows).setdefault((a, b), []).append(
                (counts[a], counts[b], t))
            if model_cost(model, counts)[0] < t * (1 - TOLERANCE):
                short.add((a, b))
        out = cls(classes=dict(classes), used={f: set(model.used(f)) for f in model.usage},
                  probes={f: r for r, f in model.probes.items()}, sides=dict(sides or {}),
                  path=set(loadless[0]), loadless=set(loadless[1]))
        out.apart = out._apart(model, mixes)
        blockers = set(classes.values())
        for pair in sorted(short):
            fit = pair_shares(rows.get(pair, []))
            if fit is not None and all(fit[0] * x + fit[1] * y <= t * (1 + TOLERANCE / 2)
                                       for x, y, t in overlap.get(pair, [])) and min(fit) >= USED and all(
                    u <= model.alone.get(f, 0.0) * (1 + TOLERANCE) for f, u in zip(pair, fit)):
                out.pairs[pair] = fit
                for x in pair:     # a form of a class is bound alone by what its blocker probes
                    if (k := x if x in blockers else classes.get(x)) in out.probes:
                        out.held[x] = (out.probes[k], model.alone[x])
                for (x, ux), (y, uy) in ((pair[0], fit[0]), (pair[1], fit[1])), ((pair[1], fit[1]), (pair[0], fit[0])):
                    if x in blockers and y not in blockers and ux >= model.alone[x] * (1 - TOLERANCE) \
                            and not (out.probes.get(x) in out.path and y in out.loadless):
                        out.probed.setdefault(x, {x: model.alone[x]})[y] = uy
        out._whole_beside(model, mixes)
        return out

    def _whole_beside(self, model: Model, mixes: list[tuple[dict[str, int], float]]) -> None:
        """Transfers that take a multi-unit resource whole, read from its class, not its probe
        alone (in :attr:`probed` at their time alone): a member of the resource's probe class that
        runs alone as fast as the probe, read beside the transfer in numbers that fill its time
        alone, that every time ran as long as the two times added, lost all its units to the
        transfer; the transfer's class (forms that load the resources as it does, writing what it
        writes) does the same.  A transfer read so beside two resources' classes is held on
        neither: no one hold explains both (Zen 4: ``cvttsd2si r32, [m]`` ran the two times added
        beside the ALU probe's class and a two-part ``lea``'s).  The probe a draw picks
        may write what the transfer does not (Zen 4: a two-part ``lea`` as the ALU probe, 1.56 and
        2.00 cycles beside ``comiss`` at 4 and 8 to 1, while its class's ``sub`` beside it at 4 to
        1 reads 2.00, as the pair of ``sub`` and ``ucomiss`` does where ``sub`` is the probe)."""
        verdicts: dict[tuple[str, str], set[bool]] = {}
        for counts, t in mixes:
            if len(counts) != 2:
                continue
            for z, f in (tuple(counts), tuple(counts)[::-1]):
                p = f if f in self.probes else self.classes.get(f)
                a, az, af = model.alone.get(p or ""), model.alone.get(z), model.alone.get(f)
                if z not in self.sides or f in self.sides or p not in self.probes or not (a and az and af) \
                        or a > (1 + TOLERANCE) / 2 or abs(af - a) > TOLERANCE * a:
                    continue             # not a transfer beside a fast member of a multi-unit class
                busy, own = counts[f] * af, counts[z] * az
                if busy >= own * (1 - TOLERANCE):
                    verdicts.setdefault((z, f), set()).add(t >= (busy + own) * (1 - TOLERANCE / 2))
        held: dict[str, set[str]] = {}
        for (z, f), v in sorted(verdicts.items()):
            if v == {True}:
                held.setdefault(z, set()).add(f if f in self.probes else self.classes[f])
        for z, ps in sorted(held.items()):
            if len(ps) != 1:             # whole on two resources at once: no one hold explains it;
                self.several[z] = {self.probes[p] for p in ps}     # overlapping() reads them
                continue
            p = next(iter(ps))
            for g in [z] + [g for g, k in self.classes.items() if k == z and self.sides.get(g) == self.sides[z]]:
                if model.alone.get(g):
                    self.probed.setdefault(p, {p: model.alone[p]}).setdefault(g, model.alone[g])

    def _apart(self, model: Model, mixes: list[tuple[dict[str, int], float]]) -> dict[frozenset[str], set[str]]:
        """What a transfer writes -> the forms that, read beside a transfer writing the same,
        in numbers that keep them busy at least its time alone, lose no whole cycle to it (every
        such reading under the two times alone added): the transfer's result holds the integer
        side where it writes what they write (Zen 4: ``ucomisd`` beside four ``add`` 2.00 cycles,
        beside four ``lea`` or ``movsxd``, which write no flags, 1.59-1.63; a conversion to a
        general register beside four ``cmp``, which write only flags, 1.39, four ``add`` 2.00)."""
        verdicts: dict[tuple[frozenset[str], str], set[bool]] = {}
        for counts, t in mixes:
            if len(counts) != 2:
                continue
            for z, f in (tuple(counts), tuple(counts)[::-1]):
                if z not in self.sides or f in self.sides or not model.alone.get(z) or not model.alone.get(f):
                    continue
                busy, own = counts[f] * model.alone[f], counts[z] * model.alone[z]
                if busy >= own * (1 - TOLERANCE):
                    verdicts.setdefault((self.sides[z], f), set()).add(t < (busy + own) * (1 - TOLERANCE))
        out: dict[frozenset[str], set[str]] = {}
        for (side, f), v in verdicts.items():
            if v == {True}:
                out.setdefault(side, set()).add(f)
        return out

    def _spared(self, forms) -> set[str]:
        """The forms that lose no whole cycle to any of the transfers among ``forms``."""
        sides = {self.sides[f] for f in forms if f in self.sides}
        return set.intersection(*(self.apart.get(s, set()) for s in sides)) if sides else set()

    def whole_group(self, model: Model, units: dict[str, int]) -> dict[str, str]:
        """Form -> resource of ``k >= 2`` units that the form's readings beside its probe show it
        takes whole (all ``k`` units) for its time alone, where the model's fit gives it less.

        Zen 4: ``ucomiss`` beside 1, 3, 4 and 8 ``sub r, r`` reads 1.55, 1.77, 2.00 and 3.01
        cycles (a cycle of all four ALUs where the ALU forms fill them), beside two ``imul r, r, 5``
        or four three-part ``lea`` (held to fewer ALUs) 2.00 as without it; the model's share of
        the ALU resource (0.49, fitted over all ratios) charges it in both."""
        out: dict[str, str] = {}
        for x, use in self.probed.items():
            r = self.probes.get(x)
            if r is None or units.get(r, 1) < 2:
                continue
            for y, uy in use.items():
                if (y != x and y in model.alone and uy >= max(1.0, model.alone[y]) * (1 - TOLERANCE)
                        and model.usage.get(y, {}).get(r, 0.0) < uy * (1 - TOLERANCE)):
                    out[y] = r
        return out

    def charged_whole(self, model: Model, units: dict[str, int]) -> Model:
        """The model with each :meth:`whole_group` form's share of that resource left out: the
        floor charges it the whole resource where the probe's class is in the block, and nothing
        charges it where the block's forms of that resource are held to fewer of its units."""
        held = self.whole_group(model, units)
        if not held:
            return model
        out = copy.deepcopy(model)
        for f, r in held.items():
            out.usage[f].pop(r, None)
        return out

    def overlapping(self, model: Model, counts: dict[str, int], units: dict[str, int]) -> dict[str, set[str]]:
        """Resource -> the forms of a block (``counts``) whose usage of it runs beside other
        forms' usage: of two overlapping sides the smaller, so the load is the larger's
        (``units``: resource -> its units, simulate.units):

        * a transfer held whole on several resources of several units (:attr:`several`) and the
          forms its readings spare beside a like transfer (:meth:`_spared`);
        * on the resource a transfer blocker probes, the forms with a vector operand (a vector
          store's share of the transfer path) and those without (an ALU form's share of the
          cycle the transfer takes from the ALUs)."""
        out: dict[str, set[str]] = {}

        def smaller(r: str, a: set[str], b: set[str]) -> None:
            load = lambda fs: sum(counts[f] * model.usage.get(f, {}).get(r, 0.0) for f in fs)
            la, lb = load(a), load(b)
            if la > 0 and lb > 0:
                out.setdefault(r, set()).update(a if la <= lb else b)

        for t in counts:
            spared = self._spared([t]) & counts.keys() if t in self.several else set()
            for r in self.several.get(t, ()):
                u = model.usage.get(t, {}).get(r, 0.0)
                if units.get(r, 1) >= 2 and u >= model.alone.get(t, 0.0) * (1 - TOLERANCE):
                    smaller(r, {t}, spared)
        for t, r in self.probes.items():
            if t in self.sides and t not in self.several:
                users = {f for f in counts if f not in self.sides and model.usage.get(f, {}).get(r, 0.0) > 0}
                vector = set(filter(vector_form, users))
                smaller(r, vector, users - vector)
        return out

    def describe(self) -> str:
        return (f"a resource two forms share at any ratio, from their readings at several: {len(self.pairs)} "
                f"form pairs, and {len(self.probed)} blockers' resources that several forms fill")

    def floor(self, counts: dict[str, int]) -> tuple[float, str | None]:
        """(cycles, "shared by A + B") of the most loaded such resource in a block with
        ``counts`` instances per form; (0, None) where none applies."""
        blockers = set(self.classes.values())
        best, why = 0.0, None
        for (a, b), (ua, ub) in self.pairs.items():
            # a class member counts where it uses what the pair shares: the resource the other
            # side's class probes where the fit gives that side its whole time, else any it uses (a
            # tenth of a cycle of some third resource, which a re-measure may or may not cross,
            # would count a plain load in ``cmp r32, [m]``'s class beside ``test``)
            na = self._count(a, counts, blockers, {b}, self._shares(b, ub), self._spared([b]))
            nb = self._count(b, counts, blockers, {a}, self._shares(a, ua), self._spared([a]))
            if na and nb and ua * na + ub * nb > best:
                best, why = ua * na + ub * nb, f"shared by {a} + {b} (their readings)"
        for x, use in self.probed.items():
            with_x = [f for f in use if f != x and counts.get(f)]
            nx = self._count(x, counts, blockers, set(with_x), {self.probes[x]} if x in self.probes else None,
                             self._spared(with_x))
            v = use[x] * nx + sum(use[f] * counts[f] for f in with_x)
            if len(with_x) + bool(nx) >= 2 and v > best:     # two forms on it at least
                best, why = v, f"the resource {x} probes, shared by {len(with_x)} forms (their readings)"
        return best, why

    def _shares(self, form: str, use: float) -> set[str] | None:
        """The resources a pair with ``form`` (its fit ``use``) may share: the one its class's
        blocker probes where the fit gives it its whole time alone, else every resource the
        model has it use."""
        if form in self.held and use >= self.held[form][1] * (1 - TOLERANCE):
            return {self.held[form][0]}
        if form in self.loadless:        # it issues no load: what it shares is off the load path
            return self.used.get(form, set()) - self.path
        return self.used.get(form)

    def _count(self, form: str, counts: dict[str, int], blockers: set[str], besides: set[str],
               shared: set[str] | None = None, spared: set[str] = frozenset()) -> int:
        """Instances ``form`` stands for in the block: a blocker its class's, but for the forms in
        ``besides``, which count on their own side at their own fit (a form is counted once), and
        for the forms the model has use none of the ``shared`` resources (the other form's, or
        the one the blocker probes): a class is the forms that load the blocker's resources
        alike, not every resource it uses (Zen 4's plain loads join ``cmp r32, [m]``'s class but
        use no ALU, and beside ``sub`` hold none of the ALU work the pair's fit shares)."""
        if form not in blockers:
            return counts.get(form, 0) if form not in spared else 0
        return sum(n for f, n in counts.items() if f not in spared and (
                   f == form or (self.classes.get(f) == form and f not in besides
                                    and (shared is None or f not in self.used or self.used[f] & shared))))
