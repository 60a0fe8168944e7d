"""A steady-state scheduling simulation of a block over the resource model.

The two bounds of predict.py each assume the other away: the resource bound lets every
instruction wait for nothing but its resources, the chain bound for nothing but its inputs.
Here both hold at once, as in llvm-mca's and uiCA's simulations, but on the resources inferred
from throughput and the latencies cyclebench measured:

* instructions enter in program order, each taking its front-end share of a cycle (the model's
  width; a form's own share where the model names one), no more than :data:`WINDOW` of them in
  flight (an instruction enters once the one :data:`WINDOW` places before it has completed), and,
  where the capacity was measured (inflight.py), no more than that many entered and not started:
  an instruction enters once one of them starts;
* each starts once its inputs are ready (dataflow.py: registers, flags, memory through one
  address, with the latencies the chain bound uses) and its resources have room;
* a resource that bounds some form alone at ``1/k`` cycles an instance is ``k`` units
  (:func:`units`: four ALUs, three load pipes on Zen 4).  An instance that takes one unit-cycle
  of it is given a unit as it enters, the one with the fewest instances waiting (turn about on a
  tie), as a core picks a pipe's queue at dispatch, not at issue; on its unit the oldest ready
  instance goes first.  Every other usage is fluid: the resource serves one cycle of usage a
  cycle, shared by any instances (a usage that does not fill a cycle wastes none of it), and a
  form's time alone is one more such resource of its own (model.Model.loads);
* where the core deals vector µops in turn (dealing.py, Zen 4), a pair of vector pipes is not
  chosen by the fewest waiting: each vector µop takes the next turn, and one held to a pair takes
  the unit of its turn (unless that unit's queue is :data:`SLACK` longer than the other's), so
  a chain's step dealt the pipe of an older consumer of its last step waits a cycle; a dealt
  µop that names a ZMM register and holds two unit-cycles of a pair passes the pipe of its turn
  twice, two cycles, not the pair's fluid share (Zen 4: ``vcvtpd2qq zmm1{k1}, zmm2; ucomiss
  xmm1, xmm2`` runs 4.00 cycles as its xmm and ymm forms do, 3.00 with one more vector µop); a
  dealt form that holds its pair longer than one µop (not two passes) takes the unit of its turn
  for one cycle and the rest fluidly, and a dealt µop takes its unit in the cycle its last input
  arrives, which is after the start of a form whose result leaves later from another input
  (Zen 4: ``cvtsi2ss xmm1, rbx; ucomiss xmm1, xmm2`` 4.00 cycles, 1.08 cycles of FP23 a copy);
  a form the sequencer issues (held.py) advances the turn but takes the unit with the fewest
  waiting (dealing.py);
* instructions are placed in program order, each in the first cycle from its ready time where
  its unit and its fluid resources have room, so a younger one only takes what an older one left.

The figure is the pace at which iterations complete once the window is full.  Where it is above
both bounds, chains and resources delay each other: the next step of a chain becomes ready with
the consumers of the last one, and waits where one of them, older, was given its unit (Zen 4:
``mov edi, ecx; mov rax, rdx; add ecx, 1; shl rax, cl; cmp r9, rax`` runs 1.25 cycles an
iteration where both bounds say 1.0; simulated 1.31 with the measured in-flight limit).
"""
from __future__ import annotations

import math
import heapq
from collections import deque

import iced_x86

from .dataflow import steady
from .dealing import Plan
from .model import FRONT_END, USED, Model
from .upper import BINDING

WINDOW = 224          # instructions in flight: an assumption, of the order of reorder buffers (Zen 3 256,
                      # Zen 4 320, Golden Cove 512); the replayed figures barely move from 224 to 512
EPS = 1e-9
WHOLE = 0.02          # a dealt instruction's measured latency this near a whole number of cycles is that
                      # number: 2.9999 by one source and 3.0002 by another would drift two steps apart
SLACK = 1             # a dealt unit's queue may be this many longer than the other's (Units.dealt)
NEAR = 0.15           # a usage within this many unit-cycles of one unit-cycle takes a unit


