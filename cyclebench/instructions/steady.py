"""The fastest steady state among one measurement's repetitions.

Some copies run in more than one steady state, and each repetition (a fresh start of the unrolled
loop) settles in one of them: on Zen 4, ``vcvttpd2dq xmm1, ymm2`` repeated (one instruction, no
copies, no breakers; two µops over three FP pipes) reads exactly 0.667 cycles a copy in some
repetitions and 0.851 in the others, in streaks, whatever the code's placement, the address-space
layout or the operand values; the slow state holds most repetitions, so the 20-80% mean reads 0.85.  uops.info keeps the least over a dozen runs of several layouts
and counts, and publishes 0.67.  A repetition straddling a change of state reads a mixture, which
lies above the fast state (measured: 0.78 to 1.04 beside 0.667 and 0.851), and a disturbance reads
alone, so a state that several repetitions agree on closely is one the core really holds.
"""
from __future__ import annotations

from ..measurement.stats import median

STATE_REPS = 3          # repetitions that must agree on a state
STATE_TOL = 0.005       # ... within this fraction of its value
STATE_SHARE = 0.05      # ... and at least this share of them: pooled over runner processes, a few
                        # disturbances among a hundred repetitions can fall close together
MIN_SAMPLES = 10        # fewer repetitions do not show states


def fastest_state(samples: list[float], value: float, gain: float) -> tuple[float, int, float] | None:
    """(value, repetitions in it, half its spread) of the fastest state that at least STATE_REPS
    of ``samples`` (and STATE_SHARE of them) agree on within STATE_TOL, when it is faster than ``value`` by more than the
    fraction ``gain``; else None."""
    if len(samples) < MIN_SAMPLES or value is None or value <= 0:
        return None
    s = sorted(x for x in samples if x > 0)
    need = max(STATE_REPS, STATE_SHARE * len(samples))
    for i, low in enumerate(s):
        group = [x for x in s[i:] if x <= low * (1 + STATE_TOL)]
        if len(group) >= need:
            v = median(group)
            return (v, len(group), (group[-1] - group[0]) / 2) if v < value * (1 - gain) else None
    return None
