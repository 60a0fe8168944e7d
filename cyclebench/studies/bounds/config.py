"""The bounds study's configuration: QUICK (``--quick``, under 3 minutes, small arrays) and FULL
(the reference's sizes: 1 GiB char arrays, 128 Mi structs, 128 Mi pointers; 3,000 and 30,000
bounds tables; the race's 10^6 pointers, 10 and 100 passes)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from cyclebench.errors import UsageError

EXPERIMENTS = ("instructions", "sequences", "overhead", "tables", "race")
KERNELS = ("arraywrite", "arrayread", "struct", "ptrcreation")
BUILDS = ("native", "asan", "asan_writes", "ubsan", "inline", "mpx_emu")
GiB = 1 << 30


@dataclass(frozen=True)
class StudyConfig:
    name: str = "full"
    experiments: tuple[str, ...] = EXPERIMENTS
    reps: int = 10                          # repetitions of every timing (the reference: 10 runs)
    # experiments 1-2: the reference's method, 1,000 copies in a loop of 100
    unroll: int = 1000
    loop: int = 100
    budget: float = 2.0                     # seconds measure() may spend re-running an unstable figure
    # overhead: elements per kernel (bytes, structs, pointers) and passes per short run
    kernels: tuple[str, ...] = KERNELS
    builds: tuple[str, ...] = BUILDS
    sizes: tuple[tuple[str, int], ...] = (("arraywrite", GiB), ("arrayread", GiB),
                                          ("struct", 128 << 20), ("ptrcreation", 128 << 20))
    passes: int = 5                       # n; the 2n run makes 10 passes over the array
    # tables: chunks (one bounds table each under MPX) and rounds per short run
    chunks: tuple[int, ...] = (3000, 30000)
    asan_chunks: int = 30000                # ASan's aligned allocations are slow (~1 ms each): its largest N
    table_reps: int = 5
    # race: the race's pointers and passes (fn, fp), and how many runs of each
    race_elements: int = 1_000_000
    race_iterations: tuple[tuple[str, int], ...] = (("fn", 10), ("fp", 100))
    race_runs: int = 10

    def __post_init__(self):
        bad = [p for p in self.experiments if p not in EXPERIMENTS] + [k for k in self.kernels if k not in KERNELS]
        bad += [b for b in self.builds if b not in BUILDS]
        if bad:
            raise UsageError(f"unknown experiment, kernel or build {bad[0]!r}",
                             "experiments: " + ", ".join(EXPERIMENTS) + "; kernels: " + ", ".join(KERNELS)
                             + "; builds: " + ", ".join(BUILDS))

    def size_of(self, kernel: str) -> int:
        return dict(self.sizes)[kernel]

    def race_iterations_of(self, mode: str) -> int:
        return dict(self.race_iterations)[mode]

    def to_dict(self) -> dict:
        return asdict(self)


QUICK = StudyConfig(
    name="quick", reps=5, loop=10, budget=0.3,
    # L1-resident (16 KiB of data each): the checks' cost without the reference's DRAM traffic. In
    # L2 (256 KiB) the figures moved by 2x from run to run with identical code: L2 is physically
    # indexed, and each process's page frames made different set conflicts
    sizes=(("arraywrite", 16 << 10), ("arrayread", 16 << 10), ("struct", 1 << 10), ("ptrcreation", 2 << 10)),
    passes=20000, chunks=(3000,), asan_chunks=3000, table_reps=3,
    race_elements=1_000_000, race_iterations=(("fn", 10), ("fp", 20)), race_runs=3)
FULL = StudyConfig()
