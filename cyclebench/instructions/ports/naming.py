"""A block's instructions and the catalogue's names for their forms: the predictor's reading of
what it is given (assembly text through GNU as, or machine code bytes through iced-x86)."""
from __future__ import annotations

import iced_x86

from ...errors import AssemblyError, UsageError
from ..catalogue import Catalogue
from ..notation import lea_mode
from .model import Model


def assembled(text: str) -> bytes:
    """A block's text as machine code, each instruction assembled by GNU as, in order."""
    from ..gas import assemble_lines, block_statements, split_slot
    out = bytearray()
    for a in assemble_lines(block_statements(text)):
        if a.error or a.data is None:
            raise AssemblyError(f"GNU as rejected {a.line!r}: {a.error}", "check the instruction's syntax")
        out += a.data[:split_slot(a.data)[0].len]
    return bytes(out)


def decode(block: str | bytes) -> list[iced_x86.Instruction]:
    """Instructions of a block: bytes decoded as they are, text assembled with GNU as first."""
    dec = iced_x86.Decoder(64, assembled(block) if isinstance(block, str) else bytes(block))
    out = [ins for ins in dec]
    if any(ins.code == iced_x86.Code.INVALID for ins in out):
        raise UsageError("the block's bytes do not decode", "give whole x86-64 instructions")
    return out


def form_of(ins: iced_x86.Instruction, catalogue: Catalogue, model: Model | None = None) -> str | None:
    """The catalogue form an instruction is an instance of (the model's, when several fit)."""
    cands = [f for f in catalogue.by_code.get(ins.code, []) if f.build_error is None]
    mem = any(ins.op_kind(i) == iced_x86.OpKind.MEMORY for i in range(ins.op_count))
    cands = [f for f in cands if (f.memory_operand is not None) == mem or f.lea_mode] or cands
    if not cands:
        return None
    has_imm = any(ins.op_kind(i) in (iced_x86.OpKind.IMMEDIATE8, iced_x86.OpKind.IMMEDIATE8TO64,
                                     iced_x86.OpKind.IMMEDIATE8TO32, iced_x86.OpKind.IMMEDIATE8TO16)
                  for i in range(ins.op_count))
    zero = has_imm and ins.immediate8 == 0
    cands = [f for f in cands if f.imm_zero == zero] or cands
    if any(f.lea_mode for f in cands):       # LEA's addressing makes the form (3 parts are slower)
        cands = [f for f in cands if f.lea_mode == lea_mode(ins)]
        if not cands:
            return None
    cands = [f for f in cands if not f.high8] or cands
    if model is not None:
        cands = [f for f in cands if f.name in model.usage] or cands
    return cands[0].name
