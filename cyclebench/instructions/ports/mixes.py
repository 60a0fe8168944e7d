"""Interference measurements: a form alone and mixed with another in a given ratio.

A mix of ``a`` instances of form A and ``b`` of form B is repeated until it holds at least
:data:`MIN_INSTANCES` instructions and :data:`MIN_COPIES` copies of each form (see
:func:`repeats`), A and B interleaved evenly.  Each form's copies come from
:func:`copies.independent_copies` (written registers rotate); A's copies pick their
registers from one half of every register pool and B's from the other half, and neither picks
the other's implicit or fixed registers; B's memory operands address another part of the data
area (a load of one form and a store of the other would otherwise chain through memory).  :func:`check_independent` then decodes the code with
iced-x86 and refuses any mix where one form reads a register the other writes (flags excepted
when only one side reads them: a dependency with no cycle cannot bound the throughput).
Forms whose own copies stay linked (``carried``: flags read and written, implicit registers,
read-modify-write memory) are not mixed: their breakers would take part in the mix.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import iced_x86

from ...errors import CycleBenchError
from ..forms import Form, lea_parts
from ..instantiate import instantiate, verified
from ..copies import LINE, bank_offset, busiest, independent_copies, no_banks, written_registers
from ..operands import EVEX_EXTRA, FAMILY, NEVER_PICK, POOLS, VECTOR_CLASSES, full_register
from ..session import Session, form_init

MIN_INSTANCES = 16
MIN_COPIES = 8                # of each form: its copies take their registers from half a pool
MAX_INSTANCES = 8 * 48
SECOND_AREA = 0x2140          # bytes from the first form's addresses; not a multiple of 4 KiB


class NotMixable(CycleBenchError):
    exit_code = 2


def _family_of() -> dict[int, str]:
    """Full register -> its family (GPR, VEC, K, MM...): registers that alias across widths."""
    out = {}
    for cls, pool in POOLS.items():
        for r in pool + EVEX_EXTRA.get(cls, ()):
            out.setdefault(full_register(r), FAMILY.get(cls, cls))
    return out


def _reach(form: Form) -> list[int]:
    """The full registers a form's copies may pick, in pool order (EVEX forms: the upper 16 too)."""
    out = []
    for op in form.operands:
        if op.kind != "reg" or op.fixed or op.is_mask or op.cls not in POOLS:
            continue
        pool = POOLS[op.cls] + (EVEX_EXTRA.get(op.cls, ()) if form.encoding in ("EVEX", "MVEX") else ())
        out += [f for f in map(full_register, pool) if f not in NEVER_PICK and f not in out]
    return out


def shares(a: Form, b: Form) -> tuple[frozenset, frozenset]:
    """The registers each of two mixed forms may pick.  A register only one of them can reach is
    its own (a legacy-SSE form beside an EVEX one keeps XMM0-15, the EVEX form takes XMM16-31; a
    family only one form uses is all its own); the ones both reach are dealt one at a time, in
    pool order, to the form that has fewer of that family so far; once each has one for each of
    its register operands, a form whose copies chain through their destinations (:func:`chains`)
    takes the rest from one that does not.  The fewer registers a form's copies rotate through,
    the longer the chain each register carries through an iteration (most forms read their
    destination): with half of 16 XMM registers, a 3-cycle form at 2 a cycle runs at 86% of its
    chain bound, and its mixes read slow; a Zen 1 FMA (5 cycles, 2 a cycle) needs 10.  A form
    that only writes its destination needs one: renaming keeps its copies apart."""
    fam = _family_of()
    ra = [r for r in _reach(a) if r not in _own_fixed(b)]
    rb = [r for r in _reach(b) if r not in _own_fixed(a)]
    got: tuple[set, set] = ({r for r in ra if r not in rb}, {r for r in rb if r not in ra})
    count: list[dict] = [{}, {}]
    for side, regs in enumerate(got):
        for r in regs:
            count[side][fam.get(r)] = count[side].get(fam.get(r), 0) + 1
    # a form's first instance picks its registers from the first 16 of a pool: each side first
    # gets as many of the shared ones as it has register operands
    need = [_operands(a), _operands(b)]
    chained = [chains(a), chains(b)]
    for r in (r for r in ra if r in rb):
        f = fam.get(r)
        want = [need[0].get(f, 0) > 0, need[1].get(f, 0) > 0]
        if not any(want) and chained[0] != chained[1]:
            want = chained
        if want[0] != want[1]:
            side = 0 if want[0] else 1
        else:
            side = 0 if count[0].get(f, 0) <= count[1].get(f, 0) else 1
        need[side][f] = need[side].get(f, 0) - 1
        got[side].add(r)
        count[side][f] = count[side].get(f, 0) + 1
    return frozenset(got[0]), frozenset(got[1])


