"""The paging study's configuration: QUICK (``--quick``, under 3 minutes) and FULL (to PARSEC's
native input, 10 M options)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from cyclebench.errors import UsageError

EXPERIMENTS = ("splitstack", "tree", "random", "hugepages")
KiB = 1 << 10
PAGES = tuple(4 * KiB << k for k in range(9))            # 4 KiB .. 1 MiB, as the reference
INPUTS = {"simsmall": 4096, "simlarge": 65536, "native": 10_000_000}   # PARSEC blackscholes options


@dataclass(frozen=True)
class StudyConfig:
    name: str = "full"
    experiments: tuple[str, ...] = EXPERIMENTS
    reps: int = 7
    # 1. split stacks: fib(ARG) per iteration; sum(DEPTH) per iteration
    fib_arg: int = 40
    fib_iterations: int = 1
    sum_depths: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)
    sum_calls: int = 20_000_000            # calls per short run (iterations = calls // depth)
    hot_iterations: int = 200_000         # crossing with signal blocking (~4,000 cycles a call) ...
    hot_cheap_factor: int = 50             # ... and this many times more for the cheap cases
    # 2. tree arrays and blackscholes: passes per short run for each input
    pages: tuple[int, ...] = PAGES
    inputs: tuple[str, ...] = ("simsmall", "simlarge", "native")
    passes: tuple[tuple[str, int], ...] = (("simsmall", 200), ("simlarge", 20), ("native", 1))
    native_reps: int = 3
    # 3. random access: elements (powers of two); small = one 4 KiB data page
    chase_small: int = 1024
    chase_large: int = 1 << 26             # 256 MiB of 32-bit indices, far beyond L3
    chase_page: int = 4 * KiB
    small_accesses: int = 20_000_000
    large_accesses: int = 2_000_000
    large_reps: int = 5                    # repetitions of the large-array chase (building it takes 0.5 s)
    # 4. huge pages: blackscholes on this input beside the chase
    huge_input: str = "native"
    huge_layouts: tuple[str, ...] = ("soa", "aos")
    # instruction counts (valgrind callgrind): blackscholes input and tree page sizes counted
    count_instructions: bool = True
    count_input: str = "simlarge"
    count_pages: tuple[int, ...] = PAGES

    def __post_init__(self):
        bad = [e for e in self.experiments if e not in EXPERIMENTS]
        bad += [i for i in self.inputs + (self.huge_input, self.count_input) if i not in INPUTS]
        if bad:
            raise UsageError(f"unknown experiment or input {bad[0]!r}",
                             "experiments: " + ", ".join(EXPERIMENTS) + "; inputs: " + ", ".join(INPUTS))
        if any(p not in PAGES for p in self.pages + self.count_pages):
            raise UsageError("a page size must be a power of two from 4 KiB to 1 MiB", "e.g. 4096, 8192 ... 1048576")
        for n in (self.chase_small, self.chase_large):
            if n < 2 or n & (n - 1):
                raise UsageError(f"the chase needs a power-of-two element count, not {n}", "e.g. 1024 or 67108864")

    def passes_for(self, inp: str) -> int:
        return dict(self.passes).get(inp, 1)

    def to_dict(self) -> dict:
        return asdict(self)


QUICK = StudyConfig(
    name="quick", reps=5, fib_arg=32, fib_iterations=8, sum_depths=(1_000, 100_000, 1_000_000),
    sum_calls=15_000_000, hot_iterations=50_000, large_reps=3, large_accesses=2_000_000, huge_layouts=("soa",),
    pages=(4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 1024 * KiB),
    inputs=("simlarge",), passes=(("simlarge", 30), ("native", 1)), native_reps=3, small_accesses=20_000_000,
    count_pages=(16 * KiB,))
FULL = StudyConfig()
