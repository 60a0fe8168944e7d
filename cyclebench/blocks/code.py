"""A block's bytes: parsing hex, decoding with iced-x86, and the basic-block check.

A basic block has no control transfer but possibly a final one. The final branch (jcc, jmp,
call, ret, direct or indirect) is dropped before measuring and named in the result: run
unrolled, a taken branch would leave the copies, and a call or ret would move the stack and jump
into memory the block never meant to run. That is BHive's convention too: its throughput is the
block's straight-line body. A control transfer before the last instruction, a system call, an
interrupt or an instruction that always faults in user mode makes the block unmeasurable, with
that reason; it is never run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import UsageError

MAX_BLOCK_BYTES = 4096

BRANCHES = {1: "jump", 2: "indirect jump", 3: "conditional branch", 4: "return", 5: "call",
             6: "indirect call"}
_SYSCALLS = {"syscall", "sysenter", "sysexit", "sysret", "int", "int1", "int3", "into"}


class NotABlock(UsageError):
    """The bytes are not a measurable basic block (exit 2): the reason says why."""


@dataclass
class Instr:
    offset: int
    length: int
    text: str
    mnemonic: str        # without the prefixes iced prints before it
    flow: int            # iced_x86.FlowControl


@dataclass
class Block:
    code: bytes                          # the bytes that are measured (final branch dropped)
    instructions: list[Instr]
    dropped: Instr | None = None         # the final branch, not measured
    original: bytes = b""
    notes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "; ".join(i.text for i in self.instructions)


def parse_hex(text: str) -> bytes:
    """Hex bytes, with optional spaces, commas, '0x' prefixes or '\\x' escapes."""
    s = re.sub(r"0x|\\x|[\s,:]", "", text.strip(), flags=re.I)
    if not s:
        raise UsageError("the block is empty", "give its bytes as hex, e.g. cyclebench block 4801d8")
    if not re.fullmatch(r"[0-9a-fA-F]+", s):
        bad = next(c for c in s if c not in "0123456789abcdefABCDEF")
        raise UsageError(f"the block is not hex: it contains {bad!r}",
                         "give the bytes as hex digits, e.g. 4801d8 or '48 01 d8'")
    if len(s) % 2:
        raise UsageError(f"the block has an odd number of hex digits ({len(s)})",
                         "every byte is two hex digits")
    code = bytes.fromhex(s)
    if len(code) > MAX_BLOCK_BYTES:
        raise UsageError(f"the block is {len(code)} bytes; at most {MAX_BLOCK_BYTES} are measured",
                         "give one basic block, not a whole function")
    return code


def decode(code: bytes) -> list[Instr]:
    """Every instruction; bytes that do not decode completely are a NotABlock."""
    import iced_x86
    fmt = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    out = []
    for ins in iced_x86.Decoder(64, code, iced_x86.DecoderOptions.NONE):
        if ins.code == iced_x86.Code.INVALID:
            raise NotABlock(f"the bytes at offset {ins.ip} do not decode as an x86-64 instruction"
                            + (" (the block ends inside an instruction)" if ins.ip + ins.len >= len(code) else ""),
                            "check that the block starts on an instruction boundary and is complete")
        text = fmt.format(ins)
        if ins.is_jcc_short_or_near or ins.is_jmp_short_or_near or ins.is_call_near:
            text = f"{_mnemonic(text)} {_where(ins.near_branch_target, len(code))}"
        out.append(Instr(ins.ip, ins.len, text, _mnemonic(text), ins.flow_control))
    return out


def _where(target: int, size: int) -> str:
    """A direct branch's target said against the block (iced prints the absolute address of a
    block decoded at 0, ``jne 000000000000000Dh``, which says nothing to whoever gave the bytes)."""
    if target >= 1 << 63:              # before the block: iced gives the address modulo 2**64
        target -= 1 << 64
    if target < 0:
        return f"to {-target} bytes before the block"
    if target == 0:
        return "to the block's start"
    if target < size:
        return f"to byte {target} of the block"
    if target == size:
        return "to the block's end"
    return f"to {target - size} bytes past the block's end"


def _mnemonic(text: str) -> str:
    words = text.split()
    # prefixes iced prints before the mnemonic
    while len(words) > 1 and words[0] in ("lock", "rep", "repe", "repne", "notrack", "bnd", "xacquire", "xrelease"):
        words = words[1:]
    return words[0] if words else ""


def block(code: bytes) -> Block:
    """Check that ``code`` is one basic block and drop its final branch (see the module docstring)."""
    instrs = decode(code)
    if not instrs:
        raise NotABlock("the block is empty", "give at least one instruction")
    for k, i in enumerate(instrs):
        m = i.mnemonic
        if m in _SYSCALLS or i.flow == 7:
            raise NotABlock(f"'{i.text}' at offset {i.offset} would need a system call or an interrupt",
                            "give the block without it: cyclebench neither runs nor predicts system calls")
        if i.flow == 9 or m in ("hlt", "ud0", "ud1", "ud2"):
            raise NotABlock(f"'{i.text}' at offset {i.offset} faults in user mode", "remove it")
        if i.flow == 8:
            raise NotABlock(f"'{i.text}' at offset {i.offset} starts or ends a transaction (TSX)",
                            "blocks with xbegin/xend/xabort are not measured")
        if i.flow in BRANCHES and k < len(instrs) - 1:
            raise NotABlock(f"not a basic block: '{i.text}' at offset {i.offset} is a "
                            f"{BRANCHES[i.flow]} before the block's end",
                            "give one basic block: only its last instruction may be a branch")
    dropped = instrs[-1] if instrs[-1].flow in BRANCHES else None
    body = instrs[:-1] if dropped else instrs
    if not body:
        raise NotABlock(f"the block is only its final {BRANCHES[dropped.flow]} ('{dropped.text}')",
                        "the final branch is not measured; give the instructions before it")
    notes = [f"final {BRANCHES[dropped.flow]} '{dropped.text}' dropped (not measured)"] if dropped else []
    return Block(code[:dropped.offset] if dropped else code, body, dropped, code, notes)
