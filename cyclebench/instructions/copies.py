"""Independent copies of a form for throughput: n instances with no register or memory dependency
between them where the ISA allows.  Written operands rotate through the register pool (EVEX forms
also use the upper 16 vector registers), read-modify-write memory gets an address per copy, and
``Copies.carried`` names what still links the copies (implicit registers, flags, x87 stack).
:func:`balanced_count` trims the copies so that every written register is written equally often.
:func:`bank_offset` places memory operands of different lines on L1 banks of their own.
"""
from __future__ import annotations

from dataclasses import dataclass

from iced_x86 import Register

from .catalogue import implicit_avoid
from .forms import Form, lea_parts, read_and_written
from .instantiate import AREA_GUARD, Instance, instantiate, register_id
from .operands import EVEX_EXTRA, NEVER_PICK, POOLS, full_register


@dataclass
class Copies:
    instances: list[Instance]
    carried: list[str]       # what still links consecutive copies: 'flags', 'rax', 'memory'...

    @property
    def code(self) -> str:
        return "\n".join(i.text for i in self.instances)

    @property
    def init(self) -> list[str]:
        seen, out = set(), []
        for i in self.instances:
            for s in i.init:
                if s not in seen:
                    seen.add(s)
                    out.append(s)
        return out


LINE = 64
BANK = 8          # bytes: one bank of the L1 data cache (address bits 5:3; ports/load_banks.py)


