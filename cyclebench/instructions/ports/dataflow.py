"""The data flow of a straight-line block run again and again: what each instruction waits for.

Registers, flags and memory carry values from one instruction to the next, in the iteration and
across iterations; :func:`steady` follows them with each instruction's latency (by source operand
where it was measured) and gives the cycles per iteration in the steady state.  Alone it is the
dependency-chain bound (:func:`chain_bound`: every instruction starts as soon as its inputs
allow); with an ``issue`` callback (simulate.py) each instruction starts when a scheduler says,
no earlier than its inputs allow, so one account of the dependences serves both.
"""
from __future__ import annotations

from typing import Callable

import iced_x86

from ...blocks.memory import PAGE, steady_state
from ..operands import VECTOR_CLASSES, full_register
from . import upper

ITERATIONS = 64
MERGE = 1.0           # cycles from a partial write's kept part to its result (the merge)
KEPT = "kept"         # a latency's key: cycles from the kept part where it is not MERGE (:func:`merged_after`)
ADDRESS = ("addr base", "addr index")   # a latency's keys: cycles from a memory operand's base, index
                                        # register where not its figure from the address (address.py)
# Each flag a register of its own (a negative number: no register of iced's), so a reader waits
# for the last writer of the flags it reads: ``inc`` keeps CF, and ``adc; inc; adc`` carries it
# from adc to adc, where one register for all the flags would break the chain at the inc.
_FLAG_BITS = [getattr(iced_x86.RflagsBits, n) for n in ("OF", "SF", "ZF", "AF", "CF", "PF", "DF")]
_ZERO_IDIOMS = {"XOR", "SUB", "PXOR", "VPXOR", "XORPS", "VXORPS", "XORPD", "VXORPD", "PSUBD", "VPSUBD",
                "PSUBQ", "VPSUBQ", "VPXORD", "VPXORQ"}


def flag_registers(bits: int) -> set[int]:
    """The flags of iced's RflagsBits ``bits`` as this module's registers."""
    return {-b for b in _FLAG_BITS if bits & b}


def zero_idiom(ins: iced_x86.Instruction) -> bool:
    """``xor eax, eax`` and its kin: the renamer zeroes the register (no input, no execution unit)."""
    regs = [ins.op_register(i) for i in range(ins.op_count) if ins.op_kind(i) == iced_x86.OpKind.REGISTER]
    return mnemonic(ins) in _ZERO_IDIOMS and len(regs) >= 2 and len(set(regs[-2:])) == 1


def _merges(ins: iced_x86.Instruction, reg: int, dirty: bool) -> bool:
    """Whether writing ``reg`` keeps some of its full register's bits (so the write reads them)."""
    X = iced_x86.RegisterExt
    if X.is_gpr8(reg) or X.is_gpr16(reg):
        return True
    return dirty and X.is_xmm(reg) and ins.encoding == iced_x86.EncodingKind.LEGACY


def _access(ins: iced_x86.Instruction, factory, dirty: bool = False,
            passed: int = 0) -> tuple[set[int], set[int], set[int], dict[int, bool]]:
    """(data registers read, address registers read, registers written, registers only merged
    into: a partial write's kept part -> whether the part is a source of the computation, not
    only merged in); each flag is a register of its own (:func:`flag_registers`).  ``dirty``: the
    upper vector state is dirty when the instruction runs (upper.dirty): a legacy-SSE XMM write that computes from registers then
    waits for its destination's kept part as for a source (Zen 4: 4 ``cvtdq2ps xmmN, xmm9`` run
    at its latency, 3.0 cycles, after a YMM write), a load or a move only merges it in.  ``passed``:
    iced's RflagsBits of the flags the ISA leaves undefined that the CPU passes on (kept_flags.py):
    the instruction writes none of them."""
    info = factory.info(ins)
    reads, writes, kept = set(), set(), {}
    addr = set()
    if mnemonic(ins) != "LEA":           # LEA computes with its address: those are data reads
        for m in info.used_memory():
            addr |= {full_register(r) for r in (m.base, m.index) if r != iced_x86.Register.NONE}
    R, X = iced_x86.OpAccess, iced_x86.RegisterExt
    for u in info.used_registers():
        full = full_register(u.register)
        if u.access in (R.READ, R.READ_WRITE, R.COND_READ, R.READ_COND_WRITE, R.COND_WRITE):
            reads.add(full)       # a conditional write keeps the old value where it does not write
        if u.access in upper.WRITES:
            writes.add(full)
            if _merges(ins, u.register, dirty):
                kept[full] = bool(X.is_xmm(u.register) and upper.computes(ins))
    reads |= flag_registers(ins.rflags_read)
    writes |= flag_registers(ins.rflags_modified & ~(passed & ins.rflags_undefined))
    if zero_idiom(ins):
        reads = set()              # a zero idiom depends on nothing
    if upper.clears(ins):          # vzeroupper: iced has it read and write every vector register,
        return set(), set(), writes - reads, {}       # but it keeps their values (no chain through it)
    return reads - addr, addr, writes, {r: t for r, t in kept.items() if r not in reads | addr}


