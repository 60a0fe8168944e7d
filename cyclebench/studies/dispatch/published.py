"""Ertl's published table (cycles per iteration, clang-11 -Os, with and without -mretpoline), copied
from his page (Anton Ertl, "Control-flow integrity microbenchmark", 2021) and always labelled as
published. Which column a core compares with is the microarchitecture table's ``ertl`` field."""
from __future__ import annotations

CPUS = ("Sandy Bridge", "Skylake", "Zen", "Zen2", "Zen3")
SOURCE = "Anton Ertl, control-flow integrity microbenchmark (2021), clang 11 -Os, published"

# (build, dispatcher, target) -> figures for CPUS; target "*" is the 73-target range (lo, hi)
ROWS = [
    (("clang-Os", "0", 6), (6.01, 5.01, 5.04, 5.01, 5.01)),
    (("clang-Os", "2", 6), (9.01, 7.01, 8.02, 7.03, 7.01)),
    (("clang-retpoline", "0", 6), (32.03, 38.15, 57.09, 45.96, 24.01)),
    (("clang-retpoline", "2", 6), (36.03, 43.11, 60.08, 49.33, 26.01)),
    (("clang-retpoline", "1", 0), (9.01, 7.59, 6.02, 6.01, 6.01)),
    (("clang-retpoline", "1", 1), (9.01, 7.62, 6.02, 6.01, 6.01)),
    (("clang-retpoline", "1", 2), (12.02, 8.57, 8.02, 8.02, 8.01)),
    (("clang-retpoline", "1", 3), (12.02, 8.58, 8.02, 8.02, 8.01)),
    (("clang-retpoline", "1", 4), (10.01, 6.01, 7.03, 7.01, 7.01)),
    (("clang-retpoline", "1", 5), (10.01, 6.01, 7.02, 7.01, 7.01)),
    (("clang-retpoline", "1", 6), (12.01, 7.01, 8.02, 8.02, 8.01)),
    (("clang-retpoline", "4", 0), (10.01, 8.01, 7.01, 7.01, 7.02)),
    (("clang-retpoline", "4", 1), (10.01, 8.01, 7.01, 7.01, 7.01)),
    (("clang-retpoline", "4", 2), (10.01, 8.02, 7.02, 7.01, 7.02)),
    (("clang-retpoline", "4", 3), (10.01, 8.02, 7.01, 7.03, 7.01)),
    (("clang-retpoline", "4", 4), (8.01, 7.49, 6.01, 6.01, 6.01)),
    (("clang-retpoline", "4", 5), (8.01, 7.54, 6.01, 6.01, 6.01)),
    (("clang-retpoline", "4", 6), (8.01, 7.57, 6.01, 6.01, 6.02)),
    (("clang-retpoline", "4", 7), (8.01, 7.55, 6.02, 6.01, 6.01)),
    (("clang-retpoline", "3", "*"), ((11, 15), (7, 9), (8, 10), (8, 10), (8, 10))),
]


def label(build: str, d: str, target) -> str:
    """Ertl's row name: ``dispatch 0 6``, ``dispatch-retpol 3 *``."""
    return f"{'dispatch-retpol' if build == 'clang-retpoline' else 'dispatch'} {d} {target}"


NEWEST = {"amd": "Zen3", "intel": "Skylake"}      # his newest column per vendor


def column_for(uarch) -> tuple[str, bool]:
    """(Ertl's column for a core of the microarchitecture table, whether it is the same core): his
    column when he measured that core, else his newest of the same vendor (Zen3 for an unknown one)."""
    if uarch is not None and uarch.ertl:
        return uarch.ertl, True
    return NEWEST.get(uarch.vendor if uarch else "", CPUS[-1]), False


def figure(build: str, d: str, target, cpu: str):
    """Ertl's published figure for a row in column ``cpu`` (a (lo, hi) range for target "*")."""
    for (b, dd, t), v in ROWS:
        if (b, dd, t) == (build, d, target):
            return v[CPUS.index(cpu)]
    return None


def span(build: str, d: str, cpu: str) -> tuple[float, float] | None:
    """Lowest and highest published figure over the targets of a search, in column ``cpu``."""
    xs = [v[CPUS.index(cpu)] for (b, dd, t), v in ROWS if b == build and dd == d and t != "*"]
    return (min(xs), max(xs)) if xs else None
