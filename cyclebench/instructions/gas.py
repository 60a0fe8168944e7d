"""Assemble many one-line Intel-syntax statements with GNU as and get each one's bytes back.

Each statement is placed in its own 32-byte slot (``.p2align 5, 0xcc``), so one assembler run
checks thousands of lines and a line that produced more than one instruction is visible (its slot
holds more than one decodable instruction before the int3 padding).  Lines the assembler rejects
are reported with its message and the others are assembled again without them. GNU as runs through
snippet/assemble.py's run_as, with its memory cap and timeout. The slots of a list of lines are kept
in the cache folder, as snippet/assemble.py keeps assembled objects: checking forms and decoding
blocks meets the same lines again, and each assembler run is two process starts (about 7.5 ms).
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import iced_x86

from .. import cache
from ..errors import AssemblyError, UsageError
from ..snippet.assemble import AS_MESSAGE, binutil, run_as, run_tool
from ..snippet.checks import check_statement
from ..textfile import quote

SLOT = 32
_HEADER_LINES = 2
_LABEL_OR_COMMENT = re.compile(r"(?:[A-Za-z_.$][\w.$]*|[0-9]+):|#.*|/\*.*?\*/")
_LABELLED = re.compile(r"(?:[A-Za-z_.$][\w.$]*|[0-9]+):\s*(\S.*)")   # '.L3: add rcx, rax': the label names no bytes
_DATA = re.compile(r"\.(?:byte|[248]byte|short|word|long|int|quad)\s", re.IGNORECASE)
_HEX = re.compile(r"(?=.*[0-9])[0-9a-fA-F ]+")       # '4801d8', '48 01 d8': bytes, not a mnemonic


def block_statements(text: str) -> list[str]:
    """A block's text as assemble_lines takes it, one instruction a line: split at ';' and line
    ends; a line that is only a label (a jump target, as a compiler prints it) or a comment is left
    out, since a line that makes no bytes would leave its slot to the next line's instruction, and
    so is a label before an instruction (each line is assembled alone: a label names nothing);
    a directive and what the snippet checks refuse (non-ASCII text, file reads) are refused."""
    out = []
    for s in (s.strip() for s in text.replace(";", "\n").splitlines()):
        if not s or _LABEL_OR_COMMENT.fullmatch(s):
            continue
        labelled = _LABELLED.fullmatch(s)
        s = labelled.group(1) if labelled else s
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


CACHE_KIND = "gas-slots"


def assemble_lines(lines: list[str]) -> list[Assembled]:
    """Assemble each line on its own; one assembler run (two when some lines are rejected), or
    none when the cache folder has these lines' slots from the same tools."""
    key = hashlib.sha256(json.dumps(lines).encode() + b"\0" + _tools_stamp()).hexdigest()
    kept = _load(cache.load_entry(CACHE_KIND, key), len(lines))
    if kept is None:
        kept = _slots(lines)
        cache.store_entry(CACHE_KIND, key, json.dumps({str(i): e for i, e in kept[0].items()}).encode()
                          + b"\n" + kept[1])
    errors, data = kept
    out = [Assembled(line, None, errors.get(i)) for i, line in enumerate(lines)]
    for i, a in enumerate(out):
        if not a.error:
            a.data = data[i * SLOT:(i + 1) * SLOT]
    return out


def _slots(lines: list[str]) -> tuple[dict[int, str], bytes]:
    """(as's message by rejected line, the .text of the run that assembled the rest)."""
    with tempfile.TemporaryDirectory(prefix="cb-inst-") as d:
        data, errors = _run(lines, d)
        errors = {i: e for i, e in errors.items() if 0 <= i < len(lines)}
        if errors or data is None:
            retry = [("int3" if errors.get(i) else line) for i, line in enumerate(lines)]
            data, errors2 = _run(retry, d)
            if data is None:
                raise AssemblyError("GNU as rejected lines it had accepted: "
                                    + "; ".join(errors2.values()))
    return errors, data


def _load(entry: bytes | None, n: int) -> tuple[dict[int, str], bytes] | None:
    """A kept entry for ``n`` lines, or None when absent or not one of ours."""
    if entry is None:
        return None
    head, _, data = entry.partition(b"\n")
    try:
        errors = {int(i): e for i, e in json.loads(head).items()}
    except (ValueError, TypeError, AttributeError):
        return None
    if not all(0 <= i < n and isinstance(e, str) for i, e in errors.items()) or len(data) < n * SLOT - SLOT:
        return None
    return errors, data


@functools.lru_cache(maxsize=1)
def _tools_stamp() -> bytes:
    """What the slots depend on besides the lines: as and objcopy (path, size and modification
    time: an upgrade changes them), this module and the one that runs them."""
    return cache.files_stamp((*(shutil.which(t) or t for t in ("as", "objcopy")), __file__,
                              sys.modules[run_as.__module__].__file__))


def split_slot(data: bytes):
    """Decode a slot: (first instruction, True when nothing but int3 padding follows it)."""
    dec = iced_x86.Decoder(64, data)
    ins = dec.decode()
    rest = data[ins.len:]
    return ins, all(b == 0xCC for b in rest)
