"""The reference's memset test design, as data.

Source: MSRC, "Building Faster AMD64 Memset Routines" (2021); its table is kept in
tests/data/memset/ and checked against this one.

Random-size tests: an array of 50,000 random argument sets is generated once (seeded) and every
routine zeroes the same buffer with it, so results are directly comparable. Each test is defined by
  granularity    every size is a multiple of it
  min_size       smallest size (inclusive)
  max_size       largest size (inclusive)
  min_offset     smallest offset of dst from a page boundary
  max_offset     largest offset of dst from a page boundary
  clear_l1       whether the L1 data cache is cleared before each call
and the reference reports, per test, "Perf % Improvement" of the new NT memset over the old one
(``reference_improvement_pct``: (old - new) / old * 100, positive = new is faster; measured on the
reference's machines, not ours). The 72 rows below are the reference's table, in its order.

Fixed-size tests: one size at a time, the same buffer, 1,000 calls for small sizes (fewer for very
large sizes), statistic = mean of the fastest 10%. The reference shows these as graphs only; the
size list in FIXED_SIZES is ours.
"""
from __future__ import annotations

from dataclasses import dataclass

from cyclebench.routines.streams import DEFAULT_COUNT, Stream, random_stream

RANDOM_TEST_CALLS = 50_000          # argument sets per random-size test
FIXED_SIZE_CALLS = 1_000            # calls per size in the fixed-size test (small sizes)
FIXED_SIZE_FRACTION = 0.10          # statistic: mean of the fastest 10%
REFERENCE_STOSB_THRESHOLD = 800     # the new design's rep stosb cut-over (bytes)
STOSB_ALIGNMENT = 64                # rep stosb starts 64-byte aligned, after 64 bytes of vector stores

# The rep stosb cut-over sweep (ours): thresholds in bytes, 256 B .. 4 KiB.
STOSB_THRESHOLDS: tuple[int, ...] = (256, 320, 384, 448, 512, 576, 640, 704, 768, 800, 896, 1024,
                                     1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096)

# Fixed-size test sizes (ours): every size to 256, then steps, then powers of two to 1 MiB.
FIXED_SIZES: tuple[int, ...] = (tuple(range(0, 257)) + tuple(range(272, 1025, 16))
                                + tuple(range(1088, 4097, 64)) + tuple(1 << k for k in range(13, 21)))


@dataclass(frozen=True)
class RandomSizeTest:
    granularity: int
    min_size: int
    max_size: int
    min_offset: int
    max_offset: int
    clear_l1: bool
    reference_improvement_pct: float

    @property
    def name(self) -> str:
        """The reference's label, e.g. gran:16_minSize:256_maxSize:512_minOffsetFromPageAlignment:0_..."""
        base = (f"gran:{self.granularity}_minSize:{self.min_size}_maxSize:{self.max_size}"
                f"_minOffsetFromPageAlignment:{self.min_offset}"
                f"_maxOffsetFromPageAlignment:{self.max_offset}")
        return base + ("_clearL1" if self.clear_l1 else "")

    def stream(self, count: int = DEFAULT_COUNT, seed: int = 0) -> Stream:
        """The argument stream of this test: zeroing (value 0), sizes and offsets per the row."""
        return random_stream(min_size=self.min_size, max_size=self.max_size,
                             granularity=self.granularity, min_offset=self.min_offset,
                             max_offset=self.max_offset, value=0, count=count, seed=seed)


def _rows(granularity: int, table: list[tuple[int, int, tuple[float, float, float]]]):
    # Each (min, max) appears three times in the reference: offset 0 without and with an L1 clear,
    # then offsets 0..4095 without a clear.
    out = []
    for lo, hi, (plain, clear, offsets) in table:
        out.append(RandomSizeTest(granularity, lo, hi, 0, 0, False, plain))
        out.append(RandomSizeTest(granularity, lo, hi, 0, 0, True, clear))
        out.append(RandomSizeTest(granularity, lo, hi, 0, 4095, False, offsets))
    return out


RANDOM_SIZE_TESTS: tuple[RandomSizeTest, ...] = tuple(_rows(1, [
    (1, 1024, (17.74, 17.77, 16.66)),
    (1, 128, (21.99, 19.05, 21.66)),
    (1, 16, (16.10, 15.27, 15.78)),
    (1, 256, (20.51, 19.62, 18.80)),
    (1, 32, (13.28, 11.28, 11.97)),
    (1, 4096, (34.61, 25.40, 33.11)),
    (1, 512, (19.93, 17.64, 19.03)),
    (1, 64, (27.91, 23.50, 25.40)),
    (1, 768, (18.35, 17.55, 17.68)),
]) + _rows(16, [
    (1024, 4096, (38.40, 28.12, 36.90)),
    (256, 1024, (14.92, 15.21, 15.01)),
    (256, 4096, (35.14, 26.64, 33.87)),
    (256, 512, (12.96, 10.08, 14.30)),
    (256, 768, (15.25, 13.55, 16.13)),
    (32, 1024, (16.89, 16.89, 16.69)),
    (32, 128, (23.62, 22.00, 22.60)),
    (32, 256, (19.06, 17.86, 18.61)),
    (32, 512, (18.58, 16.00, 19.57)),
    (32, 64, (25.92, 19.96, 23.28)),
    (512, 1024, (11.75, 13.80, 11.46)),
    (512, 768, (9.03, 11.31, 9.79)),
    (64, 1024, (15.57, 16.68, 16.84)),
    (64, 128, (19.55, 21.16, 21.18)),
    (64, 512, (17.67, 15.03, 18.82)),
]))

# The test the reference singles out: new beats old by 12.96% although old wins at fixed sizes there.
HIGHLIGHTED_TEST = RANDOM_SIZE_TESTS[36]

# The reference's per-size comparison (its table of branch mispredictions and stores, SSE design):
# size -> (old stores, new stores) as (min, max). Our kernels' counts are in the README.
REFERENCE_STORE_COUNTS: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {
    8: ((1, 1), (4, 4)), 16: ((2, 2), (4, 4)), 24: ((3, 3), (4, 4)), 32: ((4, 4), (4, 4)),
    36: ((5, 5), (4, 4)), 48: ((6, 6), (4, 4)), 64: ((8, 8), (5, 5)), 80: ((5, 7), (5, 9)),
    96: ((6, 8), (9, 9)), 128: ((8, 10), (9, 9)), 144: ((9, 11), (9, 13)), 160: ((10, 12), (13, 13)),
    176: ((11, 13), (13, 13)), 192: ((12, 14), (13, 13)),
}
