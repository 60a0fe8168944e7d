"""The builds (the tables' columns): compiler, flags, what each needs, and building them.

Every build compiles ``dispatch.c`` and ``search.S`` (sources.py) into one shared object with
``routines.build_shared``; ``-fvisibility=hidden`` and hidden targets keep every call inside the
object direct (no PLT). A build that cannot be made here (no clang-16, no lld) is reported with its
reason, never dropped.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cyclebench.errors import CycleBenchError
from cyclebench.routines import Routine, build_shared, cache_dir, resolve

from .sources import DISPATCHERS, symbol, write_sources

CLANG, GCC = "clang-16", "gcc-12"
COMMON = ("-fvisibility=hidden",)


@dataclass(frozen=True)
class Build:
    name: str
    cc: str
    flags: tuple[str, ...]
    what: str                                  # one line for the tables' notes
    ldflags: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()                # programs that must exist (lld ...)
    caveat: str = ""                           # what it does not show on this machine
    defines: tuple[str, ...] = ()              # -D names for search.S

    @property
    def cflags(self) -> tuple[str, ...]:
        return (*self.flags, *COMMON)


BUILDS = (
    Build("clang-Os", CLANG, ("-Os",), "Ertl's baseline"),
    Build("clang-retpoline", CLANG, ("-Os", "-mretpoline"), "Ertl's dispatch-retpol"),
    Build("clang-cfi-icall", CLANG, ("-Os", "-flto", "-fsanitize=cfi-icall", "-fsanitize-trap=cfi-icall"),
          "clang CFI: indirect calls checked against a jump table per type (the LWN scheme)",
          ldflags=("-fuse-ld=lld",), needs=("ld.lld-16",)),
    Build("clang-kcfi", CLANG, ("-Os", "-fsanitize=kcfi"),
          "kernel CFI: a type hash before each function, compared before each indirect call"),
    Build("clang-cf-branch", CLANG, ("-Os", "-fcf-protection=branch"), "ENDBR64 at indirect-branch targets",
          caveat="ENDBR64 is a hint NOP unless CET IBT is enforced, which Linux does not do for "
                  "user code: nothing is enforced here"),
    Build("clang-sls", CLANG, ("-Os", "-mharden-sls=all"), "int3 after every ret and indirect jmp"),
    Build("clang-retthunk", CLANG, ("-Os", "-mretpoline", "-mfunction-return=thunk-extern"),
          "retpolines plus every ret as jmp __x86_return_thunk (ours: ret; int3, the kernel's plain "
          "thunk without the Retbleed/SRSO untraining)"),
    Build("gcc-Os", GCC, ("-Os",), "GCC 12 without mitigations"),
    Build("gcc-thunk", GCC, ("-Os", "-mindirect-branch=thunk", "-mfunction-return=thunk"),
          "GCC 12 retpoline-style thunks for indirect branches and returns"),
)
BY_NAME = {b.name: b for b in BUILDS}
RETURN_THUNK = """
    .intel_syntax noprefix
    .text
    .globl __x86_return_thunk
    .hidden __x86_return_thunk
    .type __x86_return_thunk, @function
__x86_return_thunk:
    ret
    int3
    .size __x86_return_thunk, .-__x86_return_thunk
    .section .note.GNU-stack, "", @progbits
"""


def missing(build: Build) -> str | None:
    """Why ``build`` cannot be made here, or None."""
    for prog in (build.cc, *build.needs):
        if shutil.which(prog) is None:
            return f"{prog} is not installed (apt-get install {'lld-16' if 'lld' in prog else prog})"
    return None


def source_dir() -> Path:
    return cache_dir() / "dispatch-sources"


@dataclass
class BuiltBuild:
    build: Build
    path: Path
    command: tuple[str, ...]
    routines: dict[str, Routine] = field(default_factory=dict)


def make(build: Build) -> BuiltBuild:
    """Build ``build``'s shared object (cached) and resolve every dispatcher in it."""
    folder = source_dir()
    srcs = write_sources(folder)
    if "thunk-extern" in " ".join(build.flags):
        thunk = folder / "return_thunk.s"
        if not thunk.is_file() or thunk.read_text() != RETURN_THUNK:
            thunk.write_text(RETURN_THUNK)
        srcs.append(thunk)
    b = build_shared(srcs, cc=build.cc, cflags=list(build.cflags), ldflags=list(build.ldflags) or None,
                     defines={d: None for d in build.defines},
                     name=f"dispatch-{build.name}")
    out = BuiltBuild(build, b.path, b.command)
    for d in DISPATCHERS:
        out.routines[d] = resolve(symbol(d), library=b.path)
    return out


def objdump(path: Path) -> str:
    """Intel-syntax disassembly of a built object (for the tests)."""
    exe = shutil.which("objdump")
    if exe is None:
        raise CycleBenchError("objdump is not installed", hint="apt-get install binutils")
    return subprocess.run([exe, "-d", "--no-show-raw-insn", "-M", "intel", str(path)],
                          capture_output=True, text=True, timeout=60, check=True).stdout


def functions(disassembly: str) -> dict[str, list[str]]:
    """Instruction lines by function label (``<name>:`` headers of objdump -d)."""
    out: dict[str, list[str]] = {}
    cur = None
    for line in disassembly.splitlines():
        if line.endswith(">:") and "<" in line:
            cur = line[line.index("<") + 1:-2]
            out[cur] = []
        elif cur is not None and line.strip() and ":" in line:
            out[cur].append(line.split(":", 1)[1].strip())
    return out
