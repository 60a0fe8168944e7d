"""Test helper: memset-like kernels for the routines tests, built straight from their source files.

The routines tests need routines that are correct, wrong in known ways, or fault outside their
domain; the memset study's kernel sources and its planted-bug file are exactly that. They are built
here by path with ``routines.build`` (the same cache key as the study's build), so the routines
tests do not import the study package.
"""
from pathlib import Path

import cyclebench
from cyclebench.routines import Routine, build_shared, resolve
from cyclebench.studies.memset.correctness import MemsetDomain

STUDY = Path(cyclebench.__file__).parent / "studies" / "memset"
KERNELS = tuple(STUDY / "kernels" / f for f in ("byte_loop.S", "nt_old.S", "nt_new.S", "rep_stosb.S",
                                                "heap_zero.S"))
THRESHOLD = 800          # the new design's rep stosb cut-over: above every size these tests use
SYMBOLS = {"byte_loop": "cb_memset_byte_loop", "nt_old": "cb_memset_nt_old",
           "new_sse": "cb_memset_new_sse", "rep_stosb": "cb_memset_rep_stosb",
           "heap_zero": "cb_heapzero16"}
HEAP_ZERO_DOMAIN = MemsetDomain.heap_zero()


def kernel(name: str) -> Routine:
    lib = build_shared(KERNELS, defines={"CB_STOSB_THRESHOLD": THRESHOLD},
                       name=f"memset_kernels_t{THRESHOLD}").path
    return resolve(SYMBOLS[name], library=lib, name=name)


def planted_bugs() -> Path:
    return build_shared([STUDY / "testdata" / "planted_bugs.S"], name="memset_planted_bugs").path
