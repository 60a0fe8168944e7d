"""Splitting user code into statements and expanding nanoBench's extensions.

``|n`` (1 <= n <= 15) is an n-byte NOP; ``n*|x|`` repeats the statements x n times (no nesting).
Statements are separated by ``;`` or newlines, as GNU as does for x86. Each expanded statement
remembers the user's original text so errors and faults can name it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AssemblyError, UsageError

# Canonical multi-byte NOPs (AMD/Intel recommended forms); longer ones add 0x66 prefixes.
_NOPS = {
    1: "90", 2: "66 90", 3: "0f 1f 00", 4: "0f 1f 40 00", 5: "0f 1f 44 00 00",
    6: "66 0f 1f 44 00 00", 7: "0f 1f 80 00 00 00 00", 8: "0f 1f 84 00 00 00 00 00",
    9: "66 0f 1f 84 00 00 00 00 00",
}


def nop_bytes(n: int) -> bytes:
    if not 1 <= n <= 15:
        raise UsageError(f"'|{n}' is not a NOP length", "nanoBench's |n takes 1 <= n <= 15")
    if n <= 9:
        return bytes.fromhex(_NOPS[n])
    return b"\x66" * (n - 9) + bytes.fromhex(_NOPS[9])


def nop_directive(n: int) -> str:
    return ".byte " + ",".join(f"0x{b:02x}" for b in nop_bytes(n))


@dataclass(frozen=True)
class Statement:
    text: str        # what goes to the assembler
    source: str      # the user's statement it came from


@dataclass
class CodePart:
    """One code part (benchmarked code, init, late init, one-time init): text or raw bytes."""

    name: str
    statements: list[Statement] = field(default_factory=list)
    raw: bytes | None = None

    @property
    def empty(self) -> bool:
        return not self.statements and not self.raw

    def lines(self) -> list[str]:
        if self.raw is not None:
            return [".byte " + ",".join(f"0x{b:02x}" for b in self.raw[i:i + 32])
                    for i in range(0, len(self.raw), 32)]
        return [s.text for s in self.statements]

    def sources(self) -> list[str]:
        if self.raw is not None:
            return [f"<raw machine code, bytes {i}..{min(i + 32, len(self.raw)) - 1}>"
                    for i in range(0, len(self.raw), 32)]
        return [s.source for s in self.statements]


_REPEAT = re.compile(r"(\d+)\s*\*\s*\|(.*?)\|")


def _split(text: str) -> list[str]:
    out = []
    for line in text.replace("\r", "").split("\n"):
        line = line.split("#", 1)[0]  # GNU as x86 comment character
        out.extend(p.strip() for p in line.split(";"))
    return [p for p in out if p]


def _expand(stmt: str) -> list[Statement]:
    m = re.fullmatch(r"\|\s*(\d+)", stmt)
    if m:
        return [Statement(nop_directive(int(m.group(1))), stmt)]
    if "|" in stmt:
        raise AssemblyError(f"cannot read '{stmt}'",
                            "nanoBench's extensions are '|n' (an n-byte NOP) and 'n*|code|' (repeat code n times)")
    return [Statement(stmt, stmt)]


def parse_part(name: str, code: str | bytes | Path | None) -> CodePart:
    """Parse one code part. ``bytes`` or a Path are raw machine code, a str is assembly."""
    if code is None:
        return CodePart(name)
    if isinstance(code, Path):
        try:
            code = code.read_bytes()
        except OSError as e:
            raise UsageError(f"cannot read the {name.replace('_', '-')} file {code}: {e.strerror}",
                             "give a file of raw x86-64 machine code") from None
    if isinstance(code, (bytes, bytearray)):
        return CodePart(name, raw=bytes(code))
    stmts: list[Statement] = []
    pos = 0
    for m in _REPEAT.finditer(code):
        stmts += [s for t in _split(code[pos:m.start()]) for s in _expand(t)]
        count = int(m.group(1))
        if count > 100_000:
            raise UsageError(f"'{m.group(0)[:40]}' repeats {count} times",
                             "keep n*|x| below 100000; use --unroll or --loop for more copies")
        inner = [s for t in _split(m.group(2)) for s in _expand(t)]
        stmts += [Statement(s.text, m.group(0)) for _ in range(count) for s in inner]
        pos = m.end()
    stmts += [s for t in _split(code[pos:]) for s in _expand(t)]
    return CodePart(name, stmts)
