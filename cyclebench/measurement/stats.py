"""Aggregates and uncertainty of per-repetition values."""
from __future__ import annotations

import math
import statistics
from functools import reduce

AGGREGATES = ("avg", "median", "min", "max", "range")


def trimmed_mean(values: list[float], lo: float = 0.2, hi: float = 0.8) -> float:
    """Mean of the 20th-80th percentiles (nanoBench's default aggregate)."""
    s = sorted(values)
    n = len(s)
    a, b = int(math.floor(n * lo)), int(math.ceil(n * hi))
    core = s[a:b] or s
    return sum(core) / len(core)


def aggregate(values: list[float], kind: str) -> float:
    if kind == "avg":
        return trimmed_mean(values)
    if kind in ("median", "range"):
        return statistics.median(values)
    if kind == "min":
        return min(values)
    if kind == "max":
        return max(values)
    raise ValueError(kind)


def mad_sigma(values: list[float]) -> float:
    """Robust standard deviation: 1.4826 x median absolute deviation."""
    med = statistics.median(values)
    return 1.4826 * statistics.median(abs(v - med) for v in values)


def quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def uncertainty(values: list[float], quantum: float = 0.0) -> float:
    """95% half-width of the aggregate: 1.96 x 1.2533 x sigma / sqrt(n), with sigma robust and
    floored at the per-sample quantisation noise (quantum / sqrt(12)), so identical quantised
    samples never claim zero error."""
    if not values:
        return math.nan
    sigma = max(mad_sigma(values), quantum / math.sqrt(12))
    return 1.96 * 1.2533 * sigma / math.sqrt(len(values))


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
    """The counter's granularity: the gcd of the raw differences (26 on our KVM guests' TSC)."""
    g = reduce(math.gcd, (abs(i) for i in ints if i), 0)
    return g or 1
