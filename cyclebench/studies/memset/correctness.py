"""The memset checker: a memset-like routine is checked on its whole domain before it is measured.

``check_memset(routine)`` runs the native checker (``native/check_memset.c``, built once with gcc
into the cache) in a child process. The checker dlopens the shared object and calls the routine

* for every size 0..4096 at every destination alignment 0..63 (relative to a 64-byte boundary),
  with fill values 0xa5 and 0 (524,480 calls), then
* for 64 random large sizes, log-uniform up to 4 MiB, at random page offsets and random non-zero
  fills (the first is always the largest size),

and after each call checks that the n bytes from dst hold the fill byte, that the guard bytes on
both sides (256 or more, set to fill ^ 0xff) are untouched, that it returned dst, and that it kept
rbx, rbp, r12-r15, rsp and a clear direction flag (the SysV ABI). The test windows sit between
PROT_NONE pages, so a runaway store faults rather than hiding. The routine runs in a forked
grandchild: a crash or a hang is reported with the case it was running and cannot take cyclebench
down.

A routine with a narrower contract is checked only on its domain: ``MemsetDomain.heap_zero()``
(16-byte-aligned dst, sizes a multiple of 16, fill 0) is the domain of an RtlHeapZero-like routine.

``MemsetDomain`` is the memset checker of ``routines.checking`` (``key``/``check``/``admits``): timing a
routine over a stream checks it first and refuses a stream outside the domain.

A wrong routine raises ``RoutineIncorrect`` (exit 11) naming the routine, the first failing size,
alignment and fill (sizes ascending, then alignments, then fills), and what was wrong. A SIGILL
raises ``UnsupportedInstruction`` (exit 4) instead: the routine needs a CPU feature this CPU lacks.

Why native: the full domain is half a million calls. The C checker does it in about 0.2 s per
routine; a ctypes loop with numpy checks measured 7 us per call (3.8 s per routine), could not check
the callee-saved registers, and would run the routine inside the Python process.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from cyclebench.errors import AssemblyError, CycleBenchError, RoutineIncorrect, UnsupportedInstruction, UsageError
from cyclebench.routines.build import Routine, build_executable, resolve

NATIVE_DIR = Path(__file__).with_name("native")
CHECKER_SOURCE = NATIVE_DIR / "check_memset.c"


@dataclass(frozen=True)
class MemsetDomain:
    """Where a memset-like routine must be right. Defaults: memset's full contract."""

    max_size: int = 4096          # exhaustive sizes 0..max_size
    size_step: int = 1            # ... in steps of size_step
    max_align: int = 63           # exhaustive dst alignments 0..max_align (mod 64)
    align_step: int = 1           # ... in steps of align_step
    fills: tuple[int, ...] = (0xA5, 0x00)  # c values (the exhaustive part tries each)
    large_samples: int = 64       # random large sizes in (max_size, large_max]
    large_max: int = 4 << 20
    seed: int = 1

    @classmethod
    def heap_zero(cls, **kw) -> "MemsetDomain":
        """16-byte-aligned dst, sizes a multiple of 16, zero fill: an RtlHeapZero-like contract."""
        return cls(**{"size_step": 16, "align_step": 16, "fills": (0,), **kw})

    def __post_init__(self):
        if self.size_step < 1 or self.align_step < 1:
            raise UsageError("size_step and align_step must be at least 1")
        if not 0 <= self.max_align < 4096:
            raise UsageError("max_align must be in 0..4095")
        if self.large_samples and self.large_max <= self.max_size:
            raise UsageError("large_max must exceed max_size")
        if not self.fills or len(self.fills) > 16:
            raise UsageError("give 1 to 16 fill values")
        if self.max_size > (64 << 20) or self.large_max > (1 << 30):
            raise UsageError("sizes above 1 GiB are not checked", hint="lower max_size / large_max")

    @property
    def zero_only(self) -> bool:
        return all(f & 0xFF == 0 for f in self.fills)

    def calls(self) -> int:
        n_sizes = self.max_size // self.size_step + 1
        n_aligns = self.max_align // self.align_step + 1
        return n_sizes * n_aligns * len(self.fills) + self.large_samples

    # the checker interface (routines.checking)
    def key(self) -> str:
        return f"memset:{self!r}"

    def check(self, routine: Routine) -> "CheckResult":
        return check_memset(routine, self)

    def admits(self, stream, routine: Routine) -> None:
        """UsageError unless every call of the (memset-shaped) stream lies in this domain."""
        sizes, offsets = stream.sizes, stream.offsets
        biggest = int(sizes.max())
        limit = self.large_max if self.large_samples else self.max_size
        why = None
        if biggest > limit:
            why = f"sizes up to {biggest} B, but it was checked only up to {limit} B"
        elif self.size_step > 1 and np.any(sizes % self.size_step):
            why = f"sizes that are not multiples of {self.size_step}"
        elif self.align_step > 1 and np.any(offsets % self.align_step):
            why = f"destinations not aligned to {self.align_step} bytes"
        elif self.zero_only and np.any(stream.values & 0xFF):
            why = "non-zero fill values, but it was checked for zero fills only"
        if why:
            raise UsageError(f"stream {stream.name} is outside {routine.name}'s checked domain: it has {why}",
                             hint="time a routine only on inputs its correctness check covered")

    def args(self) -> list[str]:
        return ["--max-size", str(self.max_size), "--size-step", str(self.size_step),
                "--max-align", str(self.max_align), "--align-step", str(self.align_step),
                "--fills", ",".join(str(f) for f in self.fills),
                "--large", str(self.large_samples), "--large-max", str(self.large_max),
                "--large-align-step", str(self.align_step), "--seed", str(self.seed)]


