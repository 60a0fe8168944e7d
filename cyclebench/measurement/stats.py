"""The package's one set of statistics: each is defined here once and used everywhere.

* ``median``: the middle value; for an even count the mean of the two middle values.
* ``quantiles``: linear interpolation between order statistics (numpy's default "linear", Python's
  ``statistics.quantiles(method="inclusive")``, Hyndman & Fan type 7).
* ``relative_spread``: the interquartile range over the absolute median. With a median of zero it is
  0 when the quartiles agree and infinite otherwise (a spread around nothing is never small).
* ``mad_sigma``: 1.4826 x the median absolute deviation (a robust standard deviation).
* ``mann_whitney_p``: the two-sided Mann-Whitney U test (scipy), with ``min_p_value`` the smallest
  p the exact test can give for two sample sizes.
* ``trimmed_mean`` / ``aggregate``: the measurement aggregates (nanoBench's 20th-80th percentile mean).
* ``fastest_mean``: the mean of the fastest 10% (the memset reference's statistic), and
  ``summarize``: the usual figures of a set of timings in one ``Summary``.
* ``uncertainty`` / ``upper_bound``: the 95% half-width of an aggregate and the below-resolution bound;
  ``trimmed_stde``: the standard error of the trimmed mean;
  ``few_uncertainty``: the 95% half-width of the centre of a few values (Student's t);
  ``median_interval``: a distribution-free confidence interval for the median (order statistics).

numpy and scipy are imported only inside the functions that need them: the measurement layer starts
fast.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import reduce

from ..errors import UsageError

AGGREGATES = ("avg", "median", "min", "max", "range")


def _floats(values) -> list[float]:
    """A flat list of floats from a list, a generator or a numpy array of any shape."""
    if hasattr(values, "ravel"):
        return [float(v) for v in values.ravel().tolist()]
    return [float(v) for v in values]


def median(values) -> float | None:
    """The median of the values that are not None; None when there are none."""
    s = sorted(v for v in _floats_or_none(values) if v is not None)
    if not s:
        return None
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def _floats_or_none(values):
    if hasattr(values, "ravel"):
        return _floats(values)
    return [None if v is None else float(v) for v in values]


def quantiles(values, probs) -> list[float]:
    """The values at the given probabilities (0..1), linearly interpolated between order
    statistics; ValueError on an empty list."""
    s = sorted(_floats(values))
    if not s:
        raise ValueError("no values")
    out = []
    for p in probs:
        if not 0 <= p <= 1:
            raise ValueError(f"probability {p} is not in [0, 1]")
        h = (len(s) - 1) * p
        lo = math.floor(h)
        f = h - lo
        if f == 0:
            out.append(s[lo])
            continue
        a, b = s[lo], s[lo + 1]
        # (1 - f) a + f b, kept within [a, b]; at f = 1/2 the median's own (a + b) / 2, which the
        # weighted form misses by a rounding for subnormal values (0.5 x 5e-324 rounds to 0)
        mid = (a + b) / 2 if math.isfinite(a + b) else a / 2 + b / 2
        out.append(mid if f == 0.5 else min(max((1 - f) * a + f * b, a), b))
    return out


def quartiles(values) -> tuple[float, float]:
    q1, q3 = quantiles(values, (0.25, 0.75))
    return q1, q3


def spread_over(iqr: float, med: float) -> float:
    """An interquartile range relative to a median: the zero-median rule in one place."""
    if med:
        return iqr / abs(med)
    return 0.0 if iqr == 0 else math.inf


def relative_spread(values) -> float:
    """Interquartile range over the absolute median (0 or infinity with a median of zero)."""
    q1, med, q3 = quantiles(values, (0.25, 0.5, 0.75))
    return spread_over(q3 - q1, med)


def mad_sigma(values) -> float:
    """Robust standard deviation: 1.4826 x median absolute deviation."""
    v = _floats(values)
    med = median(v)
    return 1.4826 * median([abs(x - med) for x in v])


def min_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p the exact Mann-Whitney U test can give for these sample sizes."""
    if not (n1 and n2):
        return 1.0
    log_comb = math.lgamma(n1 + n2 + 1) - math.lgamma(n1 + 1) - math.lgamma(n2 + 1)   # no overflow
    return min(1.0, 2.0 * math.exp(-log_comb))


