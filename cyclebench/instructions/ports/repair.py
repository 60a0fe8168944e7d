"""The resource model checked against the readings it was inferred from, before it predicts.

The inference (infer.py) settles for the sparsest mapping its solver finds under a limit on work,
and a resource model cannot express every effect of a real core; so some mixes the inference
measured are explained too fast or too slow by the model it returns (Zen 4: a store beside a
load, ``mov [m], rax; mov rbx, [m]``, reads 0.67 cycles, three memory operations a cycle, while
the model charges the store half a load's share of the load units and says 0.50).  The readings
are in the results file beside the model; :func:`mended` uses them three ways, each a rule on
the model's own figures that names no form:

* **no usage above the form's time alone:** a form that uses ``u`` cycles of a resource per
  instance cannot run faster than ``u`` on its own, so ``u`` is at most its time alone;
* **pairs the model explains too fast raise a shared usage:** the readings of two forms that the
  model puts more than half :data:`TOLERANCE` under (the fit's own tolerance), and that the two
  forms' times alone added up could explain, are fitted by least squares with one resource, each form a usage of it
  (:func:`pair_shares`); where the fit explains every such reading, lies within both forms' times
  alone but not at both (two forms that never overlap wait for each other: a chain between the
  copies, not a shared pipe), and the two share a resource that one of them is bound by alone,
  the usages there are raised to the fit (a store's share of the load units from its readings
  beside a load), except a form with no memory access on the load path (:func:`load_path`): a
  register-only form issues no load and no store, and such a fit is the crowding of
  the load-op form's other µop (Zen 4: ``imul r64, r64`` beside three ``cmp [m], r32`` reads 1.67
  cycles and beside six 2.36, which one resource fits with the multiply at 0.98 of the load path,
  while beside two it reads 1.00); and a raise is held to what the form's other readings leave it
  on that resource (:func:`_room`: a reading is never sped, so one that the raised share would
  put more than twice TOLERANCE slow, the other forms' shares being fits too, bounds it; Zen 4:
  a vector load beside two and three ``mov r64, imm64`` reads as 0.33 of that form's resource, a
  sixth-wide slot, where the load beside two ALU operations, a sixth each, runs 0.50 cycles);
* **a measured pair is a floor:** a block holds, for every two of its forms' classes (the
  inference's classes: forms that load the resources as one blocker does), a mix of the two in
  the block's own ratio; where such a mix was read, the block takes at least that long
  (:class:`PairFloors`, the least reading of that ratio among the classes' forms, each class
  standing for its forms whose results go where its read forms' did: memory, a vector register,
  a general register or the flags; two forms of one class, each pair of them its own).  This holds
  effects no resource explains (Zen 4: two loads and an ALU operation read 0.75 cycles, where
  two loads alone take 0.67 and a load and an ALU operation 0.33);
* **a unit held by two forms frees faster than either alone says:** a form's time alone is a
  floor of its share of a mix (model.py), read with its copies chained through its own results;
  where a reading of two forms of one slow unit (the inference's ``slow_units``: a divider) lies
  below their times alone added up, the unit serves them faster than their own streams did, and
  each form's floor drops to its usage of the unit, the share the mixes gave it
  (:func:`unit_floors`; Zen 4: ``divsd`` alone 5.00, beside ``sqrtss`` 9.56 for the two, and
  ``divsd`` whose dividend a load writes runs at 4.50, one fed by a register move or its own
  result at 5.00);
* **a form's time alone on the resource of its speed:** a form that runs more than one a cycle
  alone and none of whose usages comes within :data:`BINDING` of its time alone, while a resource
  it uses for at least half that time (less is crowding, as for the sixth rule) is probed by a
  form that runs alone as fast (within :data:`TOLERANCE`: as many units), takes its time alone
  there (:func:`alone_short`: the
  inference spread Zen 4's plain loads, ``mov rax, [m]``, three a cycle alone, over three
  resources at 0.25-0.28 each, so three loads of three forms read 0.83 cycles where they run
  1.00, and the load probe ``cmp [m], r32`` runs three a cycle too; Zen 3's ``cmp [m], r32``,
  two a cycle, crowds the two shift pipes by 0.17 cycle, and bound there it lowered a
  multiply's share of them);
* **of two ratios that disagree, the faster holds:** a reading is slowed by more than resources
  (a chain, the company its µops are dispatched with), never sped; where a form's share of the
  resource another form is bound by explains one ratio of the two and puts another more than
  :data:`TOLERANCE` slow, the share drops to what the faster reading leaves (:func:`lowered`,
  which predict.load applies once the shared floors and the flag-order rule have read the model:
  Zen 4's ``cvtsi2sd xmm, r64`` beside one ``imul r64, r64`` read 1.52 cycles and beside two
  2.00, and its 0.52 of the multiplier said 2.52 there and in a random mix that runs 2.00); where
  the other form probes the resource, the readings beside it are the direct ones, and a share that
  puts every ratio slow drops too (Zen 4, a draw whose ALU probe was a two-part ``lea``: a store of
  an immediate beside 2 and 4 of it read 0.83 and 1.33 cycles, a third of the ALUs, where the
  solve gave it half from its readings beside a shift).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import slots
from .bound import Bound
from .infer import Inference
from .mixes import trusted
from .model import FRONT_END, USED, Model
from .upper import BINDING      # a usage within this share of the form's time alone bounds the form
from ..operands import VECTOR_CLASSES

TOLERANCE = 0.10      # a reading the model explains within this share is left alone
VECTOR = VECTOR_CLASSES + ("K",)      # register classes whose results stay on the vector side


def readings(path: Path) -> list[tuple[dict[str, int], float]]:
    """(counts, cycles) of every mix a ``cyclebench ports`` results file measured that a model may
    rest on (mixes.trusted), less those one form's own stream paced (infer.Inference.paced: its
    register chains in the mix, which a block's own registers do not repeat)."""
    from .run import read
    _, records = read(path)
    inf = Inference(lambda counts: None)
    inf.load(records)
    return [(r["counts"], r["cycles"]) for r in trusted(records) if r.get("cycles") and not inf.paced(r)]


