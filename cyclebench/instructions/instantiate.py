"""Turn a form into GNU-as Intel-syntax text with concrete operands, for the measurement methods.

Conventions (docs/ARCHITECTURE.md's harness): memory operands are ``[r14+disp]`` (R14 points into
the middle of a 1 MB area; displacements stay well inside it and 64-byte aligned), R15 (loop
counter), RSP and RBP are never chosen, immediates are picked so that GNU as selects the intended
encoding (``I8`` -> 2, ``I32`` -> 0x12345, ``I64`` -> 0x123456789, the shift-by-one form -> 1).

Text is produced by asmtext.py (iced-x86's Intel formatter with GNU as pseudo-prefixes where the
encoding would otherwise be ambiguous; beside a high-byte register the memory base is RDI, and a
gather's text starts with its per-copy mask set-up, vsib.py).  :func:`verified` assembles the text and decodes it back with iced-x86; when GNU as
picks a different encoding (e.g. ``MOV_C7 (R32, I32)``, which as always emits as B8) the instance
falls back to ``.byte`` with iced's encoding, so what runs is always the intended form.

Helpers for the timing layer:

* :func:`instantiate` -- one instance (default registers, or the caller's);
* independent copies for throughput are copies.py's;
* :func:`latency_pairs` -- (input operand -> output operand) pairs as uops.info defines latency,
  including flags, memory data, and address registers;
* :func:`chain` -- one instance whose start and end operands of a pair share a register, so that
  back-to-back copies form a dependency chain through exactly that pair (None when impossible).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import iced_x86
from iced_x86 import Register

from ..machine.features import this_cpu
from . import flow, vsib
from .asmtext import bytes_text, formatted, text_for
from .catalogue import implicit_avoid
from .forms import Choices, Form, build, divider_width, encode, flags_in, lea_parts, memory_base, pick_registers
from .gas import assemble_lines, split_slot
from .operands import (CODE_NAMES, EVEX_EXTRA, FAMILY, NEVER_PICK, POOLS, full_register,
                       register_id, register_name)

AREA_GUARD = 0x10000       # stay within +-64 KiB of R14 (the area is +-512 KiB)
_ADDRESS_REGS_OK = {Register.R14, Register.RSI, Register.RDI, Register.RSP, Register.RBP}


@dataclass
class Instance:
    """One concrete instruction of a form."""

    form: Form
    text: str                       # one statement for GNU as (Intel syntax, noprefix)
    encoding: bytes                 # iced's encoding of the intended instruction
    init: list[str] = field(default_factory=list)     # run once before (measure(init=...))
    cleanup: list[str] = field(default_factory=list)  # run once after (e.g. emms after MMX)
    regs: dict[int, str] = field(default_factory=dict)  # operand position -> register name
    via_bytes: bool = False         # text is a .byte fallback (GNU as picks another encoding)
    loop_init: list[str] = field(default_factory=list)   # at the head of every loop iteration
    reset: tuple[str, ...] = ()     # area registers set back every loop iteration (flow.py)
    chained: tuple[str, ...] = ()   # registers that link the copies by design (flow.py)

    @property
    def code(self) -> str:
        return self.text


def _init_for(form: Form, choices: Choices, ins: iced_x86.Instruction) -> tuple[list[str], list[str]]:
    init, cleanup = [], []
    iced_mn = form.code_name.split("_")[0]
    if form.mask:
        k = register_name(choices.mask_reg)
        op = "kxnorq" if "AVX512BW" in _cpu_features() else "kxnorw"
        init.append(f"{op} {k}, {k}, {k}")
    if divider_width(form) is not None:
        divisor = next(op for op in form.operands if not op.is_mask)
        if divisor.kind == "reg":
            init.append(f"mov {register_name(choices.regs[divisor.pos])}, 1")
        else:
            size = {8: "byte", 16: "word", 32: "dword", 64: "qword"}[divisor.bits]
            init.append(f"mov {size} ptr {_mem_text(choices)}, 1")
        init.append("mov eax, 100" if divisor.bits == 8 else "xor edx, edx")
    if form.encoding == "LEGACY" and any(op.cls == "ST" for op in form.operands) or \
            any(f in ("FPU", "FPU387", "FPU287") for f in form.cpuid_features):
        init += ["fninit", "fld1", "fldpi", "fld1", "fldpi"]
    if any(op.cls == "MM" for op in form.operands) or any(i.register.startswith("mm")
                                                          for i in form.implicit):
        cleanup.append("emms")
    # implicit address registers other than the ones the harness points into its areas
    if form.rep:      # no element: the start-up cost, with no address moving (skips.py)
        init += ["cld", "xor ecx, ecx"]
    if iced_mn.startswith("CLZERO"):  # iced reports no memory access for clzero [rax]
        init.append("lea rax, [r14+0x100]")
    info = iced_x86.InstructionInfoFactory().info(ins)
    for m in info.used_memory():
        base = full_register(m.base) if m.base != Register.NONE else None
        if base is not None and base not in _ADDRESS_REGS_OK and base != full_register(choices.base):
            init.append(f"lea {register_name(base)}, [r14+0x100]")
    return init, cleanup


def _mem_text(choices: Choices) -> str:
    d = choices.displacement
    return f"[{register_name(choices.base)}{'+' if d >= 0 else '-'}0x{abs(d):x}]"


_CPU_FEATURES: frozenset[str] | None = None


def _cpu_features() -> frozenset[str]:
    global _CPU_FEATURES
    if _CPU_FEATURES is None:
        _CPU_FEATURES = this_cpu().supported()
    return _CPU_FEATURES


def instantiate(form: Form, regs: dict[int, int | str] | None = None,
                imms: dict[int, int] | None = None, base: int | str | None = None,
                displacement: int | None = None, avoid=(), mask_reg: int | str | None = None,
                allow_upper: bool = False, index: int | str | None = None) -> Instance:
    """One instance of ``form``.  ``regs`` pre-assigns operand positions (register enum or name),
    ``avoid`` lists registers (names or enums) not to pick, ``index`` the index register of an
    LEA's address (default: the first free one).  The text is not assembled here; see
    :func:`verified`."""
    if form.build_error:
        raise ValueError(f"{form.name}: {form.build_error}")
    fixed = {p: register_id(r) for p, r in (regs or {}).items()}
    avoid_full = {full_register(register_id(r)) for r in avoid} | set(implicit_avoid(form))
    picked = pick_registers(form, form._slots, avoid=avoid_full, fixed=fixed,
                            allow_upper=allow_upper)
    choices = Choices(regs=picked, imms=dict(imms or {}), base=memory_base(form))
    if base is not None:
        choices.base = register_id(base)
    if displacement is not None:
        choices.displacement = displacement
    if mask_reg is not None:
        choices.mask_reg = register_id(mask_reg)
    if form.lea_mode and lea_parts(form.lea_mode)[1]:
        used = {full_register(r) for r in picked.values()} | avoid_full | set(NEVER_PICK)
        choices.index = register_id(index) if index is not None else next(r for r in POOLS["GPR64"] if r not in used)
    choices.index = vsib.index_register(form) or choices.index
    ins = build(form, choices)
    small = {} if imms else flow.small_immediates(form, ins)
    if small:
        choices.imms.update(small)
        ins = build(form, choices)
    data = encode(ins)
    init, cleanup = _init_for(form, choices, ins)
    if ins.is_ip_rel_memory_operand:    # the displacement as encoded (the target less the length)
        ins = iced_x86.Decoder(64, data).decode()
    text = "\n".join(vsib.setup(form, picked, choices.mask_reg) + [text_for(form, ins)])
    names = {p: register_name(r) for p, r in picked.items()}
    inst = Instance(form=form, text=text, encoding=data, init=init + vsib.init(form),
                    cleanup=cleanup, regs=names)
    s = flow.setup(form, ins, text, names, form.code_name.split("_")[0])
    if s is not None:
        inst.text, inst.via_bytes, inst.loop_init, inst.reset = s.text, s.via_bytes, s.loop_init, s.reset
        inst.chained = s.chained
        inst.encoding = s.encoding or data
        inst.init += [i for i in s.init if i not in inst.init]
    return inst


@dataclass
class CheckResult:
    form: Form
    text: str
    ok: bool                 # GNU as produced exactly the intended instruction
    detail: str = ""         # assembler error or what was decoded instead


def check(instances: list[Instance]) -> list[CheckResult]:
    """Assemble every instance's text with GNU as (one run) and compare with the intended
    instruction: same iced Code and the same operands (iced-formatted text of both)."""
    results = assemble_lines([_statement(i.text) for i in instances])
    out = []
    for inst, a in zip(instances, results):
        if a.error:
            out.append(CheckResult(inst.form, inst.text, False, f"as: {a.error}"))
            continue
        if not a.data:
            out.append(CheckResult(inst.form, inst.text, False, "as produced no bytes"))
            continue
        if a.data[:len(inst.encoding)] == inst.encoding and \
                all(b == 0xCC for b in a.data[len(inst.encoding):]):
            out.append(CheckResult(inst.form, inst.text, True))   # byte-identical to iced's
            continue
        got, alone = split_slot(a.data)
        want = iced_x86.Decoder(64, inst.encoding).decode()
        if got.code != inst.form.code:
            out.append(CheckResult(inst.form, inst.text, False,
                                   f"assembled to {_code_name(got.code)}: {formatted(got)}"))
        elif formatted(got) != formatted(want):
            out.append(CheckResult(inst.form, inst.text, False,
                                   f"operands differ: {formatted(got)} vs {formatted(want)}"))
        elif not alone:
            out.append(CheckResult(inst.form, inst.text, False, "as emitted more than one instruction"))
        else:
            out.append(CheckResult(inst.form, inst.text, True))
    return out


def _statement(text: str) -> str:
    """The form's own instruction: the last line (before it, a gather's per-copy mask set-up)."""
    return text.rsplit("\n", 1)[-1]


def _code_name(code: int) -> str:
    return CODE_NAMES.get(code, str(code))


def verified(instances: list[Instance]) -> list[Instance]:
    """The same instances, with text that GNU as turns into exactly the intended instruction:
    where the mnemonic text does not round-trip, it is replaced by ``.byte`` + a comment."""
    for inst, res in zip(instances, check(instances)):
        if not res.ok:
            head, _, last = inst.text.rpartition("\n")
            inst.text = head + "\n" * bool(head) + bytes_text(inst.encoding, last)
            inst.via_bytes = True
    return instances


# -------------------------------------------------------------------------------------- latency

@dataclass(frozen=True)
class Ref:
    """One end of a latency pair."""

    kind: str                 # 'op' (explicit operand), 'implicit', 'flags', 'mem', 'addr', 'index' (an address's index register)
    pos: int | None = None    # operand position for 'op', 'mem', 'addr'
    register: str | None = None   # implicit register name
    label: str = ""           # e.g. 'op1 (R64)', 'flags', 'rdx', 'mem op2 (M64)', 'addr op2'


@dataclass(frozen=True)
class LatencyPair:
    start: Ref
    end: Ref
    same_register: bool       # start and end can be the same register: chain() works

    def __str__(self) -> str:
        return f"{self.start.label} -> {self.end.label}"




STATUS_FLAGS = frozenset({"CF", "PF", "AF", "ZF", "SF", "OF"})


def latency_pairs(form: Form) -> list[LatencyPair]:
    """Every (input -> output) pair of ``form`` in uops.info's sense of latency."""
    ins_refs: list[tuple[Ref, object]] = []
    outs: list[tuple[Ref, object]] = []
    masks = vsib.mask_positions(form)    # set before each copy: no chain runs through it
    set_positions, set_registers = flow.set_each_copy(form)    # an indirect branch's target...
    masks |= set_positions
    gather = vsib.vsib_operand(form) is not None
    for op in form.operands:
        lab = f"op{op.pos} ({op.notation})"
        if op.pos in masks:
            continue
        if op.kind == "reg":
            if op.read:
                ins_refs.append((Ref("op", op.pos, label=lab), op))
            if op.write:
                outs.append((Ref("op", op.pos, label=lab), op))
        elif op.kind in ("mem", "agen"):
            ins_refs.append((Ref("addr", op.pos, label=f"addr op{op.pos}"), None))
            if op.kind == "agen" and form.lea_mode and all(lea_parts(form.lea_mode)[:2]):
                # base and index: uops.info times each register of the address apart (base + index
                # + displacement: 2 cycles from the base, 1 from the index on Zen 4)
                ins_refs.append((Ref("index", op.pos, label=f"index op{op.pos}"), None))
            if op.kind == "mem" and op.read and not gather:
                ins_refs.append((Ref("mem", op.pos, label=f"mem op{op.pos} ({op.notation})"), None))
            if op.kind == "mem" and op.write and not gather:
                outs.append((Ref("mem", op.pos, label=f"mem op{op.pos} ({op.notation})"), None))
    for imp in form.implicit:
        if imp.register in set_registers:
            continue
        if imp.read:
            ins_refs.append((Ref("implicit", register=imp.register, label=imp.register), None))
        if imp.write:
            outs.append((Ref("implicit", register=imp.register, label=imp.register), None))
    if flags_in(form) and (form.flags_read | form.flags_written) & STATUS_FLAGS:
        # uops.info's flags operand is its status flags: a form that only reads DF (LODS, STOS,
        # MOVS) has no flags pair
        ins_refs.append((Ref("flags", label="flags"), None))
    if form.flags_written:
        outs.append((Ref("flags", label="flags"), None))
    oci = iced_x86.OpCodeInfo(form.code)
    unique = oci.requires_unique_reg_nums or oci.requires_unique_dest_reg_num
    pairs = []
    for s, sop in ins_refs:
        for e, eop in outs:
            same = (sop is not None and eop is not None and not unique
                    and not sop.fixed and not eop.fixed and not sop.is_mask
                    and FAMILY.get(sop.cls) is not None and FAMILY.get(sop.cls) == FAMILY.get(eop.cls))
            if s.kind == "implicit" and e.kind == "implicit" and s.register == e.register:
                same = True
            if s.kind == e.kind == "flags" or (s.kind == e.kind == "mem" and s.pos == e.pos):
                same = True
            if s.kind == "op" and e.kind == "op" and s.pos == e.pos:
                same = True
            pairs.append(LatencyPair(s, e, same))
    return pairs


def sized_alias(reg: int, cls: str) -> int:
    """The register of class ``cls`` that lives in the same architectural register as ``reg``."""
    full = full_register(reg)
    for r in POOLS.get(cls, ()) + EVEX_EXTRA.get(cls, ()):
        if full_register(r) == full:
            return r
    raise ValueError(f"no {cls} register aliases {register_name(reg)}")


def chain(form: Form, pair: LatencyPair) -> Instance | None:
    """An instance in which ``pair.end`` feeds ``pair.start`` of the next copy directly (same
    register / same flags / same memory), or None when that needs a connecting instruction."""
    if not pair.same_register:
        return None
    if pair.start.kind == "op" and pair.end.kind == "op" and pair.start.pos != pair.end.pos:
        s, e = form.operands[pair.start.pos], form.operands[pair.end.pos]
        base = instantiate(form)
        reg = register_id(base.regs[e.pos])
        try:
            return instantiate(form, regs={e.pos: reg, s.pos: sized_alias(reg, s.cls)})
        except ValueError:
            return None
    return instantiate(form)   # flags, implicit register, memory or the same operand: any instance
