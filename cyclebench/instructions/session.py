"""The measuring session of the instruction tables: operand values, one snippet through measure()
on one CPU, the connectors' reference loops (measured once per process), and the init every
method of a form shares (divisor and dividend, shift count).

**Operand values** (data-dependent timing): general registers start at 0 (harness), vector
registers hold 1.0 in every element (f32 1.0 for single-precision forms, f64 1.0 otherwise): a
chain of x/1, x*1, sqrt(1) stays put and sums grow linearly, so no chain drifts into denormals
(which take a slow path), shift/rotate counts in CL are 1 (a count of 0 leaves the flags
alone), division uses divisor 1 and the widest dividend whose quotient fits (the slow end of Zen
4's quotient-width-dependent divider; noted in the result).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import CycleBenchError
from ..machine.features import this_cpu
from ..measurement.api import measure
from . import connectors as C
from .forms import Form, divider_width
from .instantiate import Instance

SCHEMA = "cyclebench.inst"
SCHEMA_VERSION = 1
THROUGHPUT_COPIES = 16
MAX_PAIRS = 16
EXACT_SLACK = 0.05           # connector bounds closer than this (per step) count as exact
REF_ATTEMPTS = 3             # readings of a reference loop while it stays unstable
F32_ONES = 0x3F8000003F800000      # 1.0f in both halves of a 64-bit lane
F64_ONE = 0x3FF0000000000000       # 1.0 (as f32 lanes: 0.0 and 1.875, both normal)
DIVIDEND = {16: "mov eax, 0x7fff", 32: "mov eax, 0x7fffffff", 64: "mov rax, 0x7fffffffffffffff"}
COUNT_INIT = "mov ecx, 1"          # a CL shift/rotate count (why.py also runs count 0: with_count)
COUNT_NOTE = "shift/rotate count CL = 1 (a count of 0 leaves the flags unchanged)"

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
    below: float | None = None  # below the resolution: the copies cost less than this (value is no cost)
    modes: tuple[float, float] | None = None  # the faster and slower level the repetitions read (two modes)


class Session:
    """Measures snippets on one CPU and caches the connector reference loops."""

    def __init__(self, measure_fn=None, **measure_kwargs):
        self.measure_fn = measure_fn or measure
        self.kwargs = {k: v for k, v in measure_kwargs.items() if v is not None}
        self.refs: dict[str, dict] = {}
        self.backend: dict | None = None
        self.count = 0
        self.avx512 = bool(this_cpu().has("AVX512F"))

    def measure(self, code: list[str], init: list[str], per: int = 1, pattern: int = F64_ONE,
                shift: int = 0) -> Measured:
        """``init`` from :func:`form_init` also carries the form's loop head (FormInit).
        ``shift``: bytes added to the code's alignment offset (another placement of the same code
        in the front end's fetch windows)."""
        code_text = "\n".join(code)
        init_text = "\n".join(value_init(code + init, self.avx512, pattern) + init) or None
        kwargs = dict(self.kwargs, **getattr(init, "head", {}))
        if shift:
            kwargs["alignment_offset"] = (kwargs.get("alignment_offset", 0) + shift) % 64
        r = self.measure_fn(code_text, init=init_text, **kwargs)
        self.count += 1
        self.backend = r.backend
        ev = r.events["cycles"]
        lin = r.stability.get("linearity") or {}
        return Measured(ev.value / per, ev.uncertainty / per, [s / per for s in ev.samples],
                        r.stable, list(r.warnings), r.backend, code_text, init_text or "",
                        lin.get("linear", True), None if getattr(ev, "upper_bound", None) is None else ev.upper_bound / per,
                        _modes(r.stability.get("modes"), per))

    def step_bounds(self, step: str) -> tuple[float, float | None]:
        """(lower, upper) latency of a connector step; upper None when its reference failed.
        A pinned step (connectors.PINNING) and its partner are exact where the pin holds."""
        key = C.reference_of(step)
        if key not in self.refs:
            code, others = C.REFERENCES[key]
            try:
                m = self.settled(code.split("; "))
                lower = C.lower_bound(step, m.value)
                self.refs[key] = {"code": code, "cycles": m.value, "uncertainty": m.uncertainty,
                                  "lower": lower, "upper": max(lower, m.value - others * lower),
                                  "stable": m.stable}
            except CycleBenchError as e:
                self.refs[key] = {"code": code, "error": e.cause, "lower": C.lower_bound(step),
                                  "upper": None}
        ref = self.refs[key]
        pin = C.partner_of_pinned(step)
        value = self._pin(pin) if pin and ref["upper"] is not None else None
        if value is not None and pin != step:
            value = C.whole_cycles(ref["cycles"] - value)    # the partner: the rest of the loop
            value = value if value >= ref["lower"] - C.PIN_SLACK else None
        if value is not None and ref["lower"] - C.PIN_SLACK <= value <= ref["upper"] + C.PIN_SLACK:
            return value, value
        return ref["lower"], ref["upper"]

    def unsettled_step(self, step: str) -> bool:
        """The step's reference loop, or the pin that fixes it, was read only while unstable in this
        process: bounds taken from it are loose because the host was busy, not because of the step."""
        ref = self.refs.get(C.reference_of(step)) or {}
        pin = C.partner_of_pinned(step)
        pinned = self.refs.get("pin:" + pin) if pin else None
        return ref.get("stable") is False or bool(pinned and pinned.get("stable") is False)

    def _pin(self, step: str) -> float | None:
        """A pinned step's latency (connectors.pinned), measured once; None where it fails."""
        key = "pin:" + step
        old = self.refs.get(key)
        if old is None or (old.get("stable") is False and old.get("attempts", 1) < REF_ATTEMPTS):
            # a pin read during a burst is read again when next needed (up to REF_ATTEMPTS times a
            # process), not left unpinned for every later pair of the process
            loop, closing = C.PINNING[step]
            readings = []
            for _ in range(REF_ATTEMPTS):
                try:
                    a, b = self.settled(loop.split("; ")), self.settled([closing])
                except CycleBenchError as e:
                    self.refs[key] = {"code": loop, "closing": closing, "error": e.cause, "value": None}
                    return None
                stable = a.stable and b.stable
                value = C.pinned(a.value, b.value) if stable else None
                readings.append(value)
                # a step takes whole cycles: a pin off the whole count by more than the loop's own
                # excess (C.whole_cycles) is a disturbed reading, read again (Zen 4, one busy
                # moment: vec2k512 5.22 where it reads 5, every mask pair of the process 0.22 low)
                if value is None or value.is_integer():
                    break
            self.refs[key] = {"code": loop, "closing": closing, "cycles": a.value,
                              "closing_cycles": b.value, "stable": stable, "readings": readings,
                              "attempts": (old or {}).get("attempts", 0) + 1, "value": value}
        return self.refs[key]["value"]

    def settled(self, code: list[str]) -> Measured:
        """A reference loop, measured again while its reading is unstable (up to REF_ATTEMPTS): one
        reading serves every pair of the process that goes through the step."""
        for _ in range(REF_ATTEMPTS):
            m = self.measure(code, [])
            if m.stable:
                break
        return m