def model_cost(model: Model, counts: dict[str, int]) -> tuple[float, dict[str, float]]:
    """(the model's cycles for a mix, its load on each resource), a second store form's lines
    included (shared.py reads the same cost)."""
    loads = model.loads(counts)
    stores = [f for f in counts if f in model.lines]
    if len(stores) > 1:                 # two store forms of a mix write two lines in turn
        loads["store lines"] = sum(counts[f] * model.lines[f] for f in stores)
    return max(loads.values()), loads


def pair_shares(rows: list[tuple[int, int, float]]) -> tuple[float, float] | None:
    """(usage of the first form, of the second) of one resource that explains every reading
    ``(count a, count b, cycles)`` within half of TOLERANCE, by least squares: None with fewer
    than two ratios, or when no one resource fits them all."""
    if len({x / y for x, y, _ in rows}) < 2:
        return None
    A = np.array([[x, y] for x, y, _ in rows], dtype=float)
    T = np.array([t for _, _, t in rows])
    u, *_ = np.linalg.lstsq(A, T, rcond=None)
    if np.any(np.abs(A @ u - T) > T * TOLERANCE / 2):
        return None
    return float(u[0]), float(u[1])


def load_path(model: Model, catalogue) -> tuple[set[str], set[str]]:
    """(the load path: the resources every plain GPR load of the model uses whose probe reads memory
    and runs alone as fast as the loads do, as :func:`alone_short` reads a resource's speed; the
    model's forms that neither read nor write memory), or (set(), set()) where the model holds no
    plain GPR load."""
    from .mul_loads import kinds, load_resources
    plains = [f for f in kinds(model, catalogue)[0] if model.alone.get(f)]
    if not plains:
        return set(), set()
    used = load_resources(model, plains)

    def accesses(form, read=False):            # reads memory, or (unless ``read``) writes it
        op = form is not None and form.memory_operand
        return bool(op) and op.kind == "mem" and (op.read or (op.write and not read))

    fast = max(model.alone[f] for f in plains)
    path = {r for r in used if r in model.probes and accesses(catalogue.by_name.get(model.probes[r]), read=True)
            and abs(model.alone.get(model.probes[r], 0.0) - fast) <= TOLERANCE * fast}
    return path, {f for f in model.usage if (form := catalogue.by_name.get(f)) is not None and not accesses(form)}


