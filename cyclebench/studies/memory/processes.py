"""A figure that varies between processes, stated as such.

On a shared host the cost of a chase beyond L2 (or a DRAM pass) differs from one runner process to
the next: each process gets its own physical pages and its own share of a shared L3, and no gauge
of ours sees either (a 64 MiB lmbench-layout chase: one process's median 109-462 cycles a load).
Re-running such a measurement until one process happens to agree with itself states one
placement; flagging it unstable forever states nothing. ``settle`` instead collects process
figures (each one process's own median, or its best) until their median is known to within
MAX_BETWEEN at 95% (stats.median_interval: order statistics, no assumption of one mode or of
normality, and a process that a burst spoiled moves it by one rank at most), and states "varies
between processes: median, its 95% interval, the range over n processes". Processes that a noise
burst slowed as a whole (their calibrated clock more than CLOCK_DROP below the fastest
process's, or this machine's recent clock) are left out: noise only adds time, and the clock is measured apart from the
code, so this selects quiet processes, not low figures. A median whose interval stays wider than
MAX_BETWEEN after the time allowed is still flagged unstable, with the processes it saw.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from cyclebench.measurement import stats

# a process's clock is the median of its repetitions' calibrations, which a burst in a few of
# them hardly moves; a burst over the whole process lowers it 2.5-7% (3.44-3.6 GHz against 3.69 on
# a Zen 4 guest), so twice a repetition's threshold (stability.MAX_CLOCK_DROP, 1.5%)
CLOCK_DROP = 0.03
MIN_PROCESSES = 6        # the fewest whose range covers the median at 95% (stats.median_interval)
# settled when the median's 95% interval reaches no further than this share from it: a coarse
# figure, for costs whose processes range over a factor of two or more (lmbench 64 MiB: 109-462)
MAX_BETWEEN = 0.20


@dataclass(frozen=True)
class Process:
    """One runner process's figure (cycles per copy, or ns for a best) and its host gauges."""
    value: float
    ghz: float | None = None
    contention: float | None = None


@dataclass(frozen=True)
class Between:
    n: int                    # processes kept
    seen: int                 # processes measured
    median: float             # the median of the kept processes' figures
    ci: tuple[float, float] | None   # its 95% confidence interval (None: too few processes)
    lo: float                 # the range of the kept processes' figures
    hi: float
    values: tuple[float, ...] = ()
    ghz: tuple[float | None, ...] = ()    # every measured process's clock, kept or not

    @property
    def half(self) -> float:
        """The interval's larger reach from the median (infinite without an interval)."""
        return max(self.median - self.ci[0], self.ci[1] - self.median) if self.ci else math.inf

    @property
    def settled(self) -> bool:
        return self.n >= MIN_PROCESSES and self.median > 0 and self.half <= MAX_BETWEEN * self.median

    def to_dict(self) -> dict:
        return {"processes": self.n, "measured": self.seen, "median": self.median,
                "interval": list(self.ci) if self.ci else None, "half_width": self.half if self.ci else None,
                "range": [self.lo, self.hi], "settled": self.settled, "values": list(self.values),
                "ghz": list(self.ghz)}


def quiet(procs: list[Process], reference_ghz: float | None = None) -> list[Process]:
    """The processes no burst slowed as a whole: calibrated clock within CLOCK_DROP of the
    fastest one's or of ``reference_ghz`` (this machine's recent clock), whichever is higher (all
    of them when none carries a clock)."""
    top = max([p.ghz for p in procs if p.ghz] + ([reference_ghz] if reference_ghz else []), default=None)
    if top is None:
        return list(procs)
    return [p for p in procs if p.ghz and p.ghz >= top * (1 - CLOCK_DROP)]


def between(procs: list[Process], reference_ghz: float | None = None) -> Between | None:
    """The statement over the quiet processes, or None when none is left."""
    kept = [p.value for p in quiet(procs, reference_ghz) if p.value is not None and math.isfinite(p.value)
            and p.value > 0]
    if not kept:
        return None
    return Between(len(kept), len(procs), stats.median(kept), stats.median_interval(kept), min(kept), max(kept),
                   tuple(kept), tuple(p.ghz for p in procs))


def settle(procs: list[Process], more, seconds: float, max_processes: int,
           reference_ghz: float | None = None) -> list[Process]:
    """``procs`` and the processes ``more()`` adds (a list of further Processes, one measure call
    each), until their statement (``between``) is settled, ``seconds`` have passed or
    ``max_processes`` were measured, or it is out of reach: an interval that shrinks as one over
    the square root of the processes would need more than ``max_processes`` to settle (a figure
    that falls into two modes far apart, as a working set at the edge of a shared L3 does), so the
    time goes where it settles something."""
    t0 = time.monotonic()
    while True:
        b = between(procs, reference_ghz)
        if (b is not None and b.settled) or len(procs) >= max_processes or time.monotonic() - t0 > seconds:
            return procs
        if b is not None and b.ci is not None and b.n * (b.half / (MAX_BETWEEN * b.median)) ** 2 > max_processes:
            return procs
        got = more()
        if not got:
            return procs
        procs = procs + got


def of_result(r) -> list[Process]:
    """The processes of one ``measure`` result: each attempt is one runner process (its figure is
    its own aggregate); a final pooled attempt (several processes' quiet repetitions together,
    evaluate.pool) is not a process of its own and is left out."""
    att = list(r.attempts)
    if r.stability.get("pooled") and att:
        att = att[:-1]
    return [Process(a["cycles"], a.get("calibrated_ghz"), a.get("contention_probe")) for a in att
            if a.get("cycles") is not None]


def statement(b: Between, unit: str, digits: int = 4) -> str:
    """The warning a varying figure carries: what was stated, and over how many processes."""
    ci = f"95% interval {b.ci[0]:.{digits}g}-{b.ci[1]:.{digits}g}" if b.ci else "too few processes for an interval"
    left = "" if b.n == b.seen else f", {b.seen - b.n} slowed by a burst left out"
    return (f"varies between processes: median {b.median:.{digits}g} {unit} over {b.n} processes' own figures "
            f"({ci}{left}), processes {b.lo:.{digits}g}-{b.hi:.{digits}g} (page placement and the share of a "
            "shared cache differ between processes)")
