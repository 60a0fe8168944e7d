"""Straight-line blocks from compiled code, made runnable in the harness.

:func:`compiled_blocks` builds a C file with ``gcc -O2``, disassembles it with objdump (Intel
syntax) and cuts the code at every branch, call, return and branch target: the basic blocks,
without their final branch.  :func:`rebase` points every memory operand at the harness's data
area (``[r14+disp]``: one :data:`SLOT`-byte slot per distinct base and index, the source's
displacement kept within it, so accesses that alias in the source still alias and accesses to
one cache line stay on one line: Zen 4 writes two stores a cycle to one line, one to two lines),
since the registers that held pointers start at 0 in the harness; address arithmetic is dropped
with it, the loads and stores stay.  Blocks
that name a register the harness reserves (R14, R15, RSP, RBP) are left out.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from ...errors import UsageError

_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_MEM = re.compile(r"(?:(BYTE|WORD|DWORD|QWORD|XMMWORD|YMMWORD|ZMMWORD) PTR )?(?:[a-z]s:)?\[([^\]]+)\]", re.I)
_RESERVED = re.compile(r"\b(r14|r15|rsp|rbp|esp|ebp|r14d|r15d|sp|bp)\b")
_CONTROL = re.compile(r"^(j[a-z]+|call|ret|jmp|loop|syscall|ud2|int3|hlt|endbr64|push|pop|leave)\b")
MIN_LEN, MAX_LEN = 3, 40
SLOT = 0x200
_DISP = re.compile(r"([+-])\s*(0x[0-9a-f]+|\d+)$", re.I)


def disassemble(obj: Path) -> list[tuple[int, str]]:
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-M", "intel", str(obj)],
                         capture_output=True, text=True, check=True).stdout
    code = []
    for line in out.splitlines():
        m = _LINE.match(line)
        if m and m.group(2).strip() and not m.group(2).startswith("("):
            code.append((int(m.group(1), 16), re.sub(r"\s+#.*$|\s+<.*>$", "", m.group(2)).strip()))
    return code


def basic_blocks(code: list[tuple[int, str]]) -> list[list[str]]:
    targets = set()
    for _, text in code:
        m = re.match(r"^(j[a-z]+|call)\s+([0-9a-f]+)", text)
        if m:
            targets.add(int(m.group(2), 16))
    blocks, cur = [], []
    for addr, text in code:
        if addr in targets and cur:
            blocks.append(cur)
            cur = []
        if _CONTROL.match(text) or text.startswith(("nop", "xchg   ax,ax", "data16", "cs nop")):
            if cur:
                blocks.append(cur)
            cur = []
            continue
        cur.append(re.sub(r"\s+", " ", text))
    if cur:
        blocks.append(cur)
    return [b for b in blocks if MIN_LEN <= len(b) <= MAX_LEN]


def rebase(block: list[str]) -> list[str] | None:
    """The block with memory operands on ``[r14+disp]`` (None: it uses a reserved register)."""
    slots: dict[str, int] = {}
    out = []
    for line in block:
        if line.startswith("lea"):
            if "rip" in line:
                return None
            out.append(line)
            continue

        def sub(m):
            addr = m.group(2).replace(" ", "")
            d = _DISP.search(addr)
            off = 0
            if d and d.start() > 0:
                off = int(d.group(2), 0) * (-1 if d.group(1) == "-" else 1)
                addr = addr[:d.start()]
            disp = slots.setdefault(addr, SLOT * (len(slots) + 1)) + off % SLOT
            size = (m.group(1) + " PTR ") if m.group(1) else ""
            return f"{size}[r14+{disp:#x}]"
        line = _MEM.sub(sub, line)
        if _RESERVED.search(line.replace("[r14+", "[")):
            return None
        out.append(line)
    return out


def compiled_blocks(source: Path, flags: tuple[str, ...] = ("-O2",)) -> list[list[str]]:
    """Rebased basic blocks of one C file built with gcc."""
    with tempfile.TemporaryDirectory(prefix="cb-blocks-") as d:
        obj = Path(d) / "x.o"
        p = subprocess.run(["gcc", *flags, "-c", str(source), "-o", str(obj)], capture_output=True, text=True)
        if p.returncode:
            raise UsageError(f"gcc could not build {source}: {p.stderr.strip().splitlines()[-1:]}",
                             "give a C file that compiles on its own")
        blocks = basic_blocks(disassemble(obj))
    return [b for b in (rebase(b) for b in blocks) if b]