def repair(model: Model, mixes: list[tuple[dict[str, int], float]],
           loadless: tuple[set[str], set[str]] = (set(), set())) -> tuple[Model, list[str]]:
    """(a mended copy of the model, one line per usage changed): the first two rules; ``loadless``:
    (the load path, the forms with no memory access) as :func:`load_path` gives them."""
    m = copy.deepcopy(model)
    notes = []
    for f, use in m.usage.items():
        t = m.alone.get(f)
        for r, v in use.items():
            if r != FRONT_END and t and v > t * (1 + TOLERANCE):
                notes.append(f"{f}: {r} {v:.2f} -> {t:.2f} (its time alone)")
                use[r] = t
    groups: dict[tuple[str, str], list[tuple[int, int, float]]] = {}
    for counts, t in mixes:
        if len(counts) != 2 or not all(f in m.usage and f in m.alone for f in counts):
            continue
        if model_cost(m, counts)[0] >= t * (1 - TOLERANCE / 2) or t > sum(n * m.alone[f] for f, n in counts.items()) * (1 + TOLERANCE):
            continue                     # explained, or slower than any sharing of resources explains
        a, b = sorted(counts)
        groups.setdefault((a, b), []).append((counts[a], counts[b], t))
    for (a, b), rows in sorted(groups.items()):
        fit = pair_shares(rows)
        if fit is None or not all(0 <= u <= m.alone[f] * (1 + TOLERANCE) for f, u in zip((a, b), fit)):
            continue                     # no one resource is used that way: a chain or another effect
        if all(u >= m.alone[f] * (1 - TOLERANCE) for f, u in zip((a, b), fit)):
            continue                     # the two never overlap: they wait for each other, no pipe is shared
        shared = [r for r in m.resources if m.usage[a].get(r, 0.0) >= USED and m.usage[b].get(r, 0.0) >= USED
                  and any(m.usage[f][r] >= m.alone[f] * (1 - TOLERANCE) for f in (a, b))]
        if not shared:
            continue
        r = max(shared, key=lambda r: m.usage[a][r] / m.alone[a] + m.usage[b][r] / m.alone[b])
        for f, u in zip((a, b), fit):
            if r in loadless[0] and f in loadless[1]:
                continue                 # no load to share: the other form's crowding (see above)
            u = min(u, _room(m, mixes, f, r, u))
            if u > m.usage[f][r] * (1 + TOLERANCE):
                notes.append(f"{f}: {r} {m.usage[f][r]:.2f} -> {u:.2f} ({len(rows)} readings with {b if f == a else a})")
                m.usage[f][r] = u
    return m, notes


def _room(m: Model, mixes: list[tuple[dict[str, int], float]], f: str, r: str, u: float) -> float:
    """The most of ``r`` that ``f``'s readings leave a raise to ``u``: a reading that ``u`` would
    put more than twice TOLERANCE slow on ``r`` (its other forms' shares there are fits, each
    within TOLERANCE) bounds the share at what those forms leave (a reading is slowed by more
    than resources, never sped: the faster holds, as in :func:`lowered`)."""
    room = u
    for counts, t in mixes:
        if f not in counts or not all(g in m.usage for g in counts):
            continue
        rest = sum(n * m.usage[g].get(r, 0.0) for g, n in counts.items() if g != f)
        if rest + counts[f] * u > t * (1 + 2 * TOLERANCE):
            room = min(room, max(0.0, (t - rest) / counts[f]))
    return room


