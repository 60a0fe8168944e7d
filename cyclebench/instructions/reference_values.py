"""The operand values uops.info measured data-dependent forms with, and the figures they give here.

Where a form's cost depends on its operand values, a published figure is comparable only with
one measured on the same values.  uops.info's values, from its tools (andreas-abel/nanoBench,
``tools/cpuBench/cpuBench.py`` and ``common/nanoBench.h``):

* **general registers** hold 0: ``SAVE_REGS_FLAGS`` (nanoBench.h) zeroes RAX..R13 and points R14,
  RBP, RDI, RSI, RSP into memory areas; ``getRegMemInit`` then sets floating-point inputs
  (0x4000000040000000), integer vector inputs (0) and VSIB indices (0) only, never a general
  register, a mask register or an integer memory operand;
* **integer dividers** (``getTPConfigsForDiv``, ``getDivLatConfigLists``): "fast division"
  RAX = RDX = 0, divisor 1, and "slow division" (64-bit: RAX = 133, RDX = 0x343a9ed744556677,
  divisor 0x75e6e44fccddeeff; :data:`SLOW` per width), set again before every copy
  (``preInstrCode``, counted in the figure) and after every step of a latency chain (``AND r,
  imm; OR r, imm`` and ``cRep`` more links, ``cRep = 2 + 2 * ceil(TP_single / 2)`` from
  ``getLatConfigLists``; from a divisor in memory its address, ``MOVSX R12, e; XOR R14, R12``
  cRep times; the links' own latency subtracted).  The throughput published is the faster of
  the two (``getThroughputAndUops`` keeps ``minTP``), the latency range spans both;
* **REP string forms** (``getTPConfigs``, ``'LOOP' in iform or 'REP' in iform``): ``mov RCX, 0``,
  ``1`` and ``2`` before every copy, the fastest kept;
* **segment-selector readers** (LSL, LAR, VERR, VERW) get no value: a register selector is 0, the
  null selector; one in memory is 0 too (``kernel/nb_km.c`` zeroes the R14 area when the module
  loads) unless an earlier experiment stored something there: cpuBench measures the forms in name
  order (``instrNodeList.sort``) and the init of ``LMSW (M16)`` stores ``SMSW``'s CR0 low word,
  0x33 on Linux (the user code selector), over the area's first 32 bytes.  values.py measures
  both a null and a valid selector (SS's); ``lsl`` with 0x33 reads 59.00 here, as published for
  the LSL memory forms, while LAR's (before LMSW in name order) and VERR's/VERW's (after forms
  that store zeroes) read the null selector's figure, as published;
* **gathers and scatters**: no throughput configuration sets the write mask, so the first copy
  empties it and the others move no lane (gathers.mask_unset measures that; comparing.py reads it).

Detected by operand shape, never by mnemonic: a divider reads a double-width dividend from the
accumulator pair (AX for an 8-bit operand, DX:AX, EDX:EAX, RDX:RAX) beside one read-only
operand; a REP string form reads and writes RCX (form.rep).  Measured on a Zen 4 guest with these
values (TSC-calibrated, ``cyclebench inst "DIV (R64)" "IDIV (M32)" ... --compare``): ``DIV (R64)``
7.00 cycles a copy fast, 12.00 slow, latency 9.00 to 19.01, as published (7.00, [9;19]); the
register chains of ``IDIV (M32)`` read 9 without the cRep links and 10 with them, as published;
all 14 integer divider forms match ZEN4 on the three figures; ``STOSD_REPE`` 15.00 with RCX = 1
or 2, 25.54 with RCX = 0 (published 15.00).
"""
from __future__ import annotations

import math

from ..errors import CycleBenchError
from .forms import Form, divider_width
from .instantiate import instantiate
from .session import FormInit, Session

SOURCE = "uops.info's operand values (nanoBench tools/cpuBench/cpuBench.py)"
COPIES = 16
FAST = ("0", "0", "1")                    # RAX, RDX, divisor
SLOW = {8: ("13057", "0", "123"), 16: ("133", "0x343a", "0x75e6"),
        32: ("133", "0x343a9ed7", "0x75e6e44f"), 64: ("133", "0x343a9ed744556677", "0x75e6e44fccddeeff")}
