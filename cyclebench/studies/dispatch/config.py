"""The dispatch study's configuration: QUICK for ``--quick``, FULL otherwise."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from cyclebench.errors import UsageError

from .builds import BY_NAME
from .sources import N_TARGETS

ERTL_BUILDS = ("clang-Os", "clang-retpoline")
PATTERNS = ("roundrobin", "random")
# fixed: every dispatcher with one target per build; pattern: round-robin and random over k
# targets; penalty: the misprediction cost of one branch (clang-Os)
EXPERIMENTS = ("fixed", "pattern", "penalty")


@dataclass(frozen=True)
class StudyConfig:
    name: str = "full"
    experiments: tuple[str, ...] = EXPERIMENTS
    builds: tuple[str, ...] = tuple(BY_NAME)
    pattern_builds: tuple[str, ...] = tuple(BY_NAME)     # builds measured under the target patterns
    targets_3: tuple[int, ...] = tuple(range(N_TARGETS))  # fixed targets of the two-level search
    ks: tuple[int, ...] = (2, 4, 8, N_TARGETS)            # round-robin and random over k targets
    fixed_calls: int = 1000                               # calls per pass, fixed target
    random_calls: int = 65536                             # pre-generated random indices per pass
    reps: int = 15
    budget: float = 1.0
    seed: int = 11

    def __post_init__(self):
        wrong = [e for e in self.experiments if e not in EXPERIMENTS]
        if wrong:
            raise UsageError(f"unknown experiment {wrong[0]!r}", "use " + ",".join(EXPERIMENTS))
        bad = [b for b in (*self.builds, *self.pattern_builds) if b not in BY_NAME]
        if bad:
            raise UsageError(f"unknown build {bad[0]!r}", "use " + ",".join(BY_NAME))
        if any(not 0 <= t < N_TARGETS for t in self.targets_3):
            raise UsageError("a two-level search target is out of range", f"use 0..{N_TARGETS - 1}")
        if any(not 2 <= k <= N_TARGETS for k in self.ks):
            raise UsageError("a target count is out of range", f"use 2..{N_TARGETS}")

    def to_dict(self) -> dict:
        return asdict(self)


# One target per leaf edge of the two-level tree (first/last of a leaf, the 9-target leaf).
QUICK = StudyConfig(name="quick", pattern_builds=ERTL_BUILDS, targets_3=(0, 7, 8, 31, 32, 63, 64, 72),
                    reps=9, budget=0.3)
FULL = StudyConfig()