_MN = {v: k for k, v in iced_x86.Mnemonic.__dict__.items() if isinstance(v, int) and k.isupper()}


def mnemonic(ins: iced_x86.Instruction) -> str:
    """The instruction's mnemonic in capitals (``LEA``), from iced's enumeration."""
    return _MN.get(ins.mnemonic, "").upper()


def _source_latencies(ins: iced_x86.Instruction, by_source: dict) -> dict[int, float]:
    """Register (each flag read, for "flags") -> cycles from it to the result, from a form's latencies
    keyed by operand index, "flags", or a LEA's "base" and "index" (latency.from_file)."""
    out = _address_latencies(ins, by_source, ("base", "index"))
    for k, v in by_source.items():
        if k == "flags":
            for f in flag_registers(ins.rflags_read):
                out[f] = max(out.get(f, 0.0), v)
        elif isinstance(k, int) and k < ins.op_count and ins.op_kind(k) == iced_x86.OpKind.REGISTER:
            r = full_register(ins.op_register(k))
            out[r] = max(out.get(r, 0.0), v)
    return out


def _address_latencies(ins: iced_x86.Instruction, by_source: dict, keys=ADDRESS) -> dict[int, float]:
    """Address register -> cycles from it to the result, where a latency's ``keys`` for the base
    and the index give them: :data:`ADDRESS` for another addressing mode than the form's measured
    one (address.py), "base" and "index" for a LEA, which computes with them."""
    out: dict[int, float] = {}
    for key, reg in zip(keys, (ins.memory_base, ins.memory_index)):
        if key in by_source and reg not in (iced_x86.Register.NONE, iced_x86.Register.RIP):
            r = full_register(reg)
            out[r] = max(out.get(r, 0.0), by_source[key])
    return out


def _memory(ins: iced_x86.Instruction, factory, changed: set[int], placed: list | None = None) -> tuple[list, list]:
    """(locations read, locations written): (place, first byte, end, address expression) of the
    memory operands that name one place in every iteration; a LEA reads no memory.  The place is
    the address expression, where the block never writes its registers (``changed``: those it
    does), or with ``placed`` (the instruction's memory.steady_state accesses, in order) the page
    offset where the start state puts the access: every page the block touches is one physical
    page, so two expressions meet where their offsets overlap."""
    reads, writes = [], []
    if mnemonic(ins) == "LEA":
        return reads, writes
    placed = list(placed or ())
    for m in factory.info(ins).used_memory():
        if m.access == iced_x86.OpAccess.NO_MEM_ACCESS:
            continue
        at = placed.pop(0).address if placed else None
        regs = {full_register(r) for r in (m.base, m.index) if r not in (iced_x86.Register.NONE,
                                                                          iced_x86.Register.RIP)}
        if regs & changed and at is None:
            continue
        size = iced_x86.MemorySizeExt.size(m.memory_size) or 1
        expr = (m.segment, m.base, m.index, m.scale, m.displacement_i64)
        loc = (expr[:4], m.displacement_i64, m.displacement_i64 + size, expr) if at is None else \
            ("page", at % PAGE, at % PAGE + size, expr)
        if m.access in upper.WRITES:
            writes.append(loc)
        if m.access not in (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.COND_WRITE):
            reads.append(loc)
    return reads, writes


def load_time(latencies: dict, catalogue) -> float | None:
    """The least latency from memory of a form that writes a vector register from memory alone
    (a plain vector load: ``movsd xmm, [m]``), or None where the latencies hold none."""
    out = []
    for name, v in (latencies or {}).items():
        form = catalogue.get(name)
        mem = v[2].get("mem") if isinstance(v, tuple) and len(v) > 2 else None
        if form is None or mem is None or any(o.read for o in form.operands if o.kind == "reg"):
            continue
        if any(o.write and o.kind == "reg" and o.cls in VECTOR_CLASSES for o in form.operands):
            out.append(mem)
    return min(out) if out else None


