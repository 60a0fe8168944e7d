"""The instruction catalogue: every 64-bit-mode instruction form iced-x86 knows, named uops.info-style.

Enumeration: for each iced ``Code`` valid in 64-bit mode, one form per variant (variants.py:
register or memory, masking, broadcast, ``_ER``/``_SAE``, LOCK, REP, LEA's addressing modes, a
zero immediate, high-byte registers, a byte register's ModRM.rm group).

Each form is built as a concrete iced ``Instruction`` (registers from operands.POOLS, memory
``[r14+64]``, or ``[rdi+64]`` beside a high-byte register, which rules out REX prefixes) and run through ``InstructionInfoFactory`` for operand access, implicit registers
and flags; ``Instruction.cpuid_features()`` gives its CPUID features.

Names: ``MNEMONIC[_REPE|_REPNE][_R0|_R4][_LOCK][_ER|_SAE][_Z][_LEA-MODE] (OP, OP, ...)`` with
uops.info operand notation (R8..R64, R8h/R8l, XMM/YMM/ZMM, K, MM, ST(i), M<bits>, M<elem>_1to<n>,
VSIB_<index vector>, I<bits>, fixed registers by name, ``1`` for the shift-by-one constant);
implicit operands are not listed (nor any operand of a string instruction); a form without listed
operands is just its mnemonic (``CPUID``, ``STOSQ_REPE``).  Condition codes use XED's spelling as uops.info does (``CMOVNZ``,
``SETNBE``).  Where two forms would get the same name, the EVEX one gets ``_EVEX``, then both get
their opcode byte (``MOV_89 (R64, R64)`` / ``MOV_8B (R64, R64)``), and as a last resort the iced
Code name.

Safety: see skips.py for forms that are listed but not offered, and machine/features.py for CPU support.
"""
from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from dataclasses import replace

import iced_x86

from . import catalogue_cache, flow, skips, vsib
from .variants import has_taken_twin, has_zero_twin, high_byte_choices, is_string, rm_group_choices, variants
from ..machine.features import CpuFeatures, feature_name, this_cpu
from .forms import (Choices, Form, ImplicitOperand, Operand, build, divider_width, encode, lea_parts, memory_base,
                    pick_registers)
from .operands import (CODE_NAMES, ENCODING_NAMES, MNEMONIC_NAMES, REGISTER_BY_NAME, VECTOR_CLASSES, full_register,
                       reg_notation, register_class, register_name, slot_of)

_CC = {"A": "NBE", "AE": "NB", "B": "B", "BE": "BE", "E": "Z", "G": "NLE", "GE": "NL", "L": "L",
       "LE": "LE", "NE": "NZ", "NO": "NO", "NP": "NP", "NS": "NS", "O": "O", "P": "P", "S": "S"}
_RENAMES = {"XLATB": "XLAT", "WAIT": "FWAIT"}
_FLAG_BITS = {getattr(iced_x86.RflagsBits, n): n for n in dir(iced_x86.RflagsBits)
              if n.isupper() and n != "NONE"}
_READS = {iced_x86.OpAccess.READ, iced_x86.OpAccess.COND_READ, iced_x86.OpAccess.READ_WRITE,
          iced_x86.OpAccess.READ_COND_WRITE}
_WRITES = {iced_x86.OpAccess.WRITE, iced_x86.OpAccess.COND_WRITE, iced_x86.OpAccess.READ_WRITE,
           iced_x86.OpAccess.READ_COND_WRITE}
_INFO = iced_x86.InstructionInfoFactory()
_MEMORY_SIZE_NAMES = {getattr(iced_x86.MemorySize, n): n for n in dir(iced_x86.MemorySize) if n.isupper()}


def xed_mnemonic(iced_name: str) -> str:
    """iced mnemonic name -> the XED/uops.info spelling (CMOVNE -> CMOVNZ)."""
    for prefix in ("CMOV", "SET", "J"):
        if iced_name.startswith(prefix) and iced_name[len(prefix):] in _CC:
            return prefix + _CC[iced_name[len(prefix):]]
    return _RENAMES.get(iced_name, iced_name)


def _flags(bits: int) -> frozenset[str]:
    return frozenset(n for b, n in _FLAG_BITS.items() if bits & b)


