"""What each iced-x86 ``OpCodeOperandKind`` is: operand class, width, fixed register, notation.

One table, :data:`SLOTS`, maps every operand-kind name to a :class:`Slot`.  Register classes are
``GPR8 GPR16 GPR32 GPR64 XMM YMM ZMM K MM ST SREG CR DR TR BND TMM``; memory operands are class
``MEM`` (their size comes from the concrete instruction's memory size); immediates are ``IMM``.
Also here: register pools (which concrete registers an instantiation may pick per class) and
register names, because both are facts about operand classes, not about any one form.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import iced_x86
from iced_x86 import Register as R


def _enum_names(cls) -> dict[int, str]:
    return {getattr(cls, n): n for n in dir(cls)
            if n.isupper() and not n.startswith("_") and isinstance(getattr(cls, n), int)}


OPERAND_KIND_NAMES = _enum_names(iced_x86.OpCodeOperandKind)
REGISTER_NAMES = _enum_names(iced_x86.Register)
REGISTER_BY_NAME = {v: k for k, v in REGISTER_NAMES.items()}
MNEMONIC_NAMES = _enum_names(iced_x86.Mnemonic)
CODE_NAMES = _enum_names(iced_x86.Code)
ENCODING_NAMES = {0: "LEGACY", 1: "VEX", 2: "EVEX", 3: "XOP", 4: "3DNOW", 5: "MVEX"}
FLOW_CONTROL_NAMES = _enum_names(iced_x86.FlowControl)


@dataclass(frozen=True)
class Slot:
    """How one operand position of an opcode is encoded and what it can hold."""

    kind: str                 # 'reg' | 'rm' (register or memory) | 'mem' | 'imm' | 'branch' | 'implicit_mem'
    cls: str                  # register class for reg/rm, 'MEM', 'IMM', 'BRANCH'
    bits: int = 0             # register / immediate width (0: from the instruction)
    fixed: int | None = None  # iced Register for a fixed operand (AL, CL, RAX, ST0, DX, ES...)
    imm_kind: int | None = None  # iced OpKind for immediates
    special: str = ""         # 'vsib', 'moffs', 'mib', 'sibmem', 'const1', 'xlat', ...
    name: str = ""            # the OpCodeOperandKind name (filled in below)


_GPR = {8: "GPR8", 16: "GPR16", 32: "GPR32", 64: "GPR64"}
K = iced_x86.OpKind
SLOTS: dict[str, Slot] = {}
for _b in (8, 16, 32, 64):
    for _suffix, _kind in (("_REG", "reg"), ("_RM", "reg"), ("_OPCODE", "reg"), ("_VVVV", "reg"),
                           ("_OR_MEM", "rm"), ("_REG_MEM", "reg"), ("_OR_MEM_MPX", "rm")):
        SLOTS[f"R{_b}{_suffix}"] = Slot(_kind, _GPR[_b], _b)
for _v, _b in (("XMM", 128), ("YMM", 256), ("ZMM", 512)):
    for _suffix, _kind in (("_REG", "reg"), ("_RM", "reg"), ("_VVVV", "reg"), ("_IS4", "reg"),
                           ("_IS5", "reg"), ("P3_VVVV", "reg"), ("_OR_MEM", "rm")):
        SLOTS[f"{_v}{_suffix}"] = Slot(_kind, _v, _b)
SLOTS.update({
    "K_REG": Slot("reg", "K", 64), "K_RM": Slot("reg", "K", 64), "K_VVVV": Slot("reg", "K", 64),
    "KP1_REG": Slot("reg", "K", 64), "K_OR_MEM": Slot("rm", "K", 64),
    "MM_REG": Slot("reg", "MM", 64), "MM_RM": Slot("reg", "MM", 64), "MM_OR_MEM": Slot("rm", "MM", 64),
    "TMM_REG": Slot("reg", "TMM", 8192), "TMM_RM": Slot("reg", "TMM", 8192),
    "TMM_VVVV": Slot("reg", "TMM", 8192),
    "BND_REG": Slot("reg", "BND", 128), "BND_OR_MEM_MPX": Slot("rm", "BND", 128),
    "CR_REG": Slot("reg", "CR", 64), "DR_REG": Slot("reg", "DR", 64), "TR_REG": Slot("reg", "TR", 32),
    "SEG_REG": Slot("reg", "SREG", 16),
    "STI_OPCODE": Slot("reg", "ST", 80),
    "ST0": Slot("reg", "ST", 80, fixed=R.ST0),
    "AL": Slot("reg", "GPR8", 8, fixed=R.AL), "CL": Slot("reg", "GPR8", 8, fixed=R.CL),
    "AX": Slot("reg", "GPR16", 16, fixed=R.AX), "DX": Slot("reg", "GPR16", 16, fixed=R.DX),
    "EAX": Slot("reg", "GPR32", 32, fixed=R.EAX), "RAX": Slot("reg", "GPR64", 64, fixed=R.RAX),
    "ES": Slot("reg", "SREG", 16, fixed=R.ES), "CS": Slot("reg", "SREG", 16, fixed=R.CS),
    "SS": Slot("reg", "SREG", 16, fixed=R.SS), "DS": Slot("reg", "SREG", 16, fixed=R.DS),
    "FS": Slot("reg", "SREG", 16, fixed=R.FS), "GS": Slot("reg", "SREG", 16, fixed=R.GS),
    "MEM": Slot("mem", "MEM"), "MEM_MPX": Slot("mem", "MEM", special="mpx"),
    "MEM_MIB": Slot("mem", "MEM", special="mib"), "SIBMEM": Slot("mem", "MEM", special="sibmem"),
    "MEM_OFFS": Slot("mem", "MEM", special="moffs"),
    "SEG_RSI": Slot("implicit_mem", "MEM", special="rsi"),
    "SEG_RDI": Slot("implicit_mem", "MEM", special="rdi"),
    "ES_RDI": Slot("implicit_mem", "MEM", special="es_rdi"),
    "SEG_RBX_AL": Slot("implicit_mem", "MEM", special="xlat"),
    "IMM8": Slot("imm", "IMM", 8, imm_kind=K.IMMEDIATE8),
    "IMM8_CONST_1": Slot("imm", "IMM", 8, imm_kind=K.IMMEDIATE8, special="const1"),
    "IMM16": Slot("imm", "IMM", 16, imm_kind=K.IMMEDIATE16),
    "IMM32": Slot("imm", "IMM", 32, imm_kind=K.IMMEDIATE32),
    "IMM64": Slot("imm", "IMM", 64, imm_kind=K.IMMEDIATE64),
    "IMM8SEX16": Slot("imm", "IMM", 8, imm_kind=K.IMMEDIATE8TO16),
    "IMM8SEX32": Slot("imm", "IMM", 8, imm_kind=K.IMMEDIATE8TO32),
    "IMM8SEX64": Slot("imm", "IMM", 8, imm_kind=K.IMMEDIATE8TO64),
    "IMM32SEX64": Slot("imm", "IMM", 32, imm_kind=K.IMMEDIATE32TO64),
    "IMM4_M2Z": Slot("imm", "IMM", 8, imm_kind=K.IMMEDIATE8, special="m2z"),
})
for _n in ("MEM_VSIB32X", "MEM_VSIB32Y", "MEM_VSIB32Z", "MEM_VSIB64X", "MEM_VSIB64Y", "MEM_VSIB64Z"):
    SLOTS[_n] = Slot("mem", "MEM", special="vsib")
for _n in ("BR16_1", "BR16_2", "BR32_1", "BR32_4", "BR64_1", "BR64_4", "BRDISP_2", "BRDISP_4",
           "FARBR2_2", "FARBR4_2", "XBEGIN_2", "XBEGIN_4"):
    SLOTS[_n] = Slot("branch", "BRANCH", special=_n)

SLOTS = {k: replace(v, name=k) for k, v in SLOTS.items()}


def slot_of(op_code_operand_kind: int) -> Slot:
    return SLOTS[OPERAND_KIND_NAMES[op_code_operand_kind]]


# Registers an instantiation may pick, in order of preference, per class.  R14 (memory base),
# R15 (loop counter), RSP and RBP are never picked; RAX and XMM0/K0/MM0/ST0 come last because
# many opcodes use them implicitly or have short forms for them.
def _gprs(names):
    return tuple(REGISTER_BY_NAME[n] for n in names)


POOLS: dict[str, tuple[int, ...]] = {
    "GPR64": _gprs(["RBX", "RCX", "RDX", "R8", "R9", "R10", "R11", "R12", "R13", "RSI", "RDI", "RAX"]),
    "GPR32": _gprs(["EBX", "ECX", "EDX", "R8D", "R9D", "R10D", "R11D", "R12D", "R13D", "ESI", "EDI",
                    "EAX"]),
    "GPR16": _gprs(["BX", "CX", "DX", "R8W", "R9W", "R10W", "R11W", "R12W", "R13W", "SI", "DI", "AX"]),
    "GPR8": _gprs(["BL", "CL", "DL", "R8L", "R9L", "R10L", "R11L", "R12L", "R13L", "SIL", "DIL",
                   "AL"]),
    # a form with a high-byte register (AH..BH) cannot have a REX prefix: its low bytes are the
    # legacy four (uops.info's R8h / R8l)
    "GPR8H": _gprs(["BH", "CH", "DH", "AH"]),
    "GPR8L": _gprs(["BL", "CL", "DL", "AL"]),
    # ... and its wider registers (never DI: RDI is such a form's memory base, forms.memory_base)
    "GPR16L": _gprs(["BX", "CX", "DX", "SI", "AX"]),
    "GPR32L": _gprs(["EBX", "ECX", "EDX", "ESI", "EAX"]),
    # a byte register in ModRM.rm beside an immediate, by its number's low bits (uops.info's
    # _R0 / _R4): 0-3 without REX or with REX.B, 4-7 with a REX prefix (SPL..DIL, R12B..R15B)
    "GPR8R0": _gprs(["BL", "CL", "DL", "R8L", "R9L", "R10L", "R11L", "AL"]),
    "GPR8R4": _gprs(["SIL", "DIL", "R12L", "R13L"]),
    "XMM": tuple(REGISTER_BY_NAME[f"XMM{i}"] for i in list(range(1, 16)) + [0]),
    "YMM": tuple(REGISTER_BY_NAME[f"YMM{i}"] for i in list(range(1, 16)) + [0]),
    "ZMM": tuple(REGISTER_BY_NAME[f"ZMM{i}"] for i in list(range(1, 16)) + [0]),
    "K": tuple(REGISTER_BY_NAME[f"K{i}"] for i in list(range(1, 8)) + [0]),
    "MM": tuple(REGISTER_BY_NAME[f"MM{i}"] for i in list(range(1, 8)) + [0]),
    "ST": tuple(REGISTER_BY_NAME[f"ST{i}"] for i in list(range(1, 8)) + [0]),
    "SREG": (R.DS,),
    "CR": (R.CR0,), "DR": (R.DR0,), "TR": (R.TR3,),
    "BND": tuple(REGISTER_BY_NAME[f"BND{i}"] for i in range(4)),
    "TMM": tuple(REGISTER_BY_NAME[f"TMM{i}"] for i in range(8)),
}
VECTOR_CLASSES = ("XMM", "YMM", "ZMM")      # the vector register classes, masks and MMX apart
# EVEX forms may also use the upper 16 vector registers (only for throughput copies: the default
# instantiation stays in 0..15 so that EVEX and VEX text look alike).
EVEX_EXTRA = {v: tuple(REGISTER_BY_NAME[f"{v}{i}"] for i in range(16, 32)) for v in VECTOR_CLASSES}
NEVER_PICK = frozenset({R.R14, R.R15, R.RSP, R.RBP})


def register_name(reg: int) -> str:
    """iced Register -> assembler name (``rax``, ``xmm3``, ``st(1)``, ``r8b``)."""
    n = REGISTER_NAMES[reg].lower()
    if n.startswith("st") and n[2:].isdigit():
        return f"st({n[2:]})"
    if n.startswith("r") and n.endswith("l") and n[1:-1].isdigit():
        return n[:-1] + "b"
    return n


def register_id(r: int | str) -> int:
    """The iced-x86 register ``r`` names: a register id as is, or a name in any case as the
    assembly text or a pair label gives it (``rcx``, ``(XMM1)``; GNU's ``r8b`` is iced's R8L)."""
    if isinstance(r, str):
        name = r.strip().upper().replace("(", "").replace(")", "")
        if name.endswith("B") and name[:-1].startswith("R") and name[1:-1].isdigit():
            name = name[:-1] + "L"
        return REGISTER_BY_NAME[name]
    return r


def register_class(reg: int) -> str:
    """iced Register -> operand class (GPR64, XMM, K, ...)."""
    n = REGISTER_NAMES[reg]
    for cls, pool in POOLS.items():
        if reg in pool:
            return cls
    for cls in VECTOR_CLASSES:
        if n.startswith(cls):
            return cls
    if n in ("R14", "R15", "RSP", "RBP"):
        return "GPR64"
    if n in ("R14D", "R15D", "ESP", "EBP"):
        return "GPR32"
    if n in ("R14W", "R15W", "SP", "BP"):
        return "GPR16"
    if n in ("R14L", "R15L", "SPL", "BPL"):
        return "GPR8"
    if n in ("ES", "CS", "SS", "DS", "FS", "GS"):
        return "SREG"
    if n == "RIP" or n == "EIP":
        return "IP"
    return n.rstrip("0123456789")


def full_register(reg: int) -> int:
    """The architectural register a partial one lives in (EAX -> RAX, XMM3 -> ZMM3)."""
    return iced_x86.RegisterInfo(reg).full_register


GPR_BITS = {"GPR8": 8, "GPR8H": 8, "GPR8L": 8, "GPR8R0": 8, "GPR8R4": 8, "GPR16": 16, "GPR16L": 16,
            "GPR32": 32, "GPR32L": 32, "GPR64": 64}
# classes whose registers alias one another's across widths (a chain can pass between them)
FAMILY = {**{c: "GPR" for c in GPR_BITS}, "XMM": "VEC", "YMM": "VEC", "ZMM": "VEC", "K": "K", "MM": "MM"}


def reg_notation(cls: str) -> str:
    """uops.info operand notation of a register class (GPR64 -> R64, ST -> ST(i))."""
    if cls in GPR_BITS:
        return f"R{GPR_BITS[cls]}" + {"GPR8H": "h", "GPR8L": "l"}.get(cls, "")  # R8l: beside an R8h
    return {"ST": "ST(i)", "SREG": "SREG"}.get(cls, cls)
