"""The data model of one instruction form, and building a concrete iced-x86 ``Instruction`` for it.

A *form* is an iced ``Code`` plus the choices that change what the CPU does but not the opcode:
register or memory for an r/m operand, EVEX merge/zero masking, embedded broadcast, EVEX embedded
rounding or exception suppression, a LOCK or REP prefix, high-byte registers, the ModRM.rm group
of a byte register, and for LEA the addressing mode.  ``Form.name`` is its uops.info-style name
(``VPADDQ_Z (ZMM, K, ZMM, ZMM)``); the catalogue makes names unique.

:func:`build` turns a form plus concrete choices (registers per operand, immediate values, memory
base/displacement) into an iced ``Instruction``; catalogue and instantiation both use it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import iced_x86
from iced_x86 import OpKind, Register

from .operands import POOLS, EVEX_EXTRA, NEVER_PICK, Slot, full_register, register_id, register_name


@dataclass(frozen=True)
class Operand:
    """One operand as it appears in the form's name, in order (the write mask comes second)."""

    pos: int                    # position in the name's operand list
    iced_index: int | None      # operand index in the iced Instruction (None: the write mask)
    kind: str                   # 'reg' | 'mem' | 'agen' | 'imm' | 'implicit_mem' | 'branch'
    cls: str                    # register class, 'MEM', 'IMM', 'BRANCH'
    bits: int                   # register width, memory size, immediate size (0: unknown)
    notation: str               # uops.info notation: R64, XMM, K, M64, M64_1to8, I8, AL, 1
    read: bool = False
    write: bool = False
    fixed: str | None = None    # fixed register name for operands like AL, CL, RAX, ST(0)
    slot: Slot | None = None

    @property
    def is_mask(self) -> bool:
        return self.iced_index is None


@dataclass(frozen=True)
class ImplicitOperand:
    """A register the instruction reads or writes that is not written in its operand list."""

    register: str               # 'rax', 'rdx', 'xmm0', 'rsp'
    read: bool
    write: bool


@dataclass
class Form:
    code: int
    code_name: str                      # iced Code name, e.g. IMUL_R64_RM64
    mnemonic: str                       # XED/uops.info style, e.g. CMOVNZ
    encoding: str                       # LEGACY, VEX, EVEX, XOP, 3DNOW, MVEX
    rm: str | None = None               # 'reg' | 'mem' | None (no r/m operand)
    mask: str | None = None             # None | 'merge' | 'zero'
    broadcast: bool = False
    lock: bool = False
    lea_mode: str | None = None         # LEA addressing (LEA_MODES): B, B_D8, B_IS_D32, R_D32, ...
    rounding: str | None = None         # EVEX register form with embedded rounding ('ER') or SAE ('SAE')
    rep: str | None = None              # string form with a REP ('REPE', F3) or REPNE (F2) prefix
    rm_group: int | None = None         # byte register in ModRM.rm: 0 (AL..BL, R8B..R11B) or 4
                                        # (SPL..DIL, R12B..R15B: a REX prefix), uops.info's _R0/_R4
    imm_zero: bool = False              # its 8-bit immediate is 0 (uops.info's "(R64, 0)" forms)
    taken: bool = False                 # a conditional branch run taken (flow.py): ``_TAKEN``
    high8: tuple[int, ...] = ()         # iced operand indices that are high-byte registers (AH..BH)
    operands: tuple[Operand, ...] = ()
    implicit: tuple[ImplicitOperand, ...] = ()
    implicit_memory: tuple[str, ...] = ()   # 'read'/'write' accesses through RSI/RDI/RBX/RSP...
    flags_read: frozenset[str] = frozenset()
    flags_written: frozenset[str] = frozenset()
    flags_if_counted: frozenset[str] = frozenset()  # imm_zero: the flags its immediate-count twin reads
                                        # or writes (XED's operand model, uops.info's, keeps them
                                        # for a count of 0: conditionally written, so an input)
    cpuid_features: tuple[str, ...] = ()
    instruction_string: str = ""        # iced's Intel-manual style, e.g. "IMUL r64, r/m64"
    op_code_string: str = ""            # e.g. "o64 0F AF /r"
    name: str = ""                      # uops.info-style name, unique within a catalogue
    base_name: str = ""                 # name before disambiguation suffixes
    skip_reason: str | None = None      # why it cannot be benchmarked safely
    unsupported: str | None = None      # why this CPU cannot run it
    notes: tuple[str, ...] = ()
    build_error: str | None = None
    _slots: tuple[Slot, ...] = field(default=(), repr=False)

    @property
    def offered(self) -> bool:
        """Runnable here and safe to benchmark."""
        return not self.skip_reason and not self.unsupported and not self.build_error

    @property
    def reason(self) -> str | None:
        """Why the form is not offered (None when it is)."""
        return self.skip_reason or self.build_error or self.unsupported

    def operand(self, pos: int) -> Operand:
        return self.operands[pos]

    @property
    def memory_operand(self) -> Operand | None:
        for op in self.operands:
            if op.kind in ("mem", "agen"):
                return op
        return None

    def __str__(self) -> str:
        return self.name


