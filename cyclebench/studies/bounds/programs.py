"""The study's C programs (c/) and their builds, through routines.program.build_program (compiled
once, cached), and plain runs of them in a child process (checks and the race; timing goes
through time_programs only).

Builds of the kernels (gcc -O2 -fno-tree-vectorize, as the reference kept its loops scalar):
``native``; ``asan`` (-fsanitize=address); ``asan_writes`` (reads uninstrumented:
--param asan-instrument-reads=0, the reference's "only writes"); ``ubsan`` (-fsanitize=bounds with
-fsanitize-undefined-trap-on-error: array-typed accesses only); ``inline`` (hand-inlined register
checks, c/checks.h); ``mpx_emu`` (the emulated MPX, c/mpxemu.h). The bounds-table analogue is
built at -O0 like the reference's (native, asan, mpx_emu); the race at -O1 (native, asan, mpx_emu)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from cyclebench.errors import SnippetFault
from cyclebench.routines.program import build_program

C_DIR = Path(__file__).with_name("c")
O2 = ("-O2", "-fno-tree-vectorize", "-Wall")
FLAGS = {
    "native": (), "asan": ("-fsanitize=address",),
    "asan_writes": ("-fsanitize=address", "--param", "asan-instrument-reads=0"),
    "ubsan": ("-fsanitize=bounds", "-fsanitize-undefined-trap-on-error"),
    "inline": ("-DCB_CHECK_INLINE",), "mpx_emu": ("-DCB_MPX_EMU",),
}
PROGRAMS = {          # program -> (source, base flags, builds)
    "kernels": ("kernels.c", O2, tuple(FLAGS)),
    "tables": ("tables.c", ("-O0", "-g", "-Wall"), ("native", "asan", "mpx_emu")),
    "race": ("race.c", ("-O1", "-Wall", "-pthread"), ("native", "asan", "mpx_emu")),
}


@dataclass
class Programs:
    built: dict                  # (program, build) -> Built

    def path(self, program: str, build: str) -> str:
        return str(self.built[(program, build)].path)

    def flags(self, program: str, build: str) -> list[str]:
        return [*PROGRAMS[program][1], *FLAGS[build]]


def build_all(programs=tuple(PROGRAMS)) -> Programs:
    out = {}
    for prog in programs:
        src, base, builds = PROGRAMS[prog]
        for b in builds:
            out[(prog, b)] = build_program([C_DIR / src], cflags=[*base, *FLAGS[b]], name=f"bounds-{prog}-{b}")
    return Programs(out)


@dataclass
class Outcome:
    status: int                  # exit status, or -signal
    stdout: str
    stderr: str

    @property
    def report(self) -> dict:
        """The ``key value`` lines the program printed, values as numbers where they parse."""
        out = {}
        for line in self.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].isidentifier():
                try:
                    out[parts[0]] = float(parts[1]) if "." in parts[1] else int(parts[1])
                except ValueError:
                    out[parts[0]] = parts[1]
        return out

    @property
    def caught(self) -> bool:
        """Stopped by a check: a trap (SIGILL from ud2) or a sanitizer's report."""
        return self.status != 0 and (self.status == -4 or "Sanitizer" in self.stderr)


def run(path: str | Path, args, timeout: float = 120.0) -> Outcome:
    """Run a built program once in a child process (not timed)."""
    argv = [str(path), *map(str, args)]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, text=True, errors="replace",
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise SnippetFault(f"{Path(argv[0]).name} did not finish in {timeout:g} s",
                           "give it a smaller size") from None
    return Outcome(p.returncode, p.stdout, p.stderr)


def run_ok(path, args, timeout: float = 120.0) -> dict:
    """A run that must succeed; its report."""
    o = run(path, args, timeout)
    if o.status != 0:
        raise SnippetFault(f"{Path(path).name} {' '.join(map(str, args))} failed with status {o.status}: "
                           f"{o.stderr.strip()[-200:]}", "run it by hand with the same arguments")
    return o.report