def merged_after(latency, load: float | None):
    """A latency with the cycles from a kept part (:data:`KEPT`) of a form that computes from
    memory alone: its operation's, its time from memory less a plain load's (``load``), at least
    :data:`MERGE`.  Under a dirty upper state a legacy-SSE XMM write merges the kept part after
    its operation, not beside it (Zen 4, ``cyclebench asm --cpu 1``: ``vpxord zmm1, zmm1, zmm2``
    with ``pmovsxwq xmm1, [m32]`` 3.06 cycles, with ``movaps xmm1, [m]`` 2.00, with ``cvtdq2ps
    xmm1, [m]`` 4.13)."""
    if load is None or not isinstance(latency, tuple) or len(latency) < 3:
        return latency
    by = latency[2]
    if "mem" not in by or any(k != "mem" for k in by):
        return latency
    return (*latency[:2], {**by, KEPT: max(MERGE, by["mem"] - load)}, *latency[3:])


def _accesses(instructions: list[iced_x86.Instruction], factory, passed: list[int] | None) -> list[tuple]:
    """_access of each instruction, with the upper state it runs under and the flags it passes on."""
    return [_access(ins, factory, d, p) for ins, d, p in
            zip(instructions, upper.dirty(instructions), passed or [0] * len(instructions))]


def _writer(access: list[tuple], k: int, r: int) -> int | None:
    """The instruction whose write of ``r`` instruction ``k`` reads: the last before it, the loop
    wrapping round (``k`` itself where nothing else writes it), or None where none does."""
    n = len(access)
    return next(((k - d) % n for d in range(1, n + 1) if r in access[(k - d) % n][2]), None)


def producers(instructions: list[iced_x86.Instruction]) -> list[set[int]]:
    """Per instruction, the instructions whose results it reads (registers and the flags, each
    from the last write before it, the loop wrapping round; itself where nothing else writes it)."""
    access = _accesses(instructions, iced_x86.InstructionInfoFactory(), None)
    return [{i for r in reads | addr | set(kept) if (i := _writer(access, k, r)) is not None}
            for k, (reads, addr, _, kept) in enumerate(access)]


def last_writers(instructions: list[iced_x86.Instruction]) -> list[dict[int, int]]:
    """Per instruction, each data register it reads (no address register) -> the instruction
    whose write it reads (:func:`_writer`)."""
    access = _accesses(instructions, iced_x86.InstructionInfoFactory(), None)
    return [{r: i for r in reads if (i := _writer(access, k, r)) is not None}
            for k, (reads, _, _, _) in enumerate(access)]


def loops(instructions: list[iced_x86.Instruction]) -> list[frozenset[int]]:
    """Per instruction, the instructions on a loop-carried chain with it through registers and
    the flags (:func:`producers`): the strongly connected part of the dependence graph it is in;
    empty where it is on no such chain."""
    n = len(instructions)
    reach = [set() for _ in range(n)]         # reach[i]: instructions that wait on i, at any remove
    for k, before in enumerate(producers(instructions)):
        for i in before:
            reach[i].add(k)
    for _ in range(n):                        # the closure: n rounds suffice
        for i in range(n):
            reach[i] = reach[i].union(*(reach[j] for j in list(reach[i])))
    return [frozenset(j for j in reach[i] if i in reach[j]) for i in range(n)]


def _overlaps(a, b) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def chain_bound(instructions: list[iced_x86.Instruction], latency: list, trips=None, passed=None) -> float:
    """Cycles per iteration the loop-carried register, flag and memory chains allow (``latency``:
    cycles per instruction, or (cycles, cycles from the address registers[, cycles by source
    operand, "mem" for the memory operand])).

    Through memory: a store makes its data ready there its latency after the data (a
    read-modify-write form: when its result is), and a later load that overlaps it, in the
    iteration or the next, waits that time plus the load's latency from memory; cyclebench inst
    measures the two as halves of a store-and-load round trip (Zen 4: ``movsd [m], xmm0`` 4.5
    and ``addsd xmm0, [m]`` 7.5, a loop of the two 12.0 cycles; ``mov [m], rax`` and ``mov rax,
    [m]`` 0.5 each).  With no such figure the load waits its latency from the address registers
    (a load-to-use time).  Without ``trips`` a store and a load meet only through one address
    expression.  With ``trips`` (store_load.Trips, the CPU's probed round trips) they meet where
    the start state places them on one byte (memory.steady_state: all registers equal, every
    page one physical page), and a general-register load after a general-register store waits
    the store's data plus the trip the probe measured for how the two meet (renamed, forwarded,
    wider, misrenamed), plus a load-op's latency from its register operands (its operation's).
    ``passed``: per instruction, the flags it passes on (:func:`_access`)."""
    return steady(instructions, latency, trips=trips, passed=passed)


