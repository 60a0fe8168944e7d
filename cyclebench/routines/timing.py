"""Cycles per call of a routine over an input stream, through ``cyclebench.measure``.

Method
------
A *pass* is one walk over a stream of N argument sets ``(dst_offset, value, size)`` (see
``streams``), calling a routine once per set through an indirect call::

    mov  r12, [rip + cb_data_ptr]      ; the stream blob, in the runner's data area
    mov  r13d, N
    [evict]                            ; flush="pass": evict the L1d once, before the pass
    .p2align 12                        ; the loop on a page boundary, in both passes
 1: [evict]                            ; flush="call": evict the L1d before every call
    mov  rdi, [r12]                    ; dst = buffer + dst_offset   (buffer: rbx, page-aligned)
    add  rdi, rbx
    mov  esi, [r12 + 8]                ; c
    mov  rdx, [r12 + 16]               ; n
    call r15                           ; the routine, or the empty routine
    [lfence]                           ; serialize=True: the next call starts when this one is done
    add  r12, 24                       ; replayed arrays only (a fixed stream re-reads one record)
    dec  r13
    jnz  1b

The **empty pass** is the same pass calling ``cb_routine_empty`` (memset's signature, returns dst,
does nothing else): the cost of the loop, the argument loads, the call and the return, about 5
cycles per call on Zen 4. Figures per call:

* ``gross``: the routine's pass / N, per repetition;
* ``empty``: the empty pass / N, per repetition;
* ``net``: gross - empty.

**Paired in one process.** Both passes run in the same ``measure()`` call, in the same runner
process, repetition by repetition: ``unroll=1, loop=0``, so configuration A runs one copy of the
code and B two. ``init`` (run before every A and every B run) flips a parity word in the R14 area
and clears a copy counter: the copy runs the empty pass when the parity says A and the routine's
pass when it says B, and B's second copy skips itself. So each repetition's A reading is an empty
pass and its B reading the routine's pass, back to back, on the same pages, and the runner's
``B - A`` is the paired net cost. This relies on the runner running A and B alternately, A first,
each after ``init`` (docs/ARCHITECTURE.md), and is checked: a net cost clearly below zero (the
routine faster than doing nothing) raises an internal error instead of reporting nonsense.
Measuring the two passes in separate processes was tried first and is fine without eviction, but
with ``flush="call"`` the eviction's cost differs between processes (different physical pages,
different L2 conflicts) by more than the routine's cost. Even paired, a process can land on an
unlucky layout; ``processes=k`` pools the repetitions of k runner processes.

Calls run back to back, so the net figure is the time the routine *adds* to a loop that calls it:
work that overlaps the call overhead is free (a cheap routine can cost well under a cycle net).
``serialize=True`` puts an ``lfence`` after every call (in both passes), so no call overlaps the
next one's instructions; stores may still drain from the store buffer afterwards.

Streams. A stream whose records are all equal is a **fixed-argument stream**: the same arguments
every call, so the branch predictors are fully trained after the warm-up passes; only its first
record goes to the runner and the pass re-reads it (the stream itself never competes with the
destination for the L1d). Any other stream is a **replayed array**: the pass walks the whole
array (24 bytes per call, read sequentially, the same reads in the empty pass), and the same
array is replayed on every repetition (``replay=True`` forces this for a fixed stream too).

Evicting the L1d. ``flush="call"`` evicts, before every call, the L1d lines the destination range
``[buffer, buffer + max(dst_offset + size))`` can occupy; ``flush="pass"`` does it once before each
pass. The L1d geometry comes from sysfs (Zen 4: 32 KiB, 8 ways, 64 sets of 64-byte lines, so
addresses 4 KiB apart share a set): the eviction reads one qword from 2 x ways lines in each of
those sets, from an eviction region in the R14 area after the destination buffer (at most 64 x 16
= 1024 loads, about 100 to 1000 cycles). Evicting only those sets keeps the eviction cheap, so its
noise stays small next to a memset. The eviction runs in *both* passes, so its own cost cancels.
What does not cancel, on purpose: the routine's stores miss the L1d (the lines are in L2), and its
dirty lines are written back to L2 by the next eviction. Both are costs of the routine's writes:
what the reference's "clear L1" tests expose.

Statistics follow the reference: the mean of the fastest 10% of repetitions (it drops interrupts and
context switches), plus the median, the minimum and the spread (interquartile range), per call.
``gross`` and ``empty`` are summaries of their own repetitions; ``net.fastest10`` and
``net.minimum`` are gross minus empty of that statistic; ``net.median``, ``net.mean`` and
``net.spread`` come from the paired per-repetition differences (robust: the pairing cancels slow
drifts and per-process effects). The raw per-repetition pass cycles are kept (``samples``). The A
and B readings include the counter reads (about 40 cycles per pass, under 0.05 cycles per call
for 1000 calls); they cancel in ``net``. With the TSC backend, core cycles are TSC ticks times
each repetition's calibrated cycles per tick, or the run's median when a repetition's calibration
is more than 1% off it (a disturbed calibration would make that repetition look fast or slow).

Correctness first. Every routine is checked before it is timed (``check_memset`` on ``domain`` by
default, or ``checker``; memoized per shared object, symbol and domain). A wrong routine raises
``RoutineIncorrect`` (exit 11) and is not timed. The stream must lie inside the checked domain
(sizes, destination alignments, fill values), else UsageError.

With a hardware PMU, ``events=("branch-misses",)`` (or any perf event) is counted per call the same
way (gross, empty, net). Without one, as on our KVM guests, hardware events are unavailable
(CounterUnavailable, exit 7).
"""
from __future__ import annotations

