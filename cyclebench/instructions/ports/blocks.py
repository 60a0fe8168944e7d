"""Straight-line blocks for the predictor's check: basic blocks of compiled code, made runnable in
the harness, and random blocks of modelled forms.

:func:`compiled_blocks` builds a C file with ``gcc -O2``, disassembles it with objdump (Intel
syntax) and cuts the code at every branch, call, return and branch target: the basic blocks,
without their final branch.  :func:`rebase` points every memory operand at the harness's data
area (``[r14+disp]``), since the registers that held pointers start at 0 in the harness; address
arithmetic is dropped with it, the loads and stores stay.  Each distinct address expression (base,
index, scale) gets a slot of its own with the source's displacements kept relative to each other,
so accesses that alias in the source still alias and accesses to one cache line stay on one line
(Zen 4 writes two stores a cycle to one 32-byte half of a line, one to two: store_grain.py).  Slots are placed so that no two
of them hold accesses whose addresses agree in their low :data:`ALIAS` bits: a load after a store
whose address agrees with it there waits as if it read the store (Zen 4: ``mov edx,
[r14+0x200]; mov [r14+0x600], edx`` runs 10.4 cycles an iteration, ``[r14+0x1200]`` 40, and
``[r14+0x204+0x400]`` or ``[r14+0x400]`` 0.67; Intel's 4K aliasing is the same thing on 12 bits),
an effect of the placement that the source's distinct pointers would not have.  Blocks
that name a register the harness reserves (R14, R15, RSP, RBP) are left out.

:func:`random_blocks` draws blocks of modelled forms for the predictor's check.  Each instance
runs with its form's shared init (``session.form_init``: a shift count of 1 in CL, divisor and
dividend), the values the model was measured with, and no instruction of a block may write a
register another instance's init sets: a count of 0 left in CL by ``and rcx, 2`` would make
the next flag reader wait (Zen 4: ``shr rbx, cl; setnp dl`` runs 32 cycles an iteration with
CL = 0, 1.0 with CL = 1), a form that none of the model's readings ran.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import iced_x86

from ...errors import UsageError
from ..catalogue import Catalogue
from ..copies import LINE, bank_offset, no_banks
from ..instantiate import instantiate
from ..operands import POOLS, REGISTER_BY_NAME, full_register
from ..session import form_init

_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_MEM = re.compile(r"(?:(BYTE|WORD|DWORD|QWORD|XMMWORD|YMMWORD|ZMMWORD) PTR )?(?:[a-z]s:)?\[([^\]]+)\]", re.I)
_RESERVED = re.compile(r"\b(r14|r15|rsp|rbp|esp|ebp|r14d|r15d|sp|bp)\b")
_CONTROL = re.compile(r"^(j[a-z]+|call|ret|jmp|loop|syscall|ud2|int3|hlt|endbr64|push|pop|leave)\b")
MIN_LEN, MAX_LEN = 3, 40
SLOT = 0x200                 # the first slot's offset
ALIAS = 0x400                # low address bits a load is matched against earlier stores by
_SIZES = {"BYTE": 1, "WORD": 2, "DWORD": 4, "QWORD": 8, "XMMWORD": 16, "YMMWORD": 32, "ZMMWORD": 64}
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


def _operands(block: list[str]):
    """(address expression, displacement, bytes) of each memory operand, LEAs left out."""
    for line in block:
        if not line.startswith("lea"):
            for m in _MEM.finditer(line):
                addr, off = _split(m.group(2))
                yield addr, off, _SIZES.get((m.group(1) or "").upper(), 8)


def _split(text: str) -> tuple[str, int]:
    addr = text.replace(" ", "")
    d = _DISP.search(addr)
    if d and d.start() > 0:
        return addr[:d.start()], int(d.group(2), 0) * (-1 if d.group(1) == "-" else 1)
    return addr, 0


def _clashes(ranges: list[tuple[int, int]], taken: list[tuple[int, int]]) -> bool:
    """Whether any range overlaps a taken one in the low ALIAS bits of the address."""
    return any((b - a) % ALIAS < n or (a - b) % ALIAS < m for a, n in ranges for b, m in taken)


def slots(block: list[str]) -> dict[str, int]:
    """Address expression -> the data-area offset of its displacement 0: in order of first use,
    each at the first 64-byte step past the previous one where none of its accesses agrees in
    the low ALIAS bits with another slot's (the first candidate where that cannot be had)."""
    ops: dict[str, list[tuple[int, int]]] = {}
    for addr, off, size in _operands(block):
        ops.setdefault(addr, []).append((off, size))
    out, taken, cursor = {}, [], SLOT
    for addr, acc in ops.items():
        low = min(o for o, _ in acc) // 64 * 64
        span = max(o + n for o, n in acc) - low
        start = next((s for s in range(cursor, cursor + ALIAS, 64)
                      if not _clashes([(s + o - low, n) for o, n in acc], taken)), cursor)
        out[addr] = start - low
        taken += [(start + o - low, n) for o, n in acc]
        cursor = start + (span + 63) // 64 * 64
    return out


