"""Call shapes: which argument registers a timed routine takes, and where their values come from.

A routine is called once per record of a stream (``streams.Stream``). A record is a packed array of
little-endian u64 fields, one per argument, in argument order; the pass loads field i into the
argument's register before each call::

    mov  rdi, [r12 + 0]        ; a 64-bit register: the whole field
    add  rdi, rbx              ; a pointer argument: the field is an offset into the buffer (rbx)
    mov  esi, [r12 + 8]        ; a 32-bit register: the field's low half

A **pointer** argument's field is an offset from the page-aligned buffer in the runner's R14 area;
its ``extent`` names the field (or gives a constant) counting how many elements of ``scale`` bytes
the routine may touch from there, so the buffer is sized to the furthest end.

Shapes of the studies:

* ``MEMSET``: ``fn(dst, c, n)``: dst (pointer, n bytes), c, n in rdi, esi, rdx.
* ``dispatch_shape()``: ``fn(index, ...)``: a dispatcher called with a target index in edi (an index
  stream), plus any further plain arguments.
* ``array_shape(elem)``: ``fn(array, length, index)``: an array kernel: a pointer to ``length``
  elements of ``elem`` bytes, the length, and an index (bounds checking).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cyclebench.errors import UsageError

ARG_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")       # SysV integer arguments, in order
_REG32 = {"rdi": "edi", "rsi": "esi", "rdx": "edx", "rcx": "ecx", "r8": "r8d", "r9": "r9d"}
FIELD_SIZE = 8


@dataclass(frozen=True)
class Arg:
    """One argument: its record field, register width, and (for a pointer) its extent."""

    field: str
    bits: int = 64                   # 64: the whole field; 32: its low half (e.g. ``int c``)
    pointer: bool = False            # the field is an offset into the buffer; the register gets rbx + it
    extent: str | int | None = None  # pointer only: elements the routine may touch (a field or a number)
    scale: int = 1                   # bytes per element of the extent

    def __post_init__(self):
        if self.bits not in (32, 64):
            raise UsageError(f"argument {self.field}: width must be 32 or 64 bits, got {self.bits}")
        if self.pointer and self.bits != 64:
            raise UsageError(f"argument {self.field}: a pointer needs a 64-bit register")
        if not self.pointer and self.extent is not None:
            raise UsageError(f"argument {self.field}: only a pointer has an extent")
        if self.scale < 1:
            raise UsageError(f"argument {self.field}: scale must be at least 1 byte")


@dataclass(frozen=True)
class CallShape:
    """The arguments of a routine, in SysV order (rdi, rsi, rdx, rcx, r8, r9)."""

    name: str
    args: tuple[Arg, ...]

    def __post_init__(self):
        if not 1 <= len(self.args) <= len(ARG_REGISTERS):
            raise UsageError(f"call shape {self.name}: 1 to {len(ARG_REGISTERS)} arguments, got {len(self.args)}",
                             hint="arguments beyond the sixth go on the stack, which passes do not set up")
        names = [a.field for a in self.args]
        if len(set(names)) != len(names):
            raise UsageError(f"call shape {self.name}: argument names repeat: {names}")
        for a in self.args:
            if isinstance(a.extent, str) and a.extent not in names:
                raise UsageError(f"call shape {self.name}: extent {a.extent!r} of {a.field} is no argument")

    @property
    def dtype(self) -> np.dtype:
        return np.dtype([(a.field, "<u8") for a in self.args])

    @property
    def record_size(self) -> int:
        return FIELD_SIZE * len(self.args)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(a.field for a in self.args)

    def registers(self) -> list[str]:
        """The register each argument goes in (its 32-bit name for a 32-bit argument)."""
        return [r if a.bits == 64 else _REG32[r] for a, r in zip(self.args, ARG_REGISTERS)]

    def load_lines(self, base: str = "r12", buffer: str = "rbx") -> list[str]:
        """The loads of one record at [base] into the argument registers."""
        out = []
        for i, (a, reg) in enumerate(zip(self.args, self.registers())):
            out.append(f"mov {reg}, [{base} + {FIELD_SIZE * i}]")
            if a.pointer:
                out.append(f"add {reg}, {buffer}")
        return out

    def buffer_end(self, records: np.ndarray) -> int:
        """The furthest byte from the buffer's start any pointer argument may touch (0: none)."""
        end = 0
        for a in self.args:
            if not a.pointer:
                continue
            off = records[a.field].astype(object)
            if a.extent is None:
                n = 1
            elif isinstance(a.extent, str):
                n = records[a.extent].astype(object)
            else:
                n = int(a.extent)
            end = max(end, int(np.max(off + n * a.scale)))
        return end


MEMSET = CallShape("memset", (Arg("dst_offset", pointer=True, extent="size"), Arg("value", bits=32),
                              Arg("size")))


def dispatch_shape(*extra: str) -> CallShape:
    """``fn(index, extra...)``: a dispatcher taking a target index in edi, plus plain arguments."""
    return CallShape("dispatch", (Arg("index", bits=32), *(Arg(e) for e in extra)))


def array_shape(elem: int = 8) -> CallShape:
    """``fn(array, length, index)``: ``length`` elements of ``elem`` bytes at array, an index."""
    return CallShape(f"array{elem}", (Arg("array_offset", pointer=True, extent="length", scale=elem),
                                      Arg("length"), Arg("index")))
