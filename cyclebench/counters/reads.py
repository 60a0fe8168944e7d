"""Counter-read sequences the harness inlines before and after the measured code.

Each method returns assembly lines that store one reading into the control block without
changing any register or flag the snippet can see (registers are saved in scratch slots; the
instructions used leave flags alone, and `syscall` restores RFLAGS from R11). A backend picks the
methods; the harness does not know what they read. Start readings run cheapest-last and end
readings cheapest-first, so the TSC window is the innermost.
"""
from __future__ import annotations

from ..harness.layout import (GRP_END, GRP_START, PMC_END, PMC_IDX, PMC_START, READ_FD,
                              READ_RET, READ_SIZE, SCRATCH, TSC_END, TSC_START, dfield, field)

_SAVE_ORDER = ("rax", "rcx", "rdx", "rsi", "rdi", "r11")


def _save(regs):
    return [f"mov {field(SCRATCH + 8 * _SAVE_ORDER.index(r))}, {r}" for r in regs]


def _restore(regs):
    return [f"mov {r}, {field(SCRATCH + 8 * _SAVE_ORDER.index(r))}" for r in regs]


def tsc(phase: str) -> list[str]:
    """lfence; rdtsc; lfence: lfence is dispatch-serializing on Intel and on AMD with
    CPUID 8000_0021 EAX[2] (or the MSR set by the kernel), so the window holds only the code."""
    off = TSC_START if phase == "start" else TSC_END
    return (_save(("rax", "rdx")) + ["lfence", "rdtsc",
            f"mov {dfield(off)}, eax", f"mov {dfield(off + 4)}, edx", "lfence"]
            + _restore(("rax", "rdx")))


def group_read(phase: str) -> list[str]:
    """read() of the perf_event group leader (PERF_FORMAT_GROUP): works for every event,
    software ones included; its fixed cost cancels in the differencing."""
    off = GRP_START if phase == "start" else GRP_END
    regs = ("rax", "rcx", "rdx", "rsi", "rdi", "r11")
    return (_save(regs) + [
        "mov eax, 0",                      # SYS_read; mov leaves flags alone (xor would not)
        f"mov rdi, {field(READ_FD)}",
        f"lea rsi, [rip + cb_ctl + {off}]",
        f"mov rdx, {field(READ_SIZE)}",
        "syscall",
        f"mov {field(READ_RET)}, rax",
    ] + _restore(regs))


def rdpmc(phase: str, events: list[int]) -> list[str]:
    """Inline rdpmc for events whose perf mmap page allows user-space reads (ECX = index - 1).
    lea adjusts the index without touching flags."""
    off = PMC_START if phase == "start" else PMC_END
    out = _save(("rax", "rcx", "rdx")) + ["lfence"]
    for i in events:
        out += [f"mov rcx, {field(PMC_IDX + 8 * i)}", "lea rcx, [rcx - 1]", "rdpmc",
                f"mov {dfield(off + 8 * i)}, eax", f"mov {dfield(off + 8 * i + 4)}, edx"]
    return out + ["lfence"] + _restore(("rax", "rcx", "rdx"))


def sequence(phase: str, *, use_tsc: bool = True, group: bool = False,
             rdpmc_events: list[int] | None = None) -> list[str]:
    parts = []
    if group:
        parts.append(group_read(phase))
    if rdpmc_events:
        parts.append(rdpmc(phase, rdpmc_events))
    if use_tsc:
        parts.append(tsc(phase))
    if phase == "end":
        parts.reverse()
    return [line for p in parts for line in p]