def lowered(model: Model, mixes: list[tuple[dict[str, int], float]]) -> list[str]:
    """The sixth rule, on ``model`` in place: one line per usage lowered.  A share counts where the
    other form of the reading is bound alone by the resource, the share is at least half of that
    form's own (less is crowding of a wider group, crowding.py, not a µop on the other's units)
    and short of the form's own time alone (it does not bound the form).  The shares the readings
    beside a resource's own probe lower go first, and the rest are read again after them: a
    reading too fast for both its forms is one slack, and the probe's readings say whose it is
    (Zen 4: ``vprolvq ymm{k}{z}, ymm, [m256]`` beside the load probe lowers the rotate's share of
    the load path, after which its fast readings beside the plain GPR loads lower theirs no more)."""
    notes = _lowered(model, mixes, direct=True)
    return notes + _lowered(model, mixes)


def _lowered(model: Model, mixes: list[tuple[dict[str, int], float]], direct: bool = False) -> list[str]:
    """:func:`lowered`'s one pass; ``direct``: only the shares read beside the resource's probe."""
    pairs = [(c, t) for c, t in mixes if len(c) == 2 and all(model.alone.get(f) and f in model.usage for f in c)]
    costs = [(c, t, *model_cost(model, c)) for c, t in pairs]      # the model changes only after the pass
    held = set() if direct else {frozenset(c) for c, t, cost, _ in costs if cost <= t * (1 + TOLERANCE / 2)}
    allow: dict[tuple[str, str], tuple[float, str]] = {}
    for counts, t, cost, loads in costs:
        if cost <= t * (1 + TOLERANCE):
            continue                     # explained
        r = max(loads, key=loads.get)
        for f, g in (tuple(counts), tuple(counts)[::-1]):
            u, own = model.usage[f].get(r, 0.0), model.usage[g].get(r, 0.0)
            # no ratio of the two explained: no disagreement, unless ``g`` probes ``r``, where
            # every reading slow on it says the share is too large (the readings beside the
            # probe are the direct ones)
            if model.probes.get(r) != g and (direct or frozenset(counts) not in held):
                continue
            if r == FRONT_END or own < model.alone[g] * (1 - TOLERANCE) or not own / 2 <= u \
                    or _bounds_alone(model, f, r):
                continue
            left = max(0.0, (t - counts[g] * own) / counts[f])
            if left < allow.get((f, r), (u, ""))[0]:
                allow[(f, r)] = left, g
    notes = []
    for (f, r), (v, g) in sorted(allow.items()):
        if v < model.usage[f][r] * (1 - TOLERANCE):
            notes.append(f"{f}: {r} {model.usage[f][r]:.2f} -> {v:.2f} (its fastest reading with {g})")
            model.usage[f][r] = v
    return notes


def _bounds_alone(model: Model, f: str, r: str) -> bool:
    """Whether ``r`` alone sets ``f``'s time alone: its share is within TOLERANCE of that time and
    no other resource of ``f`` reaches it.  A share level with the time but beside another that
    reaches it (a store of an immediate: 0.50 of the ALUs and 0.55 of the store resource, 0.56
    cycles alone) sets nothing the readings need, and the fourth decimal of a fit must not decide."""
    alone, u = model.alone[f], model.usage[f].get(r, 0.0)
    level = alone * (1 - TOLERANCE)
    return u >= level and not any(v >= level for q, v in model.usage[f].items() if q != r)


def unit_floors(model: Model, mixes: list[tuple[dict[str, int], float]], units) -> list[str]:
    """The fourth rule, on ``model`` in place: one line per floor lowered."""
    notes = []
    for r in units:
        held = {f for f, use in model.usage.items() if use.get(r, 0.0) >= USED and f in model.alone}
        for counts, t in mixes:
            if len(counts) != 2 or not set(counts) <= held:
                continue
            if t >= sum(n * model.alone[f] for f, n in counts.items()) * (1 - TOLERANCE / 4):
                continue                 # the unit took them no faster than their own streams
            for f in counts:
                if model.usage[f][r] < model.alone[f] * (1 - TOLERANCE / 4):
                    notes.append(f"{f}: floor {model.alone[f]:.2f} -> {model.usage[f][r]:.2f} (its use of {r}: "
                                 f"{t:.2f} cycles beside {next(g for g in counts if g != f)})")
                    model.alone[f] = model.usage[f][r]
    return notes


