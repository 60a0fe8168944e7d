"""Operand values that can change a form's throughput: the values besides the normal 1.0 that the
copies are also measured with (masked accesses with every lane on, floating point with denormals),
and the data-dependent throughput they reveal.  The copies themselves are throughput.py's.
"""
from __future__ import annotations

import re

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


def sweeps_values(form: Form) -> bool:
    return bool(alternative_values(form))


def with_values(session: Session, form: Form, tp: dict, self_latency: dict[int, float]) -> tuple[dict, str | None]:
    """(throughput document, note): ``tp`` measured again with each of the form's alternative
    operand values (alternative_values). When they differ beyond noise the form is data-dependent:
    the fastest without denormals is reported (the common path), every figure is kept, and the
    note names them."""
    # the other values look for a slow path: one process each
    # the copy counts that ran no faster with the normal values are not tried again (counts_to_try)
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
