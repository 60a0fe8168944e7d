"""Measure one instruction form: latency per operand pair, throughput, µops/ports (PMU only).

**Latency** (uops.info's definition: input operand -> output operand).  For each pair from
:func:`instantiate.latency_pairs`:

* when the output can feed the input directly, :func:`instantiate.chain` gives one instance and the
  harness repeats it: cycles per copy = the pair's latency (``method: chain``, exact);
* otherwise the chain is closed with a connector (:mod:`connectors`): cycles per copy minus the
  connector's latency, whose bounds come from reference loops measured separately (once per
  process).  Exact when the connector's latency is pinned down (integer ALU steps), else an upper
  bound ``≤`` (the lower bound is kept too).

**Throughput**: :func:`instantiate.independent_copies` (16 copies; written registers rotate,
EVEX forms also through the upper 16 vector registers; stores go to distinct addresses), cycles per
instruction.  What the ISA does not let us rename apart is broken between copies with documented
dependency-breaking idioms that need no execution port:

* flags read and written (adc, sbb, rcl, cmc ...): ``xor r32, r32`` on a scratch register (a
  zero idiom: it writes every arithmetic flag and depends on nothing);
* an implicit general register read and written (mul: rax; cmpxchg: rax): ``xor e?x, e?x``;
  division: ``mov`` of the same dividend and ``xor edx, edx``;
* an implicit vector register (xmm0): ``vpxor xmm0, xmm0, xmm0``.

With breakers the figure is reported as an upper bound (they can only slow the copies down); x87
stack chains cannot be broken (upper bound, said so).  A figure that equals the bound set by the
register rotation is also reported as an upper bound.

**Operand values** (data-dependent timing): general registers start at 0 (harness), vector
registers hold 1.0 in every element (f32 1.0 for single-precision forms, f64 1.0 otherwise): a
chain of x/1, x*1, sqrt(1) stays put and sums grow linearly, so no chain drifts into denormals
(which take a slow path), shift/rotate counts in CL are 1 (a count of 0 leaves the flags
alone), division uses divisor 1 and the widest dividend whose quotient fits (the slow end of Zen
4's quotient-width-dependent divider; noted in the result).

**µops and ports** need a hardware PMU.  Without one (our KVM guests) they are null with the
reason; nothing is guessed.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..errors import CycleBenchError
from ..machine.features import this_cpu
from ..measurement.api import measure
from . import connectors as C
from . import renaming
from .forms import Form
from .instantiate import (Instance, LatencyPair, Ref, chain, independent_copies, instantiate,
                          latency_pairs, verified)

SCHEMA = "cyclebench.inst"
SCHEMA_VERSION = 1
THROUGHPUT_COPIES = 16
MAX_PAIRS = 16
EXACT_SLACK = 0.05           # connector bounds closer than this (per step) count as exact
F32_ONES = 0x3F8000003F800000      # 1.0f in both halves of a 64-bit lane
F64_ONE = 0x3FF0000000000000       # 1.0 (as f32 lanes: 0.0 and 1.875, both normal)
DIVIDEND = {16: "mov eax, 0x7fff", 32: "mov eax, 0x7fffffff", 64: "mov rax, 0x7fffffffffffffff"}

_VEC_RE = re.compile(r"\b([xyz]mm)(\d+)\b")
_MM_RE = re.compile(r"\bmm([0-7])\b")
_GPR_RE = re.compile(r"\b(r[a-d]x|e[a-d]x|[a-d][lh]|[a-d]x|r[sd]i|e[sd]i|[sd]il?|r[sb]p|e[sb]p|"
                     r"[sb]pl?|r(?:8|9|1[0-5])[dwb]?)\b")


def _full_gpr(name: str) -> str | None:
    try:
        return C.gpr(name, 64)
    except (KeyError, ValueError):
        return None


def used_gprs(*texts: str) -> set[str]:
    out = {"r14", "r15", "rsp", "rbp"}
    for t in texts:
        for m in _GPR_RE.findall(t):
            g = _full_gpr(m)
            if g:
                out.add(g)
    return out


def value_pattern(form: Form) -> int:
    """The 64-bit lane value for the vector registers of ``form`` (see the module docstring)."""
    m = form.mnemonic[1:] if form.mnemonic.startswith("V") else form.mnemonic
    integer = m.startswith("P") and not m.startswith("PERM")
    if not integer and re.search(r"(PS|SS)(?![A-Z])|PS2|SS2|BF16|PH", m):
        return F32_ONES
    return F64_ONE


def value_init(lines: list[str], avx512: bool = True, pattern: int = F64_ONE) -> list[str]:
    """Init that gives every vector/MMX register the code uses a harmless normal value.

    Each register is written at the widest width the code uses; when the code uses no YMM/ZMM
    register the init ends with ``vzeroupper`` so that legacy-SSE forms run with a clean upper
    state (a dirty one adds a merge dependency to every SSE write)."""
    text = "\n".join(lines)
    width: dict[int, int] = {}
    for kind, n in _VEC_RE.findall(text):
        width[int(n)] = max(width.get(int(n), 0), {"xmm": 128, "ymm": 256, "zmm": 512}[kind])
    mms = sorted({int(n) for n in _MM_RE.findall(text)})
    if not width and not mms:
        return []
    out = [f"mov r15, {pattern:#x}"]      # R15 is free in init (the loop count is set later)
    for n, w in sorted(width.items()):
        name = {128: "xmm", 256: "ymm", 512: "zmm"}[w]
        if (w == 512 or n >= 16) and avx512:
            out.append(f"vpbroadcastq {name}{n}, r15")
        else:
            out += [f"vmovq xmm{n}, r15", f"vpbroadcastq {name}{n}, xmm{n}"]
    if width and all(w == 128 and n < 16 for n, w in width.items()):
        out.append("vzeroupper")
    for n in mms:
        out.append(f"movq mm{n}, r15")
    return out


# --------------------------------------------------------------------------- measurement plumbing

@dataclass
class Measured:
    value: float
    uncertainty: float
    samples: list[float]
    stable: bool
    warnings: list[str]
    backend: dict
    code: str
    init: str
    linear: bool = True         # the cost grew linearly with the copies (measurement/linearity.py)


class Session:
    """Measures snippets on one CPU and caches the connector reference loops."""

    def __init__(self, measure_fn=None, **measure_kwargs):
        self.measure_fn = measure_fn or measure
        self.kwargs = {k: v for k, v in measure_kwargs.items() if v is not None}
        self.refs: dict[str, dict] = {}
        self.backend: dict | None = None
        self.count = 0
        self.avx512 = bool(this_cpu().has("AVX512F"))

    def measure(self, code: list[str], init: list[str], per: int = 1, pattern: int = F64_ONE) -> Measured:
        code_text = "\n".join(code)
        init_text = "\n".join(value_init(code + init, self.avx512, pattern) + init) or None
        r = self.measure_fn(code_text, init=init_text, **self.kwargs)
        self.count += 1
        self.backend = r.backend
        ev = r.events["cycles"]
        lin = r.stability.get("linearity") or {}
        return Measured(ev.value / per, ev.uncertainty / per, [s / per for s in ev.samples],
                        r.stable, list(r.warnings), r.backend, code_text, init_text or "",
                        lin.get("linear", True))

    def step_bounds(self, step: str) -> tuple[float, float | None]:
        """(lower, upper) latency of a connector step; upper None when its reference failed."""
        key = C.reference_of(step)
        lower = C.lower_bound(step)
        if key not in self.refs:
            code, others = C.REFERENCES[key]
            try:
                m = self.measure(code.split("; "), [])
                self.refs[key] = {"code": code, "cycles": m.value, "uncertainty": m.uncertainty,
                                  "upper": max(lower, m.value - others * lower), "stable": m.stable}
            except CycleBenchError as e:
                self.refs[key] = {"code": code, "error": e.cause, "upper": None}
        return lower, self.refs[key]["upper"]


# ------------------------------------------------------------------------------------- one form

def _mem_text(inst: Instance) -> str | None:
    text = inst.text.split("#", 1)[1] if inst.via_bytes else inst.text
    m = re.search(r"\[[^\]]*\]", text)
    return m.group(0) if m else None


def _port(form: Form, inst: Instance, ref: Ref) -> C.Port:
    if ref.kind == "flags":
        return C.Port("FLAGS")
    if ref.kind == "implicit":
        return C.port_for_register(ref.register)
    op = form.operands[ref.pos]
    if ref.kind == "addr":
        return C.Port("ADDR", mem=_mem_text(inst))
    if ref.kind == "mem":
        return C.Port("MEM", bits=op.bits, mem=_mem_text(inst))
    if op.is_mask:
        return C.port_for_register("k1", is_mask=True)
    return C.port_for_register(inst.regs[op.pos])


def _form_init(form: Form, inst: Instance) -> list[str]:
    init = list(inst.init)
    mn = form.code_name.split("_")[0]
    if mn in ("DIV", "IDIV"):
        bits = next(op for op in form.operands if not op.is_mask).bits
        if bits in DIVIDEND:
            init.append(DIVIDEND[bits])
    if any(op.fixed == "CL" for op in form.operands):
        init.append("mov ecx, 1")
    return init


def _notes(form: Form) -> list[str]:
    notes = list(form.notes)
    mn = form.code_name.split("_")[0]
    if mn in ("DIV", "IDIV"):
        notes.append("data-dependent: measured with divisor 1 and the widest dividend whose quotient "
                     "fits (Zen 4's divider is faster for narrow quotients)")
    if any(op.fixed == "CL" for op in form.operands):
        notes.append("shift/rotate count CL = 1 (a count of 0 leaves the flags unchanged)")
    return notes


def _pair_doc(pair: LatencyPair) -> dict:
    return {"start": pair.start.label, "end": pair.end.label, "value": None, "bound": None,
            "lower": None, "upper": None, "uncertainty": None, "method": None, "code": None,
            "init": None, "connector": None, "stable": None, "samples": [], "warnings": [],
            "linear": None, "error": None, "label": None, "same_register": False}


def measure_pair(session: Session, form: Form, pair: LatencyPair) -> dict:
    doc = _pair_doc(pair)
    inst = chain(form, pair)
    conn = None
    direct = inst is not None
    if not direct:
        inst = instantiate(form)
    verified([inst])
    if not direct:
        try:
            start, end = _port(form, inst, pair.start), _port(form, inst, pair.end)
            conn = C.connect(end, start, used_gprs(inst.text, *inst.init))
        except C.NoConnector as e:
            doc["error"] = f"not measured: {e}"
            return doc
    code = [inst.text] + (conn.lines if conn else [])
    init = _form_init(form, inst) + (conn.init if conn else [])
    try:
        m = session.measure(code, init, pattern=value_pattern(form))
    except CycleBenchError as e:
        doc.update(error=e.cause, code="\n".join(code))
        return doc
    doc.update(code=m.code, init=m.init, uncertainty=m.uncertainty, stable=m.stable,
               samples=m.samples, warnings=m.warnings, linear=m.linear)
    if not conn or not conn.steps:
        doc.update(value=m.value, bound="exact", lower=m.value, upper=m.value, method="chain",
                   same_register=direct and renaming.same_register_chain(form, pair))
        if renaming.no_dependency(m.value):        # zero idiom / eliminated move: latency 0
            doc.update(renaming.zero_update(form, m.value, doc["same_register"]))
        return doc
    bounds = [session.step_bounds(s) for s in conn.steps]
    lo_c = sum(b[0] for b in bounds)
    hi_c = None if any(b[1] is None for b in bounds) else sum(b[1] for b in bounds)
    doc["connector"] = {"code": conn.text, "steps": conn.steps, "latency_lower": lo_c,
                        "latency_upper": hi_c}
    doc["method"] = "chain + connector"
    upper = m.value - lo_c
    if hi_c is not None and hi_c - lo_c <= EXACT_SLACK * len(bounds):
        doc.update(value=upper, bound="exact", lower=upper, upper=upper)
    else:
        lower = None if hi_c is None else max(0.0, m.value - hi_c)
        doc.update(value=upper, bound="upper", lower=lower, upper=upper)
    return doc


def measure_same_register(session: Session, form: Form) -> dict | None:
    """The same-register case of a form with three or more register operands of one family
    (renaming.py): 0 with its label when the renamer breaks the dependency, else its latency."""
    case = renaming.same_register_case(form)
    if case is None:
        return None
    start, end, inst = case
    verified([inst])
    doc = {k: None for k in ("value", "bound", "lower", "upper", "uncertainty", "code", "init",
                             "connector", "stable", "label", "error", "linear")}
    doc.update(start=start, end=end, method="chain (same register)", same_register=True,
               samples=[], warnings=[])
    try:
        m = session.measure([inst.text], _form_init(form, inst), pattern=value_pattern(form))
    except CycleBenchError as e:
        doc.update(error=e.cause, code=inst.text)
        return doc
    doc.update(value=m.value, bound="exact", lower=m.value, upper=m.value, code=m.code, init=m.init,
               uncertainty=m.uncertainty, stable=m.stable, samples=m.samples, warnings=m.warnings,
               linear=m.linear)
    if renaming.no_dependency(m.value):
        doc.update(renaming.zero_update(form, m.value, True))
    return doc


def _breakers(form: Form, carried: list[str], scratch: str) -> tuple[list[str], list[str]]:
    """(lines to put before every copy, what could not be broken)."""
    lines, unbroken = [], []
    mn = form.code_name.split("_")[0]
    for c in carried:
        if c == "flags":
            lines.append(f"xor {C.gpr(scratch, 32)}, {C.gpr(scratch, 32)}")
            continue
        try:
            port = C.port_for_register(c)
        except KeyError:
            unbroken.append(c)
            continue
        if port.kind == "GPR":
            full = C.gpr(c)
            if mn in ("DIV", "IDIV") and full == "rax":
                bits = next(op for op in form.operands if not op.is_mask).bits
                lines.append(DIVIDEND.get(bits, "mov eax, 100"))
            else:
                lines.append(f"xor {C.gpr(c, 32)}, {C.gpr(c, 32)}")
        elif port.kind == "VEC":
            x = C.vec(c, 128)
            lines.append(f"vpxor {x}, {x}, {x}")
        else:
            unbroken.append(c)
    return lines, unbroken


def measure_throughput(session: Session, form: Form, self_latency: dict[int, float] | None = None,
                       earlier: dict | None = None) -> dict:
    """Cycles per instruction over independent copies.  ``self_latency``: operand position ->
    measured latency of that operand to itself (to tell a rotation-bound figure).  ``earlier``: a
    previous run of the same measurement; the lower of the two is kept (an SMT sibling on the
    host slows throughput-bound code for a while without disturbing the calibration)."""
    self_latency = self_latency or {}
    doc = {"value": None, "bound": None, "uncertainty": None, "copies": THROUGHPUT_COPIES,
           "code": None, "init": None, "carried": [], "breakers": [], "stable": None,
           "samples": [], "repeats": [], "warnings": [], "linear": None, "note": None, "error": None}
    scratch = C.scratch_gpr(used_gprs(*(i.register for i in form.implicit if i.read or i.write)))
    cps = independent_copies(form, THROUGHPUT_COPIES, avoid=(scratch,))
    verified(cps.instances)
    pre, unbroken = _breakers(form, cps.carried, scratch)
    code = []
    for inst in cps.instances:
        code += pre + [inst.text]
    init = _form_init(form, cps.instances[0]) + [s for s in cps.init if s not in cps.instances[0].init]
    doc.update(carried=list(cps.carried), breakers=pre)
    try:
        m = session.measure(code, init, per=len(cps.instances), pattern=value_pattern(form))
        if earlier is not None and earlier.get("value") is not None:
            doc["repeats"] = [earlier["value"], m.value]
            if earlier["value"] < m.value:     # the less disturbed of two runs apart in time
                m = Measured(earlier["value"], earlier["uncertainty"], earlier["samples"],
                             earlier["stable"], earlier["warnings"], {}, earlier["code"],
                             earlier["init"], earlier["linear"] is not False)
    except CycleBenchError as e:
        doc.update(error=e.cause, code="\n".join(code))
        return doc
    doc.update(value=m.value, uncertainty=m.uncertainty, code=m.code, init=m.init, stable=m.stable,
               samples=m.samples, warnings=m.warnings, linear=m.linear, bound="exact")
    notes = []
    if pre:
        doc["bound"] = "upper"
        notes.append("dependency breakers between copies (" + ", ".join(sorted(set(pre))) +
                     ") can only slow the copies down")
    if unbroken:
        doc["bound"] = "upper"
        notes.append("still carried between copies: " + ", ".join(unbroken))
    for op in form.operands:
        if not (op.kind == "reg" and op.read and op.write and not op.fixed):
            continue
        lat = self_latency.get(op.pos)
        distinct = len({i.regs.get(op.pos) for i in cps.instances})
        if lat and distinct and m.value <= 1.1 * lat / distinct:
            doc["bound"] = "upper"
            notes.append(f"as slow as the chain through {distinct} rotating registers allows")
            break
    doc["note"] = "; ".join(notes) or None
    return doc


def _machine_reason(backend: dict | None) -> str:
    if not backend:
        return "not measured"
    if backend.get("name") == "tsc":
        reason = backend.get("reason") or ""
        return reason if reason.startswith("no hardware PMU") else f"no hardware PMU: {reason}"
    return "µop and port counters are not wired into instruction tables yet (PMU present)"


def skipped_doc(form: Form | None, name: str, reason: str, status: str = "skipped") -> dict:
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "form": name, "status": status,
            "reason": reason, "extensions": list(form.cpuid_features) if form else [],
            "instruction": None, "latency": [], "latency_max": None, "throughput": None,
            "uops": None, "ports": None, "uops_reason": reason, "notes": [], "elapsed_s": 0.0}


def characterize(form: Form, session: Session, latency: bool = True, throughput: bool = True,
                 max_pairs: int = MAX_PAIRS) -> dict:
    """Everything cyclebench can measure about ``form`` here, as one JSON-able document."""
    if not form.offered:
        return skipped_doc(form, form.name, form.reason or "not offered")
    t0 = time.monotonic()
    doc = skipped_doc(form, form.name, None, status="ok")
    doc["instruction"] = instantiate(form).text
    doc["notes"] = _notes(form)
    pairs = latency_pairs(form) if latency else []
    first_tp = measure_throughput(session, form) if throughput and pairs else None
    for i, pair in enumerate(pairs):
        if i >= max_pairs:
            d = _pair_doc(pair)
            d["error"] = f"not measured: more than {max_pairs} pairs"
            doc["latency"].append(d)
            continue
        doc["latency"].append(measure_pair(session, form, pair))
    if pairs:
        same = measure_same_register(session, form)
        if same is not None:
            doc["latency"].append(same)
    measured = [p for p in doc["latency"] if p["value"] is not None]
    if measured:
        top = max(measured, key=lambda p: (p["value"], p["bound"] == "exact"))
        doc["latency_max"] = {"value": top["value"], "bound": top["bound"],
                              "pair": f"{top['start']} -> {top['end']}"}
    if throughput:
        selfs = {}
        for pair, p in zip(pairs, doc["latency"]):
            if pair.start.kind == pair.end.kind == "op" and pair.start.pos == pair.end.pos and \
                    p["value"] is not None:
                selfs[pair.start.pos] = p["value"]
        doc["throughput"] = measure_throughput(session, form, selfs, earlier=first_tp)
    reason = _machine_reason(session.backend)
    doc["uops_reason"] = reason
    ok_tp = doc["throughput"] and doc["throughput"]["value"] is not None
    if not measured and not ok_tp:
        errors = [p["error"] for p in doc["latency"] if p.get("error")]
        if doc["throughput"] and doc["throughput"].get("error"):
            errors.insert(0, doc["throughput"]["error"])
        if errors or pairs or throughput:
            doc["status"] = "failed"
            doc["reason"] = errors[0] if errors else "nothing could be measured"
    unstable = [p for p in doc["latency"] if p.get("stable") is False]
    if doc["throughput"] and doc["throughput"].get("stable") is False:
        unstable.append(doc["throughput"])
    doc["stable"] = not unstable
    nonlinear = [f"{p['start']} -> {p['end']}" for p in doc["latency"] if p["linear"] is False]
    nonlinear += ["throughput"] if doc["throughput"] and doc["throughput"]["linear"] is False else []
    if nonlinear:
        doc["notes"].append("the cost per copy changed with the number of copies (" + ", ".join(nonlinear) +
                            "): those figures are not the cost of one instruction; see their warnings")
    doc["elapsed_s"] = round(time.monotonic() - t0, 3)
    return doc