def alone_short(model: Model) -> list[str]:
    """The fifth rule, on ``model`` in place: one line per usage raised to the form's time alone."""
    notes = []
    for f, use in model.usage.items():
        t = model.alone.get(f)
        own = {r: v for r, v in use.items() if r != FRONT_END and v >= USED}
        if not t or t >= 1 - TOLERANCE or not own or max(own.values()) >= BINDING * t:
            continue                     # one a cycle is many units' speed: it names no resource
        alike = [r for r in own if r in model.probes and model.probes[r] != f and own[r] >= t / 2
                 and abs(model.alone.get(model.probes[r], 0.0) - t) <= TOLERANCE * t]
        if alike:
            r = max(alike, key=own.get)
            notes.append(f"{f}: {r} {own[r]:.2f} -> {t:.2f} (its time alone, as {model.probes[r]}'s)")
            use[r] = t
    return notes


@dataclass
class PairFloors(Bound):
    """The third rule: (class, class) -> {ratio of their counts: the least cycles per instance
    of the first read at that ratio}; ``classes``: form -> its class (a form in none is its own).
    A class pair stands for its forms at a ratio only where its forms' readings there agree
    (within TOLERANCE): where they differ, a reading is a fact of its own two forms (Zen 4: a
    ``ucomiss`` beside four ALU operations reads 2.00 cycles, a vector store of its class beside
    them far less), and ``own`` keeps it for them alone.  A class stands only for its forms whose
    results go where its read forms' did (:func:`written`: memory, a vector register, a general
    register or the flags): a store's data leaves by another path than a compare's flags, so a
    store never read at a ratio is not held to a compare's reading there, nor the reverse
    (``written``: form -> where its results go; ``kinds``: (class, class) -> ratio -> where the
    results of each class's forms read there went).  Two forms of one class read together are a
    pair of their own (Zen 3: a three-part ``lea`` in the shift probe's class beside two shifts reads
    as if it shared no pipe, beside one as if it shared them, and the faster ratio lowers its share),
    unless one writes memory: a mix keeps each form's copies on one address, one line's stores."""
    classes: dict[str, str] = field(default_factory=dict)
    table: dict[tuple[str, str], dict[float, float]] = field(default_factory=dict)
    own: dict[tuple[str, str], dict[float, float]] = field(default_factory=dict)
    written: dict[str, frozenset] = field(default_factory=dict)
    kinds: dict[tuple[str, str], dict[float, tuple[frozenset, frozenset]]] = field(default_factory=dict)

    @classmethod
    def build(cls, mixes: list[tuple[dict[str, int], float]], classes: dict[str, str],
              alone: dict[str, float] | None = None, written=None) -> "PairFloors":
        out = cls(dict(classes), written=dict(written or {}))
        rows: dict[tuple[str, str, float], dict[tuple[str, str], float]] = {}
        slow = set()                     # the ratios some reading of which is slower than its forms alone
        for counts, t in mixes:
            if len(counts) != 2:
                continue
            (p, x, f), (q, y, g) = sorted((out.cls(f), n, f) for f, n in counts.items())
            # two forms of one class are a pair of their own (the class holds no ratio of itself),
            # but not where one writes memory: a mix keeps each form's copies on one address, so
            # two stores' mix reads one line's stores, which the store-line rules price
            if p == q and "memory" in (out.kind(f) or set()) | (out.kind(g) or set()):
                continue
            key = (p, q, round(x / y, 3)) if p != q else (f, g, round(x / y, 3))
            row = rows.setdefault(key, {})
            row[f, g] = min(row.get((f, g), t / x), t / x)
            if not (alone and f in alone and g in alone
                    and t <= max(x * alone[f], y * alone[g]) * (1 + TOLERANCE)):
                slow.add(key)
        for (p, q, k), per in rows.items():
            if (p, q, k) not in slow:
                continue                 # every reading one form's own stream: no interference to stand for
            # (a row of one class's two forms, keyed by them, holds that one pair: its own below)
            if len(per) > 1 and max(per.values()) <= min(per.values()) * (1 + TOLERANCE):
                out.table.setdefault((p, q), {})[k] = min(per.values())
                out.kinds.setdefault((p, q), {})[k] = (frozenset(out.kind(f) for f, _ in per),
                                                       frozenset(out.kind(g) for _, g in per))
            else:
                for pair, v in per.items():
                    out.own.setdefault(pair, {})[k] = v
        return out

    def cls(self, form: str) -> str:
        return self.classes.get(form, form)

    def kind(self, form: str) -> frozenset | None:
        """Where the form's results go (:func:`written`); None for a form the catalogue lacks."""
        return self.written.get(form)

    def describe(self) -> str:
        return (f"measured mixes of two forms' classes: {sum(map(len, self.table.values()))} ratios of "
                f"{len(self.table)} class pairs, and {sum(map(len, self.own.values()))} ratios of {len(self.own)} "
                "form pairs whose classes' readings differ or of one class; a block with both at a ratio read "
                "takes at least the least cycles read there")

    def floor(self, counts: dict[str, int]) -> tuple[float, str | None]:
        """(cycles, "measured mix A + B") of the slowest pair of the block's classes read in the
        block's own ratio (or of its forms, where their classes' readings differ); (0, None)
        where none was."""
        best, why = 0.0, None
        for (p, q), row in self.own.items():
            if p in counts and q in counts:
                per = row.get(round(counts[p] / counts[q], 3))
                if per is not None and per * counts[p] > best:
                    best, why = per * counts[p], f"measured mix {p} + {q}"
        present = {self.cls(f) for f in counts}
        for (p, q), row in self.table.items():
            if p not in present or q not in present:
                continue
            for k, per in row.items():
                kp, kq = self.kinds.get((p, q), {}).get(k, (None, None))
                n_p, n_q = self._of(counts, p, kp), self._of(counts, q, kq)
                if n_p and n_q and round(n_p / n_q, 3) == k and per * n_p > best:
                    best, why = per * n_p, f"measured mix {p} + {q}"
        return best, why

    def _of(self, counts: dict[str, int], c: str, kinds) -> int:
        """The block's instances of class ``c`` whose results go where ``kinds`` say (None: any)."""
        return sum(n for f, n in counts.items()
                   if self.cls(f) == c and (kinds is None or self.kind(f) in kinds))


