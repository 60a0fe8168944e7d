"""The resource model: forms use amounts of abstract resources; a mix costs its largest load.

Each form ``f`` uses ``u[f][r]`` cycles of resource ``r`` per instance (Palmed's model: a resource
is a port, a set of ports, a divider or the front end, each with capacity one cycle per cycle).
A mix with ``n[f]`` instances of each form runs, in the steady state, in

    T = max_r  sum_f n[f] * u[f][r]

cycles.  The front end is one more resource every instruction uses ``1 / width`` of (a form
whose usage names ``FRONT_END`` uses that much instead), and each
form's own throughput alone is a floor for its share (``n[f] x alone[f]``: adding other work never
makes a form's stream faster).

:func:`solve` infers unknown usages from measured mixes with ``scipy.optimize.milp``: for every
measurement every resource's load stays at or under the measured time, and one binary choice
per measurement names what reaches it (a resource, or a bound: a form's floor, the front end);
misfit either way is paid for as slack relative to the time.  The objective is the summed
relative slack plus a small price on usage (the sparsest mapping that explains the
measurements).  Known usages (the blockers', once solved) enter as constants, so the same solver
serves the blocker pairs and the per-form problems.

Every solve runs to its optimum (within :data:`GAP`), never to a clock, so the same readings give
the same model however loaded the machine is: a mix's under slack is split among its choices,
each held to nought unless its choice is taken (one slack shared by all of them let the
relaxation spread it over half-taken choices, and HiGHS seldom left the root in half a second),
each big-M is the tightest the bounds allow, and a usage is at most the form's time alone.  A
node limit (:data:`NODES`, a limit on work) stops the rare long search.
"""
from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

FRONT_END = "front end"
TOLERANCE = 0.0          # misfit is paid for as slack (relative to the measured time)
USAGE_PRICE = 1e-3        # per cycle of usage: prefer the sparsest explanation
USED = 0.1                # a usage below this many cycles counts as no use
GAP = 0.01                # the MILP stops within 1% of the best objective: the readings are no finer
NODES = 300               # branch-and-bound nodes at most: a limit on work, so a solve never depends on load
GUARD = 120.0             # seconds: a last guard against a runaway solve (none has come near it)


@dataclass
class Mix:
    """One measurement: instances per form and the cycles the whole mix took; ``floors`` (form ->
    cycles per unit of the mix): a form's own stream measured alone on the registers the mix
    dealt it, where their chains may pace the mix (mixes.cut), a floor beside its time alone."""
    counts: dict[str, int]
    cycles: float
    floors: dict[str, float] | None = None

    def to_json(self) -> dict:
        return {"counts": self.counts, "cycles": self.cycles}


@dataclass
class Model:
    """Usages per form (cycles of each resource per instance) and the front-end width."""
    resources: list[str]
    usage: dict[str, dict[str, float]] = field(default_factory=dict)
    width: int | None = None             # instructions per cycle the front end passes
    alone: dict[str, float] = field(default_factory=dict)   # each form's own throughput: a floor
    lines: dict[str, float] = field(default_factory=dict)   # store form -> cycles per store to a new line
    probes: dict[str, str] = field(default_factory=dict)    # resource -> the form that probes it (its blocker)
    firm: dict[str, set[str]] = field(default_factory=dict)  # form -> resources its readings show it
    # holds below saturation (crowding.shown): no crowding there; set by predict.load, not stored
    read_apart: dict[frozenset, bool | None] = field(default_factory=dict)   # a legacy and a wide probe form
    # the upper-state rule never mixed -> read as one resource by apart.probe; set by predict.load
    twins: list = field(default_factory=list)   # resource pairs apart.view holds as one; set there

    def cost(self, counts: dict[str, int]) -> tuple[float, str]:
        """(cycles, binding resource) of a mix; every form must be in the model."""
        loads = self.loads(counts)
        r = max(loads, key=loads.get)
        return loads[r], r

    def loads(self, counts: dict[str, int]) -> dict[str, float]:
        loads = dict.fromkeys(self.resources, 0.0)
        for f, n in counts.items():       # a form's own usages only: most of its row is nought
            for r, v in self.usage[f].items():
                if r in loads:
                    loads[r] += n * v
        if self.width:
            loads[FRONT_END] = sum(n * self.usage.get(f, {}).get(FRONT_END, 1 / self.width) for f, n in counts.items())
        for f, n in counts.items():       # other work never makes a form's own stream faster
            if f in self.alone:
                loads[f"{f} alone"] = n * self.alone[f]
        return loads

    def used(self, form: str) -> dict[str, float]:
        return {r: v for r, v in self.usage.get(form, {}).items() if v >= USED and r != FRONT_END}

    def to_json(self) -> dict:
        return {"resources": self.resources, "width": self.width, "alone": self.alone, "lines": self.lines,
                "usage": {f: {r: round(v, 4) for r, v in u.items() if v > 1e-6} for f, u in self.usage.items()},
                **({"probes": self.probes} if self.probes else {})}

    @classmethod
    def from_json(cls, doc: dict) -> "Model":
        return cls(list(doc["resources"]), {f: dict(u) for f, u in doc["usage"].items()}, doc.get("width"),
                   dict(doc.get("alone") or {}), dict(doc.get("lines") or {}), dict(doc.get("probes") or {}))


