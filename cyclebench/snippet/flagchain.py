"""Whether code, run copy after copy, carries a chain through the flags from one copy to the next.

A measurement loop that ends with ``dec``/``jnz`` writes the flags between iterations; where the
flags a copy starts from depend on the flags an earlier copy started from, that end cuts a chain
(harness/loopend.py). :func:`flag_masks` and :func:`carries_flags` are the quick test (a flag read
before it is written and written later; kept with each decoded instruction in the cache), and
:func:`flag_chain` the exact one for code that passes it: a taint carried copy after copy from the
flags at a copy's start, through registers (a write of 8 or 16 bits, a legacy-SSE write, a
conditional move keep the rest of the register), the flags and memory (one place: any read after a
tainted write is tainted). A ``setcc`` before a compare that writes the flags from other inputs is
no chain, and its figures stay as ``dec``/``jnz`` measures them (Zen 4: such mixes read 10-29%
apart with the other loop end, by layout alone).
"""
from __future__ import annotations

import functools

# A count in CL may be 0, and then these leave the flags as they were: the flags pass through.
_BY_CL = {"SHL", "SAL", "SHR", "SAR", "ROL", "ROR", "RCL", "RCR", "SHLD", "SHRD"}
COPIES = 16          # copies followed before a taint that has not come back is given up


@functools.lru_cache(maxsize=1)
def _by_cl() -> frozenset:
    """_BY_CL as iced-x86 mnemonics, looked up once rather than once an instruction (two
    prepare() calls of 65536 NOPs each took 1.5 s of CPU, 0.53 s with this)."""
    import iced_x86
    return frozenset(getattr(iced_x86.Mnemonic, m) for m in _BY_CL)


def flag_masks(ins) -> tuple[int, int]:
    """(flags read, flags written) of one iced-x86 instruction."""
    import iced_x86
    read, written = ins.rflags_read, ins.rflags_modified
    if ins.mnemonic in _by_cl() and any(ins.op_kind(k) == iced_x86.OpKind.REGISTER
                                     and ins.op_register(k) == iced_x86.Register.CL for k in range(ins.op_count)):
        read |= written
    return read, written


def _live(masks) -> int:
    """The flags read before they are written and written later, from (read, written) masks."""
    written = live = 0
    for read, wrote in masks:
        live |= read & ~written
        written |= wrote
    return live & written


def carries_flags(masks) -> bool:
    """The quick test on (read, written) flag masks in program order: a flag read before it is
    written and written later. Necessary for a chain, not sufficient (:func:`flag_chain`)."""
    return bool(_live(masks))


def _effects(ins, info, iced_x86):
    """(registers read, registers written whole, registers merged, reads memory, writes memory)."""
    X, A = iced_x86.RegisterExt, iced_x86.OpAccess
    reads, whole, merged = set(), set(), set()
    legacy_vec = ins.encoding == iced_x86.EncodingKind.LEGACY
    for u in info.used_registers():
        reg, acc = u.register, u.access
        full = X.full_register(reg)
        if acc in (A.READ, A.COND_READ, A.READ_WRITE, A.READ_COND_WRITE):
            reads.add(full)
        if acc in (A.WRITE, A.COND_WRITE, A.READ_WRITE, A.READ_COND_WRITE):
            partial = (X.is_gpr8(reg) or X.is_gpr16(reg) or (X.is_vector_register(reg) and legacy_vec)
                       or acc in (A.COND_WRITE, A.READ_COND_WRITE))
            (merged if partial else whole).add(full)
    for m in info.used_memory():
        for r in (m.base, m.index):
            if r != iced_x86.Register.NONE:
                reads.add(X.full_register(r))
    mem = [m.access for m in info.used_memory()]
    return (reads, whole, merged, any(a in (A.READ, A.COND_READ, A.READ_WRITE, A.READ_COND_WRITE) for a in mem),
            any(a in (A.WRITE, A.COND_WRITE, A.READ_WRITE, A.READ_COND_WRITE) for a in mem))


def flag_chain(code: bytes) -> bool:
    """Whether the flags at the start of a copy of ``code`` (machine code) depend on the flags at
    the start of an earlier copy."""
    import iced_x86
    instrs = [i for i in iced_x86.Decoder(64, code) if i.code != iced_x86.Code.INVALID]
    masks = [flag_masks(i) for i in instrs]
    live = _live(masks)
    if not live:
        return False
    factory = iced_x86.InstructionInfoFactory()
    steps = [(_effects(i, factory.info(i), iced_x86), m) for i, m in zip(instrs, masks)]
    regs, flags, mem = frozenset(), live, False          # tainted at a copy's start
    seen = set()
    for _ in range(COPIES):
        r = set(regs)
        for (reads, whole, merged, mread, mwrite), (fread, fwrite) in steps:
            hit = bool(reads & r) or bool(fread & flags) or (mread and mem)
            if hit:
                r |= whole | merged
                flags |= fwrite
                mem = mem or mwrite
            else:
                r -= whole
                flags &= ~fwrite
        regs = frozenset(r)
        if flags & live:
            return True
        state = (regs, flags, mem)
        if state in seen or not (regs or flags or mem):
            return False
        seen.add(state)
    return False