@dataclass
class Choices:
    """Concrete values for one instantiation: registers per operand position, etc."""

    regs: dict[int, int] = field(default_factory=dict)      # operand pos -> iced Register
    imms: dict[int, int] = field(default_factory=dict)      # operand pos -> value
    base: int = Register.R14
    index: int = Register.NONE
    scale: int = 1
    displacement: int = 64
    mask_reg: int = Register.K1


IMM_DEFAULTS = {8: 2, 16: 0x1234, 32: 0x12345, 64: 0x123456789}


def default_imm(slot: Slot) -> int:
    if slot.special == "const1":
        return 1
    if slot.special == "m2z":
        return 0
    return IMM_DEFAULTS[slot.bits]


# uops.info's addressing modes of an address computation: R (RIP), B (base), I (index), IS (index
# scaled by 8), D8/D32 (displacement); harmless for LEA, which computes the address only
LEA_MODES = ("B", "B_D8", "B_D32", "B_I", "B_I_D8", "B_I_D32", "B_IS", "B_IS_D8", "B_IS_D32",
             "I_D32", "IS_D32", "D32", "R_D32")
LEA_SCALE = 8


def lea_parts(mode: str) -> tuple[str | None, bool, int, int, int]:
    """(base: 'B'/'R'/None, has index, scale, displacement, its iced size) of an addressing mode."""
    parts = mode.split("_")
    base = parts[0] if parts[0] in ("B", "R") else None
    index = any(p in ("I", "IS") for p in parts)
    scale = LEA_SCALE if "IS" in parts else 1
    disp, dsize = (64, 1) if "D8" in parts else (0x1000, 8) if "D32" in parts else (0, 0)
    return base, index, scale, disp, dsize


def memory_base(form: Form) -> int:
    """The default memory base: R14 (the harness's data area), or RDI (pointing into its own area)
    where the form has a high-byte register, which no instruction with a REX prefix can name."""
    return Register.RDI if form.high8 else Register.R14


def pick_registers(form: Form, slots, avoid=frozenset(), fixed: dict[int, int] | None = None,
                   allow_upper=False) -> dict[int, int]:
    """Choose a register per register operand position: distinct architectural registers, none in
    ``avoid`` (full registers) or NEVER_PICK; ``fixed`` pre-assigns some positions."""
    regs = dict(fixed or {})
    used = set(NEVER_PICK) | set(avoid) | {full_register(r) for r in regs.values()}
    for op in form.operands:
        if op.is_mask or op.kind != "reg" or op.pos in regs:
            continue
        slot = slots[op.iced_index]
        if slot.fixed is not None:
            regs[op.pos] = slot.fixed
            continue
        pool = POOLS[op.cls]
        if allow_upper and form.encoding in ("EVEX", "MVEX") and op.cls in EVEX_EXTRA:
            pool = pool[:-1] + EVEX_EXTRA[op.cls] + pool[-1:]
        name = slot_name(slot)
        if name == "KP1_REG":
            pool = tuple(r for r in pool if (r - Register.K0) % 2 == 0)
        elif name.endswith("P3_VVVV"):
            pool = tuple(r for r in pool if (r - POOLS[op.cls][-1]) % 4 == 0)
        for r in pool:
            if full_register(r) not in used:
                regs[op.pos] = r
                used.add(full_register(r))
                break
        else:
            regs[op.pos] = pool[0]  # class exhausted: reuse (only with absurd copy counts)
    return regs