import functools
import os
import statistics
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from cyclebench.errors import CycleBenchError, UsageError
from cyclebench.routines.build import Routine, empty_routine
from cyclebench.routines.correctness import MemsetDomain, check_memset
from cyclebench.routines.stats import summarize
from cyclebench.routines.streams import PAGE, RECORD_SIZE, Stream

FLUSH_MODES = ("none", "call", "pass")
MIN_R14_SIZE = 1 << 20
TSC_CALIBRATION_TOLERANCE = 0.01
INIT_TEMPLATE = ("mov rbx, r14; and rbx, -4096; xor dword ptr [rbx + {ctl}], 1; "
                 "mov dword ptr [rbx + {ctl} + 4], 0")


@dataclass(frozen=True)
class L1Geometry:
    ways: int = 8
    sets: int = 64
    line: int = 64

    @property
    def set_span(self) -> int:
        """Bytes after which addresses map to the same set again (Zen 4: 4 KiB)."""
        return self.sets * self.line


@functools.lru_cache(maxsize=1)
def l1d_geometry() -> L1Geometry:
    """The L1 data cache's ways, sets and line size from sysfs (Zen 4's 8/64/64 if unreadable)."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for idx in sorted(base.glob("index*")):
            if (idx / "level").read_text().strip() == "1" and \
                    (idx / "type").read_text().strip() in ("Data", "Unified"):
                g = L1Geometry(int((idx / "ways_of_associativity").read_text()),
                               int((idx / "number_of_sets").read_text()),
                               int((idx / "coherency_line_size").read_text()))
                if g.ways > 0 and g.sets > 0 and g.line > 0 and g.set_span % PAGE == 0:
                    return g
    except (OSError, ValueError):
        pass
    return L1Geometry()


@dataclass(frozen=True)
class TimingOptions:
    """How a routine is timed. Defaults: trained back-to-back calls, no eviction, 30 repetitions."""

    n_measurements: int = 30
    warm_up: int = 5
    flush: str = "none"                 # "none" | "call" | "pass"
    evict_ways_factor: int = 2          # lines read per L1d set = factor x ways
    serialize: bool = False             # lfence after every call
    replay: bool = False                # walk a fixed stream as an array anyway
    counters: str = "auto"              # measure()'s backend: auto, tsc, perf
    events: tuple[str, ...] = ()        # extra perf events (hardware events need a PMU)
    budget: float = 1.0                 # measure()'s re-run budget when the host is noisy
    timeout: float = 60.0
    cpu: int | None = None
    processes: int = 1                  # runner processes whose repetitions are pooled

    def __post_init__(self):
        if self.flush not in FLUSH_MODES:
            raise UsageError(f"unknown flush mode {self.flush!r}", hint="use none, call or pass")
        if not 1 <= self.evict_ways_factor <= 8:
            raise UsageError("evict_ways_factor must be 1..8", hint="2 reads twice the associativity")
        if not 1 <= self.n_measurements <= 100_000:
            raise UsageError(f"{self.n_measurements} repetitions is out of range", hint="use 1..100000")
        if not 1 <= self.processes <= 100:
            raise UsageError(f"{self.processes} processes is out of range", hint="use 1..100")
        object.__setattr__(self, "events", tuple(self.events))

    def key(self) -> dict:
        """The options that change a figure (for result records and resume keys)."""
        d = asdict(self)
        for k in ("budget", "timeout", "cpu"):
            d.pop(k)
        if self.processes == 1:
            d.pop("processes")
        d["events"] = list(self.events)
        if self.flush == "none":
            d.pop("evict_ways_factor")
        return d


@dataclass
class Timing:
    """Per-call cost of one routine on one stream; figures in core cycles per call."""

    routine: str
    spec: str
    stream: str
    stream_params: dict
    stream_digest: str
    calls: int
    mode: str                     # "fixed" or "replay"
    options: dict
    gross: dict                   # Summary of the routine's pass / N per repetition
    empty: dict                   # Summary of the empty pass / N per repetition
    net: dict                     # see the module docstring
    samples: dict                 # per repetition, cycles per pass: {"pass": [...], "empty": [...]}
    events: dict = field(default_factory=dict)   # extra events: {name: {"gross", "empty", "net"}}
    backend: dict = field(default_factory=dict)
    stable: bool = True
    warnings: list = field(default_factory=list)

    @property
    def cycles(self) -> float:
        """The headline figure: net cycles per call, mean of the fastest 10% (reference statistic)."""
        return self.net["fastest10"]

    def to_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# correctness, memoized

_checked: dict[tuple, object] = {}
_checked_lock = threading.Lock()


def _routine_key(routine: Routine, domain) -> tuple:
    try:
        st = os.stat(routine.library)
        ident = (st.st_mtime_ns, st.st_size)
    except OSError:
        ident = None
    return (os.path.realpath(routine.library), ident, routine.symbol, repr(domain))


def mark_checked(routine: Routine, domain: MemsetDomain | None, result: object = True) -> None:
    """Record that ``routine`` passed its memset check on ``domain`` (e.g. after ``check_many``)."""
    with _checked_lock:
        _checked[_routine_key(routine, domain or MemsetDomain())] = result


def ensure_correct(routine: Routine, domain: MemsetDomain | None = None,
                   checker: Callable[[Routine], object] | None = None) -> object:
    """Check ``routine`` once per (shared object, symbol, domain, checker); raises RoutineIncorrect."""
    domain = domain or MemsetDomain()
    key = _routine_key(routine, domain) + ((id(checker),) if checker else ())
    with _checked_lock:
        if key in _checked:
            return _checked[key]
    result = checker(routine) if checker else check_memset(routine, domain)
    with _checked_lock:
        _checked[key] = result
    return result


def check_stream_in_domain(stream: Stream, domain: MemsetDomain, routine: Routine) -> None:
    """UsageError unless every call of ``stream`` lies in the domain ``routine`` was checked on."""
    sizes, offsets = stream.sizes, stream.offsets
    biggest = int(sizes.max())
    limit = domain.large_max if domain.large_samples else domain.max_size
    why = None
    if biggest > limit:
        why = f"sizes up to {biggest} B, but it was checked only up to {limit} B"
    elif domain.size_step > 1 and np.any(sizes % domain.size_step):
        why = f"sizes that are not multiples of {domain.size_step}"
    elif domain.align_step > 1 and np.any(offsets % domain.align_step):
        why = f"destinations not aligned to {domain.align_step} bytes"
    elif domain.zero_only and np.any(stream.values & 0xFF):
        why = "non-zero fill values, but it was checked for zero fills only"
    if why:
        raise UsageError(f"stream {stream.name} is outside {routine.name}'s checked domain: it has {why}",
                         hint="time a routine only on inputs its correctness check covered")


# ---------------------------------------------------------------------------------------------
# the pass

@dataclass(frozen=True)
class Layout:
    """Where things sit from the destination buffer's start (rbx) in the R14 area."""
    buffer: int           # destination buffer bytes (whole pages)
    evict_offset: int     # eviction region (page-aligned), 0 without eviction
    evict_lines: int      # L1d sets to evict (lines per way), 0 without eviction
    evict_ways: int       # lines read per set
    ctl: int              # parity word and copy counter (8 bytes)
    r14_size: int         # the R14 area to ask the runner for
    data_offset: int = 0  # where the stream starts in the data blob (after zero padding)

    @property
    def evict_loads(self) -> int:
        return self.evict_lines * self.evict_ways


