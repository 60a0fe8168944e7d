"""How a routine is timed: ``TimingOptions``, the options the routine harness's pass generation
(``passes``) and timing (``timing``) both read; one module below both, so neither imports the other."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from cyclebench.errors import UsageError

FLUSH_MODES = ("none", "call", "pass")   # L1d eviction: never, before every call, before every pass


@dataclass(frozen=True)
class TimingOptions:
    """How a routine is timed. Defaults: trained back-to-back calls, no eviction, 30 repetitions."""

    n_measurements: int = 30
    warm_up: int = 5
    flush: str = "none"                 # "none" | "call" | "pass"
    evict_ways_factor: int = 2          # lines read per L1d set = factor x ways
    serialize: bool = False             # lfence after every call
    replay: bool = False                # walk a fixed stream as an array anyway
    counters: str = "auto"              # measure()'s backend: auto, tsc, perf
    events: tuple[str, ...] = ()        # extra perf events (hardware events need a PMU)
    budget: float = 1.0                 # measure()'s re-run budget when the host is noisy
    timeout: float = 60.0
    cpu: int | None = None
    processes: int = 1                  # runner processes whose repetitions are pooled

    def __post_init__(self):
        if self.flush not in FLUSH_MODES:
            raise UsageError(f"unknown flush mode {self.flush!r}", hint="use none, call or pass")
        if not 1 <= self.evict_ways_factor <= 8:
            raise UsageError("evict_ways_factor must be 1..8", hint="2 reads twice the associativity")
        if not 1 <= self.n_measurements <= 100_000:
            raise UsageError(f"{self.n_measurements} repetitions is out of range", hint="use 1..100000")
        if not 1 <= self.processes <= 100:
            raise UsageError(f"{self.processes} processes is out of range", hint="use 1..100")
        object.__setattr__(self, "events", tuple(self.events))

    def key(self) -> dict:
        """The options that change a figure (for result records and resume keys)."""
        d = asdict(self)
        for k in ("budget", "timeout", "cpu"):
            d.pop(k)
        if self.processes == 1:
            d.pop("processes")
        d["events"] = list(self.events)
        if self.flush == "none":
            d.pop("evict_ways_factor")
        return d