def _modes(found: dict | None, per: int) -> tuple[float, float] | None:
    return None if not found else (found["cycles"][0] / per, found["cycles"][1] / per)


class FormInit(list):
    """A form's init lines, and the loop head its copies need (``head``: measure()'s ``reset``
    and ``loop_init``, flow.py), kept through ``+`` so that every method's init carries it."""

    head: dict = {}

    def __add__(self, other):
        out = FormInit(list(self) + list(other))
        out.head = self.head
        return out


def form_init(form: Form, inst: Instance) -> FormInit:
    init = FormInit(inst.init)
    if inst.reset or inst.loop_init:
        init.head = {"reset": inst.reset, "loop_init": "\n".join(inst.loop_init) or None}
    bits = divider_width(form)
    if bits in DIVIDEND:
        init.append(DIVIDEND[bits])
    if has_count(form):
        init.append(COUNT_INIT)
    return init


def with_count(session: "Session", count: int) -> "Session":
    """A session that measures as ``session`` does but with the CL count ``count`` in every init
    (the line :data:`COUNT_INIT` replaced); it shares the reference loops, which have no count."""
    line = f"mov ecx, {count}"

    def measure_fn(code, init=None, **kw):
        lines = [line if x == COUNT_INIT else x for x in (init or "").splitlines()]
        return session.measure_fn(code, init="\n".join(lines) or None, **kw)

    other = Session(measure_fn=measure_fn, **session.kwargs)
    other.refs = session.refs
    return other


def has_count(form: Form) -> bool:
    """A count in CL (shifts and rotates): its value decides whether the flags are written."""
    return any(op.fixed == "CL" for op in form.operands)


def form_notes(form: Form) -> list[str]:
    notes = list(form.notes)
    if divider_width(form) is not None:
        notes.append("data-dependent: measured with divisor 1 and the widest dividend whose quotient "
                     "fits (some dividers, e.g. Zen 4's, are faster for narrow quotients)")
    if has_count(form):
        notes.append(COUNT_NOTE)
    return notes
