"""A block's bytes from an objdump listing or from a symbol of an ELF binary (GNU objdump).

* ``from_objdump(path)``: the raw-byte column of every instruction line of ``objdump -d`` output
  (continuation lines of long instructions included);
* ``from_elf(binary, symbol, offset, length)``: ``objdump -d -w --disassemble=SYMBOL``; the bytes
  ``[offset, offset + length)`` of the symbol, or, without them, its first basic block (up to and
  including the first control transfer).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..errors import ConfigError, UsageError
from ..snippet.assemble import binutil
from ..textfile import quote, read_text
from .code import BRANCHES, MAX_BLOCK_BYTES

_LINE = re.compile(r"^\s*[0-9a-fA-F]+:\t((?:[0-9a-fA-F]{2} ?)+)")
OBJDUMP_TIMEOUT = 60


def parse_listing(text: str) -> bytes:
    """The instruction bytes of objdump -d output, in order."""
    out = bytearray()
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            out += bytes.fromhex(m.group(1).replace(" ", ""))
    return bytes(out)


def from_objdump(path: str | Path) -> bytes:
    text = read_text(path, "objdump listing", error=ConfigError,
                     hint="give the output of objdump -d (a text file)")
    code = parse_listing(text)
    if not code:
        raise ConfigError(f"{quote(str(path))} holds no objdump instruction lines ('  addr:\\tbytes\\tmnemonic')",
                          "give the output of objdump -d, e.g. objdump -d prog > prog.txt")
    if len(code) > MAX_BLOCK_BYTES:
        raise UsageError(f"the listing holds {len(code)} bytes of code; at most {MAX_BLOCK_BYTES} are one block",
                         "cut the listing down to one basic block")
    return code


def from_elf(binary: str | Path, symbol: str, offset: int | None = None, length: int | None = None) -> bytes:
    path = Path(binary)
    if not path.is_file():
        raise ConfigError(f"{quote(str(binary))} is not a file", "give the path of an ELF binary or object file")
    if not re.fullmatch(r"[A-Za-z_.$@][\w.$@]*", symbol):
        raise UsageError(f"bad symbol name {quote(symbol)}", "give a function name, e.g. --symbol main")
    try:
        p = subprocess.run([binutil("objdump"), "-d", "-w", f"--disassemble={symbol}", str(path)],
                           capture_output=True, text=True, errors="replace", timeout=OBJDUMP_TIMEOUT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"objdump did not finish within {OBJDUMP_TIMEOUT} s on {quote(str(binary))}",
                          "give a smaller binary") from None
    if p.returncode != 0:
        first = (p.stderr.strip().splitlines() or ["?"])[0]
        raise ConfigError(f"objdump cannot read {quote(str(binary))}: {quote(first, 160)}",
                          "give an x86-64 ELF binary or object file")
    code = parse_listing(p.stdout)
    if not code:
        raise UsageError(f"no code for symbol {quote(symbol)} in {quote(str(binary))}",
                         f"list the symbols with: nm {quote(str(binary))}")
    if offset is not None or length is not None:
        start = offset or 0
        end = len(code) if length is None else start + length
        if not 0 <= start < end <= len(code):
            given = " ".join(f"--{k} {v}" for k, v in (("offset", offset), ("length", length)) if v is not None)
            raise UsageError(f"{given} is outside {symbol} ({len(code)} bytes)",
                             f"use offsets within 0..{len(code) - 1} and a length of at least 1")
        return code[start:end]
    return first_block(code[:MAX_BLOCK_BYTES * 4])


def first_block(code: bytes) -> bytes:
    """The bytes up to and including the first control transfer (all that decode if there is none)."""
    import iced_x86
    end = 0
    for ins in iced_x86.Decoder(64, code):
        if ins.code == iced_x86.Code.INVALID:
            break
        end = ins.ip + ins.len
        if ins.flow_control in BRANCHES:
            break
    return code[:min(end, MAX_BLOCK_BYTES)]