def chains(form: Form) -> bool:
    """Whether a copy waits for the one before it that wrote the same register: a register operand
    read and written, a write mask (merging), a legacy vector write (it keeps the register's other
    bits, a scalar one merges them) or a write narrower than 32 bits (merged into the full
    register).  Only a form with none lets its copies share a destination."""
    if form.mask:
        return True
    for op in form.operands:
        if op.kind != "reg" or op.fixed or op.is_mask or not op.write:
            continue
        if op.read or (op.cls in VECTOR_CLASSES and form.encoding == "LEGACY") or op.bits < 32:
            return True
    return False


def _operands(form: Form) -> dict[str, int]:
    """Family -> how many registers the form picks: its register operands, and an LEA's index."""
    out: dict[str, int] = {}
    for op in form.operands:
        if op.kind == "reg" and not op.fixed and not op.is_mask and op.cls in POOLS:
            f = FAMILY.get(op.cls, op.cls)
            out[f] = out.get(f, 0) + 1
    if form.lea_mode and lea_parts(form.lea_mode)[1]:
        f = FAMILY.get("GPR64", "GPR64")
        out[f] = out.get(f, 0) + 1
    return out


def _own_fixed(form: Form) -> set[int]:
    """Registers a form names itself (implicit, fixed explicit, its write mask K1): the other form
    must not pick them."""
    out = {full_register(iced_x86.Register.K1)} if form.mask else set()
    for name in [i.register for i in form.implicit] + [op.fixed for op in form.operands if op.kind == "reg" and op.fixed]:
        try:
            out.add(full_register(getattr(iced_x86.Register, name.upper())))
        except (AttributeError, TypeError):
            pass
    return out


def legacy_sse(form: Form) -> bool:
    """A legacy-encoded form that writes an XMM register, named or implicit (``pcmpistrm`` writes
    XMM0): the write keeps the register's upper bits, so beside 256- or 512-bit work it waits for
    them (the upper vector state; Zen 3: seven ``pcmpistrm`` and seven ``vphsubd ymm`` 2,497 cycles).
    upper.legacy_xmm_write reads the same of a decoded instruction."""
    return form.encoding == "LEGACY" and (
        any(op.kind == "reg" and op.cls == "XMM" and op.write for op in form.operands)
        or any(i.write and i.register.startswith("xmm") for i in form.implicit))


def wide(form: Form) -> bool:
    """A form that names a 256- or 512-bit register (leaves upper vector state behind)."""
    return any(op.kind == "reg" and op.cls in ("YMM", "ZMM") for op in form.operands)


def upper_state_apart(a: Form, b: Form) -> bool:
    """A legacy-SSE form beside a 256- or 512-bit one: never mixed (:func:`mix_code`), since the
    mix measures the legacy write's wait for the upper vector state, not shared resources."""
    return (legacy_sse(a) and wide(b)) or (legacy_sse(b) and wide(a))


def mixable(form: Form) -> str | None:
    """Why ``form`` cannot be mixed (None when it can)."""
    if not form.offered:
        return form.reason
    if form.lock or form.implicit_memory:
        return "locked or implicit memory access"
    mem = form.memory_operand
    if mem is not None and mem.kind == "mem" and mem.write and mem.read:
        return "read-modify-write memory (copies chain through memory)"
    try:
        cps = independent_copies(form, 2)
    except (ValueError, KeyError, StopIteration) as e:
        return f"no independent copies: {e}"
    if cps.carried:
        return "copies stay linked through " + ", ".join(cps.carried)
    return None


