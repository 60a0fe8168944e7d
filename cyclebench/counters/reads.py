"""Counter-read sequences the harness inlines before and after the measured code.

Each method returns assembly lines that store one reading into the control block without
changing any register or flag the snippet can see (registers are saved in scratch slots; the
instructions used leave flags alone, and `syscall` restores RFLAGS from R11). A backend picks the
methods; the harness does not know what they read. Start readings run cheapest-last and end
readings cheapest-first, so the TSC window is the innermost.

No-memory mode (nanoBench's -no_mem): between the start reading and the end reading nothing but
the user's code touches memory. The start readings stay in registers: R8 holds the TSC, R9-R13 up
to five rdpmc counters (NO_MEM_REGISTERS). They clobber RAX and RDX (and RCX for rdpmc), as
nanoBench's read_perf_ctrs does, but no flags: edx:eax is joined with ``rorx`` and ``lea`` (BMI2),
and nothing else is used. The rdpmc counter number cannot be loaded from memory there, so it is an
immediate (``mov ecx, imm32``) that the runner patches once it knows the kernel's counter index;
every such site is listed in a patch table in the data pages. The end readings run after the code,
where memory is free again, and store everything into the control block. The read() path cannot
work without memory (the kernel writes the values into a buffer), so software events and
hardware counters without rdpmc are refused with --no-mem.

Pausing (nanoBench's magic byte sequences, no-memory mode only): each register R holding a start
value becomes ``now - R`` at a pause (the count so far) and again ``now - R`` at the resume (a
start value shifted by the paused time), computed flag-free as ``not R; lea R, [rax + R + 1]``.
The end reading then yields the counted time or events only.
"""
from __future__ import annotations

from ..runner.layout import (GRP_END, GRP_START, PMC_END, PMC_IDX, PMC_START, READ_FD,
                              READ_RET, READ_SIZE, SCRATCH, SYS_TOKEN, TSC_END, TSC_START, dfield,
                              field)

_SAVE_ORDER = ("rax", "rcx", "rdx", "rsi", "rdi", "r11", "r9")
NO_MEM_REGISTERS = ("r8", "r9", "r10", "r11", "r12", "r13")   # reserved as in nanoBench (AMD)
NO_MEM_TSC_REGISTER = "r8"
MAX_NO_MEM_COUNTERS = len(NO_MEM_REGISTERS) - 1               # R9-R13 for rdpmc
PATCH_SITE = "cb_pmcsite_"


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
    software ones included; its fixed cost cancels in the differencing. R9 carries the runner's
    token, without which the sandbox refuses read() (cyclebench/runner/cb_runner.c, install_sandbox)."""
    off = GRP_START if phase == "start" else GRP_END
    regs = ("rax", "rcx", "rdx", "rsi", "rdi", "r11", "r9")
    return (_save(regs) + [
        "mov eax, 0",                      # SYS_read; mov leaves flags alone (xor would not)
        f"mov rdi, {field(READ_FD)}",
        f"lea rsi, [rip + cb_ctl + {off}]",
        f"mov rdx, {field(READ_SIZE)}",
        f"mov r9, {field(SYS_TOKEN)}",
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


def used_no_mem_registers(rdpmc_events: list[int] | None) -> tuple[str, ...]:
    return NO_MEM_REGISTERS[:1 + len(rdpmc_events or [])]


def _join(dst: str) -> list[str]:
    """edx:eax (upper halves zero after rdtsc/rdpmc) -> dst, without touching flags."""
    return ["rorx rdx, rdx, 32", f"lea {dst}, [rax + rdx]"]


def _shift(reg: str) -> list[str]:
    """reg := rax - reg, flag-free (not leaves flags alone; ~reg + 1 = -reg)."""
    return [f"not {reg}", f"lea {reg}, [rax + {reg} + 1]"]


def _pmc_number(slot: int, sites: list) -> list[str]:
    """mov ecx, imm32 whose immediate the runner patches with the counter number of ``slot``."""
    label = f"{PATCH_SITE}{len(sites)}"
    sites.append((label, slot))
    return [".byte 0xb9", f"{label}:", ".long 0"]


def no_mem_sequence(phase: str, rdpmc_events: list[int] | None, sites: list) -> list[str]:
    """Register-only readings (see the module doc). phase: start, end, pause or resume."""
    slots = list(rdpmc_events or [])
    regs = NO_MEM_REGISTERS[1:1 + len(slots)]
    tsc = NO_MEM_TSC_REGISTER
    if len(slots) > MAX_NO_MEM_COUNTERS:
        raise ValueError(f"no-memory mode holds at most {MAX_NO_MEM_COUNTERS} counters")
    if phase == "start":
        out = []
        for s, r in zip(slots, regs):
            out += ["lfence", *_pmc_number(s, sites), "rdpmc", *_join(r)]
        return out + ["lfence", "rdtsc", "lfence", *_join(tsc)]
    if phase == "end":
        out = ["lfence", "rdtsc", "lfence",
               f"mov {dfield(TSC_END)}, eax", f"mov {dfield(TSC_END + 4)}, edx",
               f"mov {field(TSC_START)}, {tsc}"]
        for s, r in zip(slots, regs):
            out += [*_pmc_number(s, sites), "rdpmc", "lfence",
                    f"mov {dfield(PMC_END + 8 * s)}, eax", f"mov {dfield(PMC_END + 8 * s + 4)}, edx",
                    f"mov {field(PMC_START + 8 * s)}, {r}"]
        return out
    if phase in ("pause", "resume"):
        t = ["lfence", "rdtsc", "lfence", *_join("rax"), *_shift(tsc)]
        p = []
        for s, r in zip(slots, regs):
            p += ["lfence", *_pmc_number(s, sites), "rdpmc", *_join("rax"), *_shift(r)]
        return t + p + ["lfence"] if phase == "pause" else p + t
    raise ValueError(phase)


def sequence(phase: str, *, use_tsc: bool = True, group: bool = False,
             rdpmc_events: list[int] | None = None, no_mem: bool = False,
             sites: list | None = None) -> list[str]:
    if no_mem:
        if group or not use_tsc:
            raise ValueError("no-memory mode reads the TSC and rdpmc only")
        return no_mem_sequence(phase, rdpmc_events, sites if sites is not None else [])
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
