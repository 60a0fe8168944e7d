"""The reference's published figures ("Intel MPX Explained", microbenchmarks page and its raw
results), for a Skylake CPU with MPX. Every figure here is published, never measured on this
machine; tables label them so.

* ``INSTRUCTIONS``: the bnd* table (µops, throughput in instructions per cycle, latency in cycles,
  port use), measured with Agner Fog's scripts; its latencies are the authors' estimates.
* ``SEQUENCES``: IPC of the check sequences before a load or a store.
* ``OS``: the bounds-table allocation slowdowns and instruction increases.
* ``MICRO``: mean run time in seconds over 10 runs per (benchmark, compiler, build), computed from
  ``raw_results/micro/raw.csv`` of tudinfse/intel_mpx_explained (commit 107cbaf); the slowdowns
  are MPX over native of the same compiler.
"""
from __future__ import annotations

SOURCE = "Intel MPX Explained (Oleksenko et al.), Skylake i7-6700K; published"

# form -> (µops, throughput per cycle, latency cycles text, ports)
INSTRUCTIONS = {
    "bndmk b, m": (2, 2, "1", "P0 P1 P5 P6"),
    "bndcl b, m": (2, 1, "1", "P0 0.5, P1, P6 0.5"),
    "bndcl b, r": (1, 2, "1", "P0 P6"),
    "bndcu b, m": (2, 1, "1", "P0 0.5, P1, P6 0.5"),
    "bndcu b, r": (1, 2, "1", "P0 P6"),
    "bndmov b, m": (3, 1, "1", "P1 P2 P3"),
    "bndmov b, b": (2, 2, "1", "P0 P1 P5 P6"),
    "bndmov m, b": (5, 0.5, "2", "P1 0.5, P2 0.3, P3 0.3, P4, P7 0.3"),
    "bndldx b, m": (8, 0.4, "4-6", "P0 0.4, P1 0.5, P2 0.9, P3 0.9, P5 0.3, P6 0.4"),
    "bndstx m, b": (8, 0.3, "4-6", "P1 0.3, P2 0.5, P3 0.5, P4, P7 0.4"),
}

# (access, check) -> IPC; check is None (no check), "l r", "l m", "lu r", "lu m"
SEQUENCES = {
    ("load", None): 2, ("load", "l r"): 4, ("load", "l m"): 2, ("load", "lu r"): 3, ("load", "lu m"): 1.5,
    ("store", None): 1, ("store", "l r"): 2, ("store", "l m"): 2, ("store", "lu r"): 3, ("store", "lu m"): 1.5,
}

# variant -> (slowdown, user-space instruction increase, kernel-space instruction increase)
OS = {"alloc": (2.33, 0.075, 1.60), "free": (2.25, 0.10, 1.39)}
OS_TABLES = 3000            # the page's text; its table_allocation.c defines 30,000

# (benchmark, compiler, build) -> mean seconds over 10 runs (raw.csv)
MICRO = {
    ("arraywrite", "gcc", "native"): 0.1691, ("arraywrite", "gcc", "mpx"): 0.2431,
    ("arraywrite", "gcc", "mpx_only_write"): 0.2422, ("arraywrite", "gcc", "mpx_no_narrow_bounds"): 0.2411,
    ("arraywrite", "icc", "native"): 0.1759, ("arraywrite", "icc", "mpx"): 0.2053,
    ("arraywrite", "icc", "mpx_only_write"): 0.2052, ("arraywrite", "icc", "mpx_no_narrow_bounds"): 0.2047,
    ("arrayread", "gcc", "native"): 0.2073, ("arrayread", "gcc", "mpx"): 0.3032,
    ("arrayread", "gcc", "mpx_only_write"): 0.2076, ("arrayread", "gcc", "mpx_no_narrow_bounds"): 0.3029,
    ("arrayread", "icc", "native"): 0.1455, ("arrayread", "icc", "mpx"): 0.2331,
    ("arrayread", "icc", "mpx_only_write"): 0.1452, ("arrayread", "icc", "mpx_no_narrow_bounds"): 0.2324,
    ("struct", "gcc", "native"): 0.1638, ("struct", "gcc", "mpx"): 0.4583,
    ("struct", "gcc", "mpx_only_write"): 0.4471, ("struct", "gcc", "mpx_no_narrow_bounds"): 0.1731,
    ("struct", "icc", "native"): 0.1641, ("struct", "icc", "mpx"): 0.3608,
    ("struct", "icc", "mpx_only_write"): 0.3508, ("struct", "icc", "mpx_no_narrow_bounds"): 0.1768,
    ("ptrcreation", "gcc", "native"): 0.2965, ("ptrcreation", "gcc", "mpx"): 1.5744,
    ("ptrcreation", "gcc", "mpx_only_write"): 1.4545, ("ptrcreation", "gcc", "mpx_no_narrow_bounds"): 1.4759,
    ("ptrcreation", "icc", "native"): 0.2788, ("ptrcreation", "icc", "mpx"): 1.4646,
    ("ptrcreation", "icc", "mpx_only_write"): 1.4805, ("ptrcreation", "icc", "mpx_no_narrow_bounds"): 1.4643,
}


def slowdown(bench: str, compiler: str, build: str = "mpx") -> float:
    """A published MPX build's time over the same compiler's native build."""
    return MICRO[(bench, compiler, build)] / MICRO[(bench, compiler, "native")]


# The race, published: fn prints fewer than ITERATIONS * MAXSIZE flagged accesses; fp raises #BR
# non-deterministically. Their sizes:
RACE = {"fn": {"elements": 1_000_000, "iterations": 10}, "fp": {"elements": 1_000_000, "iterations": 100}}
