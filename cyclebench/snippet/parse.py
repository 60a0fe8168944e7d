"""Splitting user code into statements and expanding nanoBench's extensions.

``|n`` (1 <= n <= 15) is an n-byte NOP; ``n*|x|`` repeats the statements x n times (no nesting).
Statements are separated by ``;`` or newlines, as GNU as does for x86. Each expanded statement
remembers the user's original text so errors and faults can name it. The expanded size is capped
before expanding (statements, text, raw bytes): the harness copies a part several times more.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AssemblyError, UsageError
from ..textfile import MiB, quote, read_bytes
from .checks import check_statement

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
    """One assembler statement and the user's statement it came from."""
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


# (?<!\d): a long run of digits is tried from its start only (linear, not quadratic)
_REPEAT = re.compile(r"(?<![0-9])([0-9]+)\s*\*\s*\|(.*?)\|")
MAX_REPEAT = 100_000
MAX_STATEMENTS = 100_000    # per part, expanded; 100k statements take ~4 s to assemble
MAX_TEXT = 4 * MiB          # per part, expanded statement text
MAX_RAW = 4 * MiB           # raw machine code per part (bytes or a code file)
_TOO_BIG_HINT = ("the harness copies the code itself: use --unroll or --loop for more copies "
                 "instead of a large n*|x|")


def _split(text: str) -> list[str]:
    out = []
    for line in text.replace("\r", "").split("\n"):
        line = line.split("#", 1)[0]  # GNU as x86 comment character
        out.extend(p.strip() for p in line.split(";"))
    return [p for p in out if p]


def _expand(name: str, stmt: str) -> list[Statement]:
    m = re.fullmatch(r"\|\s*([0-9]+)", stmt)
    if m:
        if len(m.group(1)) > 2:
            raise UsageError(f"'{quote(stmt, 20)}' is not a NOP length", "nanoBench's |n takes 1 <= n <= 15")
        return [Statement(nop_directive(int(m.group(1))), stmt)]
    if "|" in stmt:
        raise AssemblyError(f"cannot read '{quote(stmt)}'",
                            "nanoBench's extensions are '|n' (an n-byte NOP) and 'n*|code|' (repeat code n times)")
    check_statement(name, stmt)
    return [Statement(stmt, stmt)]


def _statements(name: str, text: str) -> list[Statement]:
    return [s for t in _split(text) for s in _expand(name, t)]


def _check_size(name: str, statements: int, chars: int) -> None:
    if statements > MAX_STATEMENTS or chars > MAX_TEXT:
        what = "the code" if name == "code" else f"the {name.replace('_', '-')} code"
        raise UsageError(f"{what} would expand to {statements} statements "
                         f"({chars / MiB:.1f} MiB of text); at most {MAX_STATEMENTS} statements and "
                         f"{MAX_TEXT // MiB} MiB are measured", _TOO_BIG_HINT)


def parse_part(name: str, code: str | bytes | Path | None) -> CodePart:
    """Parse one code part. ``bytes`` or a Path are raw machine code, a str is assembly."""
    if code is None:
        return CodePart(name)
    label = name.replace("_", "-")
    if isinstance(code, Path):
        path = code
        hint = f"give a file of raw x86-64 machine code, at most {MAX_RAW // MiB} MiB"
        code = read_bytes(path, f"{label} file", limit=MAX_RAW, error=UsageError, hint=hint)
        if not code:
            fifo = " (a FIFO or pipe that nothing wrote to)" if path.is_fifo() else ""
            raise UsageError(f"the {label} file {quote(str(path), 200)} is empty{fifo}", hint)
    if isinstance(code, (bytes, bytearray)):
        if len(code) > MAX_RAW:
            raise UsageError(f"the {label} machine code is {len(code)} bytes, over {MAX_RAW // MiB} MiB",
                             _TOO_BIG_HINT)
        return CodePart(name, raw=bytes(code))
    if len(code) > MAX_TEXT:
        _check_size(name, code.count(";") + code.count("\n") + 1, len(code))
    stmts: list[Statement] = []
    chars = pos = 0

    def add(new: list[Statement], times: int = 1, source: str | None = None):
        nonlocal chars
        size = times * sum(len(s.text) for s in new)
        _check_size(name, len(stmts) + times * len(new), chars + size)   # before expanding
        chars += size
        # Statement is frozen: n*|x| repeats one object per statement of x rather than building
        # n copies (100000*|nop| took 0.1 s, most of it making objects)
        stmts.extend((new if source is None else [Statement(s.text, source) for s in new]) * times)

    for m in _REPEAT.finditer(code):
        add(_statements(name, code[pos:m.start()]))
        digits = m.group(1).lstrip("0")
        if len(digits) > 6 or int(digits or 0) > MAX_REPEAT:
            raise UsageError(f"'{quote(m.group(0), 40)}' repeats {quote(digits, 20)} times",
                             f"keep n*|x| at most {MAX_REPEAT}; use --unroll or --loop for more copies")
        add(_statements(name, m.group(2)), int(digits or 0), m.group(0))
        pos = m.end()
    add(_statements(name, code[pos:]))
    return CodePart(name, stmts)
