"""The study's C programs (c/), built through routines.program.build_program, and a plain run of
one (for checks and for the instruction counts; timing goes through time_program only).

Builds: ``split`` is splitstack.c with ``-fsplit-stack``, linked by gold, with ``__generic_morestack``
wrapped (``-Wl,--wrap``) to count segment switches and allocations; ``normal`` the same source
without; ``blackscholes`` and ``chase`` at -O2."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from cyclebench.errors import SnippetFault
from cyclebench.routines.build import Built
from cyclebench.routines.program import build_program

C_DIR = Path(__file__).with_name("c")
BASE = ("-O2", "-Wall")
SPLIT = ("-fsplit-stack", "-fuse-ld=gold", "-DCB_WRAP", "-Wl,--wrap=__generic_morestack")
BUILDS = {
    "normal": ("splitstack.c", BASE, ()),
    "split": ("splitstack.c", BASE + SPLIT, ()),
    "blackscholes": ("blackscholes.c", BASE, ("-lm",)),
    "chase": ("chase.c", BASE, ()),
}


@dataclass
class Programs:
    built: dict                  # build name -> Built

    def path(self, name: str) -> str:
        return str(self.built[name].path)

    def flags(self, name: str) -> list[str]:
        return list(BUILDS[name][1])


def build_all(names=tuple(BUILDS)) -> Programs:
    out = {}
    for name in names:
        src, cflags, ldflags = BUILDS[name]
        out[name] = build_program([C_DIR / src], cflags=list(cflags), ldflags=list(ldflags) or None,
                                  name=f"paging-{name}")
    return Programs(out)


def run(path: str | Path, args, timeout: float = 60.0) -> str:
    """Run a built program once (not timed) and return its stdout; raises SnippetFault."""
    argv = [str(path), *map(str, args)]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        raise SnippetFault(f"{Path(argv[0]).name} did not finish in {timeout:g} s",
                           "give it a smaller input") from None
    if p.returncode != 0:
        raise SnippetFault(f"{Path(argv[0]).name} {' '.join(argv[1:])} failed with status {p.returncode}: "
                           f"{p.stderr.strip()[:200]}", "run it by hand with the same arguments")
    return p.stdout


def report(text: str) -> dict:
    """The ``key value`` lines a program prints, values as int or float where they parse."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isidentifier():
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                try:
                    out[parts[0]] = float(parts[1])
                except ValueError:
                    out[parts[0]] = parts[1]
    return out


def built_of(p: Programs, name: str) -> Built:
    return p.built[name]
