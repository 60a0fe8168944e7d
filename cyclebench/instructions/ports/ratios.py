"""The ratios a mix of two forms is measured in: a form against a blocker (two ratios, the
blocker's stream about as long as the form's and twice that), two slow forms paired, and the
small-integer reading of a time that makes a form a blocker candidate (infer.py, steps 2-6)."""
from __future__ import annotations

import math
from fractions import Fraction

MAX_UNITS = 4              # blockers: throughput 1/k with k <= this
INTEGRAL = 0.05            # |k t - 1| within this: t is 1/k
MAX_TOTAL = 48             # instances in one mix unit
MAX_PAIR = 8               # instances per form in a slow pair


def pair(a: str, ta: float, b: str, tb: float) -> dict[str, int]:
    """The quadratic pair of two slow forms: counts whose streams take as nearly the same time
    alone as small counts allow."""
    best = min(((abs(na * ta - nb * tb) / max(na * ta, nb * tb), na + nb, na, nb)
                for na in range(1, MAX_PAIR + 1) for nb in range(1, MAX_PAIR + 1)))
    return {a: best[2], b: best[3]}


def units(t: float) -> int | None:
    """k when ``t`` is 1/k cycles for k <= MAX_UNITS, else None."""
    k = round(1 / t) if t > 0 else 0
    return k if 1 <= k <= MAX_UNITS and abs(k * t - 1) <= INTEGRAL else None


def _on_grid(x: float) -> float:
    """``x`` as the nearest fraction of denominator at most 12 where it is within 2% of one
    (a time on the port grid, read a little off), else ``x``: a re-measure then draws the same
    ratios (a form read at 0.2501 and at 0.2499 cycles beside a 0.1667 blocker drew 1 + 2 and
    1 + 1 instances, half a ratio rounding either way)."""
    f = Fraction(x).limit_denominator(12)
    return float(f) if f and abs(float(f) - x) <= 0.02 * x else x


def ratios(form: str, t: float, blocker: str, tb: float) -> list[dict[str, int]]:
    """Two mixes of ``form`` and ``blocker``: the blocker's stream about as long as the form's,
    and twice that (both within MAX_TOTAL instances); halves round up, from times on the grid."""
    out = []
    t, tb = _on_grid(t), _on_grid(tb)
    for scale in (1, 2):
        if t >= tb:
            nf, nb = 1, max(1, math.floor(scale * t / tb + 0.5))
        else:
            nf, nb = max(1, math.floor(tb / t / scale + 0.5)), 1
            if scale == 2 and nf == 1:
                nb = 2
        if nf + nb <= MAX_TOTAL and {form: nf, blocker: nb} not in out:
            out.append({form: nf, blocker: nb})
    return out