class Units:
    """A resource of ``k`` units (pipes), each starting one instance a cycle, the unit chosen when
    the instance enters (the one with the fewest instances waiting); on a unit the oldest goes
    first (placement in program order)."""

    def __init__(self, k: int):
        self.k = k
        self.busy: list[set[int]] = [set() for _ in range(k)]
        self.waiting: list[list[float]] = [[] for _ in range(k)]    # start times of those assigned
        self.turn = 0

    def _settle(self, entered: float) -> None:
        """Drops the instances that started by ``entered`` from the units' queues."""
        for q in self.waiting:
            q[:] = [t for t in q if t > entered]

    def choose(self, entered: float) -> int:
        self._settle(entered)
        order = [(self.turn + j) % self.k for j in range(self.k)]
        unit = min(order, key=lambda j: len(self.waiting[j]))
        self.turn = (unit + 1) % self.k
        return unit

    def dealt(self, entered: float, unit: int) -> int:
        """The unit an instance was dealt in turn (dealing.py), unless its queue is longer than the
        other's by more than :data:`SLACK`: then the other (two µops dealt one pipe each iteration
        do not halve the pair: ``cvtpd2dq``, ``orps``, ``cvtpd2dq``, ``orps`` on independent
        registers runs 1.64 cycles on Zen 4, not 2)."""
        self._settle(entered)
        other = min(range(self.k), key=lambda j: len(self.waiting[j]))
        return other if len(self.waiting[unit]) > len(self.waiting[other]) + SLACK else unit

    def whole(self, u: float) -> bool:
        """Whether a usage is one cycle of one unit (any other, such as a share the inference
        spread over several resources or a unit held longer, stays fluid: held one unit for two
        cycles, ``imul`` with two ALU-cycles put whole blocks 30-40% over)."""
        return abs(u * self.k - 1) <= NEAR

    def twice(self, u: float) -> bool:
        """Whether a usage is two cycles of one unit (a 512-bit µop that passes its pipe twice)."""
        return abs(u * self.k - 2) <= NEAR

    def free(self, unit: int, cycle: int) -> bool:
        return cycle not in self.busy[unit]

    def take(self, unit: int, cycle: int) -> None:
        self.busy[unit].add(cycle)
        self.waiting[unit].append(cycle)


def units(model: Model) -> dict[str, int]:
    """Resource -> its units, where a form is bound by it alone (a usage within BINDING of its
    time alone): as many as instances of the most frequent such form a cycle, ``1 / usage``
    (Zen 4: four ALUs, three load pipes); other resources stay fluid (one cycle of usage a cycle,
    shared by any number of instances)."""
    out: dict[str, int] = {}
    for f, use in model.usage.items():
        alone = model.alone.get(f)
        for r, u in use.items():
            if r != FRONT_END and alone and u >= USED and u >= BINDING * alone:
                out[r] = max(out.get(r, 1), round(1 / u) if u < 1 else 1)
    return out


class Scheduler:
    """The issue callback of dataflow.steady: places each instruction in the first cycle where it
    has entered, its inputs are ready and its resources have room (see the module docstring)."""

    def __init__(self, usage: list[dict[str, float]], front: list[float], latency: list[float],
                 window: int = WINDOW, discrete: dict[str, int] | None = None, waiting: int | None = None,
                 deal: Plan | None = None, twice: list[bool] | None = None):
        self.usage, self.front, self.latency, self.window, self.waiting = usage, front, latency, window, waiting
        plan = Plan(*deal) if deal else Plan([0] * len(usage), set(), [set()] * len(usage))
        self.dealt, self.pairs, self.longer = plan.dealt, plan.pairs, plan.longer
        # a sequenced form's µops advance the turn, its step takes no unit by it (dealing.py)
        self.turned = [n and not s for n, s in zip(plan.dealt, plan.sequenced or [False] * len(usage))]
        self.twice = twice or [False] * len(usage)        # names a ZMM register: its µop passes its pipe twice
        self.count = 0                                    # µops dealt so far (dealing.py)
        self.pending: list[float] = []                    # start times of the entered, a heap
        self.units = {r: Units(k) for r, k in (discrete or {}).items()}
        # per instruction, the resources of units it takes one unit-cycle of, and two (a ZMM µop)
        self.whole = [[r for r, u in use.items() if r in self.units and self.units[r].whole(u)] for use in usage]
        self.doubled = [[r for r, u in use.items() if r in self.pairs and self.units[r].twice(u)] for use in usage]
        self.used: dict[str, dict[int, float]] = {}      # resource -> cycle -> usage taken
        self.position = 0.0                               # the front end's place, in cycles
        self.completions: deque[float] = deque()          # in program order, the last `window`
        self.retired = 0.0

    def _take(self, r: str, cycle: int, u: float) -> None:
        """The usage taken from the cycle on, as each cycle has room (a resource is a fluid
        server: usages that do not divide a cycle waste none of it)."""
        row = self.used.setdefault(r, {})
        while u > EPS:
            took = min(u, 1.0 - row.get(cycle, 0.0))
            row[cycle] = row.get(cycle, 0.0) + took
            u -= took
            cycle += 1

    def _first(self, cycle: int, fluid: list[str], pick: dict[str, int], twice: dict[str, int]) -> int:
        """The first cycle from ``cycle`` where the ``fluid`` resources have room, the ``pick`` units
        are free and the ``twice`` units free for two cycles: each constraint moves the cycle to its
        own first such cycle until none moves it (the least cycle that meets them all)."""
        rows = [self.used[r] for r in fluid if r in self.used]
        busy = [self.units[r].busy[j] for r, j in pick.items()]
        busy2 = [self.units[r].busy[j] for r, j in twice.items()]
        while True:
            c = cycle
            for row in rows:
                while row.get(c, 0.0) >= 1.0 - EPS:
                    c += 1
            for b in busy:
                while c in b:
                    c += 1
            for b in busy2:
                while c in b or c + 1 in b:
                    c += 1
            if c == cycle:
                return cycle
            cycle = c

    def _pick(self, i: int, entered: int) -> tuple[dict[str, int], dict[str, int]]:
        """The units instruction ``i`` is given as it enters: resource -> unit, for the usages of one
        unit-cycle and for those a dealt ZMM µop holds two cycles (bench/ports_steering.py tries
        other steering here)."""
        use = self.usage[i]
        turned = self.turned[i]
        pick = {r: self.units[r].dealt(entered, self.count % 2) if r in self.pairs and turned
                else self.units[r].choose(entered) for r in self.whole[i]}
        twice = {r: self.units[r].dealt(entered, self.count % 2) for r in self.doubled[i]
                 if r not in pick} if self.twice[i] and turned else {}
        if turned and not self.twice[i]:         # its compute µop's turn, the rest fluid (__call__)
            pick.update({r: self.units[r].dealt(entered, self.count % 2) for r in self.longer[i]
                         if r in use and r not in pick})
        return pick, twice

    def __call__(self, i: int, ready: float, arrive: float = 0.0) -> float:
        if len(self.completions) >= self.window:          # the window is full: wait for the oldest
            self.position = max(self.position, self.completions.popleft())
        if self.waiting:                                  # the schedulers are full: wait for a start
            while self.pending and self.pending[0] <= self.position + EPS:
                heapq.heappop(self.pending)
            while len(self.pending) >= self.waiting:
                self.position = max(self.position, heapq.heappop(self.pending))
        entered = math.floor(self.position + EPS)
        self.position += self.front[i]
        start = max(ready, entered)
        cycle = math.floor(start + EPS)
        use = self.usage[i]
        pick, twice = self._pick(i, entered)
        self.count += self.dealt[i]
        # a dealt µop takes the pipe of its turn when its last input arrives, which is later than
        # the start of a form with an earlier µop (cvtsi2ss's transfer from the GPR)
        late = {r: pick.pop(r) for r in list(pick) if r in self.pairs} if self.turned[i] and arrive > start + EPS else {}
        fluid = {r: u for r, u in use.items() if r not in pick and r not in twice and r not in late}
        fluid.update({r: use[r] - 1 / self.units[r].k for r in (*pick, *late) if r in self.longer[i]})
        cycle = self._first(cycle, [r for r, u in fluid.items() if u >= USED], pick, twice)
        for r, j in pick.items():
            self.units[r].take(j, cycle)
        for r, j in twice.items():                        # its unit for two cycles, one instance
            self.units[r].take(j, cycle)
            self.units[r].busy[j].add(cycle + 1)
        for r, u in fluid.items():
            self._take(r, cycle, u)
        begin = start if cycle == math.floor(start + EPS) else float(cycle)
        if late:                                          # waiting there for its pipe delays the result
            c0 = c = math.floor(max(arrive, begin) + EPS)
            while not all(self.units[r].free(j, c) for r, j in late.items()):
                c += 1
            for r, j in late.items():
                self.units[r].take(j, c)
            begin += c - c0
        if self.waiting:
            heapq.heappush(self.pending, begin)
        done = begin + self.latency[i]
        self.retired = max(self.retired, done)            # completion in program order
        self.completions.append(self.retired)
        return begin


