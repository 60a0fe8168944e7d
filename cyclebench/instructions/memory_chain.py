"""uops.info's fill on memory chains: exact one-cycle steps between a pair's value and memory.

A store-forwarding round trip costs more or less by a few cycles with the distance between the
store and the load that reads it (Zen 4: ``vpsubw ymm1{k1}, ymm1, [m]; vmovdqu [m], ymm1`` reads
12.0 per link, with five ``vpand ymm1, ymm1, ymm1`` between them 16.0, i.e. 11 against 10 once
the fill is taken off).  uops.info always puts such a fill there (nanoBench
``tools/cpuBench/cpuBench.py``, ``getLatConfigsFromRegToMem``: ``cRep + 1`` vector ANDs or
``cRep`` ``MOVSX``) and keeps the least of its configurations; the pair is an upper bound either
way, so the least of the plain and the filled chain is too (characterize.measure_pair).
"""
from __future__ import annotations

import re

from .connectors import MEM_BASE, Connector, NoConnector, Port, gpr, port_for_register, scratch_gpr, vand, vec

FILL_VEC = 5        # uops.info's fill before a memory chain's store: cRep + 1 = 5 vector ANDs
FILL_GPR = 2        # ... and cRep = 4 one-cycle GPR steps (here two add/sub pairs)


def through_memory(conn: Connector) -> bool:
    """The connector closes the chain through a store and a load (a store-forwarding round trip)."""
    return any(s.startswith(("store_", "load_")) for s in conn.steps)


def filled(conn: Connector, end: Port, start: Port, used: set[str]) -> Connector | None:
    """``conn`` with a chain of exact one-cycle steps on the value before it goes to memory (or after
    it comes back), or None where no fill applies (mask, MMX, flags values)."""
    if not through_memory(conn) and start.kind != "ADDR":
        return None
    if start.kind == "ADDR" and conn.lines[-2:] == [f"add {MEM_BASE}, {_last_gpr(conn)}",
                                                   f"sub {MEM_BASE}, {_last_gpr(conn)}"]:
        g = _last_gpr(conn)
        extra = [f"add {MEM_BASE}, {g}", f"sub {MEM_BASE}, {g}"] * FILL_GPR
        return Connector(conn.lines + extra, conn.steps + ["alu"] * 2 * FILL_GPR, conn.init)
    store = start.kind == "MEM"
    # the register the value is in on the memory side: stored from, or loaded into
    line = conn.lines[-1] if store else conn.lines[0]
    reg = _register_of(line, store)
    near = end if store else start
    if not store and near.kind == "VEC" and reg is not None and conn.steps[0] in ("load_v256", "load_v512"):
        return _narrow_load(conn, near.reg)
    if near.kind == "VEC" and reg is not None:
        reg = near.reg                 # the whole register: a narrower AND would clear its upper lanes
    if reg is None:
        return None
    port = port_for_register(reg)
    if port.kind == "VEC":
        fill = [f"{vand(reg)} {reg}, {reg}, {reg}"] * FILL_VEC
        steps = [f"vand{port.bits}"] * FILL_VEC
    elif port.kind == "GPR" and store and end.kind == "GPR" and port_for_register(end.reg).bits in (8, 16):
        # the register the form wrote in part (BH: not BL, which the store names)
        return _narrow_store(conn, end.reg, port.bits, used)
    elif port.kind == "GPR":
        g = gpr(reg)
        t = scratch_gpr(set(used) | {g} | {_full_name(r) for ln in conn.lines for r in _GPRS.findall(ln)})
        fill = [f"add {g}, {t}", f"sub {g}, {t}"] * FILL_GPR
        steps = ["alu"] * 2 * FILL_GPR
    else:
        return None
    if store:
        return Connector(conn.lines[:-1] + fill + conn.lines[-1:], conn.steps[:-1] + steps + conn.steps[-1:],
                         conn.init)
    return Connector(conn.lines[:1] + fill + conn.lines[1:], conn.steps[:1] + steps + conn.steps[1:], conn.init)


_GPRS = re.compile(r"\b(r(?:[a-d]x|[sd]i|[sb]p|8|9|1[0-5])[dwb]?|e[a-d]x|e[sd]i|[a-d][lx]|[sd]il?)\b")


def _full_name(name: str) -> str:
    try:
        return gpr(name)
    except (KeyError, ValueError):
        return name


def _last_gpr(conn: Connector) -> str:
    return conn.lines[-1].split(",")[-1].strip()


def _register_of(line: str, store: bool) -> str | None:
    """The register operand of a store (its source) or of a load (its destination)."""
    ops = [o.strip() for o in line.split(None, 1)[1].split(",")] if " " in line else []
    if not ops:
        return None
    reg = ops[1] if store else ops[0]
    return None if "[" in reg or reg.startswith(("k", "mm")) else reg


def _narrow_load(conn: Connector, reg: str) -> Connector:
    """A wide vector register closed from memory the way uops.info closes it
    (``getLatConfigsFromMemToReg``): 128 bits loaded (``vmovupd xmm13, [m]``) and the ANDs at that
    width, which write the register's lower lanes and clear the rest: the chain still runs through
    the whole register.  On Zen 4 ``vmovupd [m], zmm1`` closed with a 512-bit load and five
    ``vpandd zmm`` reads 17.16 cycles a link, with a 128-bit load and five ``vpand xmm`` 15.00
    (``VMOVUPD (M512, ZMM)`` zmm -> mem ``≤9``, as published); 256-bit stores read 15.00 either way."""
    x = vec(reg, 128)
    mem = conn.lines[0].split(" ptr ", 1)[1]
    load = f"{'vmovdqu64' if vand(x) == 'vpandd' else 'vmovdqu'} {x}, xmmword ptr {mem}"
    fill = [f"{vand(x)} {x}, {x}, {x}"] * FILL_VEC
    return Connector([load] + fill + conn.lines[1:], ["load_v128"] + ["vand128"] * FILL_VEC + conn.steps[1:],
                     conn.init)


def _narrow_store(conn: Connector, reg: str, bits: int, used: set[str]) -> Connector | None:
    """The fill for an 8- or 16-bit register stored to memory: its value moved into another
    register first (``movsx r12d, bx``, uops.info's ``MOVSX R12, reg``), the one-cycle steps on
    that one, and the store from it.  Reading the whole register the form wrote in part waits
    for the merge with its old bits, and storing from it again is slower still: on Zen 4
    ``mov bx, [m]; 4 x add/sub rbx; mov [m], bx`` reads 11.85 cycles a link, ``add r12, rbx``
    first 11.70, ``movsx r12, bx`` first 11.00 (uops.info's 6 for the pair)."""
    taken = set(used) | {_full_name(r) for ln in conn.lines for r in _GPRS.findall(ln)}
    if reg[-1] == "h":              # movsx from AH..DH takes no REX prefix: no R8..R15
        taken |= {f"r{i}" for i in range(8, 16)}
    try:
        t = scratch_gpr(taken)
        u = scratch_gpr(taken | {t})
    except NoConnector:
        return None
    fill = [f"movsx {gpr(t, 32)}, {reg}", f"add {t}, {u}", f"sub {t}, {u}", f"add {t}, {u}"]
    store = conn.lines[-1].rsplit(",", 1)[0] + f", {gpr(t, bits)}"
    return Connector(conn.lines[:-1] + fill + [store], conn.steps[:-1] + ["movsx"] + ["alu"] * 3 + conn.steps[-1:],
                     conn.init)
