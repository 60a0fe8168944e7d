"""Immediates and displacements a dispatch group carries: measured, a bound on the front end.

An instruction's immediate and its memory operand's displacement travel with it to dispatch.  On
Zen 4 a dispatch group of the front end's six slots holds at most six such values, an instruction
with both (``cmp byte ptr [r14+0x48], 2``) or a 64-bit immediate counting two, and the groups are
cut in program order.  ``cyclebench asm --cpu 1``, cycles an iteration, each instruction's values
(docs/ports-findings.md, "Immediates and displacements a dispatch group carries"):

| block | values | cycles | resources |
| --- | --- | ---: | ---: |
| ``mov rdx, [r14+0x248]; cmp rcx, 0x12; cmp r11, 0x12; cmp byte ptr [r14+0x290], 2`` | 1 1 1 2 | 1.00 | 0.75 |
| the same with any of the five values left out (31 blocks) | 4 or fewer | 0.75 | 0.75 |
| three ``mov r64, imm64`` and ``vpshufd xmm, xmm, imm8`` / ``vpaddd`` | 2 2 2 1 / 2 2 2 0 | 1.33 / 1.00 | 0.75 |
| a load, two ``vpshufd``, two ``cmp r, imm``, ``mov r64, imm64`` / ``mov r64, r64`` | 1 1 1 1 1 2 / 1 1 1 1 1 0 | 1.20 / 1.00 | 1.00 |
| two loads, three ``cmp r, imm``, ``vpshufd`` (one value each) | 1 1 1 1 1 1 | 1.00 | 1.00 |

Six single values a group run at the full width; what costs is a two-value instruction that does
not fit beside the values before it, which then starts the next group.  Greedy groups reproduce
every row (:func:`groups`).  The value's size does not count (``0x12`` and ``0x12345``, ``+0x40``
and ``+0x290`` alike), nor the instruction's length.  An instruction of two slots (slots.py) is
not split between groups either: three ``vpaddd`` and ``lea rax, [rsi+rdi*8-0x1]`` read 1.00, not
the five slots' 0.83 (with ``[rsi+rdi*8]``, one slot, 0.75).

A group also holds a limited number of integer ALU operations (Zen 4: four, as many as its ALUs;
:func:`integer_alu` by operand shape), which shows where the values have cut the groups short:

| block | values | ALU | cycles |
| --- | --- | --- | ---: |
| ``mov r8, imm64; cmp r9, 0x12; cmp r10, 0x12; cmp r11, r12; mov r13, imm64; mov rax, imm64; mov rdx, [r14+0x40]`` | 2 1 1 0 2 2 1 | 6 | 2.00 |
| the same with ``vpaddd`` or an eliminated ``mov r11, r12`` for ``cmp r11, r12`` | 2 1 1 0 2 2 1 | 5 | 1.50 |

(six values a group alone say 1.50 for both).

An integer instruction the front end charges two slots (slots.py) and that reads no memory takes two
of those operations (:func:`alu_operations`), a load-op form of two slots one.  ``cyclebench asm
--cpu 1`` on Zen 4, cycles an iteration, beside the groups of four ALU operations each, with the
three-part ``lea`` as one operation and as two (``L`` = ``lea rsi, [r14+rcx*8+0x40]``, two slots;
``A`` = ``add r64, 1``; ``C`` = ``cmovs r64, [m64]``, two slots):

| block | cycles | groups, ``L`` one | groups, ``L`` two |
| --- | ---: | ---: | ---: |
| ``L A A A`` | 1.33 | 1.00 | 1.33 |
| ``L A A A A A`` | 2.00 | 1.50 | 2.00 |
| ``L A L A`` | 2.00 | 1.00 | 2.00 |
| ``L L A``; ``L L`` | 1.50; 1.00 | 1.00; 0.67 | 1.50; 1.00 |
| ``C C A A`` (``C`` one operation) | 1.00 | 1.00 | 1.00 |

(``C A A A A`` reads 1.50, its groups 1.25 either way: not this.)

:func:`probe` times two blocks that a six-value group sets and their twins without values;
:func:`cap` keeps the group's capacity that predicts both within :data:`NEAR`, where the blocks
run slower than their twins by :data:`SLOWER` (a core without such a limit keeps none and predicts as
before).  It times the seven-instruction block of the ALU table and its ``vpaddd`` twin too: :func:`alu_cap` keeps
the least ALU operations a group whose groups put both within :data:`NEAR`, none where the block
runs within :data:`SLOWER` of its twin (a record without it: no such limit, groups as before).
``cyclebench ports`` keeps them as a record of type ``fields``; the predictor bounds an iteration
by its groups, each instruction at the slots the front end charges it (:class:`FieldBound`).
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from .bound import Bound
from .dataflow import zero_idiom

RECORD = "fields"
LABEL = "dispatch groups cut by slots and immediate and displacement values, and ALU operations (fields.py)"
NEAR = 0.05          # a probe block within this of the groups' figure fits a capacity
SLOWER = 0.10        # the probe blocks must run this much slower than their twins to show a limit
CAPS = range(3, 13)  # capacities tried
ALU_CAPS = range(2, 9)   # ALU operations a group, tried
FIELDS = ("cap", "alus")  # run.record measures a record without these again

_IMM = {iced_x86.OpKind.IMMEDIATE8, iced_x86.OpKind.IMMEDIATE16, iced_x86.OpKind.IMMEDIATE32,
        iced_x86.OpKind.IMMEDIATE8TO16, iced_x86.OpKind.IMMEDIATE8TO32, iced_x86.OpKind.IMMEDIATE8TO64,
        iced_x86.OpKind.IMMEDIATE32TO64, iced_x86.OpKind.IMMEDIATE8_2ND}


def values(ins: iced_x86.Instruction) -> int:
    """Immediate and displacement values the instruction carries (a 64-bit immediate counts two;
    an implied shift count of 1 and a NOP none)."""
    if ins.mnemonic == iced_x86.Mnemonic.NOP:
        return 0
    info = iced_x86.OpCodeInfo(ins.code)
    n = 0
    for i in range(ins.op_count):
        k = ins.op_kind(i)
        if k == iced_x86.OpKind.IMMEDIATE64:
            n += 2
        elif k in _IMM and info.op_kind(i) != iced_x86.OpCodeOperandKind.IMM8_CONST_1:
            n += 1
        elif k == iced_x86.OpKind.MEMORY and ins.memory_displ_size:
            n += 1
    return n


_MOVES = {iced_x86.Mnemonic.MOV, iced_x86.Mnemonic.MOVZX, iced_x86.Mnemonic.MOVSX, iced_x86.Mnemonic.MOVSXD}


def integer_alu(ins: iced_x86.Instruction) -> bool:
    """Whether the instruction takes an integer ALU operation: no vector or mask register operand,
    no NOP or zero idiom (the renamer's), no plain load or store and no register-to-register
    ``mov`` (renamed away)."""
    if ins.mnemonic == iced_x86.Mnemonic.NOP or zero_idiom(ins):
        return False
    kinds = [ins.op_kind(i) for i in range(ins.op_count)]
    if any(k == iced_x86.OpKind.REGISTER and not iced_x86.RegisterExt.is_gpr(ins.op_register(i))
           for i, k in enumerate(kinds)):
        return False
    if ins.mnemonic in _MOVES:
        return iced_x86.OpKind.MEMORY not in kinds and not (
            ins.mnemonic == iced_x86.Mnemonic.MOV and kinds[1] == iced_x86.OpKind.REGISTER)
    return True


def alu_operations(ins: iced_x86.Instruction, slots: float) -> int:
    """The integer ALU operations the instruction takes in a group, at ``slots`` dispatch slots: one
    a slot where it reads and writes no memory (a slot is a µop), one where it loads or stores
    (its other slot is the memory access), none where :func:`integer_alu` says so."""
    if not integer_alu(ins):
        return 0
    if ins.mnemonic != iced_x86.Mnemonic.LEA and any(
            ins.op_kind(i) == iced_x86.OpKind.MEMORY for i in range(ins.op_count)):
        return 1
    return max(1, round(slots))


def groups(weights: list[int], slots: list[float], cap: int, width: int = 6,
           alu: list[int] | None = None, alus: int | None = None) -> float:
    """Dispatch groups an iteration of the repeated block takes in the steady state: each group
    at most ``width`` slots, ``cap`` values and (given) ``alus`` integer ALU operations, cut
    greedily in program order (``weights``: each instruction's values, ``slots``: its dispatch
    slots, ``alu``: its integer ALU operations, :func:`alu_operations`).  A group's cut depends
    only on where in the block it starts, so the first start seen twice closes the cycle."""
    n = len(weights)
    if not n or not any(slots):
        return 0.0
    seen: dict[int, tuple[int, int]] = {}       # start within the block -> (groups, start) then
    i = count = 0
    while i % n not in seen:
        seen[i % n] = (count, i)
        used = taken = ints = 0.0
        k = i
        while (taken + slots[k % n] <= width + 1e-9 and used + weights[k % n] <= cap
               and (not alus or ints + alu[k % n] <= alus)):
            used += weights[k % n]
            taken += slots[k % n]
            ints += alu[k % n] if alus else 0
            k += 1
        i = max(k, i + 1)            # an instruction over the cap alone still takes a group
        count += 1
    c0, i0 = seen[i % n]
    return (count - c0) / ((i - i0) / n)


@dataclass(frozen=True)
class FieldBound(Bound):
    """The cycles an iteration's dispatch groups take where a group carries at most ``cap``
    values and ``alus`` integer ALU operations (None: no such limit measured; predict.Loaded.bounds;
    predict() calls :meth:`dispatch` with the slots it charges)."""
    cap: int
    width: int
    alus: int | None = None
    resources: frozenset[str] = frozenset()   # resources the groups stand for (values_resources): not charged

    def grouped(self, instructions: list[iced_x86.Instruction], slots: list[float]) -> float:
        """The groups an iteration takes, ``slots`` each instruction's dispatch slots."""
        return groups([values(ins) for ins in instructions], slots, self.cap, self.width,
                      [alu_operations(ins, s) for ins, s in zip(instructions, slots)], self.alus)

    def describe(self) -> str:
        return (f"a dispatch group of {self.width} slots holds at most {self.cap} immediate and displacement values"
                + (f" and {self.alus} integer ALU operations" if self.alus else ""))

    def dispatch(self, instructions: list[iced_x86.Instruction], slots: list[float]) -> tuple[float, str]:
        return self.grouped(instructions, slots), LABEL

    def stands_for(self) -> frozenset[str]:
        return self.resources


def values_resources(model, bound: FieldBound, catalogue, decode, form_of) -> frozenset[str]:
    """The resources whose blocker the groups time alone: the values cut its groups (slower by
    :data:`SLOWER` than with no values) and they give its time alone within :data:`NEAR`.  The solve
    read that limit as a resource (Zen 4: ``mov r64, imm64``, three a group, 0.33 a copy) and
    gave other forms shares of it from pairs the groups set; the bound charges the groups
    themselves.  Each blocker's copies as the solve measured them (mixes.mix_code), ``decode`` and
    ``form_of`` as the predictor's, at the slots it charges."""
    from .mixes import NotMixable, mix_code      # the solve's code, only where a record asks
    from .slots import share
    out = set()
    for r, b in model.probes.items():
        alone, form = model.alone.get(b), catalogue.get(b)
        if not alone or form is None:
            continue
        try:
            ins = decode("\n".join(mix_code({b: form}, {b: 1})[0]))
        except NotMixable:
            continue
        sl = [round(share(model, f) * model.width, 3) if (f := form_of(i, catalogue, model)) in model.usage else 1.0
              for i in ins]
        alu = [alu_operations(i, s) for i, s in zip(ins, sl)]
        cut = bound.grouped(ins, sl) / len(ins)
        free = groups([0] * len(ins), sl, bound.cap, bound.width, alu, bound.alus) / len(ins)
        if cut > free * (1 + SLOWER) and abs(cut - alone) <= NEAR * alone:
            out.add(r)
    return frozenset(out)


BLOCKS = {
    # three 64-bit immediates and a vector shuffle's imm8: 2 2 2 1
    "wide": ["mov r8, 0x123456789", "mov r9, 0x123456789", "mov r10, 0x123456789",
             "vpshufd xmm1, xmm2, 0x1b"],
    "wide twin": ["cmp r8, r12", "cmp r9, r12", "cmp r10, r12", "vpaddd xmm1, xmm2, xmm3"],
    # five single values and a 64-bit immediate: 1 1 1 1 1 2
    "mixed": ["vpshufd xmm1, xmm2, 0x1b", "vpshufd xmm5, xmm2, 0x1b", "cmp r8, 0x12", "cmp r9, 0x12",
              "cmp r10, 0x12", "mov r11, 0x123456789"],
    "mixed twin": ["vpaddd xmm1, xmm2, xmm3", "vpaddd xmm5, xmm2, xmm3", "cmp r8, r12", "cmp r9, r12",
                   "cmp r10, r12", "mov r11, r12"],
    # six integer ALU operations among seven values-cut instructions: 2 1 1 0 2 2 1
    "alus": ["mov r8, 0x123456789", "cmp r9, 0x12", "cmp r10, 0x12", "cmp r11, r12", "mov r13, 0x123456789",
             "mov rax, 0x123456789", "mov rdx, [r14+0x40]"],
    "alus twin": ["mov r8, 0x123456789", "cmp r9, 0x12", "cmp r10, 0x12", "vpaddd xmm1, xmm2, xmm3",
                  "mov r13, 0x123456789", "mov rax, 0x123456789", "mov rdx, [r14+0x40]"],
}
WEIGHTS = {"wide": [2, 2, 2, 1], "mixed": [1, 1, 1, 1, 1, 2]}
ALUS = {"alus": ([2, 1, 1, 0, 2, 2, 1], [1, 1, 1, 1, 1, 1, 0]),        # (values, ALU operations)
        "alus twin": ([2, 1, 1, 0, 2, 2, 1], [1, 1, 1, 0, 1, 1, 0])}


def cap(times: dict[str, float], width: int = 6) -> int | None:
    """The values a group holds from the probe's times (cycles an iteration, keyed as
    :data:`BLOCKS`): the least capacity whose groups, or the twin where it is slower, put both
    blocks within :data:`NEAR`; None where a block runs within :data:`SLOWER` of its twin."""
    if any(times[b] < times[f"{b} twin"] * (1 + SLOWER) for b in WEIGHTS):
        return None
    for c in CAPS:
        if all(abs(max(times[f"{b} twin"], groups(w, [1.0] * len(w), c, width)) - times[b]) <= NEAR * times[b]
               for b, w in WEIGHTS.items()):
            return c
    return None


def alu_cap(times: dict[str, float], values_cap: int | None, width: int = 6) -> int | None:
    """The integer ALU operations a group holds from the probe's times (:data:`ALUS`' blocks): the
    least whose groups, at ``values_cap`` values a group, put the block and its twin within
    :data:`NEAR` (or the twin's time, where slower); None where the block runs within
    :data:`SLOWER` of its twin or no values capacity was found."""
    if values_cap is None or "alus" not in times or times["alus"] < times["alus twin"] * (1 + SLOWER):
        return None
    for a in ALU_CAPS:
        if all(abs(max(times["alus twin"] if b == "alus" else 0.0,
                       groups(w, [1.0] * len(w), values_cap, width, alu, a)) - times[b]) <= NEAR * times[b]
               for b, (w, alu) in ALUS.items()):
            return a
    return None


def probe(session) -> dict:
    """The capacities measured on this CPU (``session``: an instructions.session.Session), as the
    record {"type": "fields", "cap", "alus", "times"}."""
    times = {k: session.measure(code, []).value for k, code in BLOCKS.items()}
    c = cap(times)
    return {"type": RECORD, "cap": c, "alus": alu_cap(times, c),
            "times": {k: round(v, 3) for k, v in times.items()}}


def stored(path, width: int) -> tuple[FieldBound | None, str]:
    """(the bound of a results file's ``fields`` record, where it came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no dispatch-values probe"
    t = r.get("times") or {}
    if not r.get("cap") or not width:
        return None, f"measured by cyclebench ports: no limit ({t.get('wide')} cycles, twin {t.get('wide twin')})"
    alus = r.get("alus")
    return FieldBound(int(r["cap"]), width, int(alus) if alus else None), (
        f"measured by cyclebench ports: {r['cap']} values a group ({t.get('wide')} and {t.get('mixed')} cycles)"
        + (f", {alus} integer ALU operations ({t.get('alus')} cycles, twin {t.get('alus twin')})" if alus else
           ", no limit of ALU operations measured"))
