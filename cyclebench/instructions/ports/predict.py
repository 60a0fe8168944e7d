"""Steady-state cycles per iteration of a straight-line block, from the resource model.

``predict(block, model)`` takes assembly text (lines or ``;``-separated, GNU as Intel syntax)
or machine code bytes and gives two bounds, each shown:

* **resource bound:** the largest resource load of one iteration (model.Model.cost), the front
  end included, and the stores' time by distinct cache lines written (:func:`store_lines`);
* **dependency-chain bound:** the loop-carried chains through registers, flags and memory, iterated
  until they settle, with each instruction's latency from ``latencies`` (form name -> cycles, e.g.
  a published column; the label says where they came from) or 1 cycle where none is known
  (counted in ``assumed_latency``).  A value may be a pair (cycles, cycles from the address
  registers): a load whose address register another load wrote (a pointer chase) carries its
  load-to-use time.  A load after a store through one address expression waits for the stored
  data (:func:`chain_bound`); addresses through different expressions are taken for distinct.

With ``floors`` (repair.PairFloors), a mix of two of the block's forms' classes read in the
block's own ratio is one more bound among the resources.  The prediction is the larger of the
two bounds.  Forms the model does not know make the resource bound a lower bound (listed in
``unknown``).  A zero idiom (``xor eax, eax``) takes only its share of the front end: the renamer
zeroes the register, while the model's form was measured with two distinct registers.  A
legacy-SSE XMM write under a dirty upper vector state reads its destination's kept part and,
given the factor upper.probe measures, takes its resources that many times (upper.py holds the
measurements).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import iced_x86

from ...errors import UsageError
from ..catalogue import Catalogue
from ..operands import full_register
from .infer import FASTER
from .model import FRONT_END, Model
from .repair import PairFloors
from . import upper

ITERATIONS = 64
FLAGS = -1
MERGE = 1.0           # cycles from a partial write's kept part to its result (the merge)
STORE_LINES = "store lines"
_WRITES = (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_WRITE,
           iced_x86.OpAccess.READ_COND_WRITE)
_ZERO_IDIOMS = {"XOR", "SUB", "PXOR", "VPXOR", "XORPS", "VXORPS", "XORPD", "VXORPD", "PSUBD", "VPSUBD",
                "PSUBQ", "VPSUBQ", "VPXORD", "VPXORQ"}


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

    def to_json(self) -> dict:
        return dict(self.__dict__)


def decode(block: str | bytes) -> list[iced_x86.Instruction]:
    """Instructions of a block: bytes decoded as they are, text assembled with GNU as first."""
    if isinstance(block, str):
        from ..gas import assemble_lines, split_slot
        lines = [s.strip() for ln in block.replace(";", "\n").splitlines() for s in [ln] if s.strip()]
        if not lines:
            raise UsageError("the block is empty", 'give instructions, e.g. "add rax, rbx; imul rcx, rax"')
        out = []
        for a in assemble_lines(lines):
            if a.error or a.data is None:
                raise UsageError(f"GNU as rejected {a.line!r}: {a.error}", "check the instruction's syntax")
            out.append(split_slot(a.data)[0])
        return out
    dec = iced_x86.Decoder(64, bytes(block))
    out = [ins for ins in dec]
    if any(ins.code == iced_x86.Code.INVALID for ins in out):
        raise UsageError("the block's bytes do not decode", "give whole x86-64 instructions")
    return out


def form_of(ins: iced_x86.Instruction, catalogue: Catalogue, model: Model | None = None) -> str | None:
    """The catalogue form an instruction is an instance of (the model's, when several fit)."""
    cands = [f for f in catalogue.by_code.get(ins.code, []) if f.build_error is None]
    mem = any(ins.op_kind(i) == iced_x86.OpKind.MEMORY for i in range(ins.op_count))
    cands = [f for f in cands if (f.memory_operand is not None) == mem or f.lea_mode] or cands
    if not cands:
        return None
    has_imm = any(ins.op_kind(i) in (iced_x86.OpKind.IMMEDIATE8, iced_x86.OpKind.IMMEDIATE8TO64,
                                     iced_x86.OpKind.IMMEDIATE8TO32, iced_x86.OpKind.IMMEDIATE8TO16)
                  for i in range(ins.op_count))
    zero = has_imm and ins.immediate8 == 0
    cands = [f for f in cands if f.imm_zero == zero] or cands
    if any(f.lea_mode for f in cands):       # LEA's addressing makes the form (3 parts are slower)
        cands = [f for f in cands if f.lea_mode == _lea_mode(ins)]
        if not cands:
            return None
    cands = [f for f in cands if not f.high8] or cands
    if model is not None:
        cands = [f for f in cands if f.name in model.usage] or cands
    return cands[0].name


def _lea_mode(ins: iced_x86.Instruction) -> str:
    """The catalogue's name of an LEA's addressing: base B (R for RIP), index I (IS when scaled),
    displacement D8 or D32, joined by '_' (``B_IS_D8``)."""
    base = ins.memory_base
    parts = [] if base == iced_x86.Register.NONE else ["R" if base == iced_x86.Register.RIP else "B"]
    if ins.memory_index != iced_x86.Register.NONE:
        parts.append("IS" if ins.memory_index_scale > 1 else "I")
    if base in (iced_x86.Register.NONE, iced_x86.Register.RIP):
        parts.append("D32")                  # no base register: always a 32-bit displacement
    elif ins.memory_displacement:
        parts.append("D8" if ins.memory_displ_size == 1 else "D32")
    return "_".join(parts)


def zero_idiom(ins: iced_x86.Instruction) -> bool:
    """``xor eax, eax`` and its kin: the renamer zeroes the register (no input, no execution unit)."""
    regs = [ins.op_register(i) for i in range(ins.op_count) if ins.op_kind(i) == iced_x86.OpKind.REGISTER]
    return _mnemonic(ins) in _ZERO_IDIOMS and len(regs) >= 2 and len(set(regs[-2:])) == 1


def _merges(ins: iced_x86.Instruction, reg: int, dirty: bool) -> bool:
    """Whether writing ``reg`` keeps some of its full register's bits (so the write reads them)."""
    X = iced_x86.RegisterExt
    if X.is_gpr8(reg) or X.is_gpr16(reg):
        return True
    return dirty and X.is_xmm(reg) and ins.encoding == iced_x86.EncodingKind.LEGACY


def _access(ins: iced_x86.Instruction, factory,
            dirty: bool = False) -> tuple[set[int], set[int], set[int], dict[int, bool]]:
    """(data registers read, address registers read, registers written, registers only merged
    into: a partial write's kept part -> whether the part is a source of the computation, not
    only merged in); flags are FLAGS.  ``dirty``: the upper vector state is dirty when the
    instruction runs (upper.dirty): a legacy-SSE XMM write that computes from registers then
    waits for its destination's kept part as for a source (Zen 4: 4 ``cvtdq2ps xmmN, xmm9`` run
    at its latency, 3.0 cycles, after a YMM write), a load or a move only merges it in."""
    info = factory.info(ins)
    reads, writes, kept = set(), set(), {}
    addr = set()
    if _mnemonic(ins) != "LEA":           # LEA computes with its address: those are data reads
        for m in info.used_memory():
            addr |= {full_register(r) for r in (m.base, m.index) if r != iced_x86.Register.NONE}
    R, X = iced_x86.OpAccess, iced_x86.RegisterExt
    for u in info.used_registers():
        full = full_register(u.register)
        if u.access in (R.READ, R.READ_WRITE, R.COND_READ, R.READ_COND_WRITE):
            reads.add(full)
        if u.access in _WRITES:
            writes.add(full)
            if _merges(ins, u.register, dirty):
                kept[full] = bool(X.is_xmm(u.register) and upper.computes(ins))
    if ins.rflags_read:
        reads.add(FLAGS)
    if ins.rflags_modified:
        writes.add(FLAGS)
    if zero_idiom(ins):
        reads = set()              # a zero idiom depends on nothing
    if upper.clears(ins):          # vzeroupper: iced has it read and write every vector register,
        return set(), set(), writes - reads, {}       # but it keeps their values (no chain through it)
    return reads - addr, addr, writes, {r: t for r, t in kept.items() if r not in reads | addr}


_MN = {v: k for k, v in iced_x86.Mnemonic.__dict__.items() if isinstance(v, int) and k.isupper()}


def _mnemonic(ins: iced_x86.Instruction) -> str:
    return _MN.get(ins.mnemonic, "").upper()


def _source_latencies(ins: iced_x86.Instruction, by_source: dict) -> dict[int, float]:
    """Register (FLAGS for the flags) -> cycles from it to the result, from a form's latencies
    keyed by operand index (latency.from_file)."""
    out: dict[int, float] = {}
    for k, v in by_source.items():
        if k == "flags":
            out[FLAGS] = max(out.get(FLAGS, 0.0), v)
        elif isinstance(k, int) and k < ins.op_count and ins.op_kind(k) == iced_x86.OpKind.REGISTER:
            r = full_register(ins.op_register(k))
            out[r] = max(out.get(r, 0.0), v)
    return out


def _memory(ins: iced_x86.Instruction, factory, changed: set[int]) -> tuple[list, list]:
    """(locations read, locations written): (address expression, first byte, end) of the memory
    operands whose address registers the block never writes (``changed``: those it does), so
    that they name one place in every iteration; a LEA reads no memory."""
    reads, writes = [], []
    if _mnemonic(ins) == "LEA":
        return reads, writes
    for m in factory.info(ins).used_memory():
        regs = {full_register(r) for r in (m.base, m.index) if r not in (iced_x86.Register.NONE,
                                                                          iced_x86.Register.RIP)}
        if regs & changed:
            continue
        size = iced_x86.MemorySizeExt.size(m.memory_size) or 1
        loc = ((m.segment, m.base, m.index, m.scale), m.displacement_i64, m.displacement_i64 + size)
        if m.access in _WRITES:
            writes.append(loc)
        if m.access not in (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.COND_WRITE, iced_x86.OpAccess.NO_MEM_ACCESS):
            reads.append(loc)
    return reads, writes


def _overlaps(a, b) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def chain_bound(instructions: list[iced_x86.Instruction], latency: list) -> float:
    """Cycles per iteration the loop-carried register, flag and memory chains allow (``latency``:
    cycles per instruction, or (cycles, cycles from the address registers[, cycles by source
    operand, "mem" for the memory operand])).

    Through memory: a store of one address expression makes its data ready there its latency
    after the data (a read-modify-write form: when its result is), and a later load that
    overlaps it, in the iteration or the next, waits that time plus the load's latency from
    memory; cyclebench inst measures the two as halves of a store-and-load round trip (Zen 4:
    ``movsd [m], xmm0`` 4.5 and ``addsd xmm0, [m]`` 7.5, a loop of the two 12.0 cycles;
    ``mov [m], rax`` and ``mov rax, [m]`` 0.5 each, memory renamed).  With no such figure the
    load waits its latency from the address registers (a load-to-use time).  Stores and loads
    through different expressions (another base register, or one the block changes) are taken
    for distinct."""
    factory = iced_x86.InstructionInfoFactory()
    access = [_access(ins, factory, d) for ins, d in zip(instructions, upper.dirty(instructions))]
    changed = set().union(*(w for _, _, w, _ in access))
    memory = [_memory(ins, factory, changed) for ins in instructions]
    steps = []
    for ins, lat in zip(instructions, latency):
        lat = lat if isinstance(lat, tuple) else (lat, lat)
        by = lat[2] if len(lat) > 2 else {}
        steps.append((lat[0], lat[1], _source_latencies(ins, by), by.get("mem", lat[1])))
    ready: dict[int, float] = {}
    stored: list[tuple[tuple, float]] = []        # (location, when its data is ready)
    marks = []
    for _ in range(ITERATIONS):
        for (reads, addr, writes, kept), (loads, stores), (lat, via_addr, by_reg, via_mem) in zip(access, memory, steps):
            done = max([ready.get(r, 0.0) + by_reg.get(r, lat) for r in reads]
                       + [ready.get(r, 0.0) + via_addr for r in addr]
                       + [t + via_mem for loc in loads for where, t in stored if _overlaps(loc, where)]
                       + [ready.get(r, 0.0) + (max(lat, MERGE) if through else MERGE)
                          for r, through in kept.items()] + [lat])
            for w in writes:
                ready[w] = done
            for loc in stores:
                stored = [(w, t) for w, t in stored if not _overlaps(loc, w)]
                stored.append((loc, done))
        marks.append(max([*ready.values(), *(t for _, t in stored)], default=0.0))
    half = ITERATIONS // 2
    return (marks[-1] - marks[half - 1]) / (ITERATIONS - half)


def store_lines(instructions: list[iced_x86.Instruction], forms: list[str], model: Model) -> float:
    """Cycles the block's stores take by cache line, iteration after iteration: a run of stores to
    one line (in program order, the loop wrapping round) is written k at a time, k = the store
    form's time on distinct lines over its time alone (model.lines, model.alone); a run costs its
    first form's time on distinct lines per k.  A block whose stores all go to one line adds
    nothing the resources do not already charge.  Lines are told apart by address expression
    (segment, base, index, scale) and displacement / 64."""
    factory = iced_x86.InstructionInfoFactory()
    seq = []
    for ins, f in zip(instructions, forms):
        if f not in model.lines or f not in model.alone:
            continue
        for m in factory.info(ins).used_memory():
            if m.access in (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_WRITE,
                            iced_x86.OpAccess.READ_COND_WRITE):
                seq.append(((m.segment, m.base, m.index, m.scale, m.displacement // 64), f))
    if len({line for line, _ in seq}) < 2:
        return 0.0
    start = next(i for i in range(len(seq)) if seq[i][0] != seq[i - 1][0])
    seq = seq[start:] + seq[:start]
    total, i = 0.0, 0
    while i < len(seq):
        j = i
        while j < len(seq) and seq[j][0] == seq[i][0]:
            j += 1
        f = seq[i][1]
        k = max(1, round(model.lines[f] / model.alone[f]))
        total += math.ceil((j - i) / k) * model.lines[f]
        i = j
    return total


def _bypassing(counts: dict[str, int], model: Model) -> int:
    """Instances of forms that pass the front end on another path and that the model charges
    for it: forms that use no resource and run alone faster than the front end could pass them
    (infer's rule, Zen 4's long NOPs), where the model names no front-end share of their own."""
    return sum(n for f, n in counts.items()
               if FRONT_END not in model.usage[f] and not model.used(f)
               and model.alone.get(f, math.inf) < FASTER / model.width)


def predict(block: str | bytes, model: Model, catalogue: Catalogue | None = None,
            latencies: dict[str, float] | None = None, latency_source: str = "published",
            floors: PairFloors | None = None, upper_factor: float | None = None) -> Prediction:
    """The prediction for one block (see the module docstring); ``floors``: the readings of the
    model's results file as floors (repair.mended); ``upper_factor``: the resources a legacy-SSE
    XMM write takes while a ZMM register dirties the upper state, as upper.probe measured it."""
    catalogue = catalogue or Catalogue.load()
    instructions = decode(block)
    forms = [form_of(ins, catalogue, model) or f"?{_mnemonic(ins).lower()}" for ins in instructions]
    counts: dict[str, int] = {}
    charged: dict[str, float] = {}                # counts weighted by upper.weights
    extra = 0                                     # of them, instructions charged more than once
    unknown = []
    front_only = 0                 # zero idioms: the front end's share only (the model's forms
                                   # were measured with distinct registers)
    weight = upper.weights(instructions, upper_factor)
    for ins, f, w in zip(instructions, forms, weight):
        if zero_idiom(ins):
            front_only += 1
        elif f in model.usage:
            counts[f] = counts.get(f, 0) + 1
            charged[f] = charged.get(f, 0.0) + w
            extra += w != 1.0
        else:
            unknown.append(f)
    if counts:
        loads = upper.loads(model, counts, charged)
        if model.width:
            loads[FRONT_END] += (len(unknown) + front_only - _bypassing(counts, model)) / model.width
        lines = store_lines(instructions, forms, model)
        if lines:
            loads[STORE_LINES] = lines
        if floors is not None:
            v, why = floors.floor(counts)
            if v:
                loads[why] = v
        binding = max(loads, key=loads.get)
        res = loads[binding]
    else:
        res, binding = (len(forms) / model.width if model.width else 0.0), None
    lats, assumed = [], 0
    for f in forms:
        v = (latencies or {}).get(f)
        if v is None:
            v, assumed = 1.0, assumed + 1
        lats.append(v)
    chain = chain_bound(instructions, lats)
    return Prediction(max(res, chain), res, binding, chain, forms, unknown, assumed,
                      latency_source if latencies else "assumed 1 cycle", extra)
