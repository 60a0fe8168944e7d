"""The study's C programs (c/) and their builds (the study kit's build matrix, study/programs.py:
compiled once, cached); plain runs (checks, the race) and timed groups are the kit's too.

Builds of the kernels (gcc -O2 -fno-tree-vectorize, as the reference kept its loops scalar):
``native``; ``asan`` (-fsanitize=address); ``asan_writes`` (reads uninstrumented:
--param asan-instrument-reads=0, the reference's "only writes"); ``ubsan`` (-fsanitize=bounds with
-fsanitize-undefined-trap-on-error: array-typed accesses only); ``inline`` (hand-inlined register
checks, c/checks.h); ``mpx_emu`` (the emulated MPX, c/mpxemu.h). The bounds-table analogue is
built at -O0 like the reference's (native, asan, mpx_emu); the race at -O1 (native, asan, mpx_emu)."""
from __future__ import annotations

from pathlib import Path

from cyclebench.study.programs import Build, Outcome, Programs, build_matrix, run, run_ok

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

__all__ = ["C_DIR", "FLAGS", "PROGRAMS", "Outcome", "Programs", "build_all", "caught", "run", "run_ok"]


def build_all(programs=tuple(PROGRAMS)) -> Programs:
    """Every (program, build) of ``programs``: keys (program, build)."""
    return build_matrix(C_DIR, {(prog, b): Build(PROGRAMS[prog][0], (*PROGRAMS[prog][1], *FLAGS[b]))
                                for prog in programs for b in PROGRAMS[prog][2]}, "bounds")


def caught(o: Outcome) -> bool:
    """Stopped by a check: a trap (SIGILL from ud2) or a sanitizer's report."""
    return o.status != 0 and (o.status == -4 or "Sanitizer" in o.stderr)