def mended(path: Path) -> tuple[Model, PairFloors, list[str]]:
    """The last model of a ``cyclebench ports`` results file, mended against the file's readings,
    the pair floors of those readings, and one line per usage changed."""
    from .run import load
    from ..catalogue import Catalogue
    model, report = load(path)
    mixes = readings(path)
    catalogue = Catalogue.load()
    model, notes = repair(model, mixes, load_path(model, catalogue))
    notes += slots.front_slots(model, mixes, TOLERANCE)
    notes += unit_floors(model, mixes, report.get("slow_units") or ())
    notes += alone_short(model)
    kinds = {f: written(form) for f in model.usage if (form := catalogue.get(f)) is not None}
    return model, PairFloors.build(mixes, report.get("classes") or {}, model.alone, kinds), notes


def written(form) -> frozenset[str]:
    """Where a form's results go: "memory", "vector" (a vector or mask register) and "integer" (a
    general register or the flags), from its operands."""
    out = {"memory" if op.kind in ("mem", "implicit_mem") else "vector" if op.cls in VECTOR else "integer"
           for op in form.operands if op.write}
    out |= {"vector" if i.register.upper().startswith(VECTOR) else "integer" for i in form.implicit if i.write}
    if form.flags_written:
        out.add("integer")
    return frozenset(out)
