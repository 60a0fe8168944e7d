"""Steady-state cycles per iteration of a straight-line block, from the resource model.

``predict(block, model)`` takes assembly text (lines or ``;``-separated, GNU as Intel syntax)
or machine code bytes and gives two bounds, each shown, and a simulation on them:

* **resource bound:** the largest resource load of one iteration (model.Model.cost), the front
  end included, and the stores' time by distinct spans written (:func:`store_lines`; the span
  that two stores a cycle share, store_grain.py: ``grain``), and with the CPU's record the dispatch
  groups the immediates and displacements cut (fields.py), in place of a resource whose blocker
  those groups time alone (the solve's reading of the same limit: fields.values_resources);
* **dependency-chain bound:** the loop-carried chains through registers, flags and memory, iterated
  until they settle, with each instruction's latency from ``latencies`` (form name -> cycles, e.g.
  a published column; the label says where they came from) or 1 cycle where none is known
  (counted in ``assumed_latency``); a form that computes from memory alone merges a dirty upper
  state's kept part after its operation (dataflow.merged_after).  A value may be a pair (cycles, cycles from the address
  registers): a load whose address register another load wrote (a pointer chase) carries its
  load-to-use time.  A load after a store through one address expression waits for the stored
  data (dataflow.chain_bound); with the CPU's store-to-load probe (store_load.py: ``trips``) a
  load waits for any store that ``cyclebench block``'s start state (all registers equal, one
  physical page) puts on its bytes, the probed round trip, and the prediction notes a meeting
  of different registers as data-dependent.  With the CPU's addressing-mode probe (address.py) a
  memory operand takes longer from a base beside a scaled index or beside an index and a
  displacement, and from an index.

With ``floors`` (repair.PairFloors), a mix of two of the block's forms' classes read in the
block's own ratio is one more bound among the resources, and (shared.SharedFloors) so is one
resource that a pair's readings at several ratios show the two forms share, at any ratio.  The prediction is the largest of the
two bounds and the **simulated** figure (simulate.py: the block scheduled oldest first over the
model's resources with the chain bound's dependences and latencies, where chains and resources
can delay each other, and with no more instructions waiting to start than inflight.py measured
fit: ``in_flight``; where the core deals vector µops to pipe pairs in turn, dealing.py: ``deal``).  Forms the model does not know make the resource bound a lower bound (listed in
``unknown``).  A zero idiom (``xor eax, eax``) takes only its share of the front end: the renamer
zeroes the register, while the model's form was measured with two distinct registers.  A
legacy-SSE XMM write under a dirty upper vector state reads its destination's kept part and,
given the factor upper.probe measures, takes its own pipes that many times (of the vector pipes
that bound its form, those of fewest units), the load path and the front end once (upper.py holds the measurements).  Every form that loads a vector operand takes at least a plain vector load's share of
the load path (vector_loads.py), where the model fitted an EVEX load-op form elsewhere.  Where one
group of pipes has a legacy-SSE probe and a 256- or 512-bit one (never mixed with each other), the
two probe forms read side by side (or the forms read beside both) tell whether the two resources are
one, and each side takes its own pipe usage on the one it was never read beside (apart.py).
A form's usage of a narrower resource than its own, read in mixes that kept its own resource full,
is charged only where the block keeps that resource full too, a form of the block holds the
narrower one and the model does not nest it in the wider one (crowding.py); a crowding usage of a
one-unit pipe only where the pipe's group, the resource its crowding forms hold whole, is full.
A block that names a ZMM register 0-15 and holds legacy-SSE XMM writes takes at least the costs
upper_loop.probe measured per legacy write and per ZMM write in one loop (upper_loop.LoopFloor,
one of :attr:`Loaded.bounds`), and where upper_pool.probe found that cost on the vector pipes, the
block's other vector work on those pipes besides.  Where load_order.probe found that a 512-bit load has a cycle of
the load path to itself, the block's vector loads taken in program order are one more bound.
Where flag_order.probe found that a compare to the flags costs more right after a flag writer,
each such compare takes at least the probe's pair time (flag_order.FlagOrder, one of the bounds),
and the flag writer that exposes it is the probe's `late` cycles later on its chain, as is a chained
writer of a general register beside a transfer to one (FlagOrder.delayed; on a chain of two steps
the probe's two-step figure).  Where fresh.probe found a form that reads the vector register it
writes slower with that register written afresh before it than its time alone says, each copy
takes at least that time (fresh.FreshFloor, one of the bounds).  Three more probes' bounds:
a vector value a form of another bypass domain wrote reaches its reader late on the chains
(domains.Domains.delayed); a legacy-SSE XMM write that comes first after a 256-bit write costs
the state switch transition.probe measured, where it found one (transition.Transition); and a
store under 32 bits back to its line within narrow_stores.probe's window takes the block at least
its stores and the wait (narrow_stores.NarrowStores).  Where load_banks.probe found that one 8-byte
bank of the L1 serves fewer loads a cycle than the load ports take, the reads of the block's busiest
bank take at least that many cycles (load_banks.BankFloor).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import iced_x86

from ..catalogue import Catalogue
from .dataflow import mnemonic, chain_bound, load_time, merged_after, zero_idiom
from .model import FRONT_END, Model
from .repair import PairFloors, load_path, lowered, mended, readings
from .shared import SharedFloors, integer_side
from .naming import decode, form_of
from .simulate import Units, simulate, units
from . import address, apart, dealing, crowding, domains, fields, flag_order, fresh, held, inflight, kept_flags, load_banks, \
    load_order, mul_loads, narrow_stores, nop_pairs, slots, store_grain, store_load, transition, upper, upper_loop, upper_pool, \
    vector_loads

STORE_LINES = "store lines"
WIDER = "a load wider than the store it meets"


@dataclass
class Prediction:
    cycles: float
    resource_bound: float
    binding_resource: str | None
    chain_bound: float
    forms: list[str]
    unknown: list[str] = field(default_factory=list)
    assumed_latency: int = 0
    latency_source: str = "assumed 1 cycle"
    upper_charged: int = 0         # legacy-SSE writes charged the upper-state factor (upper.py)
    simulated: float = 0.0         # the scheduling simulation's figure (simulate.py)
    notes: list[str] = field(default_factory=list)
    members: list[float] = field(default_factory=list)   # each model's figure, where several were asked (ensemble.py)

    def simulation_binds(self) -> bool:
        """The simulated figure is above both bounds: chains and resources delay each other."""
        return self.simulated > 1.001 * max(self.resource_bound, self.chain_bound)

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Loaded:
    """A ``cyclebench ports`` results file as the predictor takes it (:func:`load`)."""
    model: Model
    floors: PairFloors
    shared: SharedFloors
    notes: list[str]              # the usages repair.mended changed, one line each
    upper_factor: float | None    # the upper-state factor the file keeps (upper.stored), or None
    upper_source: str             # where that factor came from, or why there is none
    upper_probed: bool            # the file holds an upper-state probe (a None factor is then a CPU
                                  # without AVX-512, not a file from before the probe)
    in_flight: int | None = None  # waiting instructions that fit in flight (inflight.stored), or None
    in_flight_source: str = ""
    loop: upper_loop.LoopFloor | None = None   # legacy-SSE beside ZMM writes (upper_loop.stored)
    loop_source: str = ""
    deals: bool = False           # the file's core deals vector µops in turn (dealing.stored)
    grain: int = store_grain.LINE  # bytes two stores a cycle share (store_grain.stored)
    grain_source: str = ""
    in_order: bool = False        # a 512-bit load has its cycle of the load path (load_order.stored)
    in_order_source: str = ""
    trips: store_load.Trips | None = None     # store-to-load round trips (store_load.stored)
    trips_source: str = ""
    flags: flag_order.FlagOrder | None = None    # compares after a flag writer (flag_order.stored)
    flags_source: str = ""
    load_floor: mul_loads.LoadFloor | None = None   # one-pipe load-op forms beside plain loads (mul_loads.stored)
    load_floor_source: str = ""
    fresh: fresh.FreshFloor | None = None      # merging forms with their merge input written afresh (fresh.stored)
    fresh_source: str = ""
    fields: fields.FieldBound | None = None    # values a dispatch group carries (fields.stored)
    fields_source: str = ""
    slow: tuple[str, ...] = ()    # the units the inference found held for cycles, not pipelined (a divider)
    nops: nop_pairs.NopPairs | None = None    # what a NOP shares with the instruction before it (nop_pairs.stored)
    nops_source: str = ""
    address: address.AddressCost | None = None    # memory operands' time by addressing mode (address.stored)
    passed: dict = field(default_factory=dict)   # form -> the undefined flags it passes on (kept_flags.stored)
    domains: domains.Domains | None = None     # vector bypass delays between domains (domains.stored)
    domains_source: str = ""
    transition: transition.Transition | None = None    # legacy-SSE after 256-bit writes (transition.stored)
    transition_source: str = ""
    narrow: narrow_stores.NarrowStores | None = None   # narrow stores back to a line (narrow_stores.stored)
    narrow_source: str = ""
    banks: load_banks.BankFloor | None = None   # loads of one 8-byte bank (load_banks.stored)
    banks_source: str = ""

    @property
    def bounds(self) -> tuple:
        """The floors predict() takes from the readings and probes (its ``floors``: bound.Bound each)."""
        return (self.floors, self.shared) + tuple(f for f in (self.loop, self.flags, self.load_floor, self.fresh,
                                                             self.fields, self.address, self.domains,
                                                             self.transition, self.narrow, self.banks) if f)


def load(path: Path) -> Loaded:
    """A results file's model mended against its readings, their pair and shared floors (repair.mended, shared.py),
    and its probe records: what ``cyclebench predict``, the block predictor and the accuracy bench predict with."""
    from .run import load as load_run, read
    model, floors, notes = mended(path)
    catalogue = Catalogue.load()
    sides = {f: side for f in model.usage if (form := catalogue.get(f)) is not None
             and (side := integer_side(form)) is not None}
    report = load_run(path)[1]
    shared = SharedFloors.build(model, readings(path), report.get("classes") or {}, sides,
                                load_path(model, catalogue))
    pair, lates, pair_source = flag_order.stored(path)
    flags = flag_order.FlagOrder.build(pair, model, catalogue, sides, shared.whole_group(model, units(model)),
                                       crowding.units, lates)
    notes += lowered(model, readings(path))     # after the floors have read the model as inferred
    model = shared.charged_whole(model, units(model))   # whole-resource holds: the floor charges them
    model.firm = crowding.shown(model, readings(path), sides)   # transfers' holds below saturation
    model.read_apart = apart.stored(path)[0]     # the resources kept apart, read side by side (apart.probe)
    factor, where = upper.stored(path)
    _, records = read(path)
    probed = any(r.get("type") == upper.RECORD for r in records)
    pipes, pipes_source = mul_loads.stored(path)
    load_floor = None
    if pipes:                  # the multiply's excess share was its probe's ALU crowding (mul_loads.py)
        model = mul_loads.capped(model, catalogue)
        load_floor = mul_loads.LoadFloor(pipes, *map(frozenset, mul_loads.kinds(model, catalogue)))
    loop, loop_source = upper_loop.stored(path)
    if loop and upper_pool.stored(path)[0]:     # the floor takes the vector pipes: the block's other vector work counts
        loop = replace(loop, pool=form_of(decode(upper_loop.WIDE[0])[0], catalogue, model))
    bound, bound_source = fields.stored(path, model.width)
    if bound:                  # the values limit the solve read as a resource: the groups charge it
        bound = replace(bound, resources=fields.values_resources(model, bound, catalogue, decode, form_of))
    trips = store_load.stored(path)
    return Loaded(model, floors, shared, notes, factor, where, probed, *inflight.stored(path),
                  loop, loop_source, dealing.stored(path)[0], *store_grain.stored(path),
                  *load_order.stored(path), *trips, flags, pair_source, load_floor, pipes_source,
                  *fresh.stored(path, model), bound, bound_source, tuple(report.get("slow_units") or ()),
                  *nop_pairs.stored(path), address.stored(path)[0], kept_flags.stored(path)[0],
                  *domains.stored(path), *transition.stored(path),
                  *narrow_stores.stored(path, trips[0] is not None), *load_banks.stored(path, trips[0] is not None))


def store_lines(instructions: list[iced_x86.Instruction], forms: list[str], model: Model,
                grain: int = store_grain.LINE, placed: bool = False, read: frozenset = frozenset()) -> float:
    """Cycles the block's stores take by span, iteration after iteration: a run of stores to
    one span of ``grain`` bytes (in program order, the loop wrapping round) is written k at a
    time, k = the store form's time on distinct lines over its time alone (model.lines,
    model.alone); a run costs its first form's time on distinct lines per k.  A block whose stores
    all go to one span adds nothing the resources do not already charge.  Spans are told apart by
    address expression (segment, base, index, scale) and displacement / grain, or with ``placed``
    by where the start state puts them (memory.steady_state; page offset / grain).  ``read``: the
    stores (instruction numbers) whose bytes a load of the block reads, where the core then
    writes the stores of their span one a cycle (store_load.Trips.unpairs)."""
    seq = [(line, forms[i], i in read) for i, _, line in store_grain.store_sequence(instructions, grain, placed)
           if forms[i] in model.lines and forms[i] in model.alone]
    alone = {line for line, _, r in seq if r}        # spans written one store a cycle
    seq = [(line, f) for line, f, _ in seq]
    if len({line for line, _ in seq}) < 2 and not alone:
        return 0.0
    if len({line for line, _ in seq}) < 2:
        return len(seq) * model.lines[seq[0][1]]
    start = next(i for i in range(len(seq)) if seq[i][0] != seq[i - 1][0])
    seq = seq[start:] + seq[:start]
    total, i = 0.0, 0
    while i < len(seq):
        j = i
        while j < len(seq) and seq[j][0] == seq[i][0]:
            j += 1
        f = seq[i][1]
        k = 1 if seq[i][0] in alone else max(1, round(model.lines[f] / model.alone[f]))
        total += math.ceil((j - i) / k) * model.lines[f]
        i = j
    return total


def _bypassing(counts: dict[str, int], model: Model) -> int:
    """Instances of forms that pass the front end on another path and that the model charges
    for it (slots.bypasses: infer's rule, Zen 4's long NOPs)."""
    return sum(n for f, n in counts.items() if slots.bypasses(model, f))


def predict(block: str | bytes, model: Model, catalogue: Catalogue | None = None,
            latencies: dict[str, float] | None = None, latency_source: str = "published",
            floors=None, upper_factor: float | None = None, in_flight: int | None = None,
            deal: bool = False, grain: int = store_grain.LINE, in_order: bool = False,
            trips: store_load.Trips | None = None, nops: nop_pairs.NopPairs | None = None,
            passed: dict[str, int] | None = None) -> Prediction:
    """The prediction for one block (see the module docstring); ``floors``: the readings of the
    model's results file and its probes as floors, one bound.Bound or several (repair.PairFloors,
    shared.SharedFloors, ...: :attr:`Loaded.bounds`); ``upper_factor``: the resources a legacy-SSE
    XMM write takes while a ZMM register dirties the upper state, as upper.probe measured it;
    ``in_flight``: the waiting instructions that fit in flight, as inflight.probe measured it
    (:attr:`Loaded.in_flight`), the simulation's limit; ``deal``: the core deals vector µops to
    pipe pairs in turn (:attr:`Loaded.deals`, dealing.py); ``grain``: the bytes within which two
    stores are written in one cycle (:attr:`Loaded.grain`, store_grain.py); ``in_order``: a 512-bit
    load has its cycle of the load path to itself (:attr:`Loaded.in_order`, load_order.py);
    ``trips``: the store-to-load round trips the CPU's probe measured (:attr:`Loaded.trips`,
    store_load.py): the block's loads and stores then meet where its start state places them (all
    registers equal, docs/block.md), and a prediction with a meeting the start state makes says
    so in its notes; ``nops``: where a NOP takes a front-end slot (:attr:`Loaded.nops`, nop_pairs.py);
    ``passed``: the undefined flags each form passes on (:attr:`Loaded.passed`, kept_flags.py)."""
    catalogue = catalogue or Catalogue.load()
    model = vector_loads.view(model, catalogue)       # a vector load's share of the load path
    model = apart.view(model, catalogue)              # one pipe group probed twice, kept apart
    model = crowding.unnested(model)                  # crowding of a resource nested in the form's own
    once = vector_loads.path(model, catalogue)[0]     # the load path: the upper state's extra pass skips it
    whole = units(model)
    pipes = {r: whole[r] for r in dealing.pipes(model, whole, _whole(whole))}    # the upper state's extra pass
    instructions = decode(block)
    forms = [form_of(ins, catalogue, model) or f"?{mnemonic(ins).lower()}" for ins in instructions]
    counts: dict[str, int] = {}
    charged: dict[str, float] = {}                # counts weighted by upper.weights
    extra = 0                                     # of them, instructions charged more than once
    unknown = []
    front_only = 0                 # zero idioms: the front end's share only (the model's forms
                                   # were measured with distinct registers)
    weight = upper.weights(instructions, upper_factor)
    slotted = nop_pairs.slotted(instructions, forms, model, nops)     # NOPs that take a slot here
    for ins, f, w in zip(instructions, forms, weight):
        if zero_idiom(ins):
            front_only += 1
        elif f in model.usage:
            counts[f] = counts.get(f, 0) + 1
            charged[f] = charged.get(f, 0.0) + w
            extra += w != 1.0
        else:
            unknown.append(f)
    lats = [(latencies or {}).get(f) for f in forms]
    assumed = lats.count(None)                # no latency known: 1 cycle assumed, and said so
    lats = [1.0 if v is None else v for v in lats]
    load = load_time(latencies, catalogue)
    lats = [merged_after(v, load) for v in lats]
    for each in _each(floors):                # e.g. a writer that exposes a compare (flag_order.py)
        lats = each.delayed(instructions, forms, lats)
    passes = [(passed or {}).get(f, 0) for f in forms]
    chain = chain_bound(instructions, lats, trips, passes)
    shares = None                             # per instruction (usage, front-end share): _instances
    if counts:
        # crowding usages bind only where a form needs the crowded resource and the crowding
        # forms' own resources are full (crowding.py)
        model = crowding.unneeded(model, counts)
        front = len(unknown) + front_only + sum(slotted)
        first = _loads(crowding.uncrowded(model, counts), instructions, forms, counts, charged, front, floors, grain,
                       once, in_order and catalogue, trips, pipes)
        bound = max(max(first.values()), chain)
        model = crowding.uncrowded(model, crowding.relieved(model, first, bound) & counts.keys())
        model = crowding.without(model, crowding.pressed(model, counts, first, bound))
        model = _left_out(model, counts, floors, whole)
        loads = _loads(model, instructions, forms, counts, charged, front, floors, grain, once,
                       in_order and catalogue, trips, pipes)
        seq = held.holds(model)
        shares = _instances(instructions, forms, weight, model, once, pipes, slotted)    # the simulation's too
        if model.width:                       # the dispatch groups (fields.py)
            taken = [round(v * model.width, 3) for v in shares[1]]
            for each in _each(floors):
                v, why = each.dispatch(instructions, taken)
                if v:
                    loads[why] = v
        if seq.keys() & counts.keys():
            loads[held.LABEL] = held.bound(forms, shares[1], seq,
                                           held.slots(instructions, dealing.uops(instructions, forms, model, whole,
                                                                                 set(pipes))))
        binding = max(loads, key=loads.get)
        res = loads[binding]
    else:
        res, binding = (len(forms) / model.width if model.width else 0.0), None
    discrete = units(model)
    dealt = dealing.plan(instructions, forms, model, discrete, _whole(discrete), held.holds(model)) if deal else None
    sim = simulate(instructions, lats, *(shares or _instances(instructions, forms, weight, model, once, pipes)), discrete,
                   waiting=in_flight, deal=dealt, trips=trips, passed=passes)
    return Prediction(max(res, chain, sim), res, binding, chain, forms, unknown, assumed,
                      latency_source if latencies else "assumed 1 cycle", extra, sim,
                      store_load.start_state_note(instructions) if trips is not None else [])


def _left_out(model: Model, counts: dict[str, int], floors, whole: dict[str, int]) -> Model:
    """The model without the resources a bound charges itself (Bound.stands_for, e.g. fields.py's
    values limit) and the usages that run beside other forms' here (Bound.overlapping, shared.py)."""
    gone = frozenset().union(*(each.stands_for() for each in _each(floors)))
    beside: dict[str, set[str]] = {}
    for each in _each(floors):
        for r, fs in each.overlapping(model, counts, whole).items():
            beside.setdefault(r, set()).update(fs)
    if not gone and not beside:
        return model
    return replace(model, usage={f: {r: u for r, u in us.items() if r not in gone and f not in beside.get(r, ())}
                                 for f, us in model.usage.items()})


