"""Properties of the one statistics module (cyclebench/measurement/stats.py) on generated data."""
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cyclebench.measurement import stats

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=1, max_size=60)
pairs = st.lists(finite, min_size=2, max_size=60)
probs = st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=8)
FAST = settings(max_examples=150, deadline=None)


@FAST
@given(samples)
def test_median_is_the_middle_and_the_mean_of_the_two_middles(xs):
    s = sorted(xs)
    m = stats.median(xs)
    assert s[0] <= m <= s[-1]
    n = len(s)
    expected = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    assert m == expected == statistics.median(xs)
    assert stats.median(list(reversed(xs))) == m
    assert stats.median(xs + [None]) == m          # None is "no figure", never a value


def test_median_of_nothing_is_none():
    assert stats.median([]) is None and stats.median([None, None]) is None
    assert stats.median([1, 2, 3, 4]) == 2.5        # even count: the mean of the two middles


@FAST
@given(samples, probs)
def test_quantiles_match_numpy_linear_and_are_monotone(xs, ps):
    qs = stats.quantiles(xs, ps)
    assert qs == pytest.approx(list(np.percentile(xs, [100 * p for p in ps])), rel=1e-9, abs=1e-6)
    ordered = stats.quantiles(xs, sorted(ps))
    assert all(a <= b + 1e-9 for a, b in zip(ordered, ordered[1:]))
    assert stats.quantiles(xs, (0, 0.5, 1)) == [min(xs), stats.median(xs), max(xs)]


@FAST
@given(pairs)
def test_quartiles_are_the_inclusive_method(xs):
    q1, q3 = stats.quartiles(xs)
    ref = statistics.quantiles(xs, n=4, method="inclusive")
    assert (q1, q3) == pytest.approx((ref[0], ref[2]), rel=1e-9, abs=1e-6)


@FAST
@given(samples, st.floats(min_value=0.01, max_value=100))
def test_relative_spread_is_non_negative_and_scale_free(xs, c):
    r = stats.relative_spread(xs)
    assert r >= 0
    scaled = stats.relative_spread([c * x for x in xs])
    negated = stats.relative_spread([-x for x in xs])
    if math.isfinite(r) and abs(stats.median(xs)) > 1e-3:
        assert scaled == pytest.approx(r, rel=1e-6, abs=1e-9)
        assert negated == pytest.approx(r, rel=1e-9, abs=1e-12)
    q1, med, q3 = stats.quantiles(xs, (0.25, 0.5, 0.75))
    assert r == stats.spread_over(q3 - q1, med)


def test_relative_spread_with_a_median_of_zero():
    assert stats.relative_spread([0, 0, 0]) == 0.0            # no spread around zero
    assert math.isinf(stats.relative_spread([0, 0, 0, 4]))     # a spread around nothing is never small
    assert stats.relative_spread([7.0]) == 0.0
    assert stats.relative_spread([1, 2, 3, 4, 5]) == pytest.approx(2 / 3)
    assert stats.spread_over(1.0, -2.0) == 0.5                  # over the absolute median


@FAST
@given(samples, finite)
def test_mad_sigma_ignores_a_shift_and_is_non_negative(xs, shift):
    s = stats.mad_sigma(xs)
    assert s >= 0
    assert stats.mad_sigma([x + shift for x in xs]) == pytest.approx(s, rel=1e-6, abs=1e-3)


@FAST
@given(pairs, pairs)
def test_mann_whitney_p_is_a_symmetric_probability(a, b):
    p = stats.mann_whitney_p(a, b)
    assert 0 <= p <= 1
    assert stats.mann_whitney_p(b, a) == pytest.approx(p)


def test_mann_whitney_p_of_constant_and_of_separated_samples():
    assert stats.mann_whitney_p([3.0] * 5, [3.0] * 7) == 1.0
    lo, hi = list(range(7)), list(range(100, 107))       # small enough for the exact test
    assert stats.mann_whitney_p(lo, hi) == pytest.approx(stats.min_p_value(7, 7))
    assert stats.min_p_value(3, 3) == pytest.approx(0.1) and stats.min_p_value(0, 5) == 1.0


@FAST
@given(samples)
def test_summary_figures_are_ordered(xs):
    s = stats.summarize(xs)
    assert s.minimum <= s.p10 <= s.q1 <= s.median <= s.q3 <= s.p90 <= s.maximum
    assert s.minimum <= s.fastest10 <= s.mean + 1e-6 * max(1.0, abs(s.mean))
    assert s.spread == s.q3 - s.q1 and s.relative_spread == stats.relative_spread(xs)
    assert s.n == len(xs) and s.median == stats.median(xs)


