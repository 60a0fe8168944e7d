"""Statistics for routine timings: the reference's "mean of the fastest 10%", and the usual ones.

The reference (MSRC, "Building Faster AMD64 Memset Routines") times each size many times and
reports the mean of the fastest 10% of the results, to drop interrupts and context switches.
``fastest_mean`` is that statistic: sort ascending, average the first k = ceil(fraction * n) values
(at least one).

``summarize`` adds minimum, median, mean, the 10th/25th/75th/90th percentiles (numpy's linear
interpolation), ``spread`` = interquartile range (q3 - q1) and ``relative_spread`` = spread / median.

``per_call`` turns pass timings into per-call costs: (cycles of a pass over the stream - cycles of
the empty-call pass) / calls. ``improvement_percent`` is the reference's "Perf % Improvement":
how much less time the new routine takes, as a percentage of the old one's.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from cyclebench.errors import UsageError


def _array(samples) -> np.ndarray:
    a = np.asarray(samples, dtype=float).ravel()
    if a.size == 0:
        raise UsageError("no samples to summarize")
    if not np.all(np.isfinite(a)):
        raise UsageError("samples contain NaN or infinity")
    return a


def fastest_count(n: int, fraction: float = 0.1) -> int:
    """How many of n samples the fastest-fraction mean averages: ceil(fraction * n), at least 1."""
    if not 0 < fraction <= 1:
        raise UsageError(f"fraction must be in (0, 1], got {fraction}")
    return max(1, math.ceil(n * fraction - 1e-9))


def fastest_mean(samples, fraction: float = 0.1) -> float:
    """Mean of the fastest (smallest) fraction of the samples: the reference's statistic."""
    a = np.sort(_array(samples))
    return float(a[:fastest_count(a.size, fraction)].mean())


@dataclass(frozen=True)
class Summary:
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
    relative_spread: float   # spread / median (inf if the median is 0 and spread is not)

    def as_dict(self) -> dict:
        return asdict(self)


def summarize(samples) -> Summary:
    a = _array(samples)
    p10, q1, median, q3, p90 = np.percentile(a, [10, 25, 50, 75, 90])
    spread = float(q3 - q1)
    rel = spread / median if median else (0.0 if spread == 0 else math.inf)
    return Summary(n=int(a.size), minimum=float(a.min()), fastest10=fastest_mean(a, 0.1),
                   median=float(median), mean=float(a.mean()), p10=float(p10), q1=float(q1),
                   q3=float(q3), p90=float(p90), maximum=float(a.max()), spread=spread,
                   relative_spread=float(rel))


def per_call(pass_cycles, empty_pass_cycles, calls: int) -> np.ndarray:
    """Per-call cost of each repetition: (pass - empty pass) / calls.

    pass_cycles and empty_pass_cycles are paired by repetition (same length), or
    empty_pass_cycles is one number (an already-aggregated baseline).
    """
    if calls < 1:
        raise UsageError(f"calls must be at least 1, got {calls}")
    p = _array(pass_cycles)
    e = _array(empty_pass_cycles)
    if e.size not in (1, p.size):
        raise UsageError(f"{p.size} pass timings but {e.size} empty-pass timings")
    return (p - e) / calls


def improvement_percent(old: float, new: float) -> float:
    """(old - new) / old * 100: positive when new is faster."""
    if old <= 0:
        raise UsageError(f"the old time must be positive, got {old}")
    return (old - new) / old * 100.0
