"""Statistics on known data."""
import math

import numpy as np
import pytest

from cyclebench.errors import UsageError
from cyclebench.measurement.stats import (fastest_count, fastest_mean, improvement_percent, per_call,
                                       summarize)


def test_fastest_mean_of_10_percent():
    data = list(range(100, 0, -1))          # 1..100, unsorted
    assert fastest_mean(data) == pytest.approx(5.5)   # mean of 1..10
    assert fastest_mean(data, 0.5) == pytest.approx(25.5)
    assert fastest_mean([7.0]) == 7.0
    assert fastest_mean([5, 1, 100, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14]) == pytest.approx(1.5)


def test_fastest_count_rounds_up_and_is_robust_to_float_error():
    assert fastest_count(1000) == 100
    assert fastest_count(30) == 3             # 30 * 0.1 is 3.0000000000000004 in floating point
    assert fastest_count(15) == 2
    assert fastest_count(5) == 1
    with pytest.raises(UsageError):
        fastest_count(10, 0)


def test_fastest_mean_ignores_outliers():
    rng = np.random.default_rng(0)
    data = np.concatenate([np.full(900, 100.0), rng.uniform(1000, 5000, 100)])
    assert fastest_mean(data) == 100.0


def test_summary_on_known_data():
    s = summarize([5, 1, 4, 2, 3])
    assert (s.n, s.minimum, s.median, s.maximum, s.mean) == (5, 1, 3, 5, 3)
    assert (s.q1, s.q3, s.spread) == (2, 4, 2)
    assert s.relative_spread == pytest.approx(2 / 3)
    assert s.fastest10 == 1
    assert s.p10 == pytest.approx(1.4) and s.p90 == pytest.approx(4.6)
    assert summarize([0, 0]).relative_spread == 0
    assert math.isinf(summarize([0, 0, 0, 4]).relative_spread)   # median 0, spread 1
    assert set(s.as_dict()) >= {"minimum", "median", "fastest10", "spread"}


def test_bad_samples():
    for bad in ([], [1.0, float("nan")], [float("inf")]):
        with pytest.raises(UsageError):
            summarize(bad)


def test_per_call_and_improvement():
    out = per_call([50_000 * 20 + 1000, 50_000 * 22 + 1000], [1000, 1000], 50_000)
    assert list(out) == [20, 22]
    assert list(per_call([2000, 3000], 1000, 100)) == [10, 20]
    with pytest.raises(UsageError):
        per_call([1, 2, 3], [1, 2], 10)
    with pytest.raises(UsageError):
        per_call([1], [0], 0)
    assert improvement_percent(100, 80) == pytest.approx(20)
    assert improvement_percent(100, 125) == pytest.approx(-25)
    with pytest.raises(UsageError):
        improvement_percent(0, 1)
