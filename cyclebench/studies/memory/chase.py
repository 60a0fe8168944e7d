"""A chain as one measure() call: ``mov rax, [rax]`` per element, cycles and ns per load.

The region is the R14 area (``r14_size`` = the chain's span + 4 MiB, so a 2 MiB-aligned start
always fits). ``one_time_init`` madvises the region (MADV_HUGEPAGE for 2 MiB pages,
MADV_NOHUGEPAGE for 4 KiB; a failing madvise executes ``ud2``, so it cannot pass silently) and
then writes every element's pointer to its successor from the element list in the data area, so
every line is written before anything is timed (no read hits the shared zero page), in visiting
order. ``init`` starts each run where the walk so far has got to: a position along the chain, kept
in the region after the chain, advances at every run by the longer run's loads (B's) plus a
pseudo-random part of the shorter's (A's), and each chain starts at the element at that position of
its own cycle. Every run thus walks on into the part of the chain touched longest ago (a lap ago,
or at one_time_init), the steady state of one endless walk, whatever the chain's size against the
caches and TLBs. The pseudo-random part keeps A and B from falling on fixed parts of a chain whose
length is a multiple of the advance (then A would always walk some parts and B others, and B - A
would carry their difference). Random starts, as before, let a run land on lines a recent run
left in the cache, a chance that differs between A and B. The timed body is ``unroll`` copies of
one load per chain inside a loop of ``loop`` iterations.

Chains 1..13 live in registers; further chains (the MLP experiment's 14..16) in stack slots, one
``mov r14, [slot]; mov r14, [r14]; mov [slot], r14`` each, which adds a store-to-load forward per
load of those chains.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cyclebench.measurement.api import measure

from .chains import LINE, Chain
from .hugepages import MADV_HUGEPAGE, MADV_NOHUGEPAGE, HugePageProbe

GOLD = 0x9E3779B97F4A7C15   # Fibonacci hashing multiplier (2^64 / golden ratio)
REGS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11", "r12", "r13")
HUGE = 2 << 20
SLACK = 4 << 20
HEADER = 0            # the data area is the element list alone
PAGES = {"4k": (4096, MADV_NOHUGEPAGE), "2m": (HUGE, MADV_HUGEPAGE)}


def region(chain: Chain) -> tuple[int, int]:
    """(r14_size, madvise length) for a chain."""
    length = -(-chain.span // HUGE) * HUGE
    return length + SLACK, length


def _base(r14_size: int, reg: str = "rbx", tmp: str = "rcx") -> list[str]:
    """reg := the region's 2 MiB-aligned start."""
    return [f"mov {reg}, {r14_size // 2}", f"mov {tmp}, r14", f"sub {tmp}, {reg}", f"lea {reg}, [{tmp} + 0x1fffff]",
            f"and {reg}, -0x200000"]


def position_slot(chain: Chain) -> int:
    """Bytes from the region's start to the 8-byte walk position (just after the chain's pages)."""
    return region(chain)[1]


def step(unroll: int, loop: int) -> tuple[int, int]:
    """(advance, jitter): the position moves by ``advance`` plus a pseudo-random amount below
    ``jitter`` per run; advance = B's loads per chain (2 x unroll copies per iteration), so no run
    walks lines an earlier run of this lap walked, and jitter = A's."""
    return 2 * unroll * loop, unroll * loop


def next_position(pos: int, advance: int, jitter: int) -> int:
    """The walk position after a run that started at ``pos`` (what init computes)."""
    return pos + advance + (((pos * GOLD) & (2 ** 64 - 1)) * jitter >> 64)


def _addr(reg: str, tmp: str, chain: Chain) -> list[str]:
    """reg (an element number) := its line's address (rbx = region start)."""
    out = []
    if chain.mask:
        out += [f"mov {tmp}, {reg}", f"and {tmp}, {chain.mask}"]
    if chain.stride != 1:
        out.append(f"imul {reg}, {reg}, {chain.stride}")
    if chain.mask:
        out.append(f"add {reg}, {tmp}")
    return out + [f"shl {reg}, 6", f"add {reg}, rbx"]