def slot_name(slot: Slot) -> str:
    return slot.name


def build(form: Form, choices: Choices) -> iced_x86.Instruction:
    """A concrete iced Instruction for ``form`` with ``choices``. Raises ValueError on nonsense."""
    ins = iced_x86.Instruction()
    ins.code = form.code
    ins.code_size = iced_x86.CodeSize.CODE64
    imm_seen = False
    for op in form.operands:
        if op.is_mask:
            continue
        i = op.iced_index
        slot = form._slots[i]
        if op.kind == "reg":
            ins.set_op_kind(i, OpKind.REGISTER)
            ins.set_op_register(i, choices.regs[op.pos])
        elif op.kind in ("mem", "agen"):
            ins.set_op_kind(i, OpKind.MEMORY)
            if slot.special == "moffs":
                ins.memory_displ_size = 8
                ins.memory_displacement = 0x1000
                continue
            base, index, disp, dsize = choices.base, choices.index, choices.displacement, 1
            scale = choices.scale
            if form.lea_mode:
                kind, has_index, scale, disp, dsize = lea_parts(form.lea_mode)
                base = {"B": base, "R": Register.RIP, None: Register.NONE}[kind]
                if not has_index:
                    index = Register.NONE
                if kind is None and dsize == 8:
                    dsize = 4      # [index*s+disp32] / [disp32]: a 32-bit displacement, no base
            elif disp == 0:
                dsize = 0
            elif not -128 <= disp < 128:
                dsize = 8  # iced's value for disp32 with 64-bit addressing
            if any(sl.name == "R32_REG_MEM" for sl in form._slots):
                base = iced_x86.RegisterInfo(base).full_register32  # 32-bit addressing forms
            ins.memory_base = base
            ins.memory_index = index
            ins.memory_index_scale = scale
            ins.memory_displacement = disp & 0xFFFFFFFFFFFFFFFF
            ins.memory_displ_size = dsize
        elif op.kind == "implicit_mem":
            kind = {"rsi": OpKind.MEMORY_SEG_RSI, "rdi": OpKind.MEMORY_SEG_RDI,
                    "es_rdi": OpKind.MEMORY_ESRDI, "xlat": OpKind.MEMORY}[slot.special]
            ins.set_op_kind(i, kind)
            if slot.special == "xlat":
                ins.memory_base = Register.RBX
                ins.memory_index = Register.AL
                ins.memory_index_scale = 1
        elif op.kind == "imm":
            value = choices.imms.get(op.pos, 0 if form.imm_zero else default_imm(slot))
            kind = slot.imm_kind
            if kind == OpKind.IMMEDIATE8 and imm_seen:
                kind = OpKind.IMMEDIATE8_2ND  # enter imm16, imm8; extrq xmm, imm8, imm8
            imm_seen = True
            ins.set_op_kind(i, kind)
            if kind == OpKind.IMMEDIATE8_2ND:
                ins.immediate8_2nd = value & 0xFF
            else:
                ins.set_immediate_u64(i, value & 0xFFFFFFFFFFFFFFFF)
        elif op.kind == "branch":
            name = slot.special
            if name.startswith("FARBR"):
                ins.set_op_kind(i, OpKind.FAR_BRANCH32 if name == "FARBR4_2" else OpKind.FAR_BRANCH16)
            elif name.startswith("BR16"):
                ins.set_op_kind(i, OpKind.NEAR_BRANCH16)
                ins.near_branch16 = 0
            elif name.startswith("BR32"):
                ins.set_op_kind(i, OpKind.NEAR_BRANCH32)
                ins.near_branch32 = 0
            else:
                ins.set_op_kind(i, OpKind.NEAR_BRANCH64)
                ins.near_branch64 = 0
        else:
            raise ValueError(f"unknown operand kind {op.kind}")
    if form.mask:
        ins.op_mask = choices.mask_reg
        ins.zeroing_masking = form.mask == "zero"
    if form.broadcast:
        ins.is_broadcast = True
    if form.lock:
        ins.has_lock_prefix = True
    if form.rounding == "ER":
        ins.rounding_control = iced_x86.RoundingControl.ROUND_TO_NEAREST
    elif form.rounding == "SAE":
        ins.suppress_all_exceptions = True
    if form.rep == "REPE":
        ins.has_rep_prefix = True
    elif form.rep == "REPNE":
        ins.has_repne_prefix = True
    return ins