@FAST
@given(samples)
def test_aggregates_lie_within_the_samples(xs):
    for kind in stats.AGGREGATES:
        v = stats.aggregate(xs, kind)
        assert min(xs) - 1e-6 <= v <= max(xs) + 1e-6
    assert stats.aggregate(xs, "median") == stats.median(xs)


@FAST
@given(st.lists(finite, min_size=6, max_size=60))
def test_median_interval_holds_the_median_between_order_statistics(xs):
    lo, hi = stats.median_interval(xs)
    s = sorted(xs)
    assert s[0] <= lo <= stats.median(xs) <= hi <= s[-1]
    assert stats.median_interval([2 * x + 1 for x in xs]) == pytest.approx((2 * lo + 1, 2 * hi + 1))
    # the interval's ranks k and n + 1 - k cover the median at 95%, and k is the largest that does
    n = len(s)
    k = s.index(lo) + 1 if s.count(lo) == 1 else None
    if k is not None:
        cover = lambda k: 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n   # noqa: E731
        assert cover(k) >= 0.95 and (k + 1 > n // 2 or cover(k + 1) < 0.95)


def test_median_interval_published_ranks_and_too_few_values():
    # the ranks of the usual tables (n = 6: the whole range; n = 20: the 6th and 15th; n = 40: 14th, 27th)
    assert stats.median_interval(range(1, 7)) == (1, 6)
    assert stats.median_interval(range(1, 21)) == (6, 15)
    assert stats.median_interval(range(1, 41)) == (14, 27)
    assert stats.median_interval(range(1, 6)) is None          # five values cover the median at 94% at most
    assert stats.median_interval([]) is None


def test_median_interval_covers_the_median_of_a_two_mode_population():
    # processes that fall into two modes (a fabricated 26/30 GB/s split): the interval covers the
    # population median about 95% of the time, where Student's t on a mean assumes one normal mode
    rng = np.random.default_rng(1)
    pop = np.concatenate([rng.normal(26.3, 0.3, 60_000), rng.normal(30.0, 0.3, 40_000)])
    true = float(np.median(pop))
    hits = 0
    for _ in range(400):
        lo, hi = stats.median_interval(rng.choice(pop, 12))
        hits += lo <= true <= hi
    assert hits / 400 >= 0.93


@FAST
@given(st.lists(st.floats(min_value=0, max_value=1e3, allow_nan=False), min_size=5, max_size=60))
def test_trimmed_stde_matches_scipy(xs):
    from scipy.stats import mstats
    assert stats.trimmed_stde(xs) == pytest.approx(float(mstats.trimmed_stde(np.array(xs), (0.2, 0.2))),
                                                   rel=1e-6, abs=1e-9)


def test_avg_uncertainty_covers_a_slowed_quarter():
    # 30 repetitions at 2.0 and 10 slowed ones (a burst longer than the trim): the median and its
    # robust sigma do not move, the trimmed mean does, and its uncertainty must cover the move
    xs = [2.0] * 30 + [2.1, 2.15, 2.2, 2.3, 2.35, 2.4, 2.5, 3.0, 4.0, 5.0]
    mean = stats.aggregate(xs, "avg")
    assert mean > 2.01
    assert stats.uncertainty(xs, 0.0, "median") < 0.001           # the median's claim
    assert stats.uncertainty(xs, 0.0, "avg") >= mean - 2.0          # the trimmed mean's honest one
    clean = [2.0 + 0.001 * (i % 3) for i in range(40)]
    assert stats.uncertainty(clean, 0.0, "avg") < 0.001            # a clean run keeps its precision


@FAST
@given(st.integers(min_value=1, max_value=2000), st.data())
def test_share_interval_holds_the_share_and_narrows_with_trials(n, data):
    k = data.draw(st.integers(min_value=0, max_value=n))
    lo, hi = stats.share_interval(k, n)
    assert 0 <= lo <= k / n <= hi <= 1
    wider = stats.share_interval(k, n, level=0.99)
    assert wider[0] <= lo and hi <= wider[1]
    more = stats.share_interval(4 * k, 4 * n)             # four times the trials, the same share
    assert more[1] - more[0] < hi - lo
    assert stats.share_interval(0, 0) is None


def test_share_interval_of_a_known_case():
    """Wilson's interval for 537 of 594 (as scipy and the textbook formula give it)."""
    lo, hi = stats.share_interval(537, 594)
    p, n, z = 537 / 594, 594, 1.959964
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (lo, hi) == pytest.approx((centre - half, centre + half), abs=1e-6)
