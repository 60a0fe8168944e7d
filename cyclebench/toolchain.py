"""Compile once, keep the result in the cache: the one compile-and-cache behind the runner build
(cyclebench/runner/build.py) and the routine builds (cyclebench/routines/build.py).

The caller names the output (a cache path keyed by a hash of what affects the build); this module
reuses it when it is a usable ELF file, else compiles into a temporary name beside it and renames,
so a crash or a full disk never leaves a half-written file under the final name.
"""
from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from .errors import AssemblyError, UsageError

COMPILE_TIMEOUT = 300       # seconds; the runner and the study kernels build in about a second


@functools.lru_cache(maxsize=None)
def tool_version(exe: str) -> str | None:
    """The first line of ``exe --version`` (a compiler, valgrind ...), or None when it cannot run."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.splitlines()[0].strip() if out.stdout.strip() else ""


def usable_elf(path: Path) -> bool:
    """A cached build can be empty or garbage (a crash mid-copy, a full disk): check its ELF magic."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def compile_cached(out: Path, cc: str, before: Sequence[str], after: Sequence[str] = (), *,
                   rebuild: bool = False) -> subprocess.CompletedProcess | None:
    """Build ``out`` with ``cc *before -o OUT *after`` unless a usable ``out`` exists already (and
    ``rebuild`` is false). Returns None when the cached file was kept, else the compiler's finished
    process: on a non-zero return code ``out`` is untouched and the caller words the error."""
    if not rebuild and usable_elf(out):
        return None
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}-", dir=out.parent)
    os.close(fd)
    try:
        try:
            proc = subprocess.run([cc, *before, "-o", tmp, *after], capture_output=True, text=True,
                                  errors="replace", timeout=COMPILE_TIMEOUT, stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise UsageError(f"compiler {cc!r} not found",
                             "install gcc (bash setup.sh does it) or name another compiler with $CC") from None
        except subprocess.TimeoutExpired:
            raise AssemblyError(f"building {out.name} took more than {COMPILE_TIMEOUT} s",
                                "is the compiler waiting for input?") from None
        if proc.returncode == 0:
            os.chmod(tmp, 0o755)
            os.replace(tmp, out)
        return proc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