def _zmm(ins: iced_x86.Instruction) -> bool:
    """Names a ZMM register (a 512-bit µop: Zen 4 passes it through a 256-bit pipe twice)."""
    return any(ins.op_kind(j) == iced_x86.OpKind.REGISTER and iced_x86.RegisterExt.is_zmm(ins.op_register(j))
               for j in range(ins.op_count))


def _whole(v):
    """A latency (cycles, a tuple of them, or source -> cycles) with :data:`WHOLE` applied."""
    if isinstance(v, tuple):
        return tuple(_whole(x) for x in v)
    if isinstance(v, dict):
        return {k: _whole(x) for k, x in v.items()}
    return float(round(v)) if isinstance(v, (int, float)) and abs(v - round(v)) < WHOLE else v


def simulate(instructions: list[iced_x86.Instruction], latency: list, usage: list[dict[str, float]],
             front: list[float], discrete: dict[str, int] | None = None, window: int = WINDOW,
             waiting: int | None = None, deal: Plan | None = None,
             trips=None, passed=None) -> float:
    """Cycles per iteration of the block in the steady state of the simulation: ``latency`` per
    instruction as dataflow.chain_bound takes it, ``usage`` per instruction (resource -> cycles,
    its form's time alone as a resource of its own), ``front`` per instruction (its share of a
    front-end cycle); ``waiting``: instructions entered and not started at most (inflight.py),
    or no such limit; ``deal``: which vector µops are dealt to which pipe pairs (dealing.Plan);
    ``trips``, ``passed``: as dataflow.chain_bound takes them."""
    if deal:
        latency = [_whole(v) if n else v for v, n in zip(latency, deal[0])]
    main = [(v[0] if isinstance(v, tuple) else v) for v in latency]
    n = max(1, len(instructions))
    iterations = max(64, 2 * math.ceil(3 * window / n))      # the window fills, then half is measured
    return steady(instructions, latency, Scheduler(usage, front, main, window, discrete, waiting, deal,
                                                         [_zmm(ins) for ins in instructions]), iterations,
                  trips, passed)