def solve(mixes: list[Mix], resources: list[str], unknown: list[str],
          known: dict[str, dict[str, float]] | None = None, fixed: dict[tuple[str, str], float] | None = None,
          width: int | None = None, floors: dict[str, float] | None = None,
          binding: list[set[str] | None] | None = None,
          price: dict[tuple[str, str], float] | None = None) -> tuple[dict[str, dict[str, float]], float]:
    """Usages of the ``unknown`` forms over ``resources`` that best explain ``mixes``.

    ``known``: usages of other forms in the mixes (constants); ``fixed``: (form, resource) ->
    value for unknowns pinned in advance (a blocker's own resource); ``width``: the front end;
    ``floors``: each form's own time alone (a mix never runs faster than ``n x floor`` of any of
    its forms: the floor is a bound that may explain a mix, as the front end may).  Every mix is
    explained both ways: no load above its time, and one resource (or a floor, or the front end)
    reaching it; what misses is paid as slack relative to the time.  Among the mappings that
    explain the mixes equally well the sparsest wins (a small price on usage), so a form gets no
    usage that no mix asks for.  ``binding`` (per mix, optional): the one resource that may reach
    the mix's time besides the bounds (the blocker's own, in a form-and-blocker mix), which keeps
    the problem to two choices per mix.  ``price`` ((form, resource) -> a factor, optional) makes
    some usages dearer than others: of two explanations the cheaper stands.  Returns (usages, mean
    relative misfit of the mixes)."""
    from scipy.optimize import Bounds, LinearConstraint, milp   # here: predicting never solves, and it costs 0.3 s
    known = known or {}
    fixed = fixed or {}
    floors = floors or {}
    R = len(resources)
    var = {(f, r): i for i, (f, r) in enumerate((f, r) for f in unknown for r in resources)}
    nu = len(var)
    M = len(mixes)
    C = R + 1
    # layout: usages | slack over (per mix) | choices (mix x (resources + a bound)) | slack under
    # per choice.  The under slack is split among a mix's choices, each held to nought unless
    # its choice is taken: the relaxation then cannot spread one slack over several half-taken
    # choices, which keeps it close to the integer optimum and the search short
    n = nu + M + 2 * M * C
    so, zb, sb = nu, nu + M, nu + M + M * C
    c = np.zeros(n)
    c[:nu] = USAGE_PRICE
    for key, factor in (price or {}).items():
        if key in var:
            c[var[key]] *= factor
    c[so:so + M] = 1.0
    c[sb:] = 1.0
    lo, hi = np.zeros(n), np.full(n, np.inf)
    hi[zb:] = 1.0
    integrality = np.zeros(n)
    integrality[zb:sb] = 1
    for (f, r), v in var.items():           # no usage above the form's own time alone
        if f in floors:
            hi[v] = floors[f]
    for (f, r), v in fixed.items():
        lo[var[f, r]] = hi[var[f, r]] = v
    rows, lbs, ubs = [], [], []

    def choice(k: int, j: int, a: np.ndarray, need: float) -> None:
        """Choice j of mix k: taken, its load ``a @ x`` reaches ``need`` less its slack x T."""
        row = a.copy()
        row[sb + k * C + j] = mixes[k].cycles
        row[zb + k * C + j] = -need
        rows.append(row); lbs.append(0.0); ubs.append(np.inf)
        row = np.zeros(n)                   # no slack on a choice not taken
        row[sb + k * C + j], row[zb + k * C + j] = 1, -1
        rows.append(row); lbs.append(-np.inf); ubs.append(0.0)
        zrow[zb + k * C + j] = 1

    for k, m in enumerate(mixes):
        T = m.cycles
        bound = max([sum(m.counts.values()) / width if width else 0.0]
                    + [cnt * floors[f] for f, cnt in m.counts.items() if f in floors]
                    + list((m.floors or {}).values()))
        zrow = np.zeros(n)
        allowed = set(resources) if binding is None or binding[k] is None else binding[k]
        hi[zb + k * C:zb + (k + 1) * C] = 0.0
        hi[sb + k * C:sb + (k + 1) * C] = 0.0
        for j, r in enumerate(resources):
            a = np.zeros(n)
            const = 0.0
            for f, cnt in m.counts.items():
                if (f, r) in var:
                    a[var[f, r]] += cnt
                else:
                    const += cnt * known.get(f, {}).get(r, 0.0)
            up = a.copy()                       # every load at or under the time (slack over)
            up[so + k] = -T
            rows.append(up); lbs.append(-np.inf); ubs.append(T * (1 + TOLERANCE) - const)
            # a resource that cannot reach past the bounds never explains the mix better than
            # they do (the same optimum, fewer choices)
            if r in allowed and _most(a, hi) + const > bound and bound < T * (1 - TOLERANCE):
                hi[zb + k * C + j] = hi[sb + k * C + j] = 1.0
                choice(k, j, a, T * (1 - TOLERANCE) - const)
        if bound >= T * (1 - TOLERANCE):
            continue                            # a floor or the front end explains this mix
        hi[zb + k * C + R] = hi[sb + k * C + R] = 1.0
        choice(k, R, np.zeros(n), T - bound)    # or the bound comes near enough (slack under)
        rows.append(zrow); lbs.append(1); ubs.append(np.inf)
    if not rows:
        return {f: {r: lo[var[f, r]] for r in resources} for f in unknown}, 0.0
    with quiet():
        res = milp(c, constraints=LinearConstraint(np.array(rows), lbs, ubs), integrality=integrality,
                   bounds=Bounds(lo, hi), options={"node_limit": NODES, "mip_rel_gap": GAP, "time_limit": GUARD})
    if res.x is None:
        raise RuntimeError(f"the solver found no mapping: {res.message}")
    x = res.x
    usage = {f: {r: float(x[var[f, r]]) for r in resources} for f in unknown}
    misfit = float(x[so:so + M].sum() + x[sb:].sum()) / (2 * M) if M else 0.0
    return usage, misfit


def _most(a: np.ndarray, hi: np.ndarray) -> float:
    """The largest value of the load ``a @ x`` within the upper bounds (inf when unbounded)."""
    nz = a != 0
    return float(a[nz] @ hi[nz])


@contextmanager
def quiet():
    """Standard output sent nowhere while HiGHS solves: its C++ prints some lines of its own
    (``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();``) straight to
    the process's descriptor 1, past scipy's ``disp=False``.  Standard error stays open, and the
    solver's outcome comes back in its result (a failure raises with its message)."""
    sys.stdout.flush()            # what we printed goes out first
    fd = 1                        # C's stdout, whatever Python's sys.stdout is bound to
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
        yield
    finally:
        _flush_c()                # C's buffer, still holding the solver's text, empties into the void
        os.dup2(saved, fd)
        os.close(saved)


def _flush_c() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass
