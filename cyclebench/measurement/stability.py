"""Noise-burst detection: spread within a run, calibration drift between repetitions, a clock
below this machine's recent clock, and a busy SMT sibling seen by the contention gauge; the
leading repetitions that were still warming up (``warming_up``); a figure whose cost varies
by nature (``assess(..., variable_ok=True)``), reported as a distribution instead of "unstable";
and code whose repetitions read two crisp levels (``two_modes``).

"Spread" means one thing across the package: the interquartile range over the median."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import stats
from .stats import quartiles, spread_over

MAX_REL_SPREAD = 0.02        # relative IQR of the per-repetition values
MIN_ABS_SPREAD = 0.01        # cycles: below this a spread is quantisation, not noise...
MAX_ANY_SPREAD = 1.0         # ...unless it exceeds the figure itself: then it is never stable
MAX_CLOCK_DROP = 0.015       # below this machine's recent calibrated clock: a burst for the whole run
MAX_CALIB_DRIFT = 0.02       # relative 10th-90th percentile range of the calibrated clock
MAX_CONTENTION_RISE = 0.02   # the contention gauge, relative to the chain, above this machine's recent best
# A lone repetition whose calibration was interrupted is an outlier that the trimmed aggregate
# drops; a burst (another tenant on our core's SMT sibling) moves many repetitions at once.
MIN_CLEAN_SHARE = 0.25       # a run keeps its clean repetitions if at least this share of them is clean
# A run whose first repetitions are each slower than the rest, which then agree, was still
# warming up (a branch predictor learning a replayed input, caches filling): the settled rest,
# at least this share of the run, gives the figure.
MIN_SETTLED_SHARE = 0.5
MIN_SETTLED = 5
# A cost that varies by nature (a walk through memory beyond L1: cache and TLB state, prefetch,
# page placement) is a distribution, not noise: with clean host gauges in three or more processes,
# its median is reported with a 95% interval that covers the processes' medians, and stands when
# that interval is within this share of the median. Three, not two: two processes that agree by
# chance (within 0.8%, Student's t) name one process's placement, not the median over processes.
MAX_VARIABLE_UNCERTAINTY = 0.05
MIN_VARIABLE_RUNS = 3
# Two modes: the quiet repetitions fall into two tight levels, stretch by stretch (Zen 4: two-source
# shuffles 0.33 or 0.45 cycle each, three loads from three lines 1.00 or 1.36, the level changing
# more often after an interrupted repetition, never with the code's placement; docs/methods.md). Each level is a
# MIN_MODE_SHARE of them at least, spreads no more than MAX_REL_SPREAD, and the two are
# MIN_MODE_GAP apart with at most MAX_MODE_BETWEEN of the repetitions in between: a burst or a
# drift spreads repetitions out, a mode does not.
MIN_MODE_SHARE = 0.1
MIN_MODE_REPS = 3
MIN_MODE_GAP = 0.05
MAX_MODE_BETWEEN = 0.1


def clean(ghz: list[float], contention: list[float], reference_ghz: float | None,
          reference_contention: float | None, fallback: bool = True) -> list[int]:
    """Positions of the repetitions no noise burst touched, by the two gauges each repetition
    carries: its calibrated clock (a burst lowers it) and its contention gauge (a busy SMT sibling
    raises it). Noise on a shared host only ever adds time, and both gauges are measured apart
    from the code, so keeping the clean repetitions selects quiet moments, not low figures. The
    references are this machine's recent best, or the run's own best repetition when there is
    no history yet. With ``fallback``, all positions when fewer than MIN_CLEAN_SHARE are clean:
    the run-level checks (assess) then flag the run, and it is measured again."""
    if not ghz:
        return []
    top = reference_ghz or max(ghz)
    floor = reference_contention or (min(contention) if contention else None)
    ok = [i for i, g in enumerate(ghz)
          if g >= top * (1 - MAX_CLOCK_DROP)
          and (floor is None or i >= len(contention) or contention[i] <= floor * (1 + MAX_CONTENTION_RISE))]
    return ok if not fallback or len(ok) >= max(2, MIN_CLEAN_SHARE * len(ghz)) else list(range(len(ghz)))


@dataclass
class Stability:
    """Whether a run's figure is settled, and why not."""
    stable: bool
    spread: float | None             # relative IQR of the main figure (None: the median is 0)
    calibration_drift: float | None  # relative P10-P90 range of the calibrated GHz (TSC backend)
    reasons: list[str] = field(default_factory=list)
    # the figure is not distinguishable from zero: its relative spread means nothing, and the
    # result is an upper bound (EventResult.upper_bound), neither a stable nor an unstable figure
    below_resolution: bool = False
    # the repetitions vary by nature beyond MAX_REL_SPREAD with clean host gauges (variable_ok):
    # the figure is their median, ``range`` their 10th-90th percentile
    variable: bool = False
    range: tuple[float, float] | None = None
    # steady in itself, flagged only for a clock below this machine's history (clock_history:
    # such runs, held long enough at one level, show that the host's clock has moved)
    only_low_clock: bool = False

    def to_dict(self) -> dict:
        return {"stable": self.stable, "spread": self.spread, "below_resolution": self.below_resolution,
                "calibration_drift": self.calibration_drift, "reasons": self.reasons,
                "variable": self.variable, "range": list(self.range) if self.range else None}


def _spread(values: list[float]) -> tuple[float, str | None]:
    """(relative spread, the reason it is too wide or None)."""
    q1, q3 = quartiles(values)
    rel = spread_over(q3 - q1, stats.median(values))
    if not math.isfinite(rel):
        return rel, "repetitions spread around a median of zero (or a figure that is not a number)"
    if rel > MAX_ANY_SPREAD or (rel > MAX_REL_SPREAD and q3 - q1 > MIN_ABS_SPREAD):
        return rel, f"repetitions spread {rel:.1%} (interquartile range / median)"
    return rel, None


def warming_up(values: list[float]) -> int:
    """How many leading repetitions (in the order they ran) were still warming up: the fewest k
    such that the rest, at least MIN_SETTLED_SHARE of the run, pass the spread check and each of
    the first k is slower than every settled one but the slowest quarter (above their upper
    quartile). 0 when the run has no such head. Warm-up and noise only ever add time, so
    leaving a slower head out selects the settled cost, never a low figure."""
    n = len(values)
    need = max(MIN_SETTLED, math.ceil(MIN_SETTLED_SHARE * n))
    if n <= need or _spread(values)[1] is None:
        return 0
    for k in range(1, n - need + 1):
        tail = values[k:]
        if _spread(tail)[1] is None:
            top = quartiles(tail)[1]
            return k if all(v > top for v in values[:k]) else 0
    return 0


def still_falling(values: list[float]) -> bool:
    """The repetitions are still getting faster at the end of the run: every one of the last
    third is below every one of the first third (a predictor still learning the input; by chance
    one order in C(2t, t), 1 in 252 for thirds of five). More repetitions, not another run of the
    same length, settle it."""
    third = len(values) // 3
    return third >= 3 and max(values[-third:]) < min(values[:third])