def _raw_operands(form: Form, slots) -> tuple[Operand, ...]:
    ops: list[Operand] = []
    for i, s in enumerate(slots):
        if s.kind == "rm":
            kind, cls = ("reg", s.cls) if form.rm == "reg" else ("mem", "MEM")
        else:
            kind, cls = s.kind, s.cls
        if form.high8 and kind == "reg" and s.fixed is None and cls in ("GPR8", "GPR16", "GPR32"):
            cls = ("GPR8H" if i in form.high8 else "GPR8L") if cls == "GPR8" else cls + "L"
        elif form.rm_group is not None and kind == "reg" and cls == "GPR8" and s.name.endswith(("_RM", "_OR_MEM")):
            cls = f"GPR8R{form.rm_group}"
        ops.append(Operand(pos=0, iced_index=i, kind=kind, cls=cls, bits=s.bits, notation="",
                           slot=s))
        if i == 0 and form.mask:
            ops.append(Operand(pos=0, iced_index=None, kind="reg", cls="K", bits=64, notation="K",
                               read=True))
    return tuple(replace(op, pos=p) for p, op in enumerate(ops))


def _broadcast_count(memory_size: int, bits: int, vec_bits: int) -> int:
    """Elements an embedded broadcast fills: iced names the width it fills (BROADCAST256_FLOAT64 is
    ``1to4``), which is not the widest register where a conversion narrows or widens."""
    m = re.match(r"BROADCAST(\d+)_", _MEMORY_SIZE_NAMES.get(memory_size, ""))
    width = int(m.group(1)) if m else vec_bits
    return width // bits if bits else 0


def _finish(form: Form, ins: iced_x86.Instruction, regs: dict[int, int]) -> None:
    """Fill in access, notation, implicit operands, flags and features from the concrete ``ins``."""
    info = _INFO.info(ins)
    explicit_full = {full_register(r) for r in regs.values()}
    if form.mask:
        explicit_full.add(ins.op_mask)
    vec_bits = max((op.bits for op in form.operands if op.cls in VECTOR_CLASSES), default=0)
    ops = []
    for op in form.operands:
        if op.is_mask:
            ops.append(op)
            continue
        acc = info.op_access(op.iced_index)
        read, write = acc in _READS, acc in _WRITES
        if op.kind == "reg" and acc == iced_x86.OpAccess.COND_WRITE:
            read = True  # cmovcc & co.: the old value survives when the condition is false
        if op.kind == "reg" and write and op.bits in (8, 16) and op.cls.startswith("GPR") \
                and not is_string(form._slots):
            # an 8- or 16-bit write merges into the full register: its old value is an input
            # (uops.info's operand model; MOV (R16, M16) op0 -> op0 is its published 1), but not
            # for a string instruction's accumulator, which uops.info lists as no operand: LODSB
            # publishes [5;≤6] where AL -> AL would read 1 (and the form alone runs 3 a copy)
            read = True
        if op.kind == "reg" and write and form.mask == "merge" and op.cls in VECTOR_CLASSES:
            # merge masking keeps the elements the mask leaves, so the destination is an input in
            # uops.info's (XED's) operand model even where the form never keeps one (VBLENDM*)
            read = True
        if op.kind == "imm":
            read = False
        kind, notation, bits, fixed = op.kind, "", op.bits, None
        if op.kind == "reg":
            if op.slot.fixed is not None:
                fixed = register_name(op.slot.fixed).upper()
                notation = fixed
            else:
                notation = reg_notation(op.cls)
        elif op.kind == "mem":
            msi = iced_x86.MemorySizeInfo(ins.memory_size)
            bits = msi.size * 8
            if acc == iced_x86.OpAccess.NO_MEM_ACCESS:
                kind = "agen"
            if op.slot.special == "vsib":    # uops.info names the index vector: VSIB_YMM
                notation = "VSIB_" + {"X": "XMM", "Y": "YMM", "Z": "ZMM"}[op.slot.name[-1]]
            elif form.broadcast and msi.is_broadcast:
                notation = f"M{bits}_1to{_broadcast_count(ins.memory_size, bits, vec_bits)}"
            else:
                notation = f"M{bits}" if bits else "M"
        elif op.kind == "implicit_mem":
            bits = iced_x86.MemorySizeInfo(ins.memory_size).size * 8
            notation = f"M{bits}"
        elif op.kind == "imm":
            notation = "1" if op.slot.special == "const1" else "0" if form.imm_zero else f"I{op.bits}"
        elif op.kind == "branch":
            notation = "REL8" if op.slot.name.endswith("_1") else "REL32"
        ops.append(replace(op, kind=kind, notation=notation, bits=bits, read=read, write=write,
                           fixed=fixed))
    form.operands = tuple(ops)

    base = memory_base(form)    # the harness's, not an operand
    mem_regs = set()
    for m in info.used_memory():
        for r in (m.base, m.index):
            if r != iced_x86.Register.NONE:
                mem_regs.add(full_register(r))
    implicit: dict[str, list[bool]] = {}
    for u in info.used_registers():
        full = full_register(u.register)
        if full in explicit_full or register_class(u.register) == "SREG":
            continue
        if full in mem_regs and u.access in (iced_x86.OpAccess.READ,) and \
                full in (base, full_register(ins.memory_index)):
            continue
        if full == base or (form.lea_mode and full == full_register(ins.memory_index)):
            continue
        rw = implicit.setdefault(register_name(u.register), [False, False])
        rw[0] |= u.access in _READS
        rw[1] |= u.access in _WRITES
    form.implicit = tuple(ImplicitOperand(n, r, w) for n, (r, w) in implicit.items())
    explicit_mem = any(op.kind == "mem" for op in form.operands)
    form.implicit_memory = tuple(
        sorted({("read" if m.access in _READS else "") + ("write" if m.access in _WRITES else "")
                for m in info.used_memory()
                if not (explicit_mem and full_register(m.base) == base)} - {""}))
    form.flags_read = _flags(ins.rflags_read)
    form.flags_written = _flags(ins.rflags_modified)
    form.cpuid_features = tuple(feature_name(f) for f in ins.cpuid_features())