def spread(counts: list[tuple[str, int]]) -> list[str]:
    """Names in an even interleaving: ``[(A, 1), (B, 3)]`` -> B A B B ..."""
    total = sum(n for _, n in counts)
    slots = []
    for name, n in counts:
        slots += [((i + 0.5) / n, name) for i in range(n)]
    return [name for _, name in sorted(slots)][:total]


def repeats(counts: dict[str, int]) -> int:
    """Units in the loop body: at least MIN_INSTANCES instructions, and at least MIN_COPIES of
    each form.  A copy's destination is also a source in most forms (x86's two-operand forms, the
    merging scalar SSE forms), so a form with one copy per loop iteration runs as a chain of its
    own latency: a divide among 24 other instructions reads 10 cycles, not its 3."""
    unit = sum(counts.values())
    return max(1, -(-MIN_INSTANCES // unit), -(-MIN_COPIES // min(counts.values())))


def balanced_repeats(forms: dict[str, Form], counts: dict[str, int], u: int, avoid) -> tuple[int, dict]:
    """(units in the loop body, each form's copies for the most units it may hold): the fewest
    units from ``u`` to three times it whose copies write each form's registers most evenly
    (copies.busiest per copy, the worst form's).  Copies reach a register again once their pool
    is used up, and a form that reads its destination waits for that register's previous write:
    16 Zen 1 FMAs (5 cycles) over 14 registers write two of them twice, 10 cycles per 16 (0.63
    a copy), where 14 or 28 run at their two a cycle."""
    names = list(counts)
    top = max(u, min(3 * u, MAX_INSTANCES // sum(counts.values())))
    if not any(chains(forms[n]) for n in names):
        top = u                 # copies that do not chain: any length serves
    made = {n: independent_copies(forms[n], top * counts[n], avoid=tuple(avoid[i])) for i, n in enumerate(names)}
    if top == u:
        return u, made

    def worst(k: int) -> float:
        return max(busiest(forms[n], made[n].instances[:k * counts[n]]) / (k * counts[n]) for n in names)
    return min(range(u, top + 1), key=lambda k: (round(worst(k), 9), k)), made


def mix_code(forms: dict[str, Form], counts: dict[str, int], lines: bool = False,
             upper: bool = False, only: str | None = None) -> tuple[list[str], list[str], int]:
    """(code lines, init lines, repeats of the unit) for a mix of one or two forms.  ``lines``
    (one form): each copy's memory operand on its own cache line, not all on one address.
    ``upper``: a legacy-SSE form may be mixed with a wide one (apart.probe reads that mix on
    purpose, beside its own timing of the legacy form under the same upper state).  ``only``:
    that form's copies of the mix and nothing else, on the registers the mix dealt them (its
    stream's own time in the mix: :func:`cut`)."""
    order, instances, init, u = _mix(forms, counts, lines, upper)
    if only is not None:
        instances = [i for n, i in zip(order, instances) if n == only]
    return [i.text for i in instances], init, u


def cut(forms: dict[str, Form], counts: dict[str, int]) -> list[str]:
    """The forms of a two-form mix whose copies chain (:func:`chains`) through registers of a
    family the other form takes some of, and whose busiest register carries more of their copies
    in the mix than alone (copies.busiest per copy): that register's chain of the form's own
    latency may then pace the mix, not its resources (two MMX forms share eight registers: Zen
    3's ``pmullw mm, mm``, 3 cycles, rotates through three of them beside ``punpckhwd mm, mm``
    and runs one a cycle, where alone it runs two).  Such a form's stream is measured alone on
    the mix's registers (``only``): a floor of the mix."""
    if len(counts) != 2:
        return []
    try:
        order, instances, _, _ = _mix(forms, counts)
    except CycleBenchError:         # a pair that cannot be mixed has no mix to pace
        return []
    fam = _family_of()
    out = []
    for name in counts:
        form = forms[name]
        if not chains(form):
            continue
        mine = [i for n, i in zip(order, instances) if n == name]
        theirs = set().union(*(set().union(*_access(i.encoding)) for n, i in zip(order, instances) if n != name))
        if not {fam.get(r) for i in mine for r in written_registers(form, i)} & {fam.get(r) for r in theirs}:
            continue
        _, alone, _, _ = _mix(forms, {name: counts[name]})
        if busiest(form, mine) / len(mine) > busiest(form, alone) / len(alone):
            out.append(name)
    return out


def _access(data: bytes) -> tuple[set, set]:
    """(full registers read, full registers written) by one encoded instruction."""
    ins = iced_x86.Decoder(64, data).decode()
    reads, writes = set(), set()
    for u in iced_x86.InstructionInfoFactory().info(ins).used_registers():
        full = full_register(u.register)
        if u.access in (iced_x86.OpAccess.READ, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_READ,
                        iced_x86.OpAccess.READ_COND_WRITE):
            reads.add(full)
        if u.access in (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_WRITE,
                        iced_x86.OpAccess.READ_COND_WRITE):
            writes.add(full)
    return reads, writes


def _mix(forms: dict[str, Form], counts: dict[str, int], lines: bool = False, upper: bool = False):
    """(the forms' names in code order, their instances, init lines, repeats of the unit)."""
    names = list(counts)
    if not 1 <= len(names) <= 2:
        raise NotMixable("a mix holds one or two forms", "give one form, or a form and a blocker")
    u = repeats(counts)
    if u * sum(counts.values()) > MAX_INSTANCES:
        raise NotMixable(f"the mix needs {u * sum(counts.values())} instructions (at most {MAX_INSTANCES})",
                         "use a smaller ratio")
    own = ()
    if len(names) == 2:
        a, b = forms[names[0]], forms[names[1]]
        if upper_state_apart(a, b) and not upper:
            raise NotMixable("a legacy-SSE form beside a 256- or 512-bit one waits for the upper vector state",
                             "such a mix measures that wait, not shared resources")
        own = shares(a, b)
    avoid = [set(), set()]
    if len(names) == 2:
        for i in range(2):
            other = forms[names[1 - i]]
            avoid[i] = (set(_reach(other)) - own[i]) | _own_fixed(other)
    u, made = balanced_repeats(forms, counts, u, avoid)
    copies, init = {}, []
    banks = no_banks()     # the first form's operand takes offset 0; the second the banks it leaves
    for i, name in enumerate(names):
        form = forms[name]
        cps = made[name]
        cps.instances = cps.instances[:u * counts[name]]
        instances = cps.instances
        mem = form.memory_operand if form.memory_operand is not None and form.memory_operand.kind == "mem" else None
        if lines and mem is not None:
            # each line's copy on banks of its own (copies.bank_offset)
            own_banks = no_banks()
            instances = [instantiate(form, regs=c.regs, displacement=LINE * (k + 1) + bank_offset(mem.bits // 8, own_banks))
                         for k, c in enumerate(instances)]
        if mem is not None and (lines or not _loads_only(mem)):   # loads: _banked
            off = bank_offset(mem.bits // 8, banks)
            if i == 1:
                # the second form's memory apart from the first's: a load of one and a store of the
                # other at one address would chain them through store forwarding; and on banks the
                # first's operand leaves free
                instances = [instantiate(form, regs=c.regs, displacement=SECOND_AREA + off) for c in instances]
        verified(instances)
        copies[name] = iter(instances)
        init += [s for s in form_init(form, cps.instances[0]) + cps.init if s not in init]
    order = spread([(n, u * counts[n]) for n in names])
    instances = _banked(forms, names, order, [next(copies[n]) for n in order], banks, lines)
    if len(names) == 2:
        check_independent([(n, i.encoding) for n, i in zip(order, instances)])
    return order, instances, init, u


def _loads_only(mem) -> bool:
    """A memory operand read and not written, of a known width within a line: its copies are
    spread over the L1 banks (:func:`_banked`)."""
    return mem.kind == "mem" and mem.read and not mem.write and bool(mem.bits) and mem.bits // 8 <= LINE


def _banked(forms: dict[str, Form], names: list[str], order: list[str], instances: list, used: list[int],
            lines: bool) -> list:
    """The mix's instances with each load-only memory operand (:func:`_loads_only`) on the banks
    the loads before it in program order use least (copies.bank_offset, ``used``: the banks the
    other forms' operands took), within its form's area (the second form's at
    :data:`SECOND_AREA`).  Loads of one 8-byte bank go two a cycle on an Emerald Rapids core,
    where different banks go three (docs/ports-findings.md, "Loads of one bank"): copies on one
    address would time the bank, not the load ports, and the block's own layout is the
    predictor's (load_banks.py)."""
    if lines:
        return instances
    used = list(used)
    out = []
    for name, inst in zip(order, instances):
        form = forms[name]
        mem = form.memory_operand
        if mem is not None and _loads_only(mem):
            area = SECOND_AREA if name == names[-1] and len(names) == 2 else LINE
            inst = instantiate(form, regs=inst.regs, displacement=area + bank_offset(mem.bits // 8, used))
            verified([inst])
        out.append(inst)
    return out


def check_independent(code: list[tuple[str, bytes]]) -> None:
    """Raise NotMixable when one form reads a register the other form writes."""
    reads: dict[str, set] = {}
    writes: dict[str, set] = {}
    for name, data in code:
        r, w = _access(data)
        reads.setdefault(name, set()).update(r)
        writes.setdefault(name, set()).update(w)
    names = list(reads.keys() | writes.keys())
    for a in names:
        for b in names:
            if a != b and reads.get(a, set()) & writes.get(b, set()):
                raise NotMixable(f"{a} reads a register {b} writes", "the two forms cannot be mixed independently")


@dataclass
class Reading:
    counts: dict[str, int]
    cycles: float | None          # per unit of the mix
    stable: bool | None
    error: str | None = None

    def to_json(self) -> dict:
        return {"counts": self.counts, "cycles": self.cycles, "stable": self.stable, "error": self.error}


def measure_mix(session: Session, forms: dict[str, Form], counts: dict[str, int], lines: bool = False,
                only: str | None = None) -> Reading:
    """Cycles per unit of the mix (``counts`` instances of each form), best of two runs; where
    the repetitions read two modes (measurement/stability.two_modes), the faster mode's level,
    which either run may have missed (so a re-measure reads the mix alike).  ``only``: that
    form's stream of the mix alone (mix_code)."""
    try:
        code, init, u = mix_code(forms, counts, lines, only=only)
        best = best_of_two(session, code, init, u)
    except CycleBenchError as e:
        return Reading(dict(counts), None, None, e.cause)
    if not _real(best):
        # B - A below nought: a disturbed A in both runs (flagged unstable), no time of the mix
        return Reading(dict(counts), None, False, "no positive figure in two runs (the host disturbed both)")
    return Reading(dict(counts), best.value, best.stable)


def _real(m) -> bool:
    """A measurement with a figure above nought (below it, an interrupt in A: flagged unstable)."""
    return m is not None and m.value is not None and m.value > 0


def _faster(m, best) -> bool:
    """Whether measurement ``m`` is the better run: one with no real figure is no run at all, and of
    two real ones the faster is the less disturbed."""
    if _real(m) != _real(best):
        return _real(m)
    return best is None or (_real(m) and m.value < best.value)


def best_of_two(session: Session, code: list[str], init: list[str], per: int):
    """The less disturbed of two measurements of ``code`` (an SMT sibling or the host only ever
    slows code down), at the faster mode's level where a stable run read two modes."""
    best = None
    for _ in range(2):
        m = session.measure(code, init, per=per)
        if _faster(m, best):
            best = m
        if m.modes and m.stable and best.value is not None and 0 < m.modes[0] < best.value:
            best = replace(best, value=m.modes[0])
    return best


def trusted(records) -> list[dict]:
    """The reading records a model may rest on: a reading flagged unstable is set aside where the
    same forms have a stable reading in another ratio.  A disturbed run only ever reads slow, and
    the faster of two disturbed runs is still a floor above the truth: on Zen 3 ``vpshufhw`` beside
    two ``pmaxsw`` read 0.955 cycles unstable, a µop and four-fifths of the four FP pipes, while
    beside four it read 1.332 stable, a third; the one reading had made its one FP12 µop two.  A
    pair read unstable in every ratio keeps its readings: they are all there is."""
    records = [r for r in records if r.get("type") == "reading" and isinstance(r.get("counts"), dict)]
    steady = {frozenset(r["counts"]) for r in records if r.get("stable") is not False}
    return [r for r in records if r.get("stable") is not False or frozenset(r["counts"]) not in steady]
