"""The memset study: the reference's old and new NT memset designs, their AVX widenings, rep stosb,
an RtlHeapZero-like zeroing routine, and the system libc's memset as the baseline.

See README.md in this folder for what each kernel implements and grid.py for the test design.

    from cyclebench.studies import memset
    memset.check_kernels()                      # correctness of every kernel on its domain
    r = memset.routine("new_sse")               # a Routine (shared object + symbol)
    lib = memset.build_kernels(threshold=1024)  # the rep stosb cut-over at 1 KiB
"""
from .library import (BASELINE, DEFAULT_STOSB_THRESHOLD, KERNEL_DIR, KERNEL_SOURCES, KERNELS,
                      PLANTED_BUGS_SOURCE, Kernel, build_kernels, build_planted_bugs, check_kernel,
                      check_kernels, cpu_flags, missing_features, routine, threshold_variants)

__all__ = ["BASELINE", "DEFAULT_STOSB_THRESHOLD", "KERNEL_DIR", "KERNEL_SOURCES", "KERNELS",
           "PLANTED_BUGS_SOURCE", "Kernel", "build_kernels", "build_planted_bugs", "check_kernel",
           "check_kernels", "cpu_flags", "missing_features", "routine", "threshold_variants"]
