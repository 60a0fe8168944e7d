"""Operand values that can change a form's throughput: the values besides the normal 1.0 that the
copies are also measured with (masked accesses with every lane on, floating point with denormals,
a valid segment selector where the form reads one), and the data-dependent throughput they reveal.
The copies themselves are throughput.py's.
"""
from __future__ import annotations

import functools
import re

import iced_x86

from .forms import Form
from .session import Session
from .throughput import measure_throughput

ALL_ONES = 0xFFFFFFFFFFFFFFFF
# 1 in the lowest bit of every 16-bit element: a denormal at every floating-point width (f16,
# bf16, f32, f64), since each element's exponent field is then zero and its mantissa not
DENORMALS = 0x0001000100010001
DATA_DEPENDENT_RATIO = 1.2      # and at least DATA_DEPENDENT_CYCLES apart: not noise
DATA_DEPENDENT_CYCLES = 0.25
_VALUE_NAMES = {ALL_ONES: "all bits set (-1: every sign bit set)",
                DENORMALS: "denormal in every element (0x0001 per 16 bits)"}


def alternative_values(form: Form) -> list[int]:
    """Operand values (64-bit lane patterns) besides the normal 1.0 whose cost may differ:
    - masked loads and stores take the sign bit of each element as its mask, and a lane masked
      off can send the access down a slow path: every bit set (ALL_ONES);
    - floating-point forms may take a microcode assist on denormal inputs (Intel cores, about
      100 cycles): DENORMALS. A form counts as floating point when a vector register it reads
      holds floating-point elements (session.value_pattern)."""
    vec_in = [op for op in form.operands if op.kind == "reg" and op.read and not op.is_mask
              and op.cls in ("XMM", "YMM", "ZMM", "MM")]
    out = []
    touches_memory = form.memory_operand is not None or bool(form.implicit_memory)
    if touches_memory and any(not op.write for op in vec_in):
        out.append(ALL_ONES)
    m = form.mnemonic[1:] if form.mnemonic.startswith("V") else form.mnemonic
    if vec_in and not m.startswith("P") and re.search(r"(PS|PD|SS|SD|PH|SH|BF16)(?![A-Z])", m):
        out.append(DENORMALS)
    return out


SELECTOR = "selector"           # the doc key of a figure measured with a valid selector
SELECTOR_NAME = "a valid selector (SS's, the user data segment)"
NULL_NAME = "the null selector (0: the harness's memory and registers)"


@functools.lru_cache(maxsize=None)
def _selector_opcodes() -> frozenset[tuple]:
    """Opcodes (table, byte, ModRM.reg group) with a 16-bit operand read through an r/m slot whose register form is wider
    (``r32/m16``, ``r64/m16``) and no vector operand: x86's segment-selector operands (LAR, LSL,
    VERR, VERW, MOV Sreg, LLDT, LTR), in 64-bit mode (ARPL, whose opcode is MOVSXD there, is not)."""
    K = iced_x86.OpCodeOperandKind
    wide = (K.R32_OR_MEM, K.R64_OR_MEM)
    vector = ("XMM", "YMM", "ZMM", "MM_")
    names = {v: k for k, v in vars(K).items() if isinstance(v, int)}
    out = set()
    for code in vars(iced_x86.Code).values():
        if not isinstance(code, int):
            continue
        oci = iced_x86.OpCodeInfo(code)
        kinds = [oci.op_kind(i) for i in range(oci.op_count)]
        if oci.mode64 and oci.memory_size == iced_x86.MemorySize.UINT16 and any(k in wide for k in kinds) \
                and not any(names[k].startswith(vector) for k in kinds):
            out.add(_opcode(oci))
    return frozenset(out)


def _opcode(oci) -> tuple:
    return oci.encoding, oci.table, oci.op_code, oci.group_index, oci.mandatory_prefix


def selector_operand(form: Form):
    """The operand holding a segment selector the form reads (its r/m, read and not written), or
    None.  LSL's and LAR's cost depends on it: a descriptor is looked up only for a non-null one."""
    if form.build_error or _opcode(iced_x86.OpCodeInfo(form.code)) not in _selector_opcodes():
        return None
    return next((op for op in form.operands if op.slot is not None and op.slot.kind == "rm"
                 and op.read and not op.write and op.bits in (16, 32, 64)), None)


def with_selector(session: Session, mnemonic: str) -> Session:
    """A session that measures as ``session`` does, but whose init ends by loading SS's selector
    (valid at the measuring privilege, on any OS) into the last operand of every line of the form
    (``mov word ptr [r14+0x40], ss``; ``mov rax, ss`` for a register), also where the line is
    the form's bytes with its text in a comment (instantiate: ``via_bytes``)."""
    mn = mnemonic.lower()

    def measure_fn(code, init=None, **kw):
        ops = []
        for line in code.splitlines():
            line = line.split("#", 1)[1] if line.lstrip().startswith(".byte") and "#" in line else line
            words = re.sub(r"^(\{\w+\}\s*)+", "", line.strip()).split(None, 1)   # {load}, {evex}
            if len(words) == 2 and words[0] == mn:
                last = words[1].rsplit(",", 1)[-1].strip()
                if last not in ops:
                    ops.append(last)
        lines = (init or "").splitlines() + [f"mov {op}, ss" for op in ops]
        return session.measure_fn(code, init="\n".join(lines) or None, **kw)

    other = Session(measure_fn=measure_fn, **session.kwargs)
    other.refs = session.refs
    return other


def sweeps_values(form: Form) -> bool:
    return bool(alternative_values(form)) or selector_operand(form) is not None


