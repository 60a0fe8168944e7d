"""The study's C programs (c/) and their builds (the study kit's build matrix, study/programs.py);
plain runs (checks, instruction counts) and timed groups are the kit's too.

Builds: ``split`` is splitstack.c with ``-fsplit-stack``, linked by gold, with ``__generic_morestack``
wrapped (``-Wl,--wrap``) to count segment switches and allocations; ``normal`` the same source
without; ``blackscholes`` and ``chase`` at -O2."""
from __future__ import annotations

from pathlib import Path

from cyclebench.routines.program import build_program
from cyclebench.study.programs import Build, Programs, build_matrix

C_DIR = Path(__file__).with_name("c")
BASE = ("-O2", "-Wall")
SPLIT = ("-fsplit-stack", "-fuse-ld=gold", "-DCB_WRAP", "-Wl,--wrap=__generic_morestack")
BUILDS = {
    "normal": Build("splitstack.c", BASE),
    "split": Build("splitstack.c", BASE + SPLIT),
    "blackscholes": Build("blackscholes.c", BASE, ("-lm",)),
    "chase": Build("chase.c", BASE),
}

__all__ = ["BUILDS", "C_DIR", "Programs", "build_all", "build_program"]


def build_all(names=tuple(BUILDS)) -> Programs:
    return build_matrix(C_DIR, {n: BUILDS[n] for n in names}, "paging")
