"""This machine's recent calibrated clock and contention gauge, to spot a run that sat entirely
inside a noise burst.

A burst (another tenant on our core's SMT sibling) lowers the TSC-calibrated clock for the whole
run, or slows throughput-bound code relative to the calibration chain, so a run can look
internally stable yet be slow. Stable runs record their median clock ("clock", best = highest)
and contention-gauge ratio ("contention", best = lowest) here; a later run well off the recent
best is treated as unstable and re-run (for its clock alone only when its gauge is not at its best:
stability.assess).

Only stable runs record, so a history could lock itself: after a lasting drop of the host's clock
(a live migration to a slower host of the same model, a new power cap) every run would read below
the "recent best", never be recorded, and re-measure to its budget for good. Runs that are steady
in themselves and flagged only for that drop are therefore noted apart ("clock-low", with their
time); when such runs, and no stable one, have held one level for MOVED_SPAN seconds over at
least MOVED_RUNS runs (one note per MOVED_SPAN / MOVED_RUNS seconds), the machine's clock has
moved and that level becomes the history. A burst
lasts seconds, so no single run and no short burst resets the bar; and the best is the highest,
so once the host is fast again two quiet runs raise it back. The contention gauge needs no such
rule: its floor is physical (PLAUSIBLE), and a gauge high for good is a busy sibling for good.
"""
from __future__ import annotations

import json
import math
import os
import time

from ..cache import cache_dir
from ..machine.cpu import cpu_info

KEEP = 20
MOVED_RUNS = 8               # runs steady in themselves, flagged only for a clock below the history...
MOVED_SPAN = 600.0           # ...over at least this many seconds, with no stable run between them...
MOVED_LEVEL = 0.03           # ...and within this share of each other: the clock has moved
MAX_FILE = 64 << 10          # a history file is a short list; anything bigger is not ours

BEST = {"clock": max, "contention": min, "tsc": max}
# Plausible values: a calibrated clock in GHz, the gauge's cost relative to the chain. A file
# holding anything else ({}, null, "str", [1e999]) is ignored, and rewritten by the next record.
# The gauge's four chains cannot beat the one chain they are measured against (ratio 1.0 with four
# ALUs, 1.33 with three): a ratio below 1 means the calibration chain itself was slowed, and as the
# "recent best" it makes every later run read as contended. Seen: 0.55 in a test run; 0.93-0.98 on
# one vCPU of a Zen 4 guest, where every later run at 1.00 read 7% contended, was never recorded as
# stable again, and re-measured to its budget (6 forms a minute against 100 on the other vCPU).
# "time": a low note's time, in seconds since the epoch.
PLAUSIBLE = {"clock": (0.1, 10.0), "contention": (0.99, 5.0), "tsc": (1e8, 1e10), "time": (0.0, math.inf)}


def machine_key(cpu: int | None = None) -> str:
    """Whose history: this CPU model and microcode, and the pinned CPU (or 'any')."""
    return f"{cpu_info().model_name}-{cpu_info().microcode}-{cpu if cpu is not None else 'any'}"


def _path(key: str, kind: str, root=None):
    """The history file of ``key`` in the cache folder (or in ``root``)."""
    safe = "".join(ch if ch.isalnum() else "_" for ch in key)[:80]
    return (root or cache_dir()) / f"{kind}-{safe}.json"


def _plausible(v, kind: str) -> bool:
    lo, hi = PLAUSIBLE[kind]
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and lo <= v <= hi


def _read(p):
    """The JSON list in ``p``; [] for a missing, unreadable, oversized or foreign file."""
    try:
        if not p.is_file():           # a folder or a FIFO where the file should be: not ours
            return []
        with open(p, "rb") as f:
            text = f.read(MAX_FILE + 1)
        values = json.loads(text) if len(text) <= MAX_FILE else None
    except (OSError, ValueError, RecursionError):
        return []
    return values if isinstance(values, list) else []