def assess(values: list[float], ghz: list[float] | None = None,
           reference_ghz: float | None = None, contention: float | None = None,
           reference_contention: float | None = None, below_resolution: bool = False,
           variable_ok: bool = False, runs: int = 1, uncertainty: float | None = None,
           asked: int | None = None, unpaired: str | None = None) -> Stability:
    """``below_resolution``: the figure is within its resolution of zero (stats.upper_bound); the
    host checks still apply, the spread check does not.

    ``variable_ok``: the caller measures a cost that varies by nature. Repetitions of ``runs``
    processes that spread beyond MAX_REL_SPREAD, with no host check failing, then make a variable
    figure (``variable``, stable) when ``runs`` >= MIN_VARIABLE_RUNS and the figure's 95%
    ``uncertainty`` (covering the processes' medians) is within MAX_VARIABLE_UNCERTAINTY of the
    median; otherwise the spread flags the run as always.

    ``asked``: how many repetitions ran, when interrupted ones were left out before ``values``.
    Fewer than two left of more is no figure: one repetition shows no spread (an interrupted
    one kept alone read 2.39 cycles for a 1-cycle chain, stable by a spread of zero).

    ``unpaired``: the reason most repetitions' A and B ran at different speeds per copy
    (evaluate._pair): their B - A values are no costs, however tight."""
    med = stats.median(values)
    rel, spread = _spread(values)
    if below_resolution:
        spread = None
    reasons = []
    if spread:
        reasons.append(spread)
    if unpaired:
        reasons.append(unpaired)
    if asked and asked > 1 and len(values) < 2:
        reasons.append(f"{asked - len(values)} of {asked} repetitions were interrupted and left out: "
                       "one repetition shows no spread to judge the figure by")
    drift = None
    low_clock = None
    # the gauge against its recent best: None where either is missing
    busy = (contention > reference_contention * (1 + MAX_CONTENTION_RISE)
            if contention and reference_contention else None)
    if ghz:
        gmed = stats.median(ghz)
        dec = stats.quantiles(ghz, [i / 10 for i in range(1, 10)]) if len(ghz) > 1 else [gmed] * 9
        drift = (dec[8] - dec[0]) / gmed if gmed else 0.0
        if drift > MAX_CALIB_DRIFT:
            reasons.append(f"calibrated clock drifted {drift:.1%} between repetitions "
                           f"(10th-90th percentile {dec[0]:.2f}-{dec[8]:.2f} GHz)")
        # a clock below the history with the gauge at its recent best is the host's clock, not a
        # burst: a burst slows throughput-bound code more than the chain, and the gauge sees it
        # (Zen 3 guest: unpinned runs all read 3-8% below a 3.24 GHz history while six
        # independent imuls read 5.98-6.006 cycles, stable, at 2.95-3.14 GHz)
        if reference_ghz and gmed < reference_ghz * (1 - MAX_CLOCK_DROP) and busy is not False:
            low_clock = (f"calibrated clock {gmed:.2f} GHz is {1 - gmed / reference_ghz:.1%} below this "
                         f"machine's recent {reference_ghz:.2f} GHz (a noise burst for the whole run)")
            reasons.append(low_clock)
    # A busy SMT sibling slows throughput-bound code (and the wide gauge) but hardly the chain the
    # clock is calibrated on: the gauge's cost relative to the chain shows it (harness/codegen.py).
    if busy:
        reasons.append(f"the contention gauge (4 independent add chains) ran {contention / reference_contention - 1:.1%} "
                       "slower relative to the calibration chain than this machine's recent best: another "
                       "thread shares the core (a busy SMT sibling on the host), so throughput-bound code is slowed")
    variable = False
    if reasons == [spread] and spread and variable_ok and runs >= MIN_VARIABLE_RUNS and math.isfinite(rel) \
            and uncertainty is not None and med and uncertainty <= MAX_VARIABLE_UNCERTAINTY * abs(med):
        reasons, variable = [], True
    rng = None
    if variable:
        p10, p90 = stats.quantiles(values, (0.1, 0.9))
        rng = (p10, p90)
    return Stability(not reasons, rel if math.isfinite(rel) else None, drift, reasons, below_resolution,
                     variable, rng, only_low_clock=bool(low_clock) and reasons == [low_clock])


def two_modes(values: list[float]) -> tuple[float, float, float] | None:
    """(faster level, slower level, share of the faster) when ``values`` (the quiet repetitions
    of one or more runs of the same code, per copy) read two modes, else None."""
    v = sorted(x for x in values if math.isfinite(x) and x > 0)
    n = len(v)
    m = max(MIN_MODE_REPS, math.ceil(MIN_MODE_SHARE * n))
    if n < 2 * m:
        return None
    k = max(range(m, n - m + 1), key=lambda i: v[i] / v[i - 1])     # the widest gap
    lo, hi = _level(v[:k]), _level(v[k:])
    if lo is None or hi is None or hi < lo * (1 + MIN_MODE_GAP):
        return None
    band = (lo * (1 + MAX_REL_SPREAD), hi * (1 - MAX_REL_SPREAD))
    near_lo = sum(abs(x - lo) <= lo * MAX_REL_SPREAD for x in v)
    near_hi = sum(abs(x - hi) <= hi * MAX_REL_SPREAD for x in v)
    between = sum(band[0] < x < band[1] for x in v)
    if min(near_lo, near_hi) < m or between > MAX_MODE_BETWEEN * n:
        return None
    return lo, hi, near_lo / (near_lo + near_hi)


def _level(values: list[float]) -> float | None:
    """The level of one side of the split: its densest half's median, when that half is tight
    (a stray outlier on the side does not widen the level)."""
    h = max(2, (len(values) + 1) // 2)
    i = min(range(len(values) - h + 1), key=lambda j: values[j + h - 1] - values[j])
    med = stats.median(values[i:i + h])
    return med if med > 0 and values[i + h - 1] - values[i] <= MAX_REL_SPREAD * med else None
