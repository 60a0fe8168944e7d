"""grid.py holds the reference's random-size test grid; its streams are valid."""
import re
from pathlib import Path

import numpy as np
import pytest

from cyclebench.studies.memset import grid

REFERENCE = Path(__file__).parent / "data" / "memset" / "msrc-random-size-table.txt"


def _parse_reference_table(text):
    """The reference's table rows come out of the HTML as run-together digits, e.g.
    '1625651200No12.96' = gran 16, min 256, max 512, offsets 0..0, no L1 clear, 12.96%."""
    rows = []
    for line in text.splitlines():
        m = re.fullmatch(r"((?:1|16)\d+)(No|Yes)([0-9.]+)", line.strip())
        if not m:
            continue
        digits, clear, pct = m.groups()
        max_off = 4095 if digits.endswith("04095") else 0
        digits = digits[:-5] if max_off else digits[:-2]
        if digits.startswith("11"):
            gran, lo, hi = 1, 1, int(digits[2:])
        else:
            rest = digits[2:]
            lo = next(int(p) for p in ("1024", "256", "512", "32", "64") if rest.startswith(p))
            gran, hi = 16, int(rest[len(str(lo)):])
        rows.append((gran, lo, hi, 0, max_off, clear == "Yes", float(pct)))
    return rows


def test_grid_matches_the_reference_table():
    rows = _parse_reference_table(REFERENCE.read_text())
    assert len(rows) == 72
    ours = [(t.granularity, t.min_size, t.max_size, t.min_offset, t.max_offset, t.clear_l1,
             t.reference_improvement_pct) for t in grid.RANDOM_SIZE_TESTS]
    assert ours == rows


def test_grid_shape():
    tests = grid.RANDOM_SIZE_TESTS
    assert len(tests) == 72
    assert len({t.name for t in tests}) == 72
    assert {t.granularity for t in tests} == {1, 16}
    assert {(t.min_offset, t.max_offset) for t in tests} == {(0, 0), (0, 4095)}
    assert not any(t.clear_l1 and t.max_offset for t in tests)
    h = grid.HIGHLIGHTED_TEST
    assert (h.granularity, h.min_size, h.max_size, h.max_offset, h.clear_l1) == (16, 256, 512, 0, False)
    assert h.reference_improvement_pct == 12.96
    assert h.name == ("gran:16_minSize:256_maxSize:512_minOffsetFromPageAlignment:0"
                      "_maxOffsetFromPageAlignment:0")


def test_every_grid_test_makes_a_valid_stream():
    for t in grid.RANDOM_SIZE_TESTS:
        s = t.stream(count=2000, seed=1)
        assert len(s) == 2000
        assert s.sizes.min() >= t.min_size and s.sizes.max() <= t.max_size
        assert np.all(s.sizes % t.granularity == 0)
        assert s.offsets.min() >= t.min_offset and s.offsets.max() <= t.max_offset
        assert np.all(s.values == 0)
    assert len(grid.HIGHLIGHTED_TEST.stream()) == grid.RANDOM_TEST_CALLS == 50_000


def test_sweep_and_fixed_sizes():
    th = grid.STOSB_THRESHOLDS
    assert th[0] == 256 and th[-1] == 4096 and list(th) == sorted(set(th))
    assert grid.REFERENCE_STOSB_THRESHOLD in th
    assert grid.FIXED_SIZES[:257] == tuple(range(257))
    assert list(grid.FIXED_SIZES) == sorted(set(grid.FIXED_SIZES))
