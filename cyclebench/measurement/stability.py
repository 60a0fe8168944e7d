"""Noise-burst detection: spread within a run, calibration drift between repetitions, a clock
below this machine's recent clock, and a busy SMT sibling seen by the contention probe."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from .stats import quartiles

MAX_REL_SPREAD = 0.02        # relative IQR of the per-repetition values
MIN_ABS_SPREAD = 0.01        # cycles: below this a spread is quantisation, not noise
MAX_CLOCK_DROP = 0.015       # below this machine's recent calibrated clock: a burst for the whole run
MAX_CALIB_DRIFT = 0.02       # relative 10th-90th percentile range of the calibrated clock
MAX_CONTENTION_RISE = 0.02   # the contention probe, relative to the chain, above this machine's recent best
# A lone repetition whose calibration was interrupted is an outlier that the trimmed aggregate
# drops; a burst (another tenant on our core's SMT sibling) moves many repetitions at once.


@dataclass
class Stability:
    stable: bool
    spread: float                    # relative IQR of the main figure
    calibration_drift: float | None  # relative P10-P90 range of the calibrated GHz (TSC backend)
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"stable": self.stable, "spread": self.spread,
                "calibration_drift": self.calibration_drift, "reasons": self.reasons}


def assess(values: list[float], ghz: list[float] | None = None,
           reference_ghz: float | None = None, contention: float | None = None,
           reference_contention: float | None = None) -> Stability:
    med = statistics.median(values)
    q1, q3 = quartiles(values)
    iqr = q3 - q1
    rel = iqr / abs(med) if med else (0.0 if iqr == 0 else float("inf"))
    reasons = []
    if rel > MAX_REL_SPREAD and iqr > MIN_ABS_SPREAD:
        reasons.append(f"repetitions spread {rel:.1%} (interquartile range / median)")
    drift = None
    if ghz:
        gmed = statistics.median(ghz)
        dec = statistics.quantiles(ghz, n=10, method="inclusive") if len(ghz) > 1 else [gmed] * 9
        drift = (dec[8] - dec[0]) / gmed if gmed else 0.0
        if drift > MAX_CALIB_DRIFT:
            reasons.append(f"calibrated clock drifted {drift:.1%} between repetitions "
                           f"(10th-90th percentile {dec[0]:.2f}-{dec[8]:.2f} GHz)")
        if reference_ghz and gmed < reference_ghz * (1 - MAX_CLOCK_DROP):
            reasons.append(f"calibrated clock {gmed:.2f} GHz is {1 - gmed / reference_ghz:.1%} below this "
                           f"machine's recent {reference_ghz:.2f} GHz (a noise burst for the whole run)")
    # A busy SMT sibling slows throughput-bound code (and the wide probe) but hardly the chain the
    # clock is calibrated on: the probe's cost relative to the chain shows it (harness/codegen.py).
    if contention and reference_contention and contention > reference_contention * (1 + MAX_CONTENTION_RISE):
        reasons.append(f"the contention probe (4 independent add chains) ran {contention / reference_contention - 1:.1%} "
                       "slower relative to the calibration chain than this machine's recent best: another "
                       "thread shares the core (a busy SMT sibling on the host), so throughput-bound code is slowed")
    return Stability(not reasons, rel, drift, reasons)
