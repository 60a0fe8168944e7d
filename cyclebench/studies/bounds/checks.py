"""Correctness before anything is timed (prepare): every build of every kernel computes the
native build's checksum (and the emulated MPX reads every stored pointer's bounds back), and an
out-of-bounds access is caught by exactly the builds that check that kind of access, in a child
process. A failed check raises RoutineIncorrect (exit code 11: not timed) with a hint."""
from __future__ import annotations

from cyclebench.errors import RoutineIncorrect as CheckFailed

from .config import BUILDS, KERNELS
from .programs import Programs, caught, run, run_ok

CHECK_SIZE = 4096
# Which builds must catch each kernel's out-of-bounds access (c/kernels.c, OOB = 1): a write or a
# read one past the array, a store one pointer past it, and (struct) a write one int past the
# inner array but inside the struct, which only narrowed or array-typed bounds see.
CATCHES = {
    "arraywrite": {"asan", "asan_writes", "ubsan", "inline", "mpx_emu"},
    "arrayread": {"asan", "ubsan", "inline", "mpx_emu"},
    "struct": {"ubsan", "mpx_emu"},
    "ptrcreation": {"asan", "asan_writes", "ubsan", "inline", "mpx_emu"},
}


def checksums(p: Programs, kernels=KERNELS, builds=BUILDS, size: int = CHECK_SIZE) -> dict:
    """kernel -> the checksum every build agreed on."""
    out = {}
    for k in kernels:
        sums = {b: run_ok(p.path("kernels", b), [k, size, 2]).report for b in builds}
        native = sums["native"].get("checksum")
        bad = {b: r.get("checksum") for b, r in sums.items() if r.get("checksum") != native}
        if native is None or bad:
            raise CheckFailed(f"{k}: builds disagree with native's checksum {native}: {bad}",
                              hint="fix the kernel or the check macros in c/kernels.c, c/checks.h")
        if "mpx_emu" in sums and k == "ptrcreation" and sums["mpx_emu"].get("bounds_ok") != 1:
            raise CheckFailed("the emulated MPX did not read back every stored pointer's bounds",
                              hint="fix emu_stx/emu_ldx in c/mpxemu.h")
        out[k] = native
    return out


def out_of_bounds(p: Programs, kernels=KERNELS, builds=BUILDS, size: int = CHECK_SIZE) -> dict:
    """kernel -> build -> caught (True/False); raises when it is not as CATCHES says."""
    out = {}
    for k in kernels:
        out[k] = {b: caught(run(p.path("kernels", b), [k, size, 1, 1])) for b in builds}
        wrong = [b for b, c in out[k].items() if c != (b in CATCHES[k])]
        if wrong:
            raise CheckFailed(f"{k}: the out-of-bounds access was {'caught' if out[k][wrong[0]] else 'missed'} "
                              f"by the {wrong[0]} build", hint="see CATCHES in checks.py and c/checks.h")
    return out
