"""Which forms one iced ``Code`` gives: the choices that change what the CPU does, not the opcode.

Each rule is about an operand kind or an encoding family, the way uops.info (XED-to-XML) splits an
iform into instruction variants:

* r/m operand: register or memory;
* EVEX write masking (none, merge, zeroing) and embedded broadcast (memory forms);
* EVEX embedded rounding (``_ER``, register forms of opcodes with rounding control, written with
  ``{rn-sae}``: round to nearest, MXCSR's default) or exception suppression (``_SAE``, ``{sae}``);
* LOCK for lockable memory forms (not XCHG, which locks anyway);
* REP (``_REPE``, F3) for string instructions, REPNE (``_REPNE``, F2) where the instruction
  compares (CMPS, SCAS); F2 on the others is not defined by the manuals;
* address-computation modes for LEA (forms.LEA_MODES);
* the zero twin of a legacy general-register form with one 8-bit immediate (``SHL (R64, 0)``);
* the taken twin of a conditional branch (``JNZ_TAKEN (REL8)``; the plain form runs not taken,
  flow.py), where the set-up decides the condition: not LOOP/LOOPcc (flow.py);
* high-byte registers (:func:`high_byte_choices`) and the ModRM.rm group of a byte register beside
  an immediate (:func:`rm_group_choices`).
"""
from __future__ import annotations

import iced_x86

from .forms import LEA_MODES, Form

_STRING_MEMORY = ("rsi", "es_rdi")   # not "rdi": MASKMOVDQU stores through RDI


def is_string(slots) -> bool:
    """A string instruction: an implicit memory operand addressed by RSI or RDI."""
    return any(s.kind == "implicit_mem" and s.special in _STRING_MEMORY for s in slots)


def variants(oci: iced_x86.OpCodeInfo, slots, mnemonic: str):
    """(rm, mask, broadcast, lock, lea mode, rounding, rep) for every variant of one opcode."""
    rms = ["reg", "mem"] if any(s.kind == "rm" for s in slots) else [None]
    reps: list[str | None] = [None]
    if is_string(slots):
        reps += (["REPE"] if oci.can_use_rep_prefix else []) + (["REPNE"] if oci.can_use_repne_prefix else [])
    for rm in rms:
        has_mem = rm == "mem" or any(s.kind == "mem" for s in slots)
        masks: list[str | None] = [None]
        if oci.can_use_op_mask_register:
            masks = ([] if oci.require_op_mask_register else [None]) + ["merge"]
            if oci.can_use_zeroing_masking and not (rm == "mem" and slots[0].kind == "rm"):
                masks.append("zero")   # zeroing is invalid for memory destinations
        bcsts = [False, True] if has_mem and oci.can_broadcast else [False]
        locks = [False, True] if has_mem and oci.can_use_lock_prefix and mnemonic != "XCHG" else [False]
        leas = LEA_MODES if mnemonic == "LEA" else [None]
        roundings: list[str | None] = [None]
        evex_reg = not has_mem and oci.encoding == iced_x86.EncodingKind.EVEX
        if evex_reg and oci.can_use_rounding_control:
            roundings.append("ER")
        elif evex_reg and oci.can_suppress_all_exceptions:
            roundings.append("SAE")
        for mask in masks:
            for b in bcsts:
                for lock in locks:
                    for lea in leas:
                        for rounding in roundings:
                            for rep in reps:
                                yield rm, mask, b, lock, lea, rounding, rep


def has_zero_twin(form: Form) -> bool:
    """A legacy general-register form (registers, memory) whose one immediate is 8 bits wide."""
    imms = [op for op in form.operands if op.kind == "imm"]
    return (form.encoding == "LEGACY" and len(imms) == 1 and imms[0].bits == 8
            and not imms[0].slot.special
            and all(op.kind in ("imm", "mem") or (op.kind == "reg" and op.cls.startswith("GPR"))
                    for op in form.operands))


def has_taken_twin(form: Form) -> bool:
    """A conditional near branch other than LOOP/LOOPcc (uops.info measures Jcc with the flags
    clear and set, JRCXZ with RCX 0 and 1; flow.py says why LOOPcc has none)."""
    if form.build_error or form.skip_reason or not any(s.kind == "branch" for s in form._slots):
        return False
    try:
        ins = iced_x86.Instruction.create_branch(form.code, 0)
    except ValueError:          # not a near branch (XBEGIN)
        return False
    return ins.flow_control == iced_x86.FlowControl.CONDITIONAL_BRANCH and ins.mnemonic not in (
        iced_x86.Mnemonic.LOOP, iced_x86.Mnemonic.LOOPE, iced_x86.Mnemonic.LOOPNE)


def high_byte_choices(form: Form) -> list[tuple[int, ...]]:
    """Which byte-register operands may be high bytes (AH..BH): every non-empty subset, for a
    legacy form whose free registers are bytes, 16- or 32-bit (no REX prefix can be needed: never
    64-bit operands), beside immediates, memory and a fixed CL count. Its other registers are then
    the legacy eight (operands.LEGACY) and its memory base RDI (forms.memory_base)."""
    if form.encoding != "LEGACY" or form.build_error:
        return []
    free = [op.iced_index for op in form.operands if op.kind == "reg" and op.cls == "GPR8" and not op.fixed]
    others_ok = all(op.kind in ("imm", "mem") or (op.kind == "reg" and (
        (op.cls == "GPR8" and (not op.fixed or op.fixed == "CL")) or
        (op.cls in ("GPR16", "GPR32") and not op.fixed))) for op in form.operands)
    if not free or not others_ok:
        return []
    return [tuple(i for k, i in enumerate(free) if bits >> k & 1) for bits in range(1, 1 << len(free))]


def rm_group_choices(form: Form) -> list[int]:
    """uops.info's ``_R0``/``_R4`` split of a byte register in ModRM.rm beside an immediate: its
    low three bits 0-3 (AL..BL, R8B..R11B) or 4-7 (SPL..DIL, R12B..R15B, which need a REX prefix
    and are AH..BH without one), named ``ADC_R0 (R8, I8)`` and ``ADC_R4 (R8, I8)``."""
    if form.encoding != "LEGACY" or form.build_error or form.high8:
        return []
    rm = [op for op in form.operands if op.kind == "reg" and op.cls == "GPR8" and not op.fixed
          and op.slot.name.endswith(("_RM", "_OR_MEM"))]
    if len(rm) == 1 and any(op.kind == "imm" for op in form.operands):
        return [0, 4]
    return []