@dataclass(frozen=True)
class CheckResult:
    routine: Routine
    domain: MemsetDomain
    calls: int
    seconds: float  # wall time of the checker, including the child's fork and dlopen


def checker_path() -> Path:
    """The native checker program, built on first use (cached by source hash)."""
    return build_executable([CHECKER_SOURCE], cflags=["-O2", "-Wall"], ldflags=["-ldl", "-lm"],
                            name="cb-check-memset").path


_WHAT = {
    "not_written": "byte dst+{offset} was not written (still 0x{got:02x}, expected 0x{expected:02x})",
    "wrong_value": "byte dst+{offset} is 0x{got:02x}, expected 0x{expected:02x}",
    "before_start": "wrote before the start: byte dst{offset} changed to 0x{got:02x}",
    "past_end": "wrote past the end: byte dst+{offset} (dst+n+{over}) changed to 0x{got:02x}",
    "return_value": "{detail} instead of dst",
    "clobbered_reg": "did not preserve callee-saved register {detail}",
    "stack_pointer": "returned with a different rsp",
    "direction_flag": "returned with the direction flag set",
}

_HINTS = {
    "not_written": "a tail or head store is missing or ends early; the last store must end at dst+n",
    "wrong_value": "the fill pattern is wrong: use only the low byte of c (movzx) and broadcast it",
    "before_start": "an alignment fix-up rounds dst down; store the head unaligned, then continue at "
                    "(dst + W) & -W",
    "past_end": "a store reaches past dst+n; overlapping tail stores must end exactly at dst+n",
    "return_value": "memset returns dst: keep it in rax (rep stosb needs al, so save it first)",
    "clobbered_reg": "rbx, rbp, r12-r15 are callee-saved in the SysV ABI: push/pop them or use "
                     "rax, rcx, rdx, rsi, rdi, r8-r11",
    "stack_pointer": "pushes and pops do not balance",
    "direction_flag": "clear DF (cld) before returning",
    "crash": "an aligned store (movaps/vmovdqa) on an unaligned address, or a pointer or count "
             "mistake; run it under gdb with the size and alignment above",
    "timeout": "a loop never ends for this size (a counter that misses zero?)",
}


