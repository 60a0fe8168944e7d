"""The start state a block runs from, and what its memory accesses look like from it.

**Start state** (docs/block.md): every general register the block may use holds ``FILL``; so
does every 8 bytes of the one physical page that each page the block touches is mapped onto, so
a pointer loaded from memory is again ``FILL`` and lands in a mapped page. ``FILL`` is below
2**32 (a 32-bit load gives the same pointer), above the kernel's lowest mappable page, 64-byte
aligned, and has no zero byte (no 8/16/32-bit division by zero). Vector registers start at zero.
MXCSR has DAZ and FTZ set: ``FILL`` read as a double is a denormal, whose assists would
otherwise dominate floating-point blocks.

**Static address check**: the first copy's addresses are computed from the start state for
every access whose registers the block has not yet written (the others are counted as
unknown). From them: accesses that cross a 4 KiB page; a load and a store 4K-aliased (same
offset in a page, different addresses); accesses through different registers that meet at one
address because all registers start equal (a memory dependency the program may not have).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..snippet.features import GPRS, gpr_names as _names

FILL = 0x12345640
MXCSR = 0x9FC0            # default 0x1F80 (exceptions masked) + DAZ (bit 6) + FTZ (bit 15)
PAGE = 4096


@dataclass
class Access:
    index: int                # instruction number
    address: int | None       # None: computed from a register the block wrote before
    size: int
    write: bool
    read: bool
    expr: str                 # which registers form the address
    segment: str = ""         # fs/gs: the runner's own thread-local storage


def _writes(I) -> tuple:
    return (I.OpAccess.WRITE, I.OpAccess.READ_WRITE, I.OpAccess.COND_WRITE, I.OpAccess.READ_COND_WRITE)


def accesses(code, start: dict[str, int], follow: bool = False) -> list[Access]:
    """Every memory access of one copy (``code``: its bytes or decoded instructions), its address
    when it follows from ``start``; with ``follow``, through the registers that ``mov`` of an
    immediate or a known register and ``lea`` of a known address write too (:func:`_follows`)."""
    I, reg = _names()
    f = I.InstructionInfoFactory()
    known = dict(start)
    out = []
    writes = _writes(I)
    reads = (I.OpAccess.READ, I.OpAccess.READ_WRITE, I.OpAccess.COND_READ, I.OpAccess.READ_COND_WRITE)
    for n, ins in enumerate(I.Decoder(64, code) if isinstance(code, (bytes, bytearray)) else code):
        info = f.info(ins)
        for m in info.used_memory():
            if m.access == I.OpAccess.NO_MEM_ACCESS:
                continue
            size = I.MemorySizeExt.size(m.memory_size) or 1
            parts, addr = [], m.displacement
            for r, scale in ((m.base, 1), (m.index, m.scale)):
                if r == I.Register.NONE:
                    continue
                full = I.RegisterExt.full_register(r)
                name = reg.get(full)
                parts.append((name or "rip") + (f"*{scale}" if scale > 1 else ""))
                if name is None or name not in known:
                    addr = None
                elif addr is not None:
                    value = known[name] if I.RegisterExt.size(r) == 8 else known[name] & 0xFFFFFFFF
                    addr += value * scale
            seg = {I.Register.FS: "fs", I.Register.GS: "gs"}.get(m.segment, "")
            if seg:
                addr = None
            out.append(Access(n, None if addr is None else addr & (2**64 - 1), size,
                              m.access in writes, m.access in reads, "+".join(parts) or "absolute", seg))
        value = _follows(I, reg, ins, known) if follow else None
        for u in info.used_registers():
            full = I.RegisterExt.full_register(u.register)
            if full in reg and u.access in writes:
                known.pop(reg[full], None)
        if value is not None:
            known[value[0]] = value[1]
    return out


def _follows(I, reg, ins, known: dict[str, int]) -> tuple[str, int] | None:
    """(register, value) a 32- or 64-bit ``mov`` of an immediate or a known register, or ``lea``
    of a known address, writes; None for any other instruction or an unknown value."""
    if ins.op_count != 2 or ins.op0_kind != I.OpKind.REGISTER or I.RegisterExt.size(ins.op0_register) not in (4, 8):
        return None
    dest = reg.get(I.RegisterExt.full_register(ins.op0_register))
    value = None
    if ins.mnemonic == I.Mnemonic.LEA and ins.memory_base != I.Register.RIP:
        value = ins.memory_displacement
        for r, scale in ((ins.memory_base, 1), (ins.memory_index, ins.memory_index_scale)):
            if r == I.Register.NONE:
                continue
            name = reg.get(I.RegisterExt.full_register(r))
            if name not in known:
                return None
            value += (known[name] if I.RegisterExt.size(r) == 8 else known[name] & 0xFFFFFFFF) * scale
    elif ins.mnemonic == I.Mnemonic.MOV and ins.op1_kind == I.OpKind.REGISTER:
        name = reg.get(I.RegisterExt.full_register(ins.op1_register))
        value = known.get(name) if name else None
    elif ins.mnemonic == I.Mnemonic.MOV and ins.op1_kind in (I.OpKind.IMMEDIATE32, I.OpKind.IMMEDIATE64,
                                                             I.OpKind.IMMEDIATE32TO64):
        value = ins.immediate(1)
    if dest is None or value is None:
        return None
    return dest, value & (0xFFFFFFFF if I.RegisterExt.size(ins.op0_register) == 4 else 2**64 - 1)


def steady_state(code) -> list[Access]:
    """The accesses of every copy alike: the second copy's, its address kept where the third copy
    has it too (the block's loop reaches it every iteration), followed from the start state through
    the registers a ``mov`` or ``lea`` of known values writes (``lea rbx, [r14+0x38]``), None for
    the rest: an address names one place in every iteration."""
    I, _ = _names()
    ins = list(I.Decoder(64, code)) if isinstance(code, (bytes, bytearray)) else list(code)
    acc = accesses(ins * 3, {r: FILL for r in GPRS}, follow=True)
    per = len(acc) // 3
    second, third = acc[per:2 * per], acc[2 * per:]
    return [Access(a.index - len(ins), a.address if a.address == b.address else None, a.size, a.write, a.read,
                   a.expr, a.segment) for a, b in zip(second, third)]


def flags(acc: list[Access]) -> dict:
    """Page crossing, 4K aliasing and equal-register meetings among the known addresses."""
    known = [a for a in acc if a.address is not None]
    crossing = [a.index for a in known if a.address % PAGE + a.size > PAGE]
    alias4k, meet = [], []
    for i, x in enumerate(known):
        for y in known[i + 1:]:
            if not (x.write or y.write):
                continue
            overlap_page = (x.address % PAGE < y.address % PAGE + y.size and y.address % PAGE < x.address % PAGE + x.size)
            overlap = x.address < y.address + y.size and y.address < x.address + x.size
            if overlap_page and not overlap:
                alias4k.append((x.index, y.index))
            if overlap and x.expr != y.expr:
                meet.append((x.index, y.index))
    pages = sorted({a.address // PAGE for a in known} | {(a.address + a.size - 1) // PAGE for a in known})
    return {"accesses": len(acc), "loads": sum(a.read for a in acc), "stores": sum(a.write for a in acc),
            "unknown_addresses": len(acc) - len(known), "thread_local": sum(bool(a.segment) for a in acc),
            "page_crossing": crossing, "aliasing_4k": alias4k, "registers_meet": meet,
            "first_copy_pages": len(pages)}
