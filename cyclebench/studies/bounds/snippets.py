"""Parts 1 and 2 as snippets for the runner: the bnd* forms and the software checks that replace
them (part 1), and the reference's ten check sequences before a load or a store, for three kinds
of check (part 2). Timing is ``instructions.sequence.measure_sequence`` (measure(): 1,000 copies,
a loop, differenced, TSC-calibrated cycles); this module only says what to run.

Registers (set by ``init``): rsi and rax hold the checked address, r8/r9 its lower and upper bound
(the software bounds registers), rbx = 0 the index of the address expressions, r12 the shadow base
of the ASan check (so that [addr >> 3 + r12] lands in the runner's R14 area: ASan uses a constant
displacement, 0x7fff8000, the same addressing form), and for the software bndldx/bndstx r12 the
pointer's slot, r13 a bounds directory and rax the pointer value, all in the R14 area. The checks'
branches jump to a label after the access and are never taken: the bounds hold, so every
instruction of a copy executes and the static count is exact."""
from __future__ import annotations

from dataclasses import dataclass

NOP = "runs as a NOP on this CPU"

_BOUNDS = "mov rax, r14; mov rsi, r14; lea r8, [r14-64]; lea r9, [r14+4096]; xor ebx, ebx"
_SHADOW = _BOUNDS + "; mov r12, rsi; shr r12, 3; neg r12; add r12, r14; mov byte ptr [r14], 0"
# a one-region bounds directory at r14+4096 pointing to a table whose entry for slot r12 is at r14+8192
_TABLE = ("mov r12, r14; lea rax, [r14+64]; lea r8, [r14+64]; lea r9, [r14+163]; "
          "mov r10, r12; shr r10, 20; shl r10, 3; lea r13, [r14+4096]; sub r13, r10; "
          "mov r10, r12; and r10d, 0xfffff; shl r10, 2; lea r11, [r14+8192]; sub r11, r10; mov [r14+4096], r11; "
          "mov [r14+8192], r8; mov [r14+8200], r9; mov [r14+8208], rax")
_DIR = "mov r10, r12; shr r10, 20; mov r11, [r13+r10*8]; "
_ENTRY = "mov r10, r12; and r10d, 0xfffff; shl r10, 2; add r11, r10; "


@dataclass(frozen=True)
class Row:
    name: str           # the reference's notation, or the software form's
    code: str
    init: str
    kind: str           # "bnd" (a hint-NOP here), "software", "asan"
    replaces: str = ""  # the bnd form a software row stands in for


def instruction_rows() -> list[Row]:
    """Every bnd* form (as the reference, plus bndcn), each followed by its software stand-in."""
    bnd = [("bndmk b, m", "bndmk bnd0, [rax+rbx*1+63]"),
           ("bndcl b, m", "bndcl bnd0, [rax+rbx*4]"), ("bndcl b, r", "bndcl bnd0, rax"),
           ("bndcu b, m", "bndcu bnd0, [rax+rbx*4]"), ("bndcu b, r", "bndcu bnd0, rax"),
           ("bndcn b, m", "bndcn bnd0, [rax+rbx*4]"), ("bndcn b, r", "bndcn bnd0, rax"),
           ("bndmov b, m", "bndmov bnd0, [r14]"), ("bndmov b, b", "bndmov bnd1, bnd0"),
           ("bndmov m, b", "bndmov [r14], bnd0"),
           ("bndldx b, m", "bndldx bnd0, [r14+rbx]"), ("bndstx m, b", "bndstx [r14+rbx], bnd0")]
    soft = {
        "bndmk b, m": ("lea + lea (bounds into two registers)", "lea r8, [rax]; lea r9, [rax+rbx*1+63]", _BOUNDS),
        "bndcl b, m": ("lea + cmp + jb", "lea r10, [rax+rbx*4]; cmp r10, r8; jb 9f; 9:", _BOUNDS),
        "bndcl b, r": ("cmp + jb", "cmp rax, r8; jb 9f; 9:", _BOUNDS),
        "bndcu b, m": ("lea + cmp + ja", "lea r10, [rax+rbx*4]; cmp r10, r9; ja 9f; 9:", _BOUNDS),
        "bndcu b, r": ("cmp + ja", "cmp rax, r9; ja 9f; 9:", _BOUNDS),
        "bndmov b, m": ("2 loads", "mov r8, [r14]; mov r9, [r14+8]", _BOUNDS),
        "bndmov b, b": ("2 register moves", "mov r10, r8; mov r11, r9", _BOUNDS),
        "bndmov m, b": ("2 stores", "mov [r14+16], r8; mov [r14+24], r9", _BOUNDS),
        "bndldx b, m": ("table walk + pointer compare + 2 loads (emulated bndldx)",
                        _DIR + _ENTRY + "cmp [r11+16], rax; jne 9f; mov r8, [r11]; mov r9, [r11+8]; 9:", _TABLE),
        "bndstx m, b": ("table walk + 3 stores (emulated bndstx)",
                        _DIR + "test r11, r11; jz 9f; " + _ENTRY + "mov [r11], r8; mov [r11+8], r9; mov [r11+16], rax; 9:",
                        _TABLE),
    }
    out = []
    for name, code in bnd:
        out.append(Row(name, code, _BOUNDS, "bnd"))
        if name in soft:
            label, scode, init = soft[name]
            out.append(Row(label, scode, init, "software", name))
    out.append(Row("ASan shadow check (mov + shr + cmp byte + jne)",
                   "mov r10, rax; shr r10, 3; cmp byte ptr [r10+r12], 0; jne 9f; 9:", _SHADOW, "asan",
                   "bndcl + bndcu"))
    return out


CHECKS = (None, "l r", "l m", "lu r", "lu m")        # the reference's rows, per access
CHECK_NAMES = {None: "", "l r": "bndcl r +", "l m": "bndcl m +", "lu r": "bndcl r + bndcu r +",
               "lu m": "bndcl m + bndcu m +"}
KINDS = ("bnd", "cmp", "asan")


def sequence(access: str, check: str | None, kind: str) -> Row:
    """One check sequence: ``access`` load or store, ``check`` one of CHECKS, ``kind`` one of KINDS.
    ASan has one shadow check whatever the bounds, so its lu rows are its l rows."""
    expr = "[rsi+rbx*4]" if check and check.endswith("m") else "[rsi]"
    mem = f"mov rdx, {expr}" if access == "load" else f"mov {expr}, rdx"
    if check is None:
        return Row(f"{access}", mem, _BOUNDS, "none")
    form = "m" if check.endswith("m") else "r"
    both = check.startswith("lu")
    if kind == "bnd":
        op = expr if form == "m" else "rsi"
        code = f"bndcl bnd0, {op}; " + (f"bndcu bnd0, {op}; " if both else "") + mem
        return Row(f"{CHECK_NAMES[check]} {access}", code, _BOUNDS, kind)
    if kind == "cmp":
        reg = "r10" if form == "m" else "rsi"
        pre = f"lea r10, {expr}; " if form == "m" else ""
        code = pre + f"cmp {reg}, r8; jb 9f; " + (f"cmp {reg}, r9; ja 9f; " if both else "") + mem + "; 9:"
        return Row(f"{CHECK_NAMES[check].replace('bnd', '')} {access}", code, _BOUNDS, kind)
    pre = f"lea r10, {expr}; " if form == "m" else "mov r10, rsi; "
    code = pre + "shr r10, 3; cmp byte ptr [r10+r12], 0; jne 9f; " + mem + "; 9:"
    return Row(f"shadow check ({form}) {access}", code, _SHADOW, kind)