def one_time_init(chain: Chain, advice: int) -> str:
    r14_size, length = region(chain)
    lines = _base(r14_size) + [
        "mov rdi, rbx", f"mov rsi, {length}", f"mov edx, {advice}", "mov eax, 28", "syscall",
        "test rax, rax", "jz 2f", "ud2", "2:",
        "mov rsi, [rip + cb_data_ptr]", f"mov r10, {chain.segments}",
        "3:", "mov eax, [rsi]", *_addr("rax", "rdx", chain), "mov r11, rax", "mov r12, rax",
        "add rsi, 4", f"mov rcx, {chain.seg_len - 1}",
        "4:", "mov eax, [rsi]", *_addr("rax", "rdx", chain), "mov [r12], rax", "mov r12, rax",
        "add rsi, 4", "dec rcx", "jnz 4b",
        "mov [r12], r11", "dec r10", "jnz 3b",
        f"mov qword ptr [rbx + {position_slot(chain)}], 0"]
    return "\n".join(lines)


def init(chain: Chain, r14_size: int, advance: int, jitter: int) -> str:
    """Chain j starts at the element at the walk's position in segment j (position mod its length);
    the position then moves on (next_position). Chain registers (or slots) loaded last."""
    k = chain.segments
    slot = f"[rbx + {position_slot(chain)}]"
    lines = _base(r14_size) + [f"mov r8, {slot}", f"mov rax, {GOLD}", "imul rax, r8", f"mov r9, {jitter}", "mul r9",
                               f"lea r9, [r8 + rdx + {advance}]", f"mov {slot}, r9",
                               "mov rax, r8", "xor edx, edx", f"mov r9, {chain.seg_len}", "div r9",
                               "mov rsi, [rip + cb_data_ptr]", "lea rsi, [rsi + 4 * rdx]"]
    for j in range(k):
        lines += [f"mov edx, [rsi + {4 * j * chain.seg_len}]", *_addr("rdx", "rax", chain),
                  f"mov [rsp - {8 * (j + 1)}], rdx"]
    for j in range(min(k, len(REGS))):
        lines.append(f"mov {REGS[j]}, [rsp - {8 * (j + 1)}]")
    return "\n".join(lines)


def body(k: int) -> str:
    out = [f"mov {REGS[j]}, [{REGS[j]}]" for j in range(min(k, len(REGS)))]
    for j in range(len(REGS), k):
        slot = f"[rsp - {8 * (j + 1)}]"
        out += [f"mov r14, {slot}", "mov r14, [r14]", f"mov {slot}, r14"]
    return "\n".join(out)


@dataclass
class ChaseSetup:
    code: str
    init: str
    one_time_init: str
    data: bytes
    unroll: int
    loop: int
    r14_size: int
    max_memory: int


def setup(chain: Chain, page: str, *, min_loads: int = 32768, max_loads: int = 65536,
          unroll: int = 64) -> ChaseSetup:
    """The measure() arguments for ``chain`` backed by ``page`` ("4k" or "2m") pages."""
    _, advice = PAGES[page]
    r14_size, _ = region(chain)
    loads = max(min_loads, min(chain.n, max_loads))
    k = chain.segments
    loop = max(1, -(-loads // (unroll * k)))
    data = np.ascontiguousarray(chain.order, dtype="<u4").tobytes()
    return ChaseSetup(body(k), init(chain, r14_size, *step(unroll, loop)), one_time_init(chain, advice), data,
                      unroll, loop,
                      r14_size, r14_size + len(data) + (512 << 20))


def run(chain: Chain, page: str, *, cpu: int | None = None, n_measurements: int = 15, budget: float = 1.0,
        aggregate: str = "median", min_loads: int = 32768, max_loads: int = 65536, probe: bool = True):
    """Measure ``chain``; returns (Result, huge-page KiB seen in the runner or None)."""
    s = setup(chain, page, min_loads=min_loads, max_loads=max_loads)
    timeout = 30.0 + chain.n * 2e-7
    kw = dict(init=s.init, one_time_init=s.one_time_init, unroll=s.unroll, loop=s.loop, data=s.data,
              r14_size=s.r14_size, max_memory=s.max_memory, allow_syscalls=True, cpu=cpu,
              n_measurements=n_measurements, budget=budget, aggregate=aggregate, timeout=timeout,
              varies=True)       # a chase's cost depends on cache, TLB and page state by nature
    if page == "2m" and probe:
        with HugePageProbe() as p:
            r = measure(s.code, **kw)
        return r, p.max_kb
    return measure(s.code, **kw), None