def _loads(model: Model, instructions, forms, counts: dict[str, int], charged: dict[str, float],
           front_only: int, floors, grain: int = store_grain.LINE, once=frozenset(),
           ordered=None, trips=None, pipes=None) -> dict[str, float]:
    """The block's resource loads (the resource bound is the largest): the forms' usages as
    upper.loads charges them, the front end with ``front_only`` instructions that take only its
    share, the stores' spans (one store a cycle in a span a load reads, where ``trips`` say so), the
    wider trip where a load reads bytes a store it meets did not write, and the readings' floors."""
    loads = upper.loads(model, counts, charged, once, pipes)
    if model.width:
        loads[FRONT_END] += (front_only - _bypassing(counts, model)) / model.width
    meet = store_load.meetings(instructions) if trips is not None else []
    read = frozenset(st for _, st, _ in meet) if trips is not None and trips.unpairs else frozenset()
    lines = store_lines(instructions, forms, model, grain, trips is not None, read)
    if lines:
        loads[STORE_LINES] = lines
    if any(wider for _, _, wider in meet):      # it waits for the store to be written, chain or not
        loads[WIDER] = trips.wider
    if ordered:                        # the catalogue, where the core takes the path in order (load_order.py)
        v = load_order.in_order(forms, model, ordered)
        if v:
            loads[load_order.LABEL] = v
    for each in _each(floors):
        v, why = each.floor_of(instructions, counts)
        if v:                          # e.g. the block's other vector work on the merges' pipes (upper_pool.py)
            loads[why] = v + each.beside(model, instructions, forms)
    return loads


