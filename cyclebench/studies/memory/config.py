"""The memory study's configuration (QUICK for ``--quick``, FULL) and its size sweeps."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from cyclebench.errors import UsageError

from .chains import LAYOUTS
from .kernels import WIDTHS

EXPERIMENTS = ("latency", "tlb", "mlp", "bandwidth", "loaded")
LEVELS = ("L1", "L2", "L3", "DRAM")
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def sweep_sizes(lo: int, hi: int, per_octave: int, edges: tuple[int, ...] = (),
                around: tuple[float, ...] = (0.75, 1.25, 1.5)) -> list[int]:
    """Log-spaced sizes from ``lo`` to ``hi`` (both included), ``per_octave`` per doubling, plus
    ``edge * f`` for every edge and factor inside [lo, hi]; multiples of 4 KiB from 1 MiB (of 64 B
    below it), ascending and distinct."""
    if not 64 <= lo <= hi or per_octave < 1:
        raise UsageError(f"bad size sweep {lo}..{hi} with {per_octave} per octave",
                         "use 64 <= lo <= hi and at least one size per octave")
    n = round(math.log2(hi / lo) * per_octave)
    raw = [lo * 2 ** (i / per_octave) for i in range(n + 1)] + [hi]
    raw += [e * f for e in edges for f in around if lo <= e * f <= hi]
    return sorted({_round(s) for s in raw})


def _round(s: float) -> int:
    q = 4096 if s >= 1 << 20 else 64
    return max(q, int(round(s / q)) * q)


@dataclass(frozen=True)
class StudyConfig:
    name: str = "full"
    experiments: tuple[str, ...] = EXPERIMENTS
    seed: int = 0
    reps: int = 15
    budget: float = 1.0
    chase_budget: float | None = None        # a chase's re-runs through noise (None: budget)
    # a chase that is not stable in its first processes: more processes until the median over
    # them is settled (processes.py), for at most this long or this many processes
    settle_seconds: float = 4.0
    max_processes: int = 40
    # 1-2. latency curve
    layouts: tuple[str, ...] = LAYOUTS
    pages: tuple[str, ...] = ("4k", "2m")
    min_size: int = 4 * KiB
    max_size: int = 4 * GiB
    per_octave: int = 4
    sparse_layouts: tuple[str, ...] = ()     # measured at every other size only
    full_pages_layouts: tuple[str, ...] = LAYOUTS   # the layouts measured with 2 MiB pages too
    group_pages: int = 16                    # multichase-style group
    min_loads: int = 32768                   # loads per timed run (A); at least this many ...
    max_loads: int = 65536                   # ... at most this many, or the chain's length between
    # 3. TLB
    tlb_pages_4k: tuple[int, ...] = tuple(2 ** i for i in range(3, 17))
    tlb_pages_2m: tuple[int, ...] = tuple(2 ** i for i in range(3, 12))
    # 4. MLP
    mlp_chains: tuple[int, ...] = tuple(range(1, 17))
    mlp_size: int = 1 * GiB
    # 5. bandwidth
    widths: tuple[str, ...] = tuple(WIDTHS)
    bw_levels: tuple[str, ...] = LEVELS
    nt_levels: tuple[str, ...] = LEVELS
    two_cpu_levels: tuple[str, ...] = LEVELS
    two_cpu_widths: tuple[str, ...] = ("avx2",)
    bw_reps: int = 7
    bw_pass_bytes: int = 16 * MiB            # bytes a timed run moves at least (cache levels)
    dram_factor: int = 4                     # STREAM: each array >= this x the last-level cache
    dram_cap: int = 4 * GiB                  # ... but no array above this
    # 6. loaded latency
    loaded_size: int = 1 * GiB

    def __post_init__(self):
        for name, allowed, vals in (("experiment", EXPERIMENTS, self.experiments), ("layout", LAYOUTS, self.layouts),
                                    ("page size", ("4k", "2m"), self.pages), ("width", tuple(WIDTHS), self.widths)):
            bad = [v for v in vals if v not in allowed]
            if bad:
                raise UsageError(f"unknown {name} {bad[0]!r}", "use " + ", ".join(allowed))

    def to_dict(self) -> dict:
        return asdict(self)

    def latency_sizes(self, edges: tuple[int, ...]) -> list[int]:
        return sweep_sizes(self.min_size, self.max_size, self.per_octave, edges)


QUICK = StudyConfig(
    name="quick", reps=5, budget=1.5, chase_budget=0.4, settle_seconds=2.0, max_processes=32, max_size=256 * MiB, per_octave=2,
    sparse_layouts=("sequential", "lmbench", "multichase"), full_pages_layouts=("random", "sequential"),
    min_loads=16384, max_loads=32768,
    tlb_pages_4k=tuple(2 ** i for i in range(3, 17)), tlb_pages_2m=(8, 16, 32, 64, 128, 256),
    mlp_chains=(1, 2, 4, 8, 12, 16), mlp_size=256 * MiB,
    widths=("scalar", "sse", "avx2", "avx512"), nt_levels=("DRAM",), two_cpu_levels=("L1", "DRAM"),
    bw_reps=5, bw_pass_bytes=4 * MiB, dram_factor=4, dram_cap=128 * MiB, loaded_size=256 * MiB)
FULL = StudyConfig()
