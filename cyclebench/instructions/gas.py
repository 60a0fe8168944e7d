"""Assemble many one-line Intel-syntax statements with GNU as and get each one's bytes back.

Each statement is placed in its own 32-byte slot (``.p2align 5, 0xcc``), so one assembler run
checks thousands of lines and a line that produced more than one instruction is visible (its slot
holds more than one decodable instruction before the int3 padding).  Lines the assembler rejects
are reported with its message and the others are assembled again without them. GNU as runs through
snippet/assemble.py's run_as, with its memory cap and timeout.
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import iced_x86

from ..errors import AssemblyError, UsageError
from ..snippet.assemble import AS_MESSAGE, binutil, run_as, run_tool
from ..snippet.checks import check_statement
from ..textfile import quote

SLOT = 32
_HEADER_LINES = 2
_LABEL_OR_COMMENT = re.compile(r"(?:[A-Za-z_.$][\w.$]*|[0-9]+):|#.*|/\*.*?\*/")
_DATA = re.compile(r"\.(?:byte|[248]byte|short|word|long|int|quad)\s", re.IGNORECASE)
_HEX = re.compile(r"(?=.*[0-9])[0-9a-fA-F ]+")       # '4801d8', '48 01 d8': bytes, not a mnemonic


def block_statements(text: str) -> list[str]:
    """A block's text as assemble_lines takes it, one instruction a line: split at ';' and line
    ends; a line that is only a label (a jump target, as a compiler prints it) or a comment is left
    out, since a line that makes no bytes would leave its slot to the next line's instruction;
    a directive and what the snippet checks refuse (non-ASCII text, file reads) are refused."""
    out = []
    for s in (s.strip() for s in text.replace(";", "\n").splitlines()):
        if not s or _LABEL_OR_COMMENT.fullmatch(s):
            continue
        check_statement("the block", s)
        if s.startswith(".") and not _DATA.match(s):
            raise AssemblyError(f"'{quote(s)}' is a directive, not an instruction",
                                "give the block's instructions, one a line (a line that is only a label "
                                "is left out)")
        if _HEX.fullmatch(s):
            raise AssemblyError(f"'{quote(s)}' is hex bytes, not an instruction",
                                "give assembly text; cyclebench block HEX --predictor predict --ports-model "
                                "FILE takes a block's bytes")
        out.append(s)
    if not out:
        raise UsageError("the block is empty", 'give instructions, e.g. "add rax, rbx; imul rcx, rax"')
    return out


@dataclass
class Assembled:
    line: str
    data: bytes | None     # the slot's bytes, int3 (0xcc) padded; None when rejected
    error: str | None = None


def _run(lines: list[str], workdir: str) -> tuple[bytes | None, dict[int, str]]:
    src, obj, binf = Path(workdir, "forms.s"), Path(workdir, "forms.o"), Path(workdir, "forms.bin")
    with open(src, "w") as f:
        f.write(".intel_syntax noprefix\n.text\n")
        for line in lines:
            f.write(f".p2align 5, 0xcc\n{line}\n")
    p = run_as(src, obj)
    errors: dict[int, str] = {}
    for msg in p.stderr.splitlines():
        m = AS_MESSAGE.match(msg)
        if m and m.group(1) and m.group(2) == "Error":
            src_line = int(m.group(1))
            idx = (src_line - _HEADER_LINES - 2) // 2   # each statement takes two lines
            errors.setdefault(idx, m.group(3))
    if p.returncode != 0:
        if not errors:
            raise AssemblyError("GNU as failed: " + (p.stderr.strip().splitlines() or ["?"])[0],
                                "check the binutils installation (bash setup.sh)")
        return None, errors
    run_tool([binutil("objcopy"), "-O", "binary", "--only-section=.text", str(obj), str(binf)])
    return binf.read_bytes(), errors


def assemble_lines(lines: list[str]) -> list[Assembled]:
    """Assemble each line on its own; one assembler run (two when some lines are rejected)."""
    out = [Assembled(line, None) for line in lines]
    with tempfile.TemporaryDirectory(prefix="cb-inst-") as d:
        data, errors = _run(lines, d)
        if errors:
            for i, e in errors.items():
                if 0 <= i < len(out):
                    out[i].error = e
            retry = [("int3" if out[i].error else line) for i, line in enumerate(lines)]
            data, errors2 = _run(retry, d)
            if data is None:
                raise AssemblyError("GNU as rejected lines it had accepted: "
                                    + "; ".join(errors2.values()))
    for i, a in enumerate(out):
        if a.error:
            continue
        chunk = data[i * SLOT:(i + 1) * SLOT]
        a.data = chunk
    return out


def split_slot(data: bytes):
    """Decode a slot: (first instruction, True when nothing but int3 padding follows it)."""
    dec = iced_x86.Decoder(64, data)
    ins = dec.decode()
    rest = data[ins.len:]
    return ins, all(b == 0xCC for b in rest)