COUNTS = (0, 1, 2)                        # RCX before every copy of a REP string form
_ACC = {8: "ax", 16: "ax", 32: "eax", 64: "rax"}
_DX = {16: "dx", 32: "edx", 64: "rdx"}
_SIZED = {8: "b", 16: "w", 32: "d", 64: ""}


def count_string(form: Form) -> bool:
    """A REP string form: its count register RCX read and written."""
    return bool(form.rep) and any(i.register == "rcx" and i.read and i.write for i in form.implicit)


def applies(form: Form) -> bool:
    """Whether uops.info ran the form on operand values of its own choosing (:func:`measure`)."""
    return divider_width(form) is not None or count_string(form)


def _reg(name64: str, bits: int) -> str:
    """A general register at a width: ``_reg("r8", 16)`` r8w, ``_reg("rax", 8)`` al."""
    return name64 + _SIZED[bits] if name64.startswith("r") and name64[1:].isdigit() else \
        {8: name64[1] + "l", 16: name64[1:], 32: "e" + name64[1:], 64: name64}[bits]


def division_values(bits: int) -> list[tuple[str, tuple[str, str, str]]]:
    """(label, (RAX, RDX, divisor)) of uops.info's fast and slow division for a divisor width."""
    out = []
    for name, (rax, rdx, div) in (("fast", FAST), ("slow", SLOW[bits])):
        regs = f"{_ACC[bits].upper()}={rax}" + (f", {_DX[bits].upper()}={rdx}" if bits > 8 else "")
        out.append((f"{name} division: {regs}, divisor {div}", (rax, rdx, div)))
    return out


def _divisor_init(text: str, bits: int, value: str) -> list[str]:
    if "[" in text:     # memory: through a scratch register (no 64-bit immediate store)
        return [f"mov {_reg('r8', bits)}, {value}", f"mov {text}, {_reg('r8', bits)}"]
    return [f"mov {text}, {value}"]


def _pre(bits: int, rax: str, rdx: str, fast: bool) -> list[str]:
    """cpuBench's preInstrCode: the dividend set before every copy."""
    if fast:
        return ["mov rax, 0", "mov rdx, 0"]
    return [f"mov {_ACC[bits]}, {rax}"] + ([f"mov {_DX[bits]}, {rdx}"] if bits > 8 else [])


def _divider(session: Session, form: Form, bits: int) -> dict:
    """The copies with each division's values set before every copy, and the latency chains."""
    inst = instantiate(form)
    operand = inst.text.split(None, 1)[1].strip()
    configs = []
    for label, (rax, rdx, div) in division_values(bits):
        init = list(inst.init) + _divisor_init(operand, bits, div)
        code = (_pre(bits, rax, rdx, rax == "0") + [inst.text]) * COPIES
        m = session.measure(code, init, per=COPIES)
        configs.append({"values": label, "value": m.value, "stable": m.stable})
    tp = _fastest(configs)
    # cpuBench's chains carry cRep more links, from the form's single-copy throughput (its TP_single)
    crep = min(100, 2 + 2 * math.ceil(tp["value"] / 2)) if tp["value"] is not None else 2
    pairs = [p for label, values in division_values(bits)
             for p in _divider_chains(session, form, inst, operand, bits, label, values, crep)]
    return {"throughput": tp, "latency": pairs}


