"""Set-up for forms that move RIP, RSP, RSI or RDI with every copy: branches, calls, returns, the
stack and string instructions without REP, run as uops.info runs them (nanoBench's cpuBench).

* **Direct branches** (Jcc, JMP, CALL rel, LOOP/LOOPcc, JRCXZ/JECXZ) target the next instruction,
  so taken or not, execution continues at the next copy. The condition of a conditional branch is
  set at the head of every loop iteration;
  the form runs **not taken**, its ``_TAKEN`` twin taken (uops.info measures both and publishes
  the faster: not taken). LOOP/LOOPE/LOOPNE have no twin: RCX is 0 or counts down from 0 (wraps),
  so it is never 0 after the decrement, and ZF is 1 (the zero idiom that breaks the RCX chain
  between throughput copies sets it): LOOP and LOOPE branch, LOOPNE does not.
* **Indirect branches and returns** get their target before each copy, uops.info's way:
  ``lea reg, [rip + n]`` (and a store for a memory operand, or to [RSP] for RET), so the figure
  includes that set-up, as uops.info's does.
* **Stack forms** (push, pop, pushf, popf, enter, call, ret) and **string forms without REP**:
  the harness sets RSP, RSI and RDI back at the head of every loop iteration
  (``measure(reset=...)``), so the copies of one iteration (2U in B) stay in the register's 1 MB
  area whatever the loop count. POPF pops the area's zero fill: every flag clear (no TF, no AC).
  ENTER runs with an 8-byte frame and nesting level 1, RET (I16) releases 8 bytes (uops.info's
  immediate), LEAVE gets ``lea rbp, [r14]`` before each copy (uops.info's set-up, in the figure).
  RSP (and RBP, RSI, RDI where the form moves them) link the copies, as in uops.info's runs: no
  dependency breaker is put between them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import iced_x86

from .asmtext import bytes_text, formatted
from .gas import assemble_lines

_CC = iced_x86.ConditionCode
# The flag values the loop head can set (push imm; popfq): all arithmetic flags clear, all set,
# and SF set alone (SF != OF): between them every Jcc condition is met by one, missed by another.
FLAG_VALUES = (0x0, 0x8D5, 0x80)
_CF, _PF, _ZF, _SF, _OF = 0x1, 0x4, 0x40, 0x80, 0x800
TAKEN = "TAKEN"
SCRATCH = "rax"              # the register that carries an indirect target or return address


@dataclass
class Setup:
    """What a form needs around its copies."""

    text: str                                   # the copy's text (set-up lines, then the form)
    encoding: bytes = b""                       # the form's own bytes, where they changed
    via_bytes: bool = False
    init: list[str] = field(default_factory=list)
    loop_init: list[str] = field(default_factory=list)   # at the head of every loop iteration
    reset: tuple[str, ...] = ()                 # area registers set back every iteration
    chained: tuple[str, ...] = ()               # what links the copies by design: no breaker


def _holds(cc: int, flags: int) -> bool:
    cf, pf, zf, sf, of = (bool(flags & b) for b in (_CF, _PF, _ZF, _SF, _OF))
    return {_CC.O: of, _CC.NO: not of, _CC.B: cf, _CC.AE: not cf, _CC.E: zf, _CC.NE: not zf,
            _CC.BE: cf or zf, _CC.A: not (cf or zf), _CC.S: sf, _CC.NS: not sf, _CC.P: pf,
            _CC.NP: not pf, _CC.L: sf != of, _CC.GE: sf == of, _CC.LE: zf or sf != of,
            _CC.G: not zf and sf == of}[cc]


def _set_flags(value: int) -> list[str]:
    return [f"push {value:#x}", "popfq"]


def is_direct_branch(ins: iced_x86.Instruction) -> bool:
    return ins.op0_kind in (iced_x86.OpKind.NEAR_BRANCH16, iced_x86.OpKind.NEAR_BRANCH32,
                            iced_x86.OpKind.NEAR_BRANCH64)


def _to_next(ins: iced_x86.Instruction) -> tuple[iced_x86.Instruction, bytes]:
    """The branch with its target the next instruction (displacement 0) and its encoding."""
    enc = iced_x86.Encoder(64)
    length = enc.encode(ins, 0)
    ins.near_branch64 = length
    enc = iced_x86.Encoder(64)
    enc.encode(ins, 0)
    return ins, bytes(enc.take_buffer())


def _condition(mnemonic: str, ins: iced_x86.Instruction, taken: bool) -> list[str]:
    """Loop-head code that decides a conditional branch: taken or not."""
    if ins.condition_code != _CC.NONE and mnemonic.startswith("J"):
        value = next(v for v in FLAG_VALUES if _holds(ins.condition_code, v) == taken)
        return _set_flags(value)
    if mnemonic in ("JRCXZ", "JECXZ"):
        return ["xor ecx, ecx" if taken else "mov ecx, 1"]
    if mnemonic in ("LOOPE", "LOOPNE"):
        # ZF = 1, as the zero idiom that breaks the RCX chain between throughput copies leaves it
        return _set_flags(_ZF)
    return []


def setup(form, ins: iced_x86.Instruction, text: str, regs: dict[int, str],
          mnemonic: str) -> Setup | None:
    """The set-up of ``form`` (an instance ``ins`` with ``text`` and registers ``regs``), or None
    when the form needs none of it."""
    s = _setup(form, ins, text, regs, mnemonic)
    if s is not None and (ins.stack_pointer_increment != 0 or
                          iced_x86.OpCodeInfo(form.code).is_stack_instruction):
        # the stack engine tracks RSP: no zero idiom can break it, and none may (xor esp, esp)
        s.chained = ("rsp", "rbp") if any(i.register in ("rbp", "bp") for i in form.implicit) else ("rsp",)
    return s


def _setup(form, ins, text, regs, mnemonic) -> Setup | None:
    flow = ins.flow_control
    F = iced_x86.FlowControl
    stack = ins.stack_pointer_increment != 0 or iced_x86.OpCodeInfo(form.code).is_stack_instruction
    string = ins.is_string_instruction and not (ins.has_rep_prefix or ins.has_repne_prefix)
    if is_direct_branch(ins):
        ins, data = _to_next(ins)
        s = Setup(bytes_text(data, formatted(ins)), encoding=data, via_bytes=True)
        s.loop_init = _condition(mnemonic, ins, getattr(form, "taken", False))
        if stack:
            s.reset = ("rsp",)
        return s
    if flow in (F.INDIRECT_BRANCH, F.INDIRECT_CALL):
        mem = any(op.kind == "mem" for op in form.operands)
        target = SCRATCH if mem else next(iter(regs.values()))
        before = [f"mov {_memory(text)}, {SCRATCH}"] if mem else []
        s = Setup(_with_target(target, before, text))
        s.reset = ("rsp",) if stack else ()
        return s
    if flow == F.RETURN:
        s = Setup(_with_target(SCRATCH, [f"mov qword ptr [rsp], {SCRATCH}"], text), reset=("rsp",))
        return s
    if _frame_teardown(ins):       # LEAVE: RBP set before each copy (uops.info's lea rbp, [r14])
        return Setup("lea rbp, [r14]\n" + text)
    if string:   # each copy advances RSI/RDI: the copies chain through them, as uops.info's do
        return Setup(text, init=["cld"], reset=("rsi", "rdi"), chained=("rsi", "rdi"))
    if stack:
        return Setup(text, reset=("rsp",))
    return None


def _frame_teardown(ins: iced_x86.Instruction) -> bool:
    """RSP loaded from RBP, RBP from the stack (LEAVE): RBP is set before each copy instead."""
    R, A = iced_x86.Register, iced_x86.OpAccess
    used = {(u.register, u.access) for u in iced_x86.InstructionInfoFactory().info(ins).used_registers()}
    return any(r == R.RSP and a == A.WRITE for r, a in used) and \
        any(r in (R.RBP, R.BP) and a in (A.READ, A.READ_WRITE) for r, a in used)


def small_immediates(form, ins: iced_x86.Instruction) -> dict[int, int]:
    """Immediates for a stack form whose immediates size what it moves RSP by (ENTER's frame
    and nesting level, RET's release): 8 and 1, so a copy moves RSP by tens of bytes, not kB."""
    if abs(ins.stack_pointer_increment) <= 64:
        return {}
    return {op.pos: 8 if op.bits >= 16 else 1 for op in form.operands if op.kind == "imm"}


def notes(form, ins: iced_x86.Instruction | None) -> list[str]:
    """What differs from running the form alone, for the catalogue's notes."""
    if ins is None or form.skip_reason:
        return []
    F = iced_x86.FlowControl
    flow = ins.flow_control
    out = []
    if is_direct_branch(ins):
        out.append("targets the next instruction: every copy continues at the next one")
        if flow == F.CONDITIONAL_BRANCH:
            m = ins.mnemonic
            if m == iced_x86.Mnemonic.LOOP:
                out.append("RCX counts down from 0 and never returns to 0: every copy branches")
            elif m in (iced_x86.Mnemonic.LOOPE, iced_x86.Mnemonic.LOOPNE):
                out.append("ZF = 1 and RCX never 0: LOOPE branches, LOOPNE does not")
            else:
                out.append(("taken" if form.taken else "not taken (uops.info publishes the faster of "
                            "taken and not taken)") + ": the condition is set at every loop iteration")
    elif flow in (F.INDIRECT_BRANCH, F.INDIRECT_CALL, F.RETURN):
        what = "return address" if flow == F.RETURN else "target"
        out.append(f"its {what} is set before each copy (lea, and a store to memory), as uops.info "
                   "does: the figure includes that set-up")
    if _frame_teardown(ins):
        out.append("RBP set before each copy (uops.info's lea rbp, [r14], in the figure): no latency "
                   "chain runs through RBP")
    if ins.is_string_instruction and not (ins.has_rep_prefix or ins.has_repne_prefix):
        out.append("RSI/RDI set back at every loop iteration; the copies chain through them")
    elif ins.stack_pointer_increment != 0 or iced_x86.OpCodeInfo(form.code).is_stack_instruction:
        out.append("RSP set back at every loop iteration; the copies chain through RSP"
                   if ins.stack_pointer_increment else "the copies chain through RSP")
        if ins.mnemonic in (iced_x86.Mnemonic.POPF, iced_x86.Mnemonic.POPFQ):
            out.append("pops 0 (the stack area's fill): every flag clear")
    return out


def set_each_copy(form) -> tuple[set[int], set[str]]:
    """(operand positions, implicit registers) the set-up writes before each copy, so that no
    latency chain can run through them: an indirect branch's target, LEAVE's RBP."""
    ins = iced_x86.Instruction()
    ins.code = form.code
    if ins.flow_control in (iced_x86.FlowControl.INDIRECT_BRANCH, iced_x86.FlowControl.INDIRECT_CALL):
        return {op.pos for op in form.operands if op.kind in ("reg", "mem")}, set()
    if not form.build_error and _frame_teardown(ins):
        return set(), {"rbp", "ebp", "bp"}
    return set(), set()


def _memory(text: str) -> str:
    """The memory operand of an indirect branch's text (``jmp qword ptr [r14+0x40]``)."""
    return text[text.index("qword ptr"):].strip()


def _with_target(reg: str, between: list[str], statement: str) -> str:
    """``lea reg, [rip + n]`` with n the bytes up to the next copy, then ``between``, then the
    statement: the target of an indirect branch, or the return address of a RET."""
    n = sum(iced_x86.Decoder(64, a.data).decode().len for a in assemble_lines(between + [statement]))
    return "\n".join([f"lea {reg}, [rip + {n}]"] + between + [statement])