def mann_whitney_p(a, b) -> float:
    """Two-sided Mann-Whitney U p-value; 1.0 when every sample is the same number."""
    a, b = _floats(a), _floats(b)
    if not a or not b:
        raise ValueError("both sets need samples")
    if min(a + b) == max(a + b):
        return 1.0                         # identical constant samples: nothing differs
    from scipy.stats import mannwhitneyu  # scipy is slow to import; only a comparison needs it
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def _trim_bounds(n: int, lo: float, hi: float) -> tuple[int, int]:
    """The kept index range [a, b) of n sorted values for a lo-hi percentile trim."""
    return int(math.floor(n * lo)), int(math.ceil(n * hi))


def trimmed_mean(values, lo: float = 0.2, hi: float = 0.8) -> float:
    """Mean of the 20th-80th percentiles (nanoBench's default aggregate)."""
    s = sorted(_floats(values))
    a, b = _trim_bounds(len(s), lo, hi)
    core = s[a:b] or s
    return sum(core) / len(core)


def trimmed_stde(values, lo: float = 0.2, hi: float = 0.8) -> float:
    """Standard error of ``trimmed_mean`` (Tukey & McLaughlin): the standard deviation of the
    values winsorized at the same cuts, over (hi - lo) x sqrt(n); scipy.stats.mstats.trimmed_stde
    computes the same, but importing scipy costs a snippet's start-up. A robust sigma of all the
    values misses a run whose slowed repetitions are more than the trimmed share: its median stays
    put while the trimmed mean moves, and only the winsorized spread shows by how much."""
    s = sorted(_floats(values))
    n = len(s)
    a, b = _trim_bounds(n, lo, hi)
    if n < 2 or b <= a:
        return math.nan
    w = [s[a]] * a + s[a:b] + [s[b - 1]] * (n - b)
    mean = sum(w) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in w) / (n - 1))
    return sd / ((hi - lo) * math.sqrt(n))


def aggregate(values: list[float], kind: str) -> float:
    if kind == "avg":
        return trimmed_mean(values)
    if kind in ("median", "range"):
        return median(values)
    if kind == "min":
        return min(values)
    if kind == "max":
        return max(values)
    raise ValueError(kind)


def uncertainty(values: list[float], quantum: float = 0.0, aggregate: str = "median") -> float:
    """95% half-width of the aggregate: 1.96 x 1.2533 x sigma / sqrt(n), with sigma robust and
    floored at the per-sample quantisation noise (quantum / sqrt(12)), so identical quantised
    samples never claim zero error. For the trimmed mean (``avg``) it is at least 1.96 x its
    standard error (``trimmed_stde``): a run with a quarter of its repetitions slowed keeps a
    tight median but a trimmed mean that moved, and must not claim the median's precision."""
    if not values:
        return math.nan
    sigma = max(mad_sigma(values), quantum / math.sqrt(12))
    half = 1.96 * 1.2533 * sigma / math.sqrt(len(values))
    if aggregate == "avg" and len(values) > 1:
        half = max(half, 1.96 * trimmed_stde(values))
    return half


def few_uncertainty(values: list[float], quantum: float = 0.0) -> float:
    """95% half-width of the centre of a few values (2-10: the medians of a few processes):
    Student's t with n - 1 degrees of freedom x the sample standard deviation / sqrt(n), floored
    at the quantisation noise. ``uncertainty``'s normal quantile with a robust sigma assumes many
    values: for two values d apart it gives 1.3 d, t gives 6.4 d (and 2.5 s for three)."""
    from scipy.stats import t
    v = _floats(values)
    if len(v) < 2:
        return math.nan
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1))
    return float(t.ppf(0.975, len(v) - 1)) * max(sd, quantum / math.sqrt(12)) / math.sqrt(len(v))