def _general(ins: iced_x86.Instruction) -> bool:
    """Moves data between memory and general registers (or an immediate): the probe's shape."""
    return not any(ins.op_kind(i) == iced_x86.OpKind.REGISTER and not iced_x86.RegisterExt.is_gpr(ins.op_register(i))
                   for i in range(ins.op_count))


def steady(instructions: list[iced_x86.Instruction], latency: list,
           issue: Callable[[int, float], float] | None = None, iterations: int = ITERATIONS,
           trips=None, passed: list[int] | None = None) -> float:
    """Cycles per iteration, in the steady state, of the block run ``iterations`` times with its
    dependences and ``latency`` (as :func:`chain_bound` takes them, with its ``trips``).  Without
    ``issue`` every instruction starts as soon as its inputs allow (the chain bound); with it,
    ``issue(i, t, a)`` gives when instruction ``i`` of the block, whose inputs allow it to start
    at ``t`` and whose last register input arrives at ``a``, does start (called in program order,
    iteration after iteration), and the figure is the pace at which the iterations complete."""
    factory = iced_x86.InstructionInfoFactory()
    access = _accesses(instructions, factory, passed)
    changed = set().union(*(w for _, _, w, _ in access))
    placed = [[] for _ in instructions]
    for a in (steady_state(instructions) if trips is not None else ()):
        placed[a.index].append(a)
    memory = [_memory(ins, factory, changed, p) for ins, p in zip(instructions, placed)]
    general = [trips is not None and _general(ins) for ins in instructions]
    steps = []
    for ins, lat in zip(instructions, latency):
        lat = lat if isinstance(lat, tuple) else (lat, lat)
        by = lat[2] if len(lat) > 2 else {}
        # the flags' own figures where they come later than the registers' (latency._by_source)
        to_flags = _source_latencies(ins, {k[1]: v for k, v in by.items() if isinstance(k, tuple) and k[0] == "flags"})
        steps.append((lat[0], lat[1], _source_latencies(ins, by), by.get("mem", lat[1]), by.get(KEPT, MERGE),
                      _address_latencies(ins, by), to_flags))
    ready: dict[int, float] = {}
    # (location, when the data is ready there, when the store had its data, the store is general,
    # the expressions of older stores it overwrote)
    stored: list[tuple] = []
    marks, last = [], 0.0

    def waits(i: int, loc, via_mem: float, op: float) -> list[float]:
        out = []
        for where, t, data, gp, shadowed in stored:
            if not _overlaps(loc, where):
                continue
            if not (gp and general[i]) or (memory[i][1] and loc[3] == where[3]):
                out.append(t + via_mem)        # inst's halves (a read-modify-write to itself)
            else:
                trip = trips.trip((loc[3], *loc[1:3]), (where[3], *where[1:3]), loc[3] in shadowed, op > 0)
                out.append(data + trip + op)
        return out

    for _ in range(iterations):
        for i, ((reads, addr, writes, kept), (loads, stores), (lat, via_addr, by_reg, via_mem, merge, by_addr,
                                                               to_flags)) in enumerate(zip(access, memory, steps)):
            done = max([ready.get(r, 0.0) + by_reg.get(r, lat) for r in reads]
                       + [ready.get(r, 0.0) + by_addr.get(r, via_addr) for r in addr]
                       + [w for loc in loads for w in waits(i, loc, via_mem, lat if reads else 0.0)]
                       + [ready.get(r, 0.0) + (max(lat, MERGE) if through else merge)
                          for r, through in kept.items()] + [lat])
            late = 0.0
            if issue is not None:
                arrive = max([ready.get(r, 0.0) for r in reads] + [ready.get(r, 0.0) for r in kept], default=0.0)
                early = done
                done = issue(i, done - lat, arrive) + lat
                late = done - early
                last = max(last, done)
            flags_done = done
            if to_flags:      # as late as the flags' own figures say, issued as late as the rest
                flags_done = max([done] + [ready.get(r, 0.0) + v + late for r, v in to_flags.items() if r in reads])
            for w in writes:
                ready[w] = flags_done if w < 0 else done
            for loc in stores:
                over = [e for e in stored if _overlaps(loc, e[0])]
                shadowed = {e[0][3] for e in over if e[0][3] != loc[3]}
                stored = [e for e in stored if not _overlaps(loc, e[0])]
                # a read-modify-write's data is its result; a plain store had it its latency before
                stored.append((loc, done, done - (0.0 if loads else lat), general[i], shadowed))
        marks.append(last if issue is not None else max([*ready.values(), *(e[1] for e in stored)], default=0.0))
    half = iterations // 2
    return (marks[-1] - marks[half - 1]) / (iterations - half)
