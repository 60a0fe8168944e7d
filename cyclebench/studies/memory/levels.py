"""Cache levels from the change points of a latency curve.

The curve (latency per load against working-set size, log-spaced) is a staircase: a plateau per
level, a rise past each level's capacity. ``segment`` fits a piecewise-constant model to
log(latency) over log(size) by dynamic programming (the optimal partition for each number of
segments, the number chosen by a BIC-like penalty); ``detect`` merges neighbouring segments whose
levels differ by less than ``min_step`` and reports, for each rise, the edge as a range: the last
size still on the lower plateau (within ``tolerance`` of its level) and the first size clearly
above it. The level's size lies in that range. A plateau spanning less than an octave between two
others is a transition (the gradual rise past an edge) and is dropped; at either end it is kept
but flagged as thin. Neighbouring thin plateaus whose segments (rising tails included) together span an octave or more, each within
SLOPE_STEP of the next, and lie at least SEPARATION times above the level before them and below
the one after them, are one sloped level (``sloped``): a cache whose latency climbs across its
range instead of staying flat, as a shared L3 does when the share other cores or tenants leave
this one changes with the working set and with time (seen: 39-54 cycles from 1 to 2.8 MiB on a
Zen 4 guest whose curve had no flat L3 plateau at all).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np


@dataclass
class Level:
    index: int                  # 1 = the first plateau (L1)
    latency: float              # the plateau's median latency (cycles)
    first_size: int             # the plateau's sizes
    last_size: int
    points: int
    edge_hi: int | None = None  # first size clearly above the plateau (None for the last one)
    sloped: bool = False        # thin plateaus joined into one level (module docstring)
    span: tuple[int, int] | None = None   # the segment's sizes before its rising tail was dropped

    @property
    def thin(self) -> bool:
        """Less than an octave of sizes: a transition between levels rather than a level."""
        return self.points < 2 or self.last_size < 2 * self.first_size

    def to_dict(self) -> dict:
        return {**asdict(self), "thin": self.thin}


def segment(y: np.ndarray, max_segments: int = 8, penalty: float | None = None) -> list[tuple[int, int]]:
    """Optimal piecewise-constant segmentation of ``y``: [(start, end_exclusive), ...]."""
    n = len(y)
    if n == 0:
        return []
    c1 = np.concatenate([[0.0], np.cumsum(y)])
    c2 = np.concatenate([[0.0], np.cumsum(y * y)])

    def cost(i, j):                       # squared error of y[i:j] around its mean
        m = j - i
        s = c1[j] - c1[i]
        return (c2[j] - c2[i]) - s * s / m

    kmax = min(max_segments, n)
    best = np.full((kmax + 1, n + 1), np.inf)
    arg = np.zeros((kmax + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, kmax + 1):
        for j in range(k, n + 1):
            vals = [best[k - 1, i] + cost(i, j) for i in range(k - 1, j)]
            i = int(np.argmin(vals))
            best[k, j], arg[k, j] = vals[i], i + k - 1
    noise = np.median(np.abs(np.diff(y))) if n > 2 else 0.0
    sigma2 = max((noise / 1.4) ** 2, 1e-4)
    pen = penalty if penalty is not None else 3.0 * sigma2 * math.log(max(n, 2))
    k_best = min(range(1, kmax + 1), key=lambda k: best[k, n] + k * pen)
    bounds, j = [], n
    for k in range(k_best, 0, -1):
        i = arg[k, j]
        bounds.append((i, j))
        j = i
    return bounds[::-1]


def detect(sizes, latencies, *, min_step: float = 0.25, tolerance: float = 0.15,
           max_segments: int = 8) -> list[Level]:
    """Levels of the curve (sizes ascending, latencies in cycles); see the module docstring."""
    pts = sorted((int(s), float(v)) for s, v in zip(sizes, latencies) if v is not None and v > 0)
    if len(pts) < 2:
        return []
    xs = [p[0] for p in pts]
    raw = np.log([p[1] for p in pts])
    y = _median3(raw)                     # one noisy point is not a level
    segs = segment(y, max_segments)
    merged: list[list[int]] = []          # neighbours closer than min_step are one level
    for i, j in segs:
        lvl = float(np.median(y[i:j]))
        if merged and abs(lvl - float(np.median(y[merged[-1][0]:merged[-1][1]]))) < math.log1p(min_step):
            merged[-1][1] = j
        else:
            merged.append([i, j])
    levels: list[Level] = []
    for i, j in merged:
        lvl = float(np.median(y[i:j]))
        # the plateau proper: the points within tolerance of its level (drops a rising tail)
        on = [k for k in range(i, j) if abs(y[k] - lvl) <= math.log1p(tolerance)] or list(range(i, j))
        levels.append(Level(0, math.exp(float(np.median(raw[on[0]:on[-1] + 1]))), xs[on[0]], xs[on[-1]], len(on),
                            span=(xs[i], xs[j - 1])))
    levels = _join_sloped(levels, xs, raw)
    # transitions (thin plateaus) are not levels, except the last (the largest sizes measured);
    # a plateau no slower than the one before it is noise on that one
    keep: list[Level] = []
    for n, lv in enumerate(levels):
        if lv.thin and n < len(levels) - 1:
            continue
        if keep and lv.latency <= keep[-1].latency * (1 + min_step):
            keep[-1].last_size, keep[-1].points = lv.last_size, keep[-1].points + lv.points
            continue
        keep.append(lv)
    for n, lv in enumerate(keep):
        lv.index = n + 1
    for a, b in zip(keep, keep[1:]):
        k = xs.index(a.last_size)
        a.edge_hi = xs[k + 1] if k + 1 < len(xs) else None
    return keep


SLOPE_STEP = 1.5      # neighbouring thin plateaus of one sloped level are within this factor
SEPARATION = 2.0      # ... and the level is this far from the levels either side of it


def _join_sloped(levels: list[Level], xs: list[int], raw: np.ndarray) -> list[Level]:
    """Runs of interior thin plateaus joined into sloped levels where the module docstring says."""
    out: list[Level] = []
    i = 0
    while i < len(levels):
        lv = levels[i]
        if not (0 < i < len(levels) - 1 and lv.thin):
            out.append(lv)
            i += 1
            continue
        j = i + 1                       # the run of thin plateaus, each within SLOPE_STEP of the last
        while j < len(levels) - 1 and levels[j].thin and levels[j].latency <= levels[j - 1].latency * SLOPE_STEP:
            j += 1
        run = levels[i:j]
        first, last = (run[0].span or (run[0].first_size,))[0], (run[-1].span or (0, run[-1].last_size))[1]
        a, b = xs.index(first), xs.index(last)
        lat = math.exp(float(np.median(raw[a:b + 1])))
        before = next((x for x in reversed(out) if not x.thin), out[-1])
        after = next((x for x in levels[j:] if not x.thin), levels[-1])
        joined = Level(0, lat, first, last, b - a + 1, sloped=True, span=(first, last))
        if not joined.thin and lat >= SEPARATION * before.latency and lat * SEPARATION <= after.latency:
            out.append(joined)
        else:
            out.append(lv)              # the first alone; the rest are looked at afresh
            j = i + 1
        i = j
    return out


def _median3(y: np.ndarray) -> np.ndarray:
    if len(y) < 3:
        return y.copy()
    out = y.copy()
    out[1:-1] = np.median(np.stack([y[:-2], y[1:-1], y[2:]]), axis=0)
    return out


def agrees(level: Level, described: int | None, slack: float = 1.5) -> bool | None:
    """Does a described size fall in the measured edge range (widened by ``slack``)?"""
    if described is None or level.edge_hi is None:
        return None
    return level.last_size / slack <= described <= level.edge_hi * slack