def median_interval(values, level: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free ``level`` confidence interval for the population median: the order
    statistics x(k) and x(n+1-k) with the largest k whose coverage, 1 - 2 P(Binomial(n, 1/2) < k),
    is still at least ``level``. It assumes neither normality nor one mode, and one wild value moves
    it by at most one order statistic. None when even the whole range covers less than ``level``
    (fewer than 6 values at 95%)."""
    s = sorted(_floats(values))
    n = len(s)
    if not n or not 0 < level < 1:
        return None
    from scipy.stats import binom
    # the largest k whose ranks still cover at level: P(X < k) = binom.cdf(k - 1), X ~ Binomial(n, 1/2)
    covered = [k for k in range(1, n // 2 + 1) if 1 - 2 * binom.cdf(k - 1, n, 0.5) >= level]
    if not covered:
        return None
    best = covered[-1]
    return s[best - 1], s[n - best]


def share_interval(hits: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """A ``level`` confidence interval for a share ``hits`` of ``n`` (Wilson's score interval, which
    stays inside 0-1 and holds near a share of 0.9 with a few hundred trials, where the normal
    approximation does not). None for no trials."""
    if n <= 0 or not 0 <= hits <= n:
        return None
    from scipy.stats import binomtest
    ci = binomtest(hits, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def upper_bound(value: float, uncertainty: float, quantum: float = 0.0, force: bool = False) -> float | None:
    """``X`` in "the code costs less than X" when ``value`` is not distinguishable from zero: within
    its 95% uncertainty or within one counter quantum of it (``force``: the runner could not make
    B - A long enough to tell). None when the figure is resolved."""
    if not force and abs(value) > max(uncertainty, quantum):
        return None
    return _round_up(max(abs(value) + (uncertainty if math.isfinite(uncertainty) else 0.0), quantum))


def _round_up(x: float, digits: int = 2) -> float:
    """x rounded up to ``digits`` significant digits: still a bound, and short when printed."""
    if not math.isfinite(x) or x <= 0:
        return x
    e = math.floor(math.log10(x)) - digits + 1
    return float(f"{math.ceil(x / 10 ** e - 1e-9)}e{e}")


def tick_step(ints: list[int]) -> int:
    """The counter's granularity: the gcd of the raw differences (26 on a KVM guest's TSC)."""
    g = reduce(math.gcd, (abs(i) for i in ints if i), 0)
    return g or 1


# --- timings of routines and programs ---------------------------------------------------------

def _samples(samples) -> list[float]:
    a = _floats(samples)
    if not a:
        raise UsageError("no samples to summarize")
    if not all(math.isfinite(x) for x in a):
        raise UsageError("samples contain NaN or infinity")
    return a


def fastest_count(n: int, fraction: float = 0.1) -> int:
    """How many of n samples the fastest-fraction mean averages: ceil(fraction * n), at least 1."""
    if not 0 < fraction <= 1:
        raise UsageError(f"fraction must be in (0, 1], got {fraction}")
    return max(1, math.ceil(n * fraction - 1e-9))


def fastest_mean(samples, fraction: float = 0.1) -> float:
    """Mean of the fastest (smallest) fraction of the samples.

    The reference (MSRC, "Building Faster AMD64 Memset Routines") times each size many times and
    reports the mean of the fastest 10%, to drop interrupts and context switches: sort ascending,
    average the first k = ceil(fraction * n) values (at least one)."""
    a = sorted(_samples(samples))
    k = fastest_count(len(a), fraction)
    # rounding can put the mean of equal values a unit below them; a mean lies within its values
    return min(max(math.fsum(a[:k]) / k, a[0]), a[k - 1])


@dataclass(frozen=True)
class Summary:
    """Order statistics of a list of samples."""
    n: int
    minimum: float
    fastest10: float   # mean of the fastest 10%
    median: float
    mean: float
    p10: float
    q1: float
    q3: float
    p90: float
    maximum: float
    spread: float            # q3 - q1
    relative_spread: float   # spread_over(spread, median)

    def as_dict(self) -> dict:
        return asdict(self)


def summarize(samples) -> Summary:
    """Minimum, fastest-10% mean, median, mean, 10th/25th/75th/90th percentiles, maximum,
    interquartile range and relative spread of a set of timings (UsageError when empty or not finite)."""
    a = _samples(samples)
    p10, q1, med, q3, p90 = quantiles(a, (0.1, 0.25, 0.5, 0.75, 0.9))
    spread = q3 - q1
    return Summary(n=len(a), minimum=min(a), fastest10=fastest_mean(a, 0.1), median=med,
                   mean=math.fsum(a) / len(a), p10=p10, q1=q1, q3=q3, p90=p90, maximum=max(a),
                   spread=spread, relative_spread=spread_over(spread, med))


def per_call(pass_cycles, empty_pass_cycles, calls: int):
    """Per-call cost of each repetition: (pass - empty pass) / calls, as a numpy array.

    pass_cycles and empty_pass_cycles are paired by repetition (same length), or
    empty_pass_cycles is one number (an already-aggregated baseline).
    """
    import numpy as np
    if calls < 1:
        raise UsageError(f"calls must be at least 1, got {calls}")
    p = np.asarray(_samples(np.atleast_1d(np.asarray(pass_cycles, dtype=float))))
    e = np.asarray(_samples(np.atleast_1d(np.asarray(empty_pass_cycles, dtype=float))))
    if e.size not in (1, p.size):
        raise UsageError(f"{p.size} pass timings but {e.size} empty-pass timings")
    return (p - e) / calls


def improvement_percent(old: float, new: float) -> float:
    """(old - new) / old * 100: positive when new is faster (the reference's "Perf % Improvement")."""
    if old <= 0:
        raise UsageError(f"the old time must be positive, got {old}")
    return (old - new) / old * 100.0