def _each(floors) -> list:
    """``floors`` as predict() takes them (one set, several, or None) as a list."""
    return list(floors) if isinstance(floors, (list, tuple)) else [floors] if floors else []


def _instances(instructions, forms, weight, model: Model, once=frozenset(), pipes=None,
               slotted=None) -> tuple[list[dict[str, float]], list[float]]:
    """Per instruction, for the simulation: (its usage of the resources, its front-end share), as
    the resource bound charges them (a zero idiom or a form outside the model: the front end
    only; a form that bypasses the front end: none of it, unless ``slotted`` says it takes a slot
    there, nop_pairs.slotted)."""
    usage, front = [], []
    share = 1 / model.width if model.width else 0.0
    for ins, f, w, slot in zip(instructions, forms, weight, slotted or [False] * len(forms)):
        if zero_idiom(ins) or f not in model.usage:
            usage.append({})
            front.append(share)
            continue
        u = upper.instance(model, f, w, once, pipes)
        fe = u.pop(FRONT_END, 0.0)
        usage.append(u)
        front.append(share if slot else 0.0 if _bypassing({f: 1}, model) else fe)
    return usage, front


def _whole(discrete: dict[str, int]):
    """Whether a usage of a resource holds one of its units (simulate.Units.whole)."""
    return lambda r, u: Units(discrete[r]).whole(u)