def rebase(block: list[str]) -> list[str] | None:
    """The block with memory operands on ``[r14+disp]`` (None: it uses a reserved register)."""
    base = slots(block)
    out = []
    for line in block:
        if line.startswith("lea"):
            if "rip" in line:
                return None
            out.append(line)
            continue

        def sub(m):
            addr, off = _split(m.group(2))
            size = (m.group(1) + " PTR ") if m.group(1) else ""
            return f"{size}[r14+{base[addr] + off:#x}]"
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


TRIES = 50
_INIT_DEST = re.compile(r"^\s*[a-z0-9]+\s+([a-z][a-z0-9]*)\s*,", re.I)


def pinned(init: list[str]) -> dict[int, str]:
    """Full register -> the init line that sets it (lines that write memory are left out)."""
    out = {}
    for line in init:
        m = _INIT_DEST.match(line)
        if m:
            reg = REGISTER_BY_NAME.get(m.group(1).upper())
            if reg is not None:
                out[full_register(reg)] = line
    return out


def _written(encoding: bytes) -> tuple[set[int], set[int]]:
    """(registers written as explicit operands, registers written implicitly), full registers."""
    ins = next(iter(iced_x86.Decoder(64, encoding)))
    info = iced_x86.InstructionInfoFactory().info(ins)
    writes = (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_WRITE,
              iced_x86.OpAccess.READ_COND_WRITE)
    every = {full_register(u.register) for u in info.used_registers() if u.access in writes}
    explicit = {full_register(ins.op_register(i)) for i in range(ins.op_count)
                if ins.op_kind(i) == iced_x86.OpKind.REGISTER and info.op_access(i) in writes}
    return explicit, every - explicit


def _keeps(own: dict[int, str], pins: dict[int, str], encoding: bytes) -> bool:
    """Whether an instance leaves the block's init registers alone: it writes none as an explicit
    operand, and implicitly only the ones its own init sets (a divide's dividend: with divisor 1
    the quotient is the dividend again)."""
    explicit, implicit = _written(encoding)
    return not explicit & set(pins) and all(own.get(r) == pins[r] for r in implicit if r in pins)


def random_blocks(cat: Catalogue, forms: list[str], n: int, rng) -> list[tuple[list[str], list[str]]]:
    """n blocks of 4-10 instances of ``forms`` (lines, init), registers picked at random (so some
    chain); each memory operand its own 64-byte slot (the predictor follows no memory dependency,
    and a narrow store under a wide load of one address stalls store forwarding), at an offset in
    it on banks the block's other operands leave free (:func:`copies.bank_offset`).  A block whose
    instructions overwrite another's init is drawn again."""
    gprs = list(POOLS["GPR64"])
    out = []
    while len(out) < n:
        for _ in range(TRIES):
            picks = rng.choices(forms, k=rng.randint(4, 10))
            pins: dict[int, str] = {}
            insts, own, clash = [], [], False
            banks = no_banks()
            for i, f in enumerate(picks):
                form = cat.get(f)
                mem = form.memory_operand
                off = bank_offset(mem.bits // 8, banks) if mem is not None and mem.kind == "mem" else 0
                inst = instantiate(form, avoid=rng.sample(gprs, rng.randint(0, 8)) + list(pins),
                                   displacement=LINE * (i + 1) + off)
                setup = form_init(form, inst)
                mine = pinned(setup)
                insts.append((inst, setup))
                own.append(mine)
                clash = any(pins.get(r, line) != line for r, line in mine.items())
                pins.update(mine)
            if not clash and all(_keeps(own[k], pins, inst.encoding) for k, (inst, _) in enumerate(insts)):
                break
        else:
            raise UsageError(f"no block of these forms leaves every init register alone in {TRIES} draws",
                             "give more forms")
        init = []
        for _, lines in insts:
            init += [s for s in lines if s not in init]
        out.append(([inst.text for inst, _ in insts], init))
    return out