def layout_for(stream: Stream, opts: TimingOptions) -> Layout:
    buf = stream.buffer_size
    evict_off = lines = ways = 0
    end = buf
    if opts.flush != "none":
        g = l1d_geometry()
        span = int((stream.offsets + stream.sizes).max())
        lines = max(1, min(g.sets, -(-span // g.line)))
        if lines >= 4:
            lines = -(-lines // 4) * 4 if lines < g.sets else g.sets
        ways = opts.evict_ways_factor * g.ways
        evict_off = buf + PAGE
        end = evict_off + ways * g.set_span
    ctl = end + PAGE
    need = ctl + PAGE
    half = -(-need // (2 * PAGE)) * 2 * PAGE          # R14 = area + r14_size/2 is page-aligned
    return Layout(buf, evict_off, lines, ways, ctl, max(MIN_R14_SIZE, 2 * half),
                  _fixed_record_offset(stream) if is_fixed(stream) and not opts.replay else 0)


def _fixed_record_offset(stream: Stream) -> int:
    """Page offset for a fixed stream's one record: an L1d set the destination does not touch.

    On Zen 4 the record's line and a destination line in the same L1d set can evict each other
    when their linear-address micro-tags collide, which depends on where ASLR put the areas: the
    same fixed-size call then cost 0.2 or 9.5 cycles depending on the process. Keeping the record
    out of the destination's sets (and out of the last set, where the return address is pushed)
    removes that lottery for destinations under 3.5 KiB.
    """
    g = l1d_geometry()
    o, n = int(stream.offsets[0]), int(stream.sizes[0])
    first, last = o // g.line, (o + max(n, 1) - 1) // g.line
    used = set(range(first, last + 1)) if last - first + 1 < g.sets else set(range(g.sets))
    for cand in (g.sets * 7 // 8, g.sets * 3 // 4, g.sets // 2, g.sets // 4, g.sets // 8, 1):
        if cand % g.sets not in used and cand != g.sets - 1:
            return (cand % g.sets) * g.line
    return 0


def _eviction(lay: Layout) -> list[str]:
    """Read one qword from lay.evict_ways lines of each of the first lay.evict_lines L1d sets."""
    g = l1d_geometry()
    out = [f"lea rcx, [rbx + {lay.evict_offset}]", f"mov eax, {lay.evict_ways}", "2:"]
    if lay.evict_lines < 4:
        out += [f"mov r9, [rcx + {g.line * j}]" for j in range(lay.evict_lines)]
    else:
        out += ["mov rdx, rcx", f"mov r8d, {lay.evict_lines // 4}",
                "3: mov r9, [rdx]", f"mov r10, [rdx + {g.line}]", f"mov r11, [rdx + {2 * g.line}]",
                f"mov r9, [rdx + {3 * g.line}]", f"add rdx, {4 * g.line}", "dec r8d", "jnz 3b"]
    out += [f"add rcx, {g.set_span}", "dec eax", "jnz 2b"]
    return out


def pass_code(symbol: str, empty_symbol: str, calls: int, opts: TimingOptions, lay: Layout, *,
              fixed: bool) -> tuple[str, str]:
    """(init, code) of the paired measurement (see the module docstring)."""
    if not 1 <= calls < 2**31:
        raise UsageError(f"{calls} calls per pass is out of range", hint="use 1 .. 2^31-1 calls")
    init = INIT_TEMPLATE.format(ctl=lay.ctl)
    lines = [f"mov eax, [rbx + {lay.ctl + 4}]", f"inc dword ptr [rbx + {lay.ctl + 4}]",
             "test eax, eax", "jnz 9f",                              # B's second copy: skip
             f"mov r15, [rip + cb_sym_{symbol}]",
             f"cmp dword ptr [rbx + {lay.ctl}], 0",                  # parity 1: an A run
             f"cmovne r15, [rip + cb_sym_{empty_symbol}]",
             "mov r12, [rip + cb_data_ptr]", f"mov r13d, {calls}"]
    if lay.data_offset:
        lines.insert(-1, f"add r12, {lay.data_offset}")
    if opts.flush == "pass":
        lines += _eviction(lay)
    # The loop starts on a page boundary in A and in B alike: its position decides front-end and
    # branch-predictor effects worth a cycle per call (measured: the empty loop ran 5 or 6 cycles
    # per call depending on where it sat), and they must be the same in both passes.
    lines += [".p2align 12", "1:"]
    if opts.flush == "call":
        lines += _eviction(lay)
    lines += ["mov rdi, [r12]", "add rdi, rbx", "mov esi, [r12 + 8]", "mov rdx, [r12 + 16]",
              "call r15"]
    if opts.serialize:
        lines.append("lfence")
    if not fixed:
        lines.append(f"add r12, {RECORD_SIZE}")
    lines += ["dec r13", "jnz 1b", "9:"]
    return init, "\n".join(lines)


_empty_lock = threading.Lock()


def _empty() -> Routine:
    with _empty_lock:
        return empty_routine()


def _measure_pair(routine: Routine, stream: Stream, opts: TimingOptions, fixed: bool):
    from cyclebench.measurement.api import measure   # late: keeps `routines` importable alone
    empty = _empty()
    lay = layout_for(stream, opts)
    if routine.symbol == empty.symbol and os.path.realpath(routine.library) != os.path.realpath(empty.library):
        raise UsageError(f"routine symbol {routine.symbol} clashes with the empty routine's",
                         hint="rename the routine")
    symbols = [routine.symbol] if routine.symbol == empty.symbol else [routine.symbol, empty.symbol]
    libraries = list(dict.fromkeys([routine.library, empty.library]))
    init, code = pass_code(routine.symbol, empty.symbol, len(stream), opts, lay, fixed=fixed)
    data = (bytes(lay.data_offset) + stream.records[:1].tobytes()) if fixed else stream.to_bytes()
    return measure(code, init=init, libraries=libraries, symbols=symbols, data=data,
                   r14_size=lay.r14_size, unroll=1, loop=0, n_measurements=opts.n_measurements,
                   warm_up=opts.warm_up, counters=opts.counters, events=",".join(opts.events) or None,
                   budget=opts.budget, timeout=opts.timeout, cpu=opts.cpu, paired=True), lay


def _chosen_attempt(result) -> dict:
    atts = result.raw.get("attempts", [])
    for meta, raw in zip(result.attempts, atts):
        if (meta.get("calibrated_ghz") == result.backend.get("calibrated_ghz")
                and meta.get("cycles") == result.events["cycles"].value):
            return raw
    return atts[-1]


def readings(result) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Per-repetition core cycles of the A and B readings of a measure() result (and of extra
    events), with the robust TSC calibration described in the module docstring."""
    from cyclebench.harness.codegen import CALIB_UNROLL
    from cyclebench.measurement.api import CALIB_LOOP
    raw = _chosen_attempt(result)
    n = result.parameters.get("n_measurements") or len(raw["a"])
    a, b = raw["a"][:n], raw["b"][:n]
    names = list(result.parameters.get("events", []))
    if "ca" in raw:
        adds = CALIB_UNROLL * CALIB_LOOP
        cpt = [adds / (y[0] - x[0]) if y[0] > x[0] else float("nan")
               for x, y in zip(raw["ca"][:n], raw["cb"][:n])]
        good = [c for c in cpt if c == c]
        med = statistics.median(good) if good else 1.0
        cpt = np.array([c if c == c and abs(c - med) <= TSC_CALIBRATION_TOLERANCE * med else med
                        for c in cpt])
        ca = np.array([r[0] for r in a], dtype=float) * cpt
        cb = np.array([r[0] for r in b], dtype=float) * cpt
        first = 1
    else:
        ca = np.array([r[1] for r in a], dtype=float)
        cb = np.array([r[1] for r in b], dtype=float)
        first = 2
    events = {nm: (np.array([r[first + i] for r in a], dtype=float),
                   np.array([r[first + i] for r in b], dtype=float)) for i, nm in enumerate(names)}
    return ca, cb, events


STATS = ("fastest10", "median", "minimum", "mean")


def _net(gross_pc: np.ndarray, empty_pc: np.ndarray, gross: dict, empty: dict) -> dict:
    diff = summarize(gross_pc - empty_pc).as_dict()
    out = {"fastest10": gross["fastest10"] - empty["fastest10"],
           "minimum": gross["minimum"] - empty["minimum"],
           "median": diff["median"], "mean": diff["mean"], "q1": diff["q1"], "q3": diff["q3"],
           "spread": diff["spread"]}
    out["relative_spread"] = out["spread"] / gross["median"] if gross["median"] > 0 else float("inf")
    return out


def time_routine(routine: Routine, stream: Stream, options: TimingOptions | None = None, *,
                 domain: MemsetDomain | None = None,
                 checker: Callable[[Routine], object] | None = None) -> Timing:
    """Net core cycles per call of ``routine`` over ``stream`` (see the module docstring).

    ``domain``: the memset contract the routine is checked on first and the stream must lie in
    (default: memset's whole contract). ``checker``: a callable that raises for a wrong routine,
    for routines that are not memset-like (then the domain is not used).
    """
    opts = options or TimingOptions()
    domain = domain or MemsetDomain()
    if checker is None:
        check_stream_in_domain(stream, domain, routine)
    ensure_correct(routine, domain, checker)
    fixed = is_fixed(stream) and not opts.replay
    runs = [_measure_pair(routine, stream, opts, fixed) for _ in range(opts.processes)]
    result, lay = runs[0]
    parts = [readings(r) for r, _ in runs]
    ca = np.concatenate([p[0] for p in parts])
    cb = np.concatenate([p[1] for p in parts])
    events = {nm: (np.concatenate([p[2][nm][0] for p in parts]), np.concatenate([p[2][nm][1] for p in parts]))
              for nm in parts[0][2]}
    n = len(stream)
    g_pc, e_pc = cb / n, ca / n
    gross, empty = summarize(g_pc).as_dict(), summarize(e_pc).as_dict()
    net = _net(g_pc, e_pc, gross, empty)
    # A broken pairing makes (nearly) every repetition negative; one burst in an A pass makes one
    # repetition negative, and with few repetitions that one can move the median on its own.
    margin = 0.25 * max(empty["median"], 1.0)
    if net["median"] < -margin and np.mean(g_pc - e_pc < -margin) > 0.75:
        raise CycleBenchError(
            f"{routine.name} came out {-net['median']:.1f} cycles per call *faster* than the empty "
            "routine: the A/B pairing of the empty and the real pass is broken (did the runner's "
            "order of runs change?)", hint="this is a bug in cyclebench: please report it")
    ev = {}
    for name, (ea, eb) in events.items():
        g, e = summarize(eb / n).as_dict(), summarize(ea / n).as_dict()
        ev[name] = {"gross": g, "empty": e, "net": _net(eb / n, ea / n, g, e)}
    opt_key = opts.key()
    if lay.evict_lines:
        opt_key["evict_loads_per_eviction"] = lay.evict_loads
    return Timing(routine=routine.name, spec=routine.spec, stream=stream.name,
                  stream_params=_jsonable(stream.params), stream_digest=stream.digest(), calls=n,
                  mode="fixed" if fixed else "replay", options=opt_key, gross=gross, empty=empty,
                  net=net, samples={"pass": cb.tolist(), "empty": ca.tolist()}, events=ev,
                  backend=dict(result.backend), stable=all(r.stable for r, _ in runs),
                  warnings=list(dict.fromkeys(w for r, _ in runs for w in r.warnings)))


def is_fixed(stream: Stream) -> bool:
    """True when every record of the stream is the same (a fixed-argument stream)."""
    r = stream.records
    return bool(np.all(r == r[0]))


def _jsonable(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.floating):
            v = float(v)
        out[k] = v
    return out