def implicit_avoid(form: Form) -> frozenset[int]:
    """Full registers an instantiation must not pick for explicit operands (used implicitly)."""
    out = set()
    for imp in form.implicit:
        n = imp.register.upper()
        if n.startswith("ST("):
            continue
        if n in REGISTER_BY_NAME:
            out.add(full_register(REGISTER_BY_NAME[n]))
    if any(op.kind == "implicit_mem" and op.slot.special == "xlat" for op in form.operands):
        out |= {iced_x86.Register.RBX, iced_x86.Register.RAX}
    return frozenset(out | vsib.avoid(form))


def _zero_twin(args: tuple, form: Form) -> Form:
    """The form with its 8-bit immediate 0 (uops.info's ``(R64, 0)`` forms).  iced-x86 gives such an
    instance the flags of the count it has (none for a rotate by 0); XED's operand model, which
    uops.info measures by, keeps the opcode's flags, conditionally written."""
    twin = _make(*args, imm_zero=True, high8=form.high8, rm_group=form.rm_group)
    twin.flags_if_counted = form.flags_read | form.flags_written
    return twin


def _make(code: int, oci, slots, rm, mask, bcst, lock, lea, rounding, rep, cpu: CpuFeatures,
          imm_zero=False, high8=(), rm_group=None, taken=False) -> Form:
    iced_mn = MNEMONIC_NAMES[oci.mnemonic]
    form = Form(code=code, code_name=CODE_NAMES[code], mnemonic=xed_mnemonic(iced_mn),
                encoding=ENCODING_NAMES[oci.encoding], rm=rm, mask=mask, broadcast=bcst,
                lock=lock, lea_mode=lea, rounding=rounding, rep=rep, imm_zero=imm_zero, taken=taken,
                high8=tuple(high8), rm_group=rm_group,
                instruction_string=oci.instruction_string,
                op_code_string=oci.op_code_string, _slots=tuple(slots))
    form.operands = _raw_operands(form, slots)
    ins = None
    try:
        avoid: frozenset[int] = frozenset()
        for _ in range(3):
            regs = pick_registers(form, slots, avoid=avoid)
            indexed = bool(lea and lea_parts(lea)[1])
            choices = Choices(regs=regs, base=memory_base(form),
                              index=iced_x86.Register.RCX if indexed else
                              vsib.index_register(form) or iced_x86.Register.NONE)
            if indexed:
                regs = pick_registers(form, slots, avoid=avoid | {iced_x86.Register.RCX})
                choices.regs = regs
            ins = build(form, choices)
            _finish(form, ins, regs)
            new_avoid = implicit_avoid(form)
            if {full_register(r) for r in regs.values()
                    if form.operands and True} & new_avoid - {full_register(r) for p, r in regs.items()
                                                             if form.operands[p].fixed}:
                avoid = new_avoid
                form.operands = _raw_operands(form, slots)
                continue
            break
        encode(ins)
    except Exception as e:  # iced refuses the combination: report, never crash the catalogue
        form.build_error = f"cannot build a concrete instance: {e}"
    lacks, unknown = cpu.missing(form.cpuid_features or
                                 tuple(feature_name(f) for f in ins.cpuid_features()) if ins else ())
    if lacks:
        form.unsupported = "not supported by this CPU: lacks " + ", ".join(lacks)
    elif unknown:
        form.unsupported = "cannot tell whether this CPU supports " + ", ".join(unknown)
    form.skip_reason = skips.skip_reason(oci, ins, iced_mn, form.cpuid_features, form.operands,
                                         cpu.has)
    notes = []
    if iced_mn == "CPUID" and "hypervisor" in cpu.flags:
        notes.append("CPUID exits to the hypervisor in a VM: the cost includes the VM exit")
    if divider_width(form) is not None:
        notes.append("needs a non-zero divisor and a small dividend: instantiate() sets them up")
    if vsib.vsib_operand(form) is not None:
        notes.append(vsib.NOTE)
    if rep:
        notes.append("data-dependent: measured with RCX = 0, the start-up cost of a REP string "
                     "instruction; each element adds more")
    notes += flow.notes(form, ins)
    form.notes = tuple(notes)
    return form