def encode(ins: iced_x86.Instruction, ip: int = 0) -> bytes:
    enc = iced_x86.Encoder(64)
    enc.encode(ins, ip)
    return bytes(enc.take_buffer())


def divide_or_sqrt(name: str) -> bool:
    """uops.info's divide/square-root class (cpuBench's ``isDivOrSqrtInstr``: DIV or SQRT in the
    mnemonic), which it measures with chains and copies of its own; ``name`` a mnemonic or form name."""
    head = name.split(" (")[0].upper()
    return "DIV" in head or "SQRT" in head


_WIDE = {"ax": 16, "eax": 32, "rax": 64, "dx": 16, "edx": 32, "rdx": 64}


def divider_width(form: Form) -> int | None:
    """The divisor's width of an integer divider, else None: one read-only register or memory
    operand and a dividend twice as wide read from the accumulator pair, which is written
    (a multiply reads one accumulator as wide as its operand)."""
    ex = [op for op in form.operands if not op.is_mask]
    if len(ex) != 1 or ex[0].kind not in ("reg", "mem") or not ex[0].read or ex[0].write:
        return None
    read = sum(_WIDE.get(i.register, 0) for i in form.implicit if i.read)
    written = any(i.write and i.register in _WIDE for i in form.implicit)
    return ex[0].bits if written and ex[0].bits in (8, 16, 32, 64) and read == 2 * ex[0].bits else None


def read_and_written(registers) -> dict[str, str]:
    """Full register -> its widest name, of the registers among ``registers`` ((name, read, write)
    triples) that are read and written as one architectural register.  iced-x86 lists a register
    read under one name and written under another apart (``cmpxchg ebx, ecx`` reads eax and writes
    rax; ``mul cl`` reads al and writes ax), and it links one copy or chain step to the next as much
    as one read and written under one name."""
    seen: dict[str, list] = {}
    for name, read, write in registers:
        try:
            reg = register_id(name)
            full, size = register_name(full_register(reg)), iced_x86.RegisterInfo(reg).size
        except KeyError:
            full, size = name, 0
        entry = seen.setdefault(full, [False, False, name, size])
        entry[0] |= read
        entry[1] |= write
        if size > entry[3]:
            entry[2:] = [name, size]
    return {full: e[2] for full, e in seen.items() if e[0] and e[1]}


def flags_in(form: Form) -> bool:
    """Whether the flags are an input of the form: it reads them, or writes them only
    conditionally (a shift or rotate count in CL may be 0, which leaves them as they were: XED's
    ``MAY`` flags, an input in uops.info's operand model beside the written flags, unlike a
    constant count)."""
    return bool(form.flags_read) or (bool(form.flags_written)
                                     and any(op.fixed == "CL" and op.read for op in form.operands))


BIT_STRING = ("BT", "BTS", "BTR", "BTC")


def offsets_memory(form: Form, op: Operand) -> bool:
    """The register ``op`` is a bit offset into the form's memory operand: the bit-string forms
    (BT, BTS, BTR, BTC with a memory operand and a register offset) touch the byte at base +
    offset / 8, up to 2^31 bits away (Intel SDM, "bit base, bit offset"), so the register's value,
    not only the register, decides the address (uops.info: cpuBench's ``BT.*MEMv_GPRv`` chains
    clear it with ``AND reg, 0``)."""
    return (form.mnemonic in BIT_STRING and form.rm == "mem" and op.kind == "reg"
            and any(o.kind == "mem" for o in form.operands))