def with_values(session: Session, form: Form, tp: dict, self_latency: dict[int, float]) -> tuple[dict, str | None]:
    """(throughput document, note): ``tp`` measured again with each of the form's alternative
    operand values (alternative_values). When they differ beyond noise the form is data-dependent:
    the fastest without denormals is reported (the common path), every figure is kept, and the
    note names them."""
    # the other values look for a slow path: one process each
    # the copy counts that ran no faster with the normal values are not tried again (counts_to_try)
    if selector_operand(form) is not None:
        return _with_selector(session, form, tp, self_latency)
    docs = [tp] + [measure_throughput(session, form, self_latency, pattern=p, processes=0, counts_from=tp)
                   for p in alternative_values(form)]
    names = {**{d["pattern"]: _VALUE_NAMES.get(d["pattern"], f"{d['pattern']:#x} per lane (1.0)") for d in docs}}
    figures = sorted((d["value"], d["pattern"]) for d in docs if d.get("value") is not None)
    if len(figures) < 2:
        return tp, None
    (fast, fast_p), (slow, slow_p) = figures[0], figures[-1]
    # denormals probe a slow path: a figure faster with them (vgetmantpd, 0.35 against 0.50 with
    # 1.0, below what the pipes allow with normal values) is not the common path's
    common = [(v, p) for v, p in figures if p != DENORMALS] or figures
    best = next(d for d in docs if d["pattern"] == common[0][1])
    best["values"] = [{"pattern": p, "values": names[p], "value": v} for v, p in figures]
    if slow <= fast * DATA_DEPENDENT_RATIO or slow - fast < DATA_DEPENDENT_CYCLES:
        return best, None
    kept = ("the faster, common path" if common[0][1] == fast_p else
            f"{common[0][0]:.2f}, the fastest without denormals, the common path")
    note = (f"data-dependent throughput: {fast:.2f} with vector operands {names[fast_p]}, {slow:.2f} with "
            f"{names[slow_p]} ({kept} is reported; latencies use its values too)")
    best["data_dependent"] = True
    return best, note


def _with_selector(session: Session, form: Form, tp: dict, self_latency: dict[int, float]) -> tuple[dict, str | None]:
    """The copies again with a valid selector in the operand (with_selector), and that figure
    reported: real code passes LSL, LAR, VERR and VERW the selector of a segment it uses, while
    the null selector (the harness's zeroed registers and memory) is the path that reads no
    descriptor, which code takes only to learn that a selector is unusable.  Both are kept under
    ``values``.  The latencies stay measured with the null selector: a chain through the selector
    operand writes the chain's own values into it, and uops.info's register forms run with the
    null selector too (reference_values.py: its general registers hold 0).  The null figure is
    the one measured with uops.info's values (``reference``): its registers hold 0, and so does
    its memory area unless an earlier experiment stored something there, which cannot be known
    for certain (:data:`MEMORY_REFERENCE` names one experiment that stores a valid selector)."""
    other = measure_throughput(with_selector(session, form.mnemonic), form, self_latency,
                               pattern=tp["pattern"], processes=0, counts_from=tp)
    null, valid = tp.get("value"), other.get("value")
    if null is None or valid is None:
        return tp, None
    other[SELECTOR] = "ss"
    other[LATENCY_VALUES] = {k: tp.get(k) for k in ("value", "bound", "carried", "stable")}
    other["values"] = [{"pattern": tp["pattern"], "values": NULL_NAME, "value": null},
                       {"pattern": tp["pattern"], SELECTOR: "ss", "values": SELECTOR_NAME, "value": valid}]
    where = REGISTER_REFERENCE if selector_operand(form).kind == "reg" else MEMORY_REFERENCE
    other["reference"] = {"value": null, "bound": tp.get("bound"), "stable": tp.get("stable"),
                          "values": f"{NULL_NAME}: {where}"}
    fast, slow = sorted((null, valid))
    if slow <= fast * DATA_DEPENDENT_RATIO or slow - fast < DATA_DEPENDENT_CYCLES:
        return other, None
    other["data_dependent"] = True
    return other, (f"data-dependent throughput: {valid:.2f} with {SELECTOR_NAME}, {null:.2f} with {NULL_NAME} "
                   f"(a valid selector's is reported, what real code passes; latencies use the null selector)")


REGISTER_REFERENCE = "uops.info's register holds 0 (nanoBench zeroes the general registers)"
MEMORY_REFERENCE = ("uops.info's memory operand holds 0 unless an earlier experiment left a value there "
                    "(nanoBench zeroes its R14 area once, kernel/nb_km.c; cpuBench runs the forms in name order "
                    "and sets no selector, but LMSW's init stores SMSW's CR0 low word, 0x33 on Linux, the user "
                    "code selector, into that area)")
LATENCY_VALUES = "latency_values"    # the throughput on the values the latencies were measured with
# the keys of a throughput document that carry what the value sweep found
SWEPT = ("values", "data_dependent", "reference", SELECTOR, LATENCY_VALUES)


def latency_view(doc: dict) -> dict:
    """``doc`` as its latencies see it (issue_fill.py compares each chain with the form's issue
    interval): where the reported throughput ran on other values than the latencies (a valid
    selector), the throughput on the latencies' own values; the pairs are ``doc``'s, shared."""
    tp = doc.get("throughput") or {}
    return dict(doc, throughput={**tp, **tp[LATENCY_VALUES]}) if tp.get(LATENCY_VALUES) else doc


def value_session(session: Session, form: Form, tp: dict | None) -> Session:
    """The session whose operand values the reported throughput was measured with: a valid
    selector where _with_selector chose one, else ``session``."""
    return with_selector(session, form.mnemonic) if (tp or {}).get(SELECTOR) else session