def _notation_list(form: Form) -> list[str]:
    if is_string(form._slots):
        return []       # uops.info lists no operands of a string instruction: all are implicit
    out = []
    for op in form.operands:
        if op.kind == "implicit_mem" or (op.kind == "agen" and form.lea_mode):
            continue
        out.append(op.notation)
    return out


def _stem(form: Form) -> str:
    stem = form.mnemonic
    if form.rep:
        stem += "_" + form.rep
    if form.rm_group is not None:
        stem += f"_R{form.rm_group}"
    if form.lock:
        stem += "_LOCK"
    if form.rounding:
        stem += "_" + form.rounding
    if form.taken:
        stem += "_TAKEN"
    if form.mask == "zero":
        stem += "_Z"
    if form.lea_mode:
        stem += "_" + form.lea_mode
    return stem


def _compose(stem: str, form: Form) -> str:
    ops = _notation_list(form)
    return f"{stem} ({', '.join(ops)})" if ops else stem


_ENC_ORDER = {"LEGACY": 0, "VEX": 1, "XOP": 2, "EVEX": 3, "3DNOW": 4, "MVEX": 5}


def _assign_names(forms: list[Form]) -> None:
    stems = {id(f): _stem(f) for f in forms}
    for f in forms:
        f.base_name = _compose(stems[id(f)], f)

    def groups():
        g = defaultdict(list)
        for f in forms:
            g[_compose(stems[id(f)], f)].append(f)
        return [v for v in g.values() if len(v) > 1]

    for group in groups():
        encs = {f.encoding for f in group}
        if len(encs) > 1:
            first = min(encs, key=_ENC_ORDER.get)
            for f in group:
                if f.encoding != first:
                    stems[id(f)] = stems[id(f)].replace(f.mnemonic, f"{f.mnemonic}_{f.encoding}", 1)
    for group in groups():
        if len({iced_x86.OpCodeInfo(f.code).op_code for f in group}) > 1:
            for f in group:
                opc = iced_x86.OpCodeInfo(f.code).op_code & 0xFF
                stems[id(f)] = stems[id(f)].replace(f.mnemonic, f"{f.mnemonic}_{opc:02X}", 1)
    for group in groups():
        # the plain name to the form in the mode's default operand and address size: a near
        # branch or stack operation without 66/67 (uops.info's JNZ, RET_NEAR, LEAVE; LEAVE_W is 16-bit)
        group.sort(key=_not_mode_default)
        for f in group[1:]:
            stems[id(f)] = stems[id(f)].replace(f.mnemonic, f"{f.mnemonic}_{f.code_name}", 1)
    for f in forms:
        f.name = _compose(stems[id(f)], f)


