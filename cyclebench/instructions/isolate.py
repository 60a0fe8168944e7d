"""Dependency breakers that leave one latency pair's chain alone in its loop (uops.info's method).

A chain for the pair ``start -> end`` repeats the form, so every other operand the form reads and
writes (``xadd ebx, ecx``: ebx when the pair is ecx -> ecx; the flags of ``rcr``; a read-written
memory operand) carries a chain of its own through the same loop, and the loop runs at the slower
of them.  uops.info measures each pair a second time with an instruction after the chain that
breaks every such other operand, and keeps the lower figure (nanoBench
``tools/cpuBench/cpuBench.py``, ``getDependencyBreakingInstrs``: ``MOV reg, 0`` at the operand's
own width, which keeps the flags; a vector zero idiom; ``TEST`` for the flags; ``MOV [m], 0``).
An 8- or 16-bit register is written at 32 bits here: a narrow write merges (_register_breaker).
It has no such configuration for divide and square-root forms (their own chains) or gathers and
scatters, and neither does this module.

A pair whose chain then runs faster than any dependency has no dependency: uops.info reads such a
loop as ``int(cycles + .2) - chain``, 0 (``XADD (R32, R32)``, ecx -> ecx: ``[0;1]``).
"""
from __future__ import annotations

from . import connectors as C
from .forms import Form, divide_or_sqrt, flags_in, read_and_written
from .instantiate import Instance, LatencyPair

INDEPENDENT = "no dependency once the other operands' chains are broken"
_SIZE = {8: "byte", 16: "word", 32: "dword", 64: "qword"}


def _full(reg: str) -> str:
    """A register's name at full width, for comparing (``bl`` and ``rbx`` are one register)."""
    try:
        port = C.port_for_register(reg)
    except KeyError:
        return reg
    return C.gpr(reg) if port.kind == "GPR" else (C.vec(reg, 512) if port.kind == "VEC" else reg.lower())


def _start_registers(form: Form, inst: Instance, pair: LatencyPair) -> set[str]:
    """The registers the pair starts from: the only ones left unbroken.  The end's own chain
    through the form is broken too (after the connector has read it), as uops.info does: it
    skips only the start operand (``getLatencies``), so ``flags -> op0`` of ``shrd eax, ebx,
    cl`` reads 0 where eax's own chain would otherwise set the pace."""
    ref = pair.start
    if ref.kind == "op" and ref.pos in inst.regs:
        return {_full(inst.regs[ref.pos])}
    if ref.kind == "implicit" and ref.register:
        return {_full(ref.register)}
    return set()


def _is_gpr(reg: str) -> bool:
    try:
        return C.port_for_register(reg).kind == "GPR"
    except KeyError:
        return False


def _register_breaker(form: Form, reg: str, shared: frozenset[str] = frozenset()) -> str | None:
    """``shared``: full registers that also hold another operand (``ch`` beside ``cl``)."""
    port = C.port_for_register(reg)
    if port.kind == "GPR":
        if C.gpr(reg) in ("rsp", "rbp", C.MEM_BASE):
            return None
        # an 8- or 16-bit write merges into the old value (Zen 4: `shl bl, cl; mov bl, 0` 2.00
        # cycles a copy, `mov ebx, 0` 0.50): only a 32-bit write breaks, unless it clobbers another operand
        wide = port.bits < 32 and C.gpr(reg) not in shared
        return f"mov {C.gpr(reg, 32) if wide else reg}, 0"
    if port.kind == "VEC":
        bits = port.bits
        if form.encoding == "VEX" and bits == 512:
            reg, bits = C.vec(reg, 256), 256    # a VEX form runs without AVX-512: a VEX zero idiom clears zmm too
        if form.encoding in ("VEX", "EVEX"):
            zero = "vpxord" if bits == 512 or int("".join(c for c in reg if c.isdigit())) >= 16 else "vpxor"
            return f"{zero} {reg}, {reg}, {reg}"
        return f"pxor {reg}, {reg}"
    if port.kind == "MM":
        return f"pxor {reg}, {reg}"
    return None


def _flags_kept(form: Form) -> bool:
    """A count of 0 leaves the flags that the opcode writes with any other count (``rcl word [m],
    0``): XED's operand model lists them as conditionally written, an input, so uops.info breaks
    them after the chain like any other read-written operand.  Zen 4 keeps a false dependency on
    them: ``rcl word ptr [r14+0x40], 0`` alone 9.40 cycles a copy, 8.00 with ``test r13, r13``
    after it (published 8)."""
    return bool(form.flags_if_counted) and not form.flags_written


def breakers(form: Form, inst: Instance, pair: LatencyPair, mem: str | None, used: set[str]) -> list[str]:
    """Instructions to put after the chain that break every read-and-written operand of ``form``
    other than the pair's start (empty: nothing else is carried, or the form is excluded)."""
    head = form.mnemonic.upper()
    if divide_or_sqrt(head) or "GATHER" in head or "SCATTER" in head:
        return []
    kept = _start_registers(form, inst, pair)
    out: list[str] = []
    for op in form.operands:
        if op.kind != "reg" or not (op.read and op.write) or op.is_mask or op.pos not in inst.regs:
            continue
        reg = inst.regs[op.pos]
        if _full(reg) in kept:
            continue
        shared = frozenset(_full(r) for pos, r in inst.regs.items() if pos != op.pos and r != reg)
        line = _register_breaker(form, reg, shared)
        if line and line not in out:
            out.append(line)
    # an implicit register read and written, under one name or two (cmpxchg r32: eax read, rax written)
    for name in read_and_written((i.register, i.read, i.write) for i in form.implicit).values():
        # a pointer the form reads memory through (string operations' rsi/rdi) must keep its value
        if (form.implicit_memory and _is_gpr(name)) or _full(name) in kept:
            continue
        try:
            line = _register_breaker(form, name, frozenset(_full(r) for r in inst.regs.values()) - {_full(name)})
        except KeyError:
            line = None
        if line and line not in out:
            out.append(line)
    memory = form.memory_operand
    on_memory = pair.start.kind == "mem" or (pair.start.kind == "addr" and pair.end.kind == "mem")
    if memory is not None and memory.read and memory.write and not on_memory and mem and memory.bits in _SIZE:
        out.append(f"mov {_SIZE[memory.bits]} ptr {mem}, 0")
    if (flags_in(form) and form.flags_written or _flags_kept(form)) and pair.start.kind != "flags":
        t = C.scratch_gpr(set(used))
        out.append(f"test {t}, {t}")        # reads a register nothing writes: the flags carry nothing
    return out
