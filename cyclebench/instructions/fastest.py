"""The fastest reading of one set of throughput copies: the same code read again, the lowest kept.

Noise, a slow layout of the code or a slow steady state only ever add time, so every measurement of
the copies is read at the fastest steady state its repetitions agree on (steady.py), a figure off
the port grid (:func:`on_port_grid`) is measured again with the code placed further on
(:func:`placed`), and copies that can settle in a slower state run in more runner processes
(:func:`other_processes`).  What copies to run (counts, breakers, layouts) is throughput.py's.
"""
from __future__ import annotations

import dataclasses

from ..errors import CycleBenchError
from . import steady
from .session import Measured, Session

FEW_GAIN = 0.03         # kept when this much faster: beyond noise
SHIFT = 32             # the second placement: half a cache line further on
GRID = 12              # µops over 1, 2, 3, 4 or 6 equal ports: multiples of 1/12 cycle
GRID_TOL = 0.015


def on_port_grid(value: float | None) -> bool:
    """A reciprocal throughput that execution ports alone can set: µops spread over 1, 2, 3, 4 or 6
    equal ports give a multiple of 1/12 cycle (0.25, 0.33, 0.5, 0.67, 1.33 ...); a figure off that
    grid (0.78, 1.54) is capped by something else, such as the front end, and is measured in a
    second placement (placed)."""
    if value is None or value <= 0:
        return True
    return abs(value - round(value * GRID) / GRID) <= GRID_TOL * value


def placed(session: Session, doc: dict, m: Measured, code: list[str], init: list[str], per: int,
           pattern: int) -> Measured:
    """``m`` or the same copies placed SHIFT bytes further on, whichever is faster beyond noise.
    Some forms run slower than their execution units allow in one layout of the code and not in
    another, and which one is slow changes with the placement and from process to process (the
    front end: fetch windows, decoded-op cache): on Zen 4, 16 copies of vpexpandb xmm, xmm read
    1.00 cycles each in 6 of 8 processes, 0.95 and 0.67 (uops.info's figure) in the others;
    vexpandpd xmm, xmm and vcvtpd2dq xmm, m64{1to4} read 0.99 and 0.84 in one placement, 0.67 in
    the other.  uops.info keeps the best of several unroll and loop layouts; this is one more."""
    try:
        other = session.measure(code, init, per=per, pattern=pattern, shift=SHIFT)
    except CycleBenchError:
        return m
    doc["by_placement"] = {"0": m.value, str(SHIFT): other.value}
    return faster(m, fast_state(doc, other))


def fast_state(doc: dict, m: Measured) -> Measured:
    """``m`` read at the fastest steady state its repetitions agree on (steady.py), where that is
    faster than its aggregate beyond noise; each such state is listed in ``doc["states"]`` beside
    the aggregate it replaced.  Looked for in every measurement of the copies: it costs no run."""
    found = steady.fastest_state(m.samples, m.value, FEW_GAIN)
    if found is None:
        return m
    value, reps, half = found
    doc.setdefault("states", []).append({"fast": value, "repetitions": reps, "of": len(m.samples),
                                         "aggregate": m.value})
    # settled by the repetitions that agree on it, even where the mixture of states read as unsettled
    return dataclasses.replace(m, value=value, uncertainty=max(half, m.uncertainty), stable=True)


def faster(m: Measured, other: Measured) -> Measured:
    """``other`` when it is faster than ``m`` beyond noise and no less settled, else ``m``: noise
    and a slow layout or state only ever add time."""
    return other if (other.stable or not m.stable) and other.value < m.value * (1 - FEW_GAIN) else m


PROCESSES = 3          # runner processes of the copies beyond the first, at most (uops.info keeps its least of many runs)


def other_processes(session: Session, doc: dict, m: Measured, code: list[str], init: list[str], per: int,
                     pattern: int, processes: int = PROCESSES) -> Measured:
    """``m`` or the fastest of ``processes`` more runs of the same code in fresh runner processes,
    whichever is faster beyond noise.  Some forms settle into a slower steady state in one
    process and a faster one in another, whatever the placement: on Zen 4, 14 copies of
    ``vpexpandb xmm, xmm`` read 1.00 cycles each in 6 of 8 processes started one after the
    other, 0.67 (uops.info's figure) in the other 2; each process holds its state through all
    its repetitions.  Run for a figure still off the port grid after its second placement (as
    ``placed``): in 1,892 throughput figures of 300-form samples on Zen 4, three more processes
    moved 6 by more than FEW_GAIN, 5 of them off the grid, while running them for every form
    cost 40% of the forms a minute.  Run with LIMITED_PROCESSES for copies the in-flight probe
    finds limited (window.py), whose rate changes from process to process on the grid too."""
    readings = doc.get("by_process") or [m.value]       # more processes extend the earlier ones
    best, pool = m, list(m.samples)
    for _ in range(processes):
        try:
            other = session.measure(code, init, per=per, pattern=pattern)
        except CycleBenchError:
            break
        readings.append(other.value)
        pool += other.samples
        best = faster(best, fast_state(doc, other))
    doc["by_process"] = readings
    # the same code in every process: a state too rare in any one of them to show shows in all
    pooled = fast_state(doc, dataclasses.replace(best, samples=pool))
    return best if pooled.value == best.value else dataclasses.replace(pooled, samples=best.samples)


def runs_differ(earlier: dict | None, fresh: Measured) -> bool:
    """The earlier run of the copies, in the same layout, and this run's full count read apart
    beyond noise: the copies' rate changes between runs apart in time, and a process may hold a
    faster state than either (Zen 4, ``VCVTTPD2DQ_Z (XMM, K, M256)``: 0.837 and 0.879 a copy, each
    process in one slow state throughout; uops.info 0.67, the fast state of the same copies)."""
    if not earlier or earlier.get("value") is None or \
            any(k in earlier for k in ("stride", "setups_ahead", "operand_width_apart")):
        return False                        # another layout's figure: not the same copies
    low, high = sorted((earlier["value"], fresh.value))
    return high > low * (1 + FEW_GAIN)



LIMITED_PROCESSES = 6    # more processes for copies the in-flight probe finds limited (window.py)