def _not_mode_default(form: Form) -> bool:
    oci = iced_x86.OpCodeInfo(form.code)
    return not (oci.default_op_size64 and oci.address_size in (0, 64))


class Catalogue:
    """All forms, with lookups.  ``Catalogue.load()`` returns the cached one for this CPU."""

    def __init__(self, forms: list[Form]):
        self.forms = forms
        self.by_name = {f.name: f for f in forms}
        self._upper = {normalize_name(f.name): f for f in forms}
        self.by_mnemonic: dict[str, list[Form]] = defaultdict(list)
        self.by_code: dict[int, list[Form]] = defaultdict(list)
        for f in forms:
            self.by_mnemonic[f.mnemonic].append(f)
            self.by_code[f.code].append(f)

    @classmethod
    def build(cls, cpu: CpuFeatures | None = None) -> "Catalogue":
        cpu = cpu or this_cpu()
        forms: list[Form] = []
        for code in sorted(CODE_NAMES):
            oci = iced_x86.OpCodeInfo(code)
            if not oci.is_instruction or not oci.mode64:
                continue
            slots = [slot_of(k) for k in oci.op_kinds()]
            mn = MNEMONIC_NAMES[oci.mnemonic]
            for variant in variants(oci, slots, mn):
                args = (code, oci, slots, *variant, cpu)
                plain = _make(*args)
                group = [plain] + [_make(*args, high8=h) for h in high_byte_choices(plain)]
                if rm_group_choices(plain):
                    group = [_make(*args, rm_group=g) for g in rm_group_choices(plain)] + group[1:]
                forms += group + [_zero_twin(args, f) for f in group if has_zero_twin(f)]
                if has_taken_twin(plain):
                    forms.append(_make(*args, taken=True))
        _assign_names(forms)
        return cls(forms)

    @classmethod
    def load(cls) -> "Catalogue":
        return _default_catalogue()

    def get(self, name: str) -> Form | None:
        """Exact uops.info-style name (case-insensitive, whitespace-insensitive)."""
        return self._upper.get(normalize_name(name))

    def offered(self) -> list[Form]:
        return [f for f in self.forms if f.offered]

    def with_extension(self, extension: str) -> list[Form]:
        key = _ext_key(extension)
        return [f for f in self.forms if any(_ext_key(x) == key for x in f.cpuid_features)]

    def extensions(self) -> set[str]:
        return {x for f in self.forms for x in f.cpuid_features}

    def reasons(self) -> Counter:
        """How many forms are not offered, per reason (the first that applies)."""
        return Counter(f.reason for f in self.forms if f.reason)

    def __len__(self) -> int:
        return len(self.forms)

    def __iter__(self):
        return iter(self.forms)


def _ext_key(s: str) -> str:
    return s.upper().replace("_", "").replace("-", "")


@functools.lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """Canonical spacing and case of a uops.info-style name: ``imul(r64,r64)`` -> ``IMUL (R64, R64)``
    (kept: a table's comparison asks it of the same names hundreds of thousands of times)."""
    s = " ".join(name.strip().split()).upper()
    if "(" not in s:
        return s
    head, _, rest = s.partition("(")
    rest = rest.strip()
    if rest.endswith(")"):
        rest = rest[:-1]
    args, depth, cur = [], 0, ""
    for ch in rest:
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    args.append(cur)
    args = [a.replace(" ", "").replace("ST(I)", "ST(i)") for a in args if a.strip()]
    return f"{head.strip()} ({', '.join(args)})" if args else head.strip()


@functools.lru_cache(maxsize=1)
def _default_catalogue() -> Catalogue:
    cpu = this_cpu()
    path = catalogue_cache.path_for(cpu)
    forms = catalogue_cache.load(path, Form)
    if forms is None:
        forms = Catalogue.build(cpu).forms
        catalogue_cache.store(path, forms)
    return Catalogue(forms)
