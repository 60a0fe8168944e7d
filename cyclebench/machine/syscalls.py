"""System call names, from libseccomp's own table (the library the runner's sandbox is built on)."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
ARCH_NAMES = {AUDIT_ARCH_X86_64: "x86-64", AUDIT_ARCH_I386: "32-bit x86 (int 0x80)"}


@functools.lru_cache(maxsize=1)
def _lib():
    for name in ("libseccomp.so.2", ctypes.util.find_library("seccomp")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
        lib.seccomp_syscall_resolve_num_arch.argtypes = [ctypes.c_uint32, ctypes.c_int]
        return lib
    return None


@functools.lru_cache(maxsize=None)
def name(nr: int, arch: int = AUDIT_ARCH_X86_64) -> str | None:
    """The name of system call ``nr`` on ``arch`` (an AUDIT_ARCH value), or None if unknown."""
    lib = _lib()
    if lib is None:
        return None
    ptr = lib.seccomp_syscall_resolve_num_arch(arch, nr)
    if not ptr:
        return None
    text = ctypes.string_at(ptr).decode("ascii", "replace")
    ctypes.CDLL(None).free(ctypes.c_void_p(ptr))
    return text
