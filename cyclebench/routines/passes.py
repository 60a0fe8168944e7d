"""The generated pass: the loop that calls a routine once per record of a stream, the L1d
eviction, and where things sit in the runner's R14 area.

A *pass* is one walk over a stream of N argument sets (see ``streams``), calling a routine once per
set through an indirect call; the argument loads come from the stream's call shape (``shape``),
here memset's ``(dst_offset, value, size)``::

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

The **empty pass** is the same pass calling ``cb_routine_empty`` (returns its first argument and
does nothing else, so it serves every call shape): the cost of the loop, the argument loads, the call and the return, about 5
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
array (a record per call, 24 bytes for memset, read sequentially, the same reads in the empty pass), and the same
array is replayed on every repetition (``replay=True`` forces this for a fixed stream too).

Evicting the L1d. ``flush="call"`` evicts, before every call, the L1d lines the destination range
``[buffer, buffer + max(dst_offset + size))`` can occupy; ``flush="pass"`` does it once before each
pass. The L1d geometry comes from sysfs, else CPUID, else the largest L1d in the microarchitecture
table (machine/uarch.py): with 64 sets of 64-byte lines (32 KiB 8-way and 48 KiB 12-way alike),
addresses 4 KiB apart share a set: the eviction reads one qword from 2 x ways lines in each of
those sets, from an eviction region in the R14 area after the destination buffer (at most 64 x 16
= 1024 loads, about 100 to 1000 cycles). Evicting only those sets keeps the eviction cheap, so its
noise stays small next to a memset. The eviction runs in *both* passes, so its own cost cancels.
What does not cancel, on purpose: the routine's stores miss the L1d (the lines are in L2), and its
dirty lines are written back to L2 by the next eviction. Both are costs of the routine's writes:
what the reference's "clear L1" tests expose.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cyclebench.errors import UsageError
from cyclebench.routines.options import TimingOptions
from cyclebench.routines.shape import MEMSET, CallShape
from cyclebench.routines.streams import PAGE, Stream

MIN_R14_SIZE = 1 << 20
INIT_TEMPLATE = ("mov rbx, r14; and rbx, -4096; xor dword ptr [rbx + {ctl}], 1; "
                 "mov dword ptr [rbx + {ctl} + 4], 0")


@dataclass(frozen=True)
class L1Geometry:
    ways: int
    sets: int
    line: int

    @property
    def set_span(self) -> int:
        """Bytes after which addresses map to the same set again (64 sets of 64 bytes: 4 KiB)."""
        return self.sets * self.line


@functools.lru_cache(maxsize=1)
def l1d_geometry() -> L1Geometry:
    """The L1 data cache's ways, sets and line size: sysfs, else CPUID, else the largest L1d the
    microarchitecture table knows (evicting 2 x more ways than there are still evicts)."""
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for idx in sorted(base.glob("index*")):
            if (idx / "level").read_text().strip() == "1" and \
                    (idx / "type").read_text().strip() in ("Data", "Unified"):
                g = L1Geometry(int((idx / "ways_of_associativity").read_text()),
                               int((idx / "number_of_sets").read_text()),
                               int((idx / "coherency_line_size").read_text()))
                if _usable(g):
                    return g
    except (OSError, ValueError):
        pass
    from cyclebench.machine import caches
    for c in caches.caches()[0]:
        if c["level"] == 1 and c["type"] in ("Data", "Unified"):
            g = L1Geometry(c["ways"], c["sets"], c["line"])
            if _usable(g):
                return g
    return largest_known_l1d()


def _usable(g: L1Geometry) -> bool:
    return g.ways > 0 and g.sets > 0 and g.line > 0 and g.set_span % PAGE == 0


def largest_known_l1d() -> L1Geometry:
    """The most ways and sets of any L1d in the microarchitecture table (64-byte lines)."""
    from cyclebench.machine.uarch import TABLE
    sizes = []
    for u in TABLE:
        if u.published:
            kib, ways = u.published.l1d.split(" KiB, ")
            sizes.append((int(kib) * 1024, int(ways.split("-")[0])))
    ways = max(w for _, w in sizes)
    sets = max(size // (w * 64) for size, w in sizes)
    return L1Geometry(ways, sets, 64)


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
        span = max(1, stream.shape.buffer_end(stream.records))
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
    rec = stream.records[:1]
    pointers = [a.field for a in stream.shape.args if a.pointer]
    used: set[int] = set()
    if pointers:
        o = min(int(rec[f][0]) for f in pointers)
        n = stream.shape.buffer_end(rec) - o
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
              fixed: bool, shape: CallShape = MEMSET) -> tuple[str, str]:
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
    lines += shape.load_lines("r12", "rbx") + ["call r15"]
    if opts.serialize:
        lines.append("lfence")
    if not fixed:
        lines.append(f"add r12, {shape.record_size}")
    lines += ["dec r13", "jnz 1b", "9:"]
    return init, "\n".join(lines)


def is_fixed(stream: Stream) -> bool:
    """True when every record of the stream is the same (a fixed-argument stream)."""
    r = stream.records
    return bool(np.all(r == r[0]))
