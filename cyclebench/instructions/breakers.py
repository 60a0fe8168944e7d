"""Dependency breakers between throughput copies: what the ISA does not let the copies rename apart
(flags read and written, an implicit or fixed register read and written, an implicit vector
register) is broken before every copy with documented idioms; throughput.py says which and why.
"""
from __future__ import annotations

from . import connectors as C
from .forms import Form, divider_width
from .session import DIVIDEND


BREAKERS = ("published", "zero idiom", "alu", "none")


def breakers_for(form: Form, carried: list[str], scratch: str,
                 kind: str = "published") -> tuple[list[str], list[str]]:
    """(lines to put before every copy, what could not be broken).  ``kind``: ``published``
    (default, uops.info's): port-free zero idioms for registers, ``test r, r`` for the flags;
    ``zero idiom``: port-free zero idioms for the flags too; ``alu``: breakers that occupy an ALU
    (``test r, r`` for the flags, ``mov r32, 0`` for a register); ``none``."""
    if kind == "none":
        return [], list(carried)
    if kind == "alu":
        return _alu_breakers(carried, scratch)
    lines, unbroken = [], []
    divisor = divider_width(form)
    for c in carried:
        if c == "flags":
            continue                  # after the registers: their zero idiom may break flags too
        try:
            port = C.port_for_register(c)
        except KeyError:
            unbroken.append(c)
            continue
        if port.kind == "GPR":
            full = C.gpr(c)
            if divisor is not None and full == "rax":
                lines.append(DIVIDEND.get(divisor, "mov eax, 100"))
            else:
                lines.append(f"xor {C.gpr(c, 32)}, {C.gpr(c, 32)}")
        elif port.kind == "VEC":
            x = C.vec(c, 128)
            lines.append(f"vpxor {x}, {x}, {x}")
        else:
            unbroken.append(c)
    if "flags" in carried and not any(x.startswith("xor ") for x in lines):
        # a full-width GPR zero idiom writes every arithmetic flag: one breaker does both
        if kind == "published":
            lines.append(f"test {C.gpr(scratch, 64)}, {C.gpr(scratch, 64)}")
        else:
            lines.append(f"xor {C.gpr(scratch, 32)}, {C.gpr(scratch, 32)}")
    return lines, unbroken


def _alu_breakers(carried: list[str], scratch: str) -> tuple[list[str], list[str]]:
    lines, unbroken = [], []
    for c in carried:
        if c == "flags":
            lines.append(f"test {C.gpr(scratch, 64)}, {C.gpr(scratch, 64)}")
            continue
        try:
            kind = C.port_for_register(c).kind
        except KeyError:
            kind = None
        if kind == "GPR":
            lines.insert(0, f"mov {C.gpr(c, 32)}, 0")
        else:
            unbroken.append(c)
    return lines, unbroken


def only_breaks(pre: list[str]) -> bool:
    """Every breaker only breaks a dependency (a zero idiom or ``test``): copies without them still
    run on sound values (a divide's dividend set-up is not one)."""
    return all(line.startswith(("xor ", "vpxor ", "test ")) for line in pre)