def _divider_chains(session: Session, form: Form, inst, divisor: str, bits: int, label: str,
                    values: tuple[str, str, str], crep: int) -> list[dict]:
    """uops.info's latency chains of a divider (cpuBench ``getDivLatConfigLists``): after the form,
    the start operand is made to depend on the end one (``and s, e``), set back to its value
    (``and s, imm; or s, imm``) and lengthened by ``crep`` links (``or s, s``), the other inputs
    set back by ``mov``; from a divisor in memory, its address depends on the end (``movsx r12,
    e; xor r14, r12`` ``crep`` times, an even count that leaves R14 as it was).  The same chain
    without the form (for the address: from R14 itself) is measured and subtracted.  An 8-bit
    divider reads and writes AX only."""
    if divisor in {_reg(r, bits) for r in ("r8", "r9", "rcx")} | {"ch"}:
        return []       # a register the chains keep a value in (instantiate picks RBX)
    acc = _ACC[bits]
    ends = (acc, _DX[bits]) if bits > 8 else (acc,)
    width = {divisor: bits, acc: max(bits, 16), **({_DX[bits]: bits} if bits > 8 else {})}
    # the values in R8 (dividend low), R9 (high), RCX (divisor: CL is nameable beside AH..BH)
    imm = {r: _reg(x, width[r]) for r, x in zip((acc, _DX.get(bits), divisor), ("r8", "r9", "rcx")) if r in width}
    init = list(inst.init) + [f"mov {x}, {v}" for x, v in zip(("r8", "r9", "rcx"), values)]
    init += [f"mov {r}, {imm[r]}" for r in (divisor, *ends)]
    op = next(o for o in form.operands if not o.is_mask)
    memory = "[" in divisor
    names = {divisor: f"{'addr ' if memory else ''}op{op.pos}" + ("" if memory else f" ({op.notation})"),
             acc: "rax", _DX.get(bits, "-"): "rdx"}
    out = []
    for s in (divisor, *ends):
        if memory and s == divisor and "[r14" not in divisor:
            continue
        for e in ends:
            if s == divisor and memory:
                links = [f"movsx r12, {_sized(e, min(width[e], 32))}"] + ["xor r14, r12"] * crep
                bare = ["movsx r12, r14d"] + links[1:]
            else:
                links = ([f"and {s}, {_sized(e, width[s])}"] if s != e else [])
                links += [f"and {s}, {imm[s]}", f"or {s}, {imm[s]}"] + [f"or {s}, {s}"] * crep
                bare = links
            resets = [f"mov {o}, {imm[o]}" for o in ends if o != s]
            try:
                m = session.measure([inst.text] + links + resets, init)
                ref = session.measure(bare + resets, init)
            except CycleBenchError as err:
                out.append({"start": names[s], "end": names[e], "value": None, "error": err.cause, "values": label})
                continue
            out.append({"start": names[s], "end": names[e], "value": m.value - ref.value, "bound": "exact",
                        "stable": m.stable and ref.stable, "cycles": m.value, "connector_cycles": ref.value,
                        "code": m.code, "values": label})
    return out


def _sized(reg: str, bits: int) -> str:
    """An accumulator-pair register (ax, eax, rax, dx, ...) at another width."""
    return _reg("r" + reg[-2:], bits)


def _count_string(session: Session, form: Form) -> dict:
    inst = instantiate(form)
    init = FormInit(inst.init)
    init.head = {"reset": ("rsi", "rdi")}       # the pointers advance with a count above 0
    configs = []
    for n in COUNTS:
        m = session.measure([f"mov rcx, {n}", inst.text] * COPIES, init, per=COPIES)
        configs.append({"values": f"RCX={n} before every copy", "value": m.value, "stable": m.stable})
    return {"throughput": _fastest(configs), "latency": []}


def _fastest(configs: list[dict]) -> dict:
    """uops.info's published throughput: the fastest of its configurations."""
    ok = [c for c in configs if c.get("value") is not None]
    best = min(ok, key=lambda c: c["value"]) if ok else {}
    return {"value": best.get("value"), "bound": "exact" if best else None, "stable": best.get("stable"),
            "values": best.get("values"), "configs": configs}


def measure(session: Session, form: Form) -> dict | None:
    """The form's figures with uops.info's operand values: {source, throughput {value, values,
    configs}, latency [pairs]}, or None for a form none of these classes holds."""
    bits = divider_width(form)
    try:
        if bits is not None:
            out = _divider(session, form, bits)
        elif count_string(form):
            out = _count_string(session, form)
        else:
            return None
    except CycleBenchError as e:
        return {"source": SOURCE, "error": e.cause}
    return {"source": SOURCE, **out}


def note(ref: dict | None, reported: float | None) -> str | None:
    """The table's note: every configuration's throughput beside the reported figure."""
    tp = (ref or {}).get("throughput") or {}
    runs = [c for c in tp.get("configs") or [] if c.get("value") is not None]
    if not runs:
        return None
    text = "; ".join(f"{c['value']:.2f} with {c['values']}" for c in runs)
    mine = f"{reported:.2f} as reported; " if reported is not None else ""
    return f"data-dependent throughput with {SOURCE}: {mine}{text} (uops.info publishes the fastest)"