def no_banks() -> list[int]:
    """The bank counts :func:`bank_offset` starts from: none used yet."""
    return [0] * (LINE // BANK)


def bank_offset(width: int, used: list[int]) -> int:
    """An offset within a 64-byte slot for a memory operand of ``width`` bytes: a multiple of its
    width (its power of two, up to a line), never crossing the line, on the banks the operands
    placed so far use least (``used``: a count per 8-byte bank, updated). Loads at one offset of
    different lines share a bank, and on Zen 4 whether they collide depends on where the lines
    sit in the cache, which changes each time they are filled: `mov r64, [r14+0x40*k]`, k = 0-3,
    reads 1.33 or 1.60-1.70 cycles by turns, at offsets 0, 8, 16, 24 always 1.33 (docs/ports-findings.md,
    "Loads: the order and the run decide, not the counts")."""
    size = 1
    while size < min(max(width, 1), LINE):
        size *= 2
    span = max(1, size // BANK)
    starts = range(0, LINE, max(size, BANK))
    best = min(starts, key=lambda o: (sum(used[o // BANK:o // BANK + span]), o))
    for b in range(best // BANK, best // BANK + span):
        used[b] += 1
    return best


def rmw_stride(form: Form) -> int | None:
    """Bytes between the copies' addresses of a read-modify-write memory form (None: not one):
    one operand width, uops.info's convention (each copy its own address, the next element of
    an array); cyclebench's former convention, one cache line per copy, is the alternative."""
    mem = form.memory_operand
    if mem is None or mem.kind != "mem" or not (mem.write and mem.read):
        return None
    return max(1, mem.bits // 8) if mem.bits else LINE


def independent_copies(form: Form, n: int, avoid=(), stride: int | None = None, loads_apart: bool = False) -> Copies:
    """``n`` instances of ``form`` without dependencies between them where the ISA allows.

    Read-only register operands keep one register for all copies; written ones rotate through the
    rest of the class's pool (for EVEX forms including the 16 upper vector registers), never
    one in ``avoid`` (names or enums: e.g. a scratch register for dependency breakers).  Memory
    that is read and written gets its own address per copy, ``stride`` bytes apart (default
    :func:`rmw_stride`: one operand width); write-only stores share one address (uops.info's
    convention; with ``loads_apart`` every memory operand gets an address per copy, one operand
    width apart, as uops.info's copies do).  ``carried`` lists what cannot be
    renamed apart: implicit registers that are read and written, flags that are read and
    written, x87 stack, memory read-modify-write beyond the distinct addresses."""
    avoid_regs = tuple(avoid)
    avoid = set(implicit_avoid(form)) | set(NEVER_PICK) | {full_register(register_id(r)) for r in avoid_regs}
    # nor a fixed explicit register (a copy writing CH would change the count CL of the next ones)
    avoid |= {full_register(register_id(op.fixed)) for op in form.operands if op.kind == "reg" and op.fixed}
    ro, rw = [], []
    for op in form.operands:
        if op.kind != "reg" or op.fixed or op.is_mask:
            continue
        (rw if op.write else ro).append(op)
    base = instantiate(form, avoid=avoid_regs)
    ro_regs = {op.pos: register_id(base.regs[op.pos]) for op in ro}
    used = avoid | {full_register(r) for r in ro_regs.values()}
    # an LEA's index register is read by every copy: one for all, written by none (each copy
    # picking the first free one read the register the copy before it wrote, chaining them)
    index = lea_index(form, base)
    if index is not None:
        used.add(full_register(register_id(index)))
    if form.mask:
        used.add(Register.K1)
    pools: dict[str, list[int]] = {}
    for op in rw:
        if op.cls not in pools:
            pool = list(POOLS[op.cls])
            if form.encoding == "EVEX" and op.cls in EVEX_EXTRA:
                pool = pool[:-1] + list(EVEX_EXTRA[op.cls]) + pool[-1:]
            if op.cls == "K":
                pool = [r for r in pool if r != Register.K1 or not form.mask]
            pools[op.cls] = [r for r in pool if full_register(r) not in used]
    counters = {c: 0 for c in pools}
    # read-modify-write memory gets an address per copy (else the copies chain through memory);
    # write-only stores share one address, as uops.info does: stores to different lines commit
    # at one line per cycle on Zen 4, which would hide the store throughput (2 per cycle)
    writes_mem = rmw_stride(form) is not None
    mem = form.memory_operand
    apart = writes_mem or (loads_apart and mem is not None and mem.kind == "mem")
    stride = stride or rmw_stride(form) or (max(1, mem.bits // 8) if apart and mem.bits else LINE)
    out = []
    before: set[int] = set()        # the full registers the previous copy wrote
    for i in range(n):
        regs = dict(ro_regs)
        taken: set[int] = set()
        for op in rw:
            # nor one the previous copy wrote under another name: a copy writing CL after one
            # writing CH (xadd bl, ch; xadd cl, dh) merges into RCX and waits for it
            start = counters[op.cls]
            r = _rotate(pools[op.cls], counters, op.cls, taken | before)
            if r is None:
                counters[op.cls] = start
                r = _rotate(pools[op.cls], counters, op.cls, taken, last=True)
            regs[op.pos] = r
            taken.add(full_register(r))
        before = taken
        disp = LINE + (stride * i) % AREA_GUARD if apart else None
        out.append(instantiate(form, regs=regs, displacement=disp, index=index))
    # an implicit register read under one name and written under another (imul r32: reads eax,
    # writes rax/rdx) links the copies as much as one read and written under one name
    # and so does a fixed explicit register read and written (AND AL, imm8: AL)
    fixed = [(op.fixed, op.read, op.write) for op in form.operands
             if op.kind == "reg" and op.fixed and not op.fixed.startswith("ST")]
    both = read_and_written([(i.register, i.read, i.write) for i in form.implicit] + fixed)
    carried = [name for name in both if name not in base.chained]
    if form.flags_read & form.flags_written:
        carried.append("flags")
    if any(op.cls == "ST" for op in form.operands) or "FPU" in form.cpuid_features:
        carried.append("x87 stack")
    if writes_mem and n * stride > AREA_GUARD:
        carried.append("memory (addresses repeat)")
    return Copies(out, carried)


def lea_index(form: Form, inst: Instance) -> str | None:
    """The index register of an LEA instance's address (``lea bx, [r14+rcx]`` and
    ``lea bx, [rcx*8+0x1000]``: rcx), else None."""
    if not (form.lea_mode and lea_parts(form.lea_mode)[1]):
        return None
    inside = inst.text.splitlines()[-1].split("[", 1)[1].split("]", 1)[0]
    regs = [t.split("*")[0].strip() for t in inside.split("+") if not t.strip()[:1].isdigit()]
    regs = regs[1:] if lea_parts(form.lea_mode)[0] else regs      # after the base, if any
    return regs[0] if regs else None


def _rotate(pool: list[int], counters: dict[str, int], cls: str, busy: set[int], last: bool = False) -> int | None:
    """The pool's next register (advancing its counter) whose full register is not in ``busy``;
    None when there is none, or with ``last`` the last one tried."""
    r = None
    for _ in range(len(pool)):
        r = pool[counters[cls] % len(pool)]
        counters[cls] += 1
        if full_register(r) not in busy:
            return r
    return r if last else None


def balanced_count(form: Form, instances: list[Instance]) -> int:
    """How many of ``instances`` (independent copies, repeated back to back) to use so that every
    written register is written equally often.  Copies reach the same register again once the
    pool is used up, so the busiest register sets a floor of (its writes x the form's latency)
    per repetition: 16 copies over MMX's 7 registers write one of them 3 times (pavgb mm, mm,
    latency 2: 0.375 cycles per copy), 14 copies write each twice (0.29, uops.info's figure,
    whose copies are as many as the distinct registers).  The count with the lowest floor per
    copy among the last half is kept (the larger on a tie)."""
    if len(instances) < 2 or not any(op.kind == "reg" and op.write and not op.fixed for op in form.operands):
        return len(instances)
    best, best_floor = len(instances), None
    for k in range(len(instances), (len(instances) + 1) // 2 - 1, -1):
        floor = busiest(form, instances[:k]) / k
        if best_floor is None or floor < best_floor - 1e-9:
            best, best_floor = k, floor
    return best


def busiest(form: Form, instances: list[Instance]) -> int:
    """The most writes of one register among ``instances`` (through the form's register operands,
    not fixed ones): repeated back to back, that register's chain takes this many latencies."""
    counts: dict[int, int] = {}
    for inst in instances:
        for r in written_registers(form, inst):
            counts[r] = counts.get(r, 0) + 1
    return max(counts.values(), default=0)


def written_registers(form: Form, inst: Instance) -> set[int]:
    """The full registers ``inst`` writes through the form's register operands (not fixed ones)."""
    return {full_register(register_id(inst.regs[op.pos])) for op in form.operands
            if op.kind == "reg" and op.write and not op.fixed and op.pos in inst.regs}


def until_repeat(form: Form, instances: list[Instance]) -> int:
    """How many of ``instances`` come before the first whose written register an earlier one
    wrote: uops.info's copy count (cpuBench.py stops where no unused register is left)."""
    seen: set[int] = set()
    for k, inst in enumerate(instances):
        regs = written_registers(form, inst)
        if regs & seen:
            return k
        seen |= regs
    return len(instances)
