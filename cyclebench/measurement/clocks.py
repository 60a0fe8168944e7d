"""Clock strategies: how one run's raw readings become core cycles.

One strategy per clock source, each owning its conversion and its label:

- ``PmuCycles``: the PMU's cycles event, read beside the TSC (the ``perf`` backend).
- ``TscCalibrated``: TSC ticks converted with a calibration chain timed in every repetition (a
  dependent register-source ``add``, harness/codegen.py). Why it is trusted: an add with register
  sources has a latency of exactly one cycle on every x86-64 core uops.info lists, Intel and AMD,
  big and small. Where that broke before: the chain was ``add rax, 1``, and Golden Cove executes
  small-immediate adds in the renamer, about six per cycle, so every figure read five times too
  high. A future core may have new tricks, so each run checks its own clock twice: an imul chain
  timed beside the calibration must cost an imul latency (CHECK_RANGE) in calibrated cycles, and
  the calibrated clock must not exceed the highest clock the CPU reports (or CEILING_MHZ). A
  calibration that fails either check raises ``CalibrationFailed`` (exit 13), never a figure.
- ``FixedClock``: TSC ticks at a core clock the user states (``CYCLEBENCH_CLOCK_MHZ``, as
  uarch-bench's ``UARCH_BENCH_CLOCK_MHZ``): for a machine whose core clock is pinned, or a core
  this calibration cannot serve. No calibration runs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import CalibrationFailed, CounterUnavailable, UsageError
from ..harness.codegen import CALIB_UNROLL, CHECK_UNROLL
from ..machine.frequency import CEILING_MHZ, max_core_mhz
from . import stats

CALIB_LOOP = 100              # x CALIB_UNROLL = 1e5 dependent adds per calibration difference
CALIB_OUTLIER = 0.03          # a repetition's calibration this far from the run's median is dropped
# The imul chain's cost in calibrated cycles: IMUL r64, r64 has latency 3 on every big core and
# up to 5 on small ones (uops.info). A calibration chain running two adds per cycle reads 6 or more.
CHECK_RANGE = (2.5, 5.5)
MAX_CLOCK_MARGIN = 1.10       # a calibrated clock this far above the CPU's reported maximum fails
MIN_CLOCK_MHZ = 200.0         # below any x86-64 core's clock: a TSC that does not tick at its rate
CLOCK_ENV = "CYCLEBENCH_CLOCK_MHZ"


class CalibrationInterrupted(CounterUnavailable):
    """Most calibration differences of one run were not positive: preempted, or a broken TSC."""


class CalibrationSuspect(Exception):
    """One run's calibration failed its check; ``final`` is the error if every retry fails too
    (a burst can spoil one run's check, a core that folds the chain spoils all of them)."""

    def __init__(self, final: CalibrationFailed):
        super().__init__(final.cause)
        self.final = final


@dataclass
class Conversion:
    """One run in core cycles: per kept repetition, per copy (``cycles``) and gross per run."""
    cycles: list[float]
    gross_a: list[float]
    gross_b: list[float]
    kept: list[int]
    ghz: float
    step: int
    quantum: float
    label: str
    ghz_per_rep: list[float] | None = None
    contention: list[float] = field(default_factory=list)
    raw: dict = field(default_factory=dict)


class Clock:
    name = "clock"
    calibrated = False        # the harness runs the calibration, its check and the gauge

    def convert(self, out, ticks: list[int], norm: int, tsc_hz: float) -> Conversion:
        raise NotImplementedError


class PmuCycles(Clock):
    name = "pmu"

    def convert(self, out, ticks, norm, tsc_hz):
        a, b = out.samples["a"], out.samples["b"]
        ghz = stats.median((bb[1] - aa[1]) / t * tsc_hz / 1e9 for aa, bb, t in zip(a, b, ticks) if t) \
            if any(ticks) else 0.0
        return Conversion([(bb[1] - aa[1]) / norm for aa, bb in zip(a, b)], [aa[1] for aa in a],
                          [bb[1] for bb in b], list(range(len(a))), ghz, 1, 1 / norm, "")


class FixedClock(Clock):
    name = "fixed"

    def __init__(self, mhz: float, source: str):
        self.mhz, self.source = mhz, source

    def convert(self, out, ticks, norm, tsc_hz):
        a, b = out.samples["a"], out.samples["b"]
        cpt = self.mhz * 1e6 / tsc_hz
        step = stats.tick_step(ticks)
        return Conversion([t * cpt / norm for t in ticks], [x[0] * cpt for x in a], [y[0] * cpt for y in b],
                          list(range(len(a))), self.mhz / 1000, step, step * cpt / norm,
                          f"cycles (fixed clock {self.mhz:g} MHz from {self.source})")


class TscCalibrated(Clock):
    name = "tsc"
    calibrated = True

    def __init__(self, max_mhz: tuple[float, str] | None = None):
        self.max_mhz = max_mhz

    def convert(self, out, ticks, norm, tsc_hz):
        a, b = out.samples["a"], out.samples["b"]
        ca, cb = out.samples["ca"], out.samples["cb"]
        adds = CALIB_UNROLL * CALIB_LOOP
        cal = [y[0] - x[0] for x, y in zip(ca, cb)]
        # B runs 1e5 more adds than A in every repetition. A preempted calibration A can make one
        # difference zero or negative: an outlier, dropped below. Only when more than half are does
        # the TSC itself look unusable (with 2 repetitions, one outlier would decide the median).
        if sum(c > 0 for c in cal) < len(cal) / 2:
            raise CalibrationInterrupted(f"the calibration chain took {stats.median(cal):.0f} TSC ticks",
                                         "the TSC is not usable here (not constant, or not synchronised); "
                                         "check /proc/cpuinfo for constant_tsc")
        cpt = [adds / c if c > 0 else 0.0 for c in cal]                # core cycles per TSC tick
        # A repetition whose calibration was interrupted gets a wrong cycles-per-tick figure;
        # its cycles are left out (min/max/range would show it), the drift check still sees it.
        med_cpt = stats.median([c for c in cpt if c > 0])
        keep = [i for i, c in enumerate(cpt) if abs(c / med_cpt - 1) <= CALIB_OUTLIER]
        if len(keep) < len(cpt) / 2:
            # the clock moved too much to tell outliers (the drift check flags the run); a
            # non-positive calibration is still no clock at all: it would read as zero cycles
            keep = [i for i, c in enumerate(cpt) if c > 0]
        ghz_per_rep = [tsc_hz * c / 1e9 for c in cpt]
        ghz = stats.median(ghz_per_rep)
        ka, kb = out.samples.get("ka", []), out.samples.get("kb", [])
        ratio = self._check(ka, kb, cal, keep, ghz)
        pa, pb = out.samples.get("pa", []), out.samples.get("pb", [])
        contention = [(pb[i][0] - pa[i][0]) / cal[i] for i in keep if i < len(pa) and i < len(pb)]
        step = stats.tick_step(ticks + cal)
        return Conversion(
            [ticks[i] * cpt[i] / norm for i in keep], [a[i][0] * cpt[i] for i in keep],
            [b[i][0] * cpt[i] for i in keep], keep, ghz, step, step * stats.median(cpt) / norm,
            f"cycles (TSC-calibrated, {ghz:.2f} GHz)", ghz_per_rep, contention,
            {"ca": ca, "cb": cb, "ka": ka, "kb": kb, "pa": pa, "pb": pb, "check_ratio": ratio,
             "calibration_outliers": [i for i in range(len(cpt)) if i not in keep]})

    def _check(self, ka, kb, cal, keep, ghz) -> float | None:
        """The calibration's two checks; returns the imul chain's cost in calibrated cycles."""
        ratios = [(kb[i][0] - ka[i][0]) / CHECK_UNROLL / (cal[i] / CALIB_UNROLL)
                  for i in keep if i < len(ka) and i < len(kb) and cal[i] > 0]
        ratio = stats.median(ratios) if ratios else None
        hint = (f"set {CLOCK_ENV} to this core's clock in MHz to convert TSC ticks at a fixed clock, "
                "or count with a PMU (--counters perf)")
        # A folded chain puts every repetition out of range; an interrupted calibration puts one
        # out (seen: the first of two repetitions in a routine timing, its chain 2.5x slow).
        outside = [r for r in ratios if not CHECK_RANGE[0] <= r <= CHECK_RANGE[1]]
        if ratios and len(outside) > len(ratios) / 2:
            raise CalibrationSuspect(CalibrationFailed(
                f"the clock calibration failed its check: a dependent imul chain cost {stats.median(outside):.2f} "
                f"calibrated cycles per imul in {len(outside)} of {len(ratios)} repetitions, where every known core "
                f"takes {CHECK_RANGE[0]:g}-{CHECK_RANGE[1]:g}; this core runs the calibration's add chain faster "
                "or slower than one add per cycle", hint))
        limit, source = self.max_mhz or (CEILING_MHZ, "the highest clock any x86 core has shipped with")
        if ghz * 1000 > limit * MAX_CLOCK_MARGIN or ghz * 1000 < MIN_CLOCK_MHZ:
            raise CalibrationSuspect(CalibrationFailed(
                f"the clock calibration failed its check: it reads a {ghz:.2f} GHz core clock, against "
                f"{limit / 1000:.2f} GHz ({source})", hint))
        return ratio


def clock_for(backend_name: str, clock_mhz: float | None = None) -> Clock:
    """The clock strategy for a counter backend: the PMU's cycles, or the TSC at a stated clock
    (``clock_mhz``, else $CYCLEBENCH_CLOCK_MHZ), or the TSC calibrated."""
    if backend_name == "perf":
        return PmuCycles()
    if clock_mhz is not None:
        return FixedClock(float(clock_mhz), "--clock-mhz")
    env = os.environ.get(CLOCK_ENV)
    if env:
        try:
            mhz = float(env)
        except ValueError:
            mhz = float("nan")
        if not MIN_CLOCK_MHZ <= mhz <= CEILING_MHZ:
            raise UsageError(f"{CLOCK_ENV}={env!r} is not a core clock in MHz",
                             f"give a number from {MIN_CLOCK_MHZ:g} to {CEILING_MHZ:g}, e.g. {CLOCK_ENV}=4100, or unset it")
        return FixedClock(mhz, CLOCK_ENV)
    return TscCalibrated(max_core_mhz())
