"""GNU-as text (Intel syntax, noprefix) of a concrete iced-x86 instruction of a form.

iced-x86's Intel formatter (hex as 0x.., sizes always shown, RIP-relative addresses as ``[rip+d]``)
with what GNU as wants instead: no size keyword for x87 environment operands, no spelled-out
implicit ``st``, embedded rounding as an operand of its own (``{rn-sae}``), a gather's or scatter's
mask on its first operand (``zmm1{k1}``), and the pseudo-prefixes that pin an encoding (``{evex}``,
``{load}``/``{store}``). instantiate.verified checks the result by assembling it.
"""
from __future__ import annotations

import re

import iced_x86

from .forms import Form

_FMT = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
_FMT.hex_prefix = "0x"
_FMT.hex_suffix = ""
_FMT.uppercase_hex = False
_FMT.space_after_operand_separator = True
_FMT.memory_size_options = iced_x86.MemorySizeOptions.ALWAYS
_FMT.show_branch_size = False
_FMT.add_leading_zero_to_hex_numbers = False
_FMT.small_hex_numbers_in_decimal = False
_FMT.rip_relative_addresses = True     # [rip+0xff9], never the absolute [0x1000] it points to


def formatted(ins: iced_x86.Instruction) -> str:
    text = _FMT.format(ins)
    # x87 environment/state operands: GNU as knows no size keyword for them
    for kw in ("fpuenv14 ptr ", "fpuenv28 ptr ", "fpustate94 ptr ", "fpustate108 ptr "):
        text = text.replace(kw, "")
    # iced's Intel syntax spells out the implicit st of x87 forms; GNU as wants it left out
    if text.startswith("f") and _FMT.operand_count(ins) > ins.op_count:
        ops = [_FMT.format_operand(ins, i) for i in range(_FMT.operand_count(ins))
               if _FMT.get_instruction_operand(ins, i) is not None]
        text = _FMT.format_mnemonic(ins) + (" " + ", ".join(ops) if ops else "")
    if text.startswith("prefetch_exclusive "):
        text = "prefetch " + text[len("prefetch_exclusive "):]
    return _vsib_mask(_rounding_operand(text))


def _vsib_mask(text: str) -> str:
    """iced writes a gather's or scatter's mask as an operand (``zmm1, k1, [..]``); GNU as wants
    it on the first operand (``zmm1{k1}, [..]``)."""
    if not re.search(r"\+[xyz]mm\d+", text):
        return text
    return re.sub(r"^(\S+ (?:[^,]*?))(, )(k[1-7])(, )", r"\1{\3}\4", text)


_ROUNDING = re.compile(r"\{(?:(rne|rd|ru|rz)-sae|sae)\}")


def _rounding_operand(text: str) -> str:
    """iced writes embedded rounding on the destination (``zmm1{rne-sae}``); GNU as wants an operand
    of its own (``{rn-sae}``), last or before a trailing immediate."""
    m = _ROUNDING.search(text)
    if not m:
        return text
    rc = "{" + {"rne": "rn"}.get(m.group(1), m.group(1)) + "-sae}" if m.group(1) else "{sae}"
    head, _, ops = text.replace(m.group(0), "").partition(" ")
    parts = ops.split(", ")
    at = len(parts) - 1 if re.fullmatch(r"-?(0x)?[0-9a-f]+", parts[-1]) else len(parts)
    return head + " " + ", ".join(parts[:at] + [rc] + parts[at:])


def _prefix(form: Form) -> str:
    out = "{evex} " if form.encoding == "EVEX" else ""
    n_regs = sum(1 for op in form.operands if op.kind == "reg" and not op.is_mask)
    if form.rm != "mem" and n_regs >= 2 and all(op.kind in ("reg", "imm") for op in form.operands):
        rmish = [s.name.endswith(("_RM", "_OR_MEM")) for s in form._slots]
        if rmish[0]:
            out += "{store} "
        elif any(rmish[1:]) and form._slots[0].name.endswith("_REG"):
            out += "{load} "
    return out


def text_for(form: Form, ins: iced_x86.Instruction) -> str:
    text = formatted(ins)
    if form.lock and not text.startswith("lock "):
        text = "lock " + text
    return _prefix(form) + text


def bytes_text(data: bytes, comment: str) -> str:
    return ".byte " + ", ".join(f"0x{b:02x}" for b in data) + f"  # {comment}"
