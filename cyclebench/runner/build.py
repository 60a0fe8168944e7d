"""Building the runner from its C source (shipped inside the package, so an installed wheel can
build it too) into the cache, once per source and flags. The BUILDS_KEPT most recently used builds
stay, so that two source trees used in turn do not rebuild each other's."""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from ..cache import cache_dir, prune
from ..errors import CycleBenchError
from ..toolchain import compile_cached, usable_elf

RUNNER_SRC = Path(__file__).with_name("cb_runner.c")
CFLAGS = ("-O2", "-std=gnu11")
LIBS = ("-ldl", "-lseccomp", "-lm")
BUILDS_KEPT = 4


def runner_path(rebuild: bool = False) -> Path:
    """The runner binary for the current source and flags, built on first use; a cached binary
    that is not a usable executable is built again."""
    if not RUNNER_SRC.exists():
        raise CycleBenchError(f"runner source not found at {RUNNER_SRC}",
                              "reinstall cyclebench (bash setup.sh in its source tree)")
    key = hashlib.sha256(RUNNER_SRC.read_bytes() + "\0".join(CFLAGS + LIBS).encode()).hexdigest()[:16]
    exe = cache_dir() / f"cb-runner-{key}"
    if not rebuild and usable_elf(exe):
        try:
            os.utime(exe)       # a use: the least recently used builds are the ones removed
        except OSError:
            pass
        return exe
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        raise CycleBenchError("no C compiler found to build the runner",
                              "install gcc (bash setup.sh does it)")
    proc = compile_cached(exe, cc, CFLAGS, (str(RUNNER_SRC), *LIBS), rebuild=True)
    if proc.returncode != 0:
        raise CycleBenchError("building the runner failed: " + (proc.stderr.strip().splitlines() or ["?"])[0],
                              "install the build dependencies (gcc, libseccomp-dev): bash setup.sh")
    prune(exe.parent, [p.name for p in exe.parent.glob("cb-runner-*")], BUILDS_KEPT)
    return exe