def _describe_case(r: dict, routine: Routine) -> str:
    case = (f"size {r['size']}, dst alignment {r['align']} (page offset {r['page_offset']}), "
            f"fill 0x{r['fill'] & 0xFF:02x}")
    if r.get("phase") == "large":
        case += ", in the random large-size sample"
    return case


def _raise_for(r: dict, routine: Routine, domain: MemsetDomain, timeout: float) -> None:
    kind = r.get("kind", "crash")
    case = _describe_case(r, routine)
    details = dict(r, routine=routine.spec, domain=asdict(domain))
    if kind == "crash":
        sig = r.get("signal")
        signame = f"SIG{r['signal_name']}" if r.get("signal_name") else (
            signal.Signals(sig).name if sig else f"exit status {r.get('exit_status')}")
        if sig == signal.SIGILL:
            raise UnsupportedInstruction(
                f"{routine.name} raised SIGILL at {case}: an instruction this CPU does not support",
                hint="check the routine's CPU features (AVX2, AVX-512 ...) against /proc/cpuinfo",
                **details)
        what = f"crashed with {signame}"
    elif kind == "timeout":
        what = f"did not finish: the check was stopped after {timeout:g} s"
    else:
        fmt = _WHAT.get(kind, kind + " ({detail})")
        offset = r.get("offset", 0)
        what = fmt.format(offset=offset, got=r.get("got", 0) & 0xFF if kind != "return_value" else 0,
                          expected=r.get("expected", 0) & 0xFF, detail=r.get("detail", ""),
                          over=offset - r["size"] if kind == "past_end" else 0)
    raise RoutineIncorrect(f"{routine.name} is incorrect at {case}: {what}",
                           hint=_HINTS.get(kind), kind=kind, **{k: v for k, v in details.items() if k != "kind"})


def check_memset(routine: "Routine | str", domain: MemsetDomain | None = None, *,
                 timeout: float = 120.0) -> CheckResult:
    """Check a memset-like routine ``void *fn(void *dst, int c, size_t n)`` on its domain.

    Returns a CheckResult; raises RoutineIncorrect (or UnsupportedInstruction for SIGILL, or
    AssemblyError when the shared object cannot be loaded).
    """
    routine = resolve(routine) if isinstance(routine, str) else routine
    domain = domain or MemsetDomain()
    cmd = [str(checker_path()), "--lib", routine.library, "--symbol", routine.symbol,
           "--timeout", str(max(1, int(round(timeout)))), *domain.args()]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        raise RoutineIncorrect(f"{routine.name} is incorrect: the check did not finish within "
                               f"{timeout:g} s", hint=_HINTS["timeout"], kind="timeout") from None
    elapsed = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise CycleBenchError(f"the memset checker failed without a report (exit {proc.returncode}): "
                              f"{proc.stderr.strip()[:200]}")
    report = json.loads(lines[-1])
    status = report.get("status")
    if status == "ok":
        return CheckResult(routine, domain, int(report["calls"]), elapsed)
    if status == "error":
        raise AssemblyError(f"cannot load {routine.spec}: {report.get('detail', '')}",
                            hint="is it a shared object for this machine, with its dependencies?")
    _raise_for(report, routine, domain, timeout)
    raise AssertionError("unreachable")


def check_many(items: Iterable[tuple["Routine | str", MemsetDomain | None]], *, jobs: int | None = None,
               timeout: float = 120.0) -> list["CheckResult | CycleBenchError"]:
    """Check several routines in parallel; returns, in order, a CheckResult or the error raised."""
    items = list(items)

    def one(item):
        routine, domain = item
        try:
            return check_memset(routine, domain, timeout=timeout)
        except CycleBenchError as e:
            return e

    with ThreadPoolExecutor(max_workers=jobs or None) as pool:
        return list(pool.map(one, items))
