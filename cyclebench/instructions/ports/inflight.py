"""How many instructions can wait in flight for their inputs, measured: the simulation's scheduler.

An instruction that has entered the core but not started waits in a scheduler, and the
schedulers are smaller than the reorder buffer: once they hold as many waiting instructions as
they can, the front end stops, however many instructions the reorder buffer could still take.  A
block whose iteration holds a long dependent path that no loop-carried chain bounds (the next
iteration needs none of it) then runs slower than both bounds: the iterations overlap only as far
as their waiting instructions fit.  Zen 4: a gcc -O2 block of 22 scalar ``movss``/``mulss``/
``addss``/``divss``, a 6-cycle loop-carried chain, 7.2 cycles of resources and a 50-cycle path in
each iteration runs 8.2-8.3 cycles an iteration; simulated with no such limit, 6.5.

:func:`probe` measures the capacity: two independent chains of :data:`CHAIN` dependent divides,
each followed by N instructions that wait for its result (``pshufd``, which needs no other input
and writes its whole destination).  While the waiters fit, the second chain enters beside the
first and an iteration takes about one chain's time; from some N on it cannot enter until the
first chain's waiters leave, and the time jumps towards two chains' (Zen 4: 8 ``divsd``, 105
cycles an iteration at N = 4, 113 at 34, 155 at 54, 198 at 55, 234 at 64).  The probe finds the least N whose time is
:data:`KNEE` times the smallest N's, by bisection; the simulation, holding ``w`` waiting
instructions, makes that jump at N = w - 2 (:func:`waiting`, checked on the simulation itself),
so the capacity is N + 2.  The figure is a results-file record of ``cyclebench ports``
(:func:`record`), as upper.py keeps its factor; without one the simulation has no such limit.
"""
from __future__ import annotations

RECORD = "inflight"   # the results-file record of cyclebench ports that holds the probe's figure
CHAIN = 8             # dependent divides a chain: about 100 cycles on x86 cores of the last decade
KNEE = 1.5            # half a chain's time more: the second chain no longer enters beside the first
SMALLEST, LARGEST = 4, 124


def block(n: int) -> list[str]:
    """The probe's code for ``n`` waiters a chain (xmm7 holds 1.0: each divide keeps its value)."""
    return ([f"divsd xmm0, xmm7"] * CHAIN + ["pshufd xmm2, xmm0, 0"] * n
            + [f"divsd xmm1, xmm7"] * CHAIN + ["pshufd xmm3, xmm1, 0"] * n)


def waiting(n: int) -> int:
    """The capacity (waiting instructions) for which the simulation jumps at ``n`` waiters a chain."""
    return n + 2


def knee(measure, lo: int = SMALLEST, hi: int = LARGEST) -> tuple[int | None, dict[int, float]]:
    """(the least n whose time reaches KNEE times n = lo's, or None where n = hi does not; the
    times read): ``measure(n)`` gives an iteration's cycles; bisected."""
    times = {lo: measure(lo)}
    limit = KNEE * times[lo]
    times[hi] = measure(hi)
    if times[hi] < limit:
        return None, times
    while hi - lo > 1:
        mid = (lo + hi) // 2
        times[mid] = measure(mid)
        lo, hi = (lo, mid) if times[mid] >= limit else (mid, hi)
    return hi, times


def probe(session) -> dict:
    """The capacity measured on this CPU (``session``: an instructions.session.Session), as the
    results-file record {"type": "inflight", "waiting", "n", "times"}; waiting None where even
    the largest N keeps the chains side by side."""
    n, times = knee(lambda k: session.measure(block(k), []).value)
    return {"type": RECORD, "waiting": waiting(n) if n else None, "n": n,
            "times": {str(k): round(v, 2) for k, v in sorted(times.items())}}


def stored(path) -> tuple[int | None, str]:
    """(waiting instructions that fit in flight, where the figure came from) of a results file, or
    None where it holds no probe (the simulation then has no such limit)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None or not r.get("waiting"):
        return None, "not measured: the model file has no in-flight probe"
    return int(r["waiting"]), f"measured by cyclebench ports: two chains apart from {r['n']} waiters a chain"
