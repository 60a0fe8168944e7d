"""The memset study's configuration: which experiments, implementations, sizes, rows and
thresholds, and how many repetitions; QUICK (``--quick``) and FULL are the two presets."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from cyclebench.errors import UsageError

from . import grid
from .library import KERNELS

EXPERIMENTS = ("fixed", "random", "stores", "threshold")
FIXED_MODES = ("serialized", "back-to-back")

# the reference's table of stores per size, plus the sizes where the designs change paths
TRACE_SIZES = (8, 16, 24, 32, 36, 48, 64, 80, 96, 128, 144, 160, 176, 192, 256, 512, 1024, 4096)
QUICK_FIXED_SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 36, 48, 64, 80, 96, 128, 144, 160, 176, 192,
                     256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384, 32768, 65536,
                     131072, 262144, 524288, 1048576)
FULL_FIXED_SIZES = tuple(s for s in grid.FIXED_SIZES if s > 0)


def _row(gran, lo, hi, off, clear) -> int:
    for i, r in enumerate(grid.RANDOM_SIZE_TESTS):
        if (r.granularity, r.min_size, r.max_size, r.max_offset, r.clear_l1) == (gran, lo, hi, off, clear):
            return i
    raise KeyError((gran, lo, hi, off, clear))


QUICK_ROWS = (_row(1, 1, 16, 0, False), _row(1, 1, 64, 0, False), _row(1, 1, 128, 0, False),
              _row(1, 1, 256, 4095, False), _row(1, 1, 1024, 0, False), _row(16, 32, 256, 0, False),
              _row(16, 256, 512, 0, False), _row(16, 1024, 4096, 0, False), _row(1, 1, 128, 0, True))
LEARN_ROWS_QUICK = (_row(1, 1, 64, 0, False), _row(16, 256, 512, 0, False))
LEARN_ROWS_FULL = (_row(1, 1, 16, 0, False), _row(1, 1, 64, 0, False), _row(1, 1, 256, 0, False),
                   _row(16, 256, 512, 0, False), _row(16, 1024, 4096, 0, False))


@dataclass(frozen=True)
class SweepStream:
    min_size: int
    max_size: int
    granularity: int = 1
    max_offset: int = 0

    @property
    def label(self) -> str:
        return (f"random {self.min_size}..{self.max_size} B" + (f" /{self.granularity}" if self.granularity > 1 else "")
                + (f", offsets 0..{self.max_offset}" if self.max_offset else ""))


@dataclass(frozen=True)
class StudyConfig:
    name: str = "full"
    kernels: tuple[str, ...] | None = None          # None: every kernel this CPU supports
    extra: tuple[tuple[str, str], ...] = ()         # (name, "lib.so:symbol") routines to add
    experiments: tuple[str, ...] = EXPERIMENTS
    reps: int = 30
    budget: float = 1.0
    seed: int = 0
    # 1. fixed sizes
    fixed_sizes: tuple[int, ...] = FULL_FIXED_SIZES
    fixed_calls: int = grid.FIXED_SIZE_CALLS
    fixed_bytes_per_pass: int = 16 << 20
    fixed_min_calls: int = 16
    byte_loop_max: int = 4096
    # "serialized": lfence after every call, each call timed in isolation like the reference's
    # per-call timing (the primary figures); "back-to-back": calls overlap, what a loop pays
    fixed_modes: tuple[str, ...] = ("serialized", "back-to-back")
    # 2. random sizes
    random_rows: tuple[int, ...] = tuple(range(len(grid.RANDOM_SIZE_TESTS)))
    random_calls: int = grid.RANDOM_TEST_CALLS
    random_byte_loop: bool = True
    random_processes: int = 3                        # runner processes pooled per random-size row
    # 3. stores and branches
    trace_sizes: tuple[int, ...] = TRACE_SIZES
    trace_all_aligns_max: int = 256                  # every alignment 0..63 up to this size
    learn_rows: tuple[int, ...] = LEARN_ROWS_FULL
    learn_calls: int = 5000
    learn_kernels: tuple[str, ...] = ("nt_old", "new_sse", "new_avx512", "libc")
    # 4. rep stosb threshold
    thresholds: tuple[int, ...] = grid.STOSB_THRESHOLDS
    sweep_kernels: tuple[str, ...] = ("new_sse", "new_avx512")
    sweep_streams: tuple[SweepStream, ...] = (SweepStream(256, 4096), SweepStream(256, 1024),
                                              SweepStream(512, 2048, 16))
    sweep_calls: int = grid.RANDOM_TEST_CALLS

    def __post_init__(self):
        if any(m not in FIXED_MODES for m in self.fixed_modes) or not self.fixed_modes:
            raise UsageError(f"fixed_modes must be from {', '.join(FIXED_MODES)}")
        bad = [e for e in self.experiments if e not in EXPERIMENTS]
        if bad:
            raise UsageError(f"unknown experiment {bad[0]!r}", hint="use " + ", ".join(EXPERIMENTS))
        if self.kernels is not None:
            for k in self.kernels:
                if k not in KERNELS:
                    raise UsageError(f"unknown memset kernel {k!r}", hint="one of " + ", ".join(KERNELS))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["sweep_streams"] = [asdict(s) for s in self.sweep_streams]
        return d


QUICK = StudyConfig(
    name="quick", reps=15, budget=0.3, fixed_sizes=QUICK_FIXED_SIZES, fixed_bytes_per_pass=4 << 20,
    fixed_modes=("serialized",),
    random_rows=QUICK_ROWS, random_byte_loop=False, random_processes=1,
    trace_sizes=TRACE_SIZES, learn_rows=LEARN_ROWS_QUICK,
    thresholds=(256, 512, 640, 800, 1024, 1536, 2048, 3072, 4096), sweep_kernels=("new_sse",),
    sweep_streams=(SweepStream(256, 4096),))
FULL = StudyConfig()

