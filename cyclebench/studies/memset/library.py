"""The memset kernels: what each implements (``KERNELS``), the one shared object they are built
into (per rep stosb cut-over), a kernel as a Routine, and their correctness checks on their domains
(``correctness.py``). See README.md in this folder for each kernel's design."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from cyclebench.errors import CycleBenchError, UnsupportedInstruction, UsageError
from cyclebench.machine.cpu import cpu_info
from cyclebench.routines.build import Built, Routine, build_shared, resolve

from . import grid
from .correctness import CheckResult, MemsetDomain, check_many, check_memset

HERE = Path(__file__).parent
KERNEL_DIR = HERE / "kernels"
KERNEL_SOURCES = tuple(KERNEL_DIR / f for f in ("byte_loop.S", "nt_old.S", "nt_new.S",
                                                "rep_stosb.S", "heap_zero.S"))
PLANTED_BUGS_SOURCE = HERE / "testdata" / "planted_bugs.S"   # TEST-ONLY
DEFAULT_STOSB_THRESHOLD = grid.REFERENCE_STOSB_THRESHOLD
BASELINE = "libc"


@dataclass(frozen=True)
class Kernel:
    name: str
    symbol: str
    design: str
    features: tuple[str, ...] = ()        # /proc/cpuinfo flags it needs
    domain: MemsetDomain = MemsetDomain()
    uses_stosb_threshold: bool = False    # built differently per CB_STOSB_THRESHOLD


_FULL = MemsetDomain()
KERNELS: dict[str, Kernel] = {k.name: k for k in (
    Kernel("libc", "memset", "the system C library's memset (baseline, resolved at run time)"),
    Kernel("byte_loop", "cb_memset_byte_loop", "one byte store per iteration"),
    Kernel("nt_old", "cb_memset_nt_old",
           "old NT design: 8x16 B loop, 16 B-per-iteration tail loop, branchy small sizes"),
    Kernel("new_sse", "cb_memset_new_sse",
           "new NT design, 16 B stores, rep stosb from the threshold when ERMS",
           uses_stosb_threshold=True),
    Kernel("new_sse_noerms", "cb_memset_new_sse_noerms", "new NT design, 16 B stores, no rep stosb"),
    Kernel("new_avx2", "cb_memset_new_avx2", "new design, 32 B stores, rep stosb when ERMS",
           ("avx2",), uses_stosb_threshold=True),
    Kernel("new_avx2_noerms", "cb_memset_new_avx2_noerms", "new design, 32 B stores, no rep stosb",
           ("avx2",)),
    Kernel("new_avx512", "cb_memset_new_avx512", "new design, 64 B stores, rep stosb when ERMS",
           ("avx512f", "avx512vl"), uses_stosb_threshold=True),
    Kernel("new_avx512_noerms", "cb_memset_new_avx512_noerms",
           "new design, 64 B stores, no rep stosb", ("avx512f", "avx512vl")),
    Kernel("rep_stosb", "cb_memset_rep_stosb", "rep stosb alone"),
    Kernel("heap_zero", "cb_heapzero16",
           "RtlHeapZero-like: zero only, dst 16-aligned, size a multiple of 16",
           domain=MemsetDomain.heap_zero()),
)}


def cpu_flags() -> frozenset[str]:
    """This CPU's feature flags (cyclebench.machine.cpu_info; tests replace this function)."""
    return cpu_info().flags


def missing_features(kernel: Kernel) -> list[str]:
    flags = cpu_flags()
    return [f for f in kernel.features if f not in flags]


def build_kernels(threshold: int = DEFAULT_STOSB_THRESHOLD, *, cc: str | None = None,
                  cflags=None) -> Built:
    """All kernels in one shared object, with the rep stosb cut-over at `threshold` bytes."""
    if not isinstance(threshold, int) or not 64 <= threshold <= (1 << 30):
        raise UsageError(f"rep stosb threshold {threshold!r} is out of range",
                         hint="use 64 <= threshold <= 1 GiB (bytes)")
    return build_shared(KERNEL_SOURCES, cc=cc, cflags=cflags,
                        defines={"CB_STOSB_THRESHOLD": threshold}, name=f"memset_kernels_t{threshold}")


def build_planted_bugs(*, cc: str | None = None) -> Built:
    """TEST-ONLY: the kernels with planted bugs."""
    return build_shared([PLANTED_BUGS_SOURCE], cc=cc, name="memset_planted_bugs")


def routine(name: str, threshold: int = DEFAULT_STOSB_THRESHOLD, *, cc: str | None = None,
            cflags=None) -> Routine:
    """The Routine for a kernel name (see KERNELS); "libc" is the system memset."""
    try:
        k = KERNELS[name]
    except KeyError:
        raise UsageError(f"unknown memset kernel {name!r}",
                         hint="one of " + ", ".join(KERNELS)) from None
    if name == BASELINE:
        return resolve("libc:memset", name="libc")
    lib = build_kernels(threshold, cc=cc, cflags=cflags).path
    label = f"{name}@{threshold}" if k.uses_stosb_threshold and threshold != DEFAULT_STOSB_THRESHOLD else name
    return resolve(k.symbol, library=lib, name=label)


def check_kernel(name: str, threshold: int = DEFAULT_STOSB_THRESHOLD, **kw) -> CheckResult:
    """Check one kernel on its domain; UnsupportedInstruction if this CPU lacks its features."""
    k = KERNELS[name]
    missing = missing_features(k)
    if missing:
        raise UnsupportedInstruction(f"kernel {name} needs {', '.join(missing)}, which this CPU lacks",
                                     hint="leave it out of the study on this machine")
    return check_memset(routine(name, threshold), k.domain, **kw)


def check_kernels(names: Iterable[str] | None = None, threshold: int = DEFAULT_STOSB_THRESHOLD, *,
                  skip_unsupported: bool = True, timeout: float = 120.0) -> dict[str, CheckResult]:
    """Check kernels (default: all) in parallel; raises the first failure (RoutineIncorrect ...).

    Kernels needing features this CPU lacks are skipped (or raise, with skip_unsupported=False).
    """
    names = list(names) if names is not None else list(KERNELS)
    todo = []
    for n in names:
        k = KERNELS.get(n)
        if k is None:
            raise UsageError(f"unknown memset kernel {n!r}", hint="one of " + ", ".join(KERNELS))
        if missing_features(k):
            if skip_unsupported:
                continue
            raise UnsupportedInstruction(f"kernel {n} needs {', '.join(missing_features(k))}, "
                                         "which this CPU lacks",
                                         "leave it out of --kernels (without --kernels, the kernels this CPU runs)")
        todo.append((n, (routine(n, threshold), k.domain)))
    results = check_many([item for _, item in todo], timeout=timeout)
    out: dict[str, CheckResult] = {}
    for (n, _), res in zip(todo, results):
        if isinstance(res, CycleBenchError):
            raise res
        out[n] = res
    return out


def threshold_variants(thresholds: Iterable[int] = grid.STOSB_THRESHOLDS,
                       kernel: str = "new_sse") -> list[tuple[int, Routine]]:
    """(threshold, Routine) for the rep stosb cut-over sweep: one cached build per threshold."""
    if not KERNELS[kernel].uses_stosb_threshold:
        raise UsageError(f"kernel {kernel} has no rep stosb threshold",
                         hint="use new_sse, new_avx2 or new_avx512")
    return [(t, routine(kernel, t)) for t in thresholds]
