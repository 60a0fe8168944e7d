"""The generated measurement code: nanoBench's run() body, one function per configuration.

Every function saves the C callee-saved state, sets the documented initial registers, runs init
code, reads the counters, runs late-init code and the unrolled (optionally looped) copies, reads
the counters again and restores everything. Labels mark each user statement of the first copy so
that a fault address maps back to the statement (see locate.py). Every name emitted here starts
with ``cb_`` (snippet/checks.py RESERVED_PREFIX), which user code may not define.

``reset`` names area registers (layout.REG_INIT) set back to their start at the head of every
loop iteration, before the copies, and ``loop_init`` code runs after them: code that moves one
with every copy (push, stos, call) then needs room for the copies of one iteration only (2U in
B), whatever the loop count, and state the code needs at the start of every iteration (the flags a
branch form reads) is set there. A and B run the head equally often, so its cost drops out of
B - A. The loop's own ``dec``/``jnz`` writes the flags; for code that carries a chain through the
flags (``keep_flags``) the loop ends without writing them (loopend.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field as dfield

from ..counters import reads
from ..snippet.parse import CodePart, nop_directive, parse_part
from ..runner import layout
from .loopend import loop_close

LOOP_REGISTER = "r15"
_REPEATS = re.compile(r"\s*\.(rept|irpc?)\b", re.I)      # GNU as blocks that repeat their lines
# Registers the harness sets to zero; R14, RDI, RSI, RBP and RSP point into memory areas.
ZEROED = ("rax", "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r15")
# The initial vector, mask, MMX, x87 and MXCSR state (docs/asm.md, "Initial state"): every XMM register
# holds two doubles 1.0 and zeros above bit 127, which no lane width reads as a denormal, a NaN or
# an infinity (Intel cores take a ~100-cycle assist on denormals); the upper state is clean
# (vzeroupper), so legacy SSE code pays no transition or merge; k1-k7 are all ones.
VECTOR_LANE = 0x3FF0000000000000
MXCSR_DEFAULT = 0x1F80               # all exceptions masked, round to nearest, no FTZ/DAZ
# The calibration chain: dependent register-source adds. No immediate (Golden Cove and later
# execute add/sub/inc/dec with a small immediate in the renamer, about 6 per cycle: uops.info
# ADL-P, ADD (R64, I8)), no zero idiom, no move. RCX holds 1, set outside the timed window.
CALIB_UNROLL = 1000                  # copies B runs more than A (per loop iteration)
CALIB_INIT = "mov ecx, 1"
CALIB_STATEMENT = "add rax, rcx"
# The calibration's check: a dependent imul chain timed beside it in every repetition. Its cost in
# calibrated cycles is the imul latency (3 on every big core, up to 5 on small ones); a chain the
# core folded or eliminated makes it read several times that (measurement/clocks.py).
CHECK_UNROLL = 200
CHECK_STATEMENT = "imul rax, rcx"
# The contention gauge: four independent add chains, throughput-bound where the calibration is
# latency-bound. A busy SMT sibling on the host slows it (shared issue, ALUs) far more than the
# chain, so its cost relative to the chain exposes what the calibrated clock cannot.
CONTENTION_STATEMENT = "add rax, rcx; add rbx, rcx; add rdx, rcx; add r8, rcx"
# Statement texts that stand for nanoBench's pause/resume magic bytes (see harness/magic.py);
# they become the no-memory pause/resume sequences of counters/reads.py.
# The harness's own parts, the same in every measurement (a user's parts are code, init, ...).
FIXED_PARTS = ("calibration", "check", "contention")
CALIBRATION_LABEL = "cb_calibration"
PAUSE_MARK = "<cyclebench: pause counting>"
RESUME_MARK = "<cyclebench: resume counting>"

_DRAIN = ["lfence", ".rept 2048", "nop", ".endr",
          ".rept 512", nop_directive(15), ".endr"]


@dataclass
class HarnessSpec:
    """Everything the generated measurement code depends on."""
    code: CodePart
    init: CodePart
    late_init: CodePart
    one_time_init: CodePart
    unroll: int
    use_loop: bool
    basic_mode: bool = False
    alignment_offset: int = 0
    drain_frontend: bool = False
    read: dict = dfield(default_factory=lambda: {"use_tsc": True})
    calibration: bool = True
    symbols: list[str] = dfield(default_factory=list)
    avx: bool = True
    avx512: bool = False              # AVX-512 F+VL: XMM16-31 and k1-k7 are set too
    avx512bw: bool = False            # 64-bit masks
    reset: tuple[str, ...] = ()       # area registers set back every loop iteration
    loop_init: CodePart = dfield(default_factory=lambda: CodePart("loop_init"))
    keep_flags: bool = False          # the loop's end writes no flags (snippet/flagchain.py)
    counter: str = LOOP_REGISTER      # the loop count's register (loopend.flag_counter)


class _Emitter:
    def __init__(self):
        self.lines: list[str] = []
        self.origin: dict[int, tuple[str, str]] = {}
        self.sites: list[tuple[str, int]] = []     # rdpmc immediates the runner patches

    def emit(self, *lines: str):
        self.lines.extend(lines)

    def repeat(self, fn: str, part: CodePart, copies: int, read: dict | None = None):
        """``copies`` unlabelled copies. Fixed code (the calibration chains, a few thousand copies
        in every measurement) is one ``.rept``: generating and assembling it line by line was most
        of a measurement's set-up time. User code keeps one line per copy, so that an assembler
        error names its line and pause/resume marks expand in each copy."""
        if part.name in FIXED_PARTS:
            self.emit(f".rept {copies}", *part.lines(), ".endr")
        else:
            for _ in range(copies):
                self.part(fn, part, False, read)

    def part(self, fn: str, part: CodePart, label: bool, read: dict | None = None):
        once = label and any(_REPEATS.match(t) for t in part.lines())
        for i, (text, src) in enumerate(zip(part.lines(), part.sources())):
            if label:
                self._label(f"cb_{fn}_{part.name}_{i}", once)
            if text in (PAUSE_MARK, RESUME_MARK):
                phase = "pause" if text == PAUSE_MARK else "resume"
                self.lines.extend(reads.sequence(phase, **(read or {}), sites=self.sites))
                continue
            self.lines.append(text)
            self.origin[len(self.lines)] = (part.name, src)
        if label:
            self._label(f"cb_{fn}_{part.name}_end", once)

    def _label(self, name: str, once: bool):
        # once: a label inside the user's .rept or .irp block would be defined with every repeat
        self.lines += [f".ifndef {name}", f"{name}:", ".endif"] if once else [f"{name}:"]


def _prologue(e: _Emitter, fn: str, spec: "HarnessSpec"):
    e.emit(".p2align 6", f"cb_{fn}:",
           "push rbx", "push rbp", "push r12", "push r13", "push r14", "push r15",
           f"mov {layout.field(layout.SAVED_RSP)}, rsp",
           f"stmxcsr dword ptr [rip + cb_ctl + {layout.SCRATCH + 56}]")
    _vector_state(e, spec)
    for reg, off in layout.REG_INIT.items():
        e.emit(f"mov {reg}, {layout.field(off)}")
    e.emit(*(f"xor {_d(r)}, {_d(r)}" for r in ZEROED))


def _vector_state(e: _Emitter, spec: "HarnessSpec"):
    """The documented vector/mask/MMX/x87/MXCSR state (see VECTOR_LANE); RAX is zeroed after."""
    mxcsr = f"dword ptr [rip + cb_ctl + {layout.SCRATCH + 60}]"
    e.emit(f"mov {mxcsr}, {MXCSR_DEFAULT:#x}", f"ldmxcsr {mxcsr}", "fninit")
    if spec.avx:
        e.emit("vzeroupper")
    e.emit(f"mov rax, {VECTOR_LANE:#x}", "movq xmm0, rax", "punpcklqdq xmm0, xmm0",
           *(f"movapd xmm{i}, xmm0" for i in range(1, 16)),
           *(f"movq mm{i}, rax" for i in range(8)), "emms")
    if spec.avx512:     # EVEX.128 writes: 128-bit work, no AVX-512 frequency licence
        e.emit(*(f"vmovapd xmm{i}, xmm0" for i in range(16, 32)))
        width = "q" if spec.avx512bw else "w"
        e.emit(*(f"kxnor{width} k{i}, k{i}, k{i}" for i in range(1, 8)))


def _d(reg: str) -> str:
    """32-bit name: writing it zeroes the whole register."""
    return reg + "d" if reg[1:].isdigit() else "e" + reg[1:]


def _epilogue(e: _Emitter, avx: bool):
    e.emit(f"stmxcsr {layout.dfield(layout.FP_STATUS)}",     # the flags the run raised (evaluate.py reads them)
           f"fnstsw word ptr [rip + cb_ctl + {layout.FP_STATUS + 4}]",
           f"mov rsp, {layout.field(layout.SAVED_RSP)}",
           "pop r15", "pop r14", "pop r13", "pop r12", "pop rbp", "pop rbx",
           f"ldmxcsr dword ptr [rip + cb_ctl + {layout.SCRATCH + 56}]",
           "fninit",          # an unbalanced x87 stack must not leak into the next run
           "cld")
    if avx:
        e.emit("vzeroupper")
    e.emit("ret")


def _run_function(e: _Emitter, fn: str, spec: HarnessSpec, copies: int, code: CodePart,
                  init: CodePart, late: CodePart, label: bool, head: CodePart | None = None):
    no_mem = spec.read.get("no_mem", False)
    _prologue(e, fn, spec)
    e.part(fn, init, label)
    if spec.use_loop and no_mem:     # no memory access between the readings: load it before
        e.emit(f"mov {spec.counter}, {layout.field(layout.LOOP_COUNT)}")
    if spec.drain_frontend:
        e.emit(*_DRAIN)
    e.emit(*reads.sequence("start", **spec.read, sites=e.sites))
    if copies:
        e.part(fn, late, label, spec.read)
        if spec.drain_frontend and not late.empty:
            e.emit(*_DRAIN)
    if spec.use_loop and not no_mem:
        e.emit(f"mov {spec.counter}, {layout.field(layout.LOOP_COUNT)}")
    resets = [f"mov {r}, {layout.field(layout.REG_INIT[r])}" for r in spec.reset] if head is not None else []
    if resets or (head is not None and not head.empty):   # before the alignment: the copies keep their place
        e.emit(f"cb_{fn}_loop:", *resets)
        e.part(fn, head, label, spec.read)
    else:
        head = None
    e.emit(".p2align 6")
    if spec.alignment_offset:
        e.emit(f".nops {spec.alignment_offset}")
    e.emit(f"cb_{fn}_body:")
    if copies:
        e.part(fn, code, label, spec.read)
    if copies > 1:
        e.emit(f"cb_{fn}_copy2:")
        e.repeat(fn, code, copies - 1, spec.read)
    if spec.use_loop:
        top = f"cb_{fn}_{'loop' if head is not None else 'body'}"
        e.emit(*(loop_close(spec.counter, top, f"cb_{fn}_loop_done") if spec.keep_flags
                 else (f"dec {spec.counter}", f"jnz {top}")))
    e.emit(f"cb_{fn}_body_end:")
    if spec.drain_frontend:
        e.emit(*_DRAIN)
    e.emit(*reads.sequence("end", **spec.read, sites=e.sites))
    _epilogue(e, spec.avx)


def _data(e: _Emitter, symbols: list[str]):
    e.emit(".p2align 12", "cb_data_pages:", "cb_ctl:", f".zero {layout.SIZE}",
           f".set cb_data_ptr, cb_ctl + {layout.DATA_PTR}",
           f".set cb_data_size, cb_ctl + {layout.DATA_SIZE}")
    for i, name in enumerate(symbols):
        e.emit(f".set cb_sym_{name}, cb_ctl + {layout.SYM + 8 * i}")
    if e.sites:
        # (offset of the imm32 in the blob, counter slot) per rdpmc site, read by the runner
        e.emit(".p2align 3", "cb_patch_table:")
        e.emit(*(f".long {label} - cb_begin, {slot}" for label, slot in e.sites))
    e.emit(".p2align 12")


def generate(spec: HarnessSpec) -> tuple[list[str], dict[int, tuple[str, str]]]:
    """The full measurement source: returns (lines, origin of user lines)."""
    e = _Emitter()
    e.emit(".intel_syntax noprefix", ".text", "cb_begin:")
    empty = CodePart("none")
    if not spec.one_time_init.empty:
        _run_function(e, "one_time", _no_reads(spec), 0, empty, spec.one_time_init, empty, True)
    a_copies = 0 if spec.basic_mode else spec.unroll
    b_copies = spec.unroll if spec.basic_mode else 2 * spec.unroll
    _run_function(e, "run_a", spec, a_copies, spec.code, spec.init, spec.late_init, True, spec.loop_init)
    _run_function(e, "run_b", spec, b_copies, spec.code, spec.init, spec.late_init, True, spec.loop_init)
    if spec.calibration:
        # On a page of its own: its bytes then depend on nothing before it, so that they are
        # assembled once and spliced in (harness/link.py)
        e.emit(".p2align 12", f"{CALIBRATION_LABEL}:")
        _calibration(e, spec)
    _data(e, spec.symbols)
    return e.lines, e.origin


def _calibration(e: _Emitter, spec: HarnessSpec):
    cal = _calibration_spec(spec)
    one = parse_part("init", CALIB_INIT)
    empty = CodePart("none")
    for fn, name, statement, unroll in (("calib", "calibration", CALIB_STATEMENT, CALIB_UNROLL),
                                        ("check", "check", CHECK_STATEMENT, CHECK_UNROLL),
                                        ("contention", "contention", CONTENTION_STATEMENT, CALIB_UNROLL)):
        chain = parse_part(name, statement)
        # A runs a tenth, B that plus ``unroll``: the difference is ``unroll`` copies, as with
        # U and 2U, for 1.2 instead of 3 times the work (A is not empty, so that the loop's
        # own branch hides under the chain in both)
        _run_function(e, f"{fn}_a", cal, unroll // 10, chain, one, empty, False)
        _run_function(e, f"{fn}_b", cal, unroll + unroll // 10, chain, one, empty, False)


def generate_calibration(spec: HarnessSpec) -> list[str]:
    """The calibration functions of ``generate(spec)`` alone, at offset 0, with the control block
    after them as ``generate`` places it: the same bytes as in the whole harness."""
    e = _Emitter()
    e.emit(".intel_syntax noprefix", ".text")
    _calibration(e, spec)
    _data(e, [])
    return e.lines


def calibration_span(lines: list[str]) -> tuple[int, int]:
    """(first, end) indices of the calibration functions in ``generate``'s lines."""
    first = lines.index(f"{CALIBRATION_LABEL}:") + 1
    return first, lines.index("cb_data_pages:", first) - 1      # _data starts with ".p2align 12"


def generate_check(parts: list[CodePart], symbols: list[str]) -> tuple[list[str], dict[int, tuple[str, str]]]:
    """Each part once, labelled: for clean assembler errors, copy sizes and CPUID checks."""
    e = _Emitter()
    e.emit(".intel_syntax noprefix", ".text", "cb_begin:")
    for p in parts:
        e.part("check", p, True)
    _data(e, symbols)
    return e.lines, e.origin


def _no_reads(spec: HarnessSpec) -> HarnessSpec:
    return HarnessSpec(spec.code, spec.init, spec.late_init, spec.one_time_init, 0, False,
                       read={"use_tsc": False}, calibration=False, avx=spec.avx, avx512=spec.avx512,
                       avx512bw=spec.avx512bw)


def _calibration_spec(spec: HarnessSpec) -> HarnessSpec:
    empty = CodePart("none")
    return HarnessSpec(empty, empty, empty, empty, CALIB_UNROLL, True,
                       read={"use_tsc": True}, calibration=False, avx=spec.avx, avx512=spec.avx512,
                       avx512bw=spec.avx512bw)