def _load(p, kind: str) -> list[float]:
    """The plausible values recorded in ``p``."""
    return [float(v) for v in _read(p) if _plausible(v, kind)]


def reference(key: str, kind: str = "clock") -> float | None:
    """This machine's recent best (highest clock, lowest contention ratio), or None. With three
    or more values the second best, so one lucky or broken record cannot set the bar alone."""
    values = _load(_path(key, kind), kind)
    if len(values) < 3:
        return BEST[kind](values) if values else None
    return sorted(values, reverse=BEST[kind] is max)[1]


def record(key: str, value: float, kind: str = "clock") -> None:
    """Add a stable run's value (an implausible one is not kept); the file keeps the last KEEP.
    A stable clock ends any run of low notes: the recorded level is still reached."""
    if not _plausible(value, kind):
        return
    p = _path(key, kind)
    _write(p, (_load(p, kind) + [round(value, 4)])[-KEEP:])
    if kind == "clock" and _path(key, "clock-low").exists():
        _write(_path(key, "clock-low"), [])


def note_low_clock(key: str, ghz: float, now: float | None = None) -> bool:
    """Note a run steady in itself whose only flaw was a clock below this machine's history. When
    the notes show the clock has moved for good (module docstring), that level replaces the
    history and True is returned."""
    if not _plausible(ghz, "clock"):
        return False
    now = time.time() if now is None else now
    p = _path(key, "clock-low")
    notes = _low_notes(p)
    # one note per MOVED_SPAN / MOVED_RUNS seconds: a command's forty attempts in a second had
    # filled the KEEP kept with one instant, so the notes never spanned MOVED_SPAN and a history
    # held a brief 2.97 GHz against a Zen 1 core at 2.54 for hours (every unpinned run flagged)
    if notes and 0 <= now - notes[-1][0] < MOVED_SPAN / MOVED_RUNS:
        return False
    notes = (notes + [[now, round(ghz, 4)]])[-KEEP:]
    # the notes at the newest level, back to the first that is not: an earlier dip is no part of it
    start, lo, hi = len(notes) - 1, notes[-1][1], notes[-1][1]
    while start > 0 and max(hi, notes[start - 1][1]) <= min(lo, notes[start - 1][1]) * (1 + MOVED_LEVEL):
        start -= 1
        lo, hi = min(lo, notes[start][1]), max(hi, notes[start][1])
    level = notes[start:]
    moved = len(level) >= MOVED_RUNS and level[-1][0] - level[0][0] >= MOVED_SPAN
    if moved:
        _write(_path(key, "clock"), [g for _, g in level])
        notes = []
    _write(p, notes)
    return moved


def _low_notes(p) -> list[list[float]]:
    """The [time, GHz] notes of ``p``, oldest first; foreign entries are dropped."""
    return [[float(v[0]), float(v[1])] for v in _read(p)
            if isinstance(v, list) and len(v) == 2 and _plausible(v[0], "time") and _plausible(v[1], "clock")]


def _write(p, values: list) -> None:
    """Replace ``p`` with ``values`` atomically; a read-only cache, or a folder where the file
    should be, loses only this check."""
    tmp = p.with_suffix(f".tmp{os.getpid()}")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(values))
        os.replace(tmp, p)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def _boot_key() -> str | None:
    """This boot and CPU, where the TSC ticks at one rate for the whole boot (constant and
    non-stop TSC); None where it may not."""
    info = cpu_info()
    if not {"constant_tsc", "nonstop_tsc"} <= info.flags:
        return None
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        return None
    return f"{boot}-{info.model_name}-{info.microcode}"


def tsc_hz() -> float | None:
    """The TSC's rate this boot, as a runner measured it (5 ms of spinning each runner start
    otherwise); None when not known yet or not constant."""
    key = _boot_key()
    if key is None:
        return None
    values = _load(_path(key, "tsc"), "tsc")
    return values[-1] if values else None


def record_tsc_hz(hz: float) -> None:
    key = _boot_key()
    if key is not None and tsc_hz() is None:
        record(key, hz, "tsc")
