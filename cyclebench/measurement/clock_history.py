"""This machine's recent calibrated clock and contention gauge, to spot a run that sat entirely
inside a noise burst.

A burst (another tenant on our core's SMT sibling) lowers the TSC-calibrated clock for the whole
run, or slows throughput-bound code relative to the calibration chain, so a run can look
internally stable yet be slow. Stable runs record their median clock ("clock", best = highest)
and contention-gauge ratio ("contention", best = lowest) here; a later run well off the recent
best is treated as unstable and re-run.
"""
from __future__ import annotations

import json
import math
import os

from ..cache import cache_dir
from ..machine.cpu import cpu_info

KEEP = 20
MAX_FILE = 64 << 10          # a history file is a short list; anything bigger is not ours

BEST = {"clock": max, "contention": min, "tsc": max}
# Plausible values: a calibrated clock in GHz, the gauge's cost relative to the chain. A file
# holding anything else ({}, null, "str", [1e999]) is ignored, and rewritten by the next record.
# The gauge's four chains cannot beat the one chain they are measured against (ratio 1.0 with four
# ALUs, 1.33 with three): a ratio below 1 means the calibration chain itself was slowed, and as the
# "recent best" it makes every later run read as contended. Seen: 0.55 in a test run; 0.93-0.98 on
# one vCPU of a Zen 4 guest, where every later run at 1.00 read 7% contended, was never recorded as
# stable again, and re-measured to its budget (6 forms a minute against 100 on the other vCPU).
PLAUSIBLE = {"clock": (0.1, 10.0), "contention": (0.99, 5.0), "tsc": (1e8, 1e10)}


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


def _load(p, kind: str) -> list[float]:
    """The plausible values recorded in ``p``; [] for a missing, unreadable or foreign file."""
    try:
        if not p.is_file():           # a folder or a FIFO where the file should be: not ours
            return []
        with open(p, "rb") as f:
            text = f.read(MAX_FILE + 1)
        values = json.loads(text) if len(text) <= MAX_FILE else None
    except (OSError, ValueError, RecursionError):
        return []
    return [float(v) for v in values if _plausible(v, kind)] if isinstance(values, list) else []


def reference(key: str, kind: str = "clock") -> float | None:
    """This machine's recent best (highest clock, lowest contention ratio), or None. With three
    or more values the second best, so one lucky or broken record cannot set the bar alone."""
    values = _load(_path(key, kind), kind)
    if len(values) < 3:
        return BEST[kind](values) if values else None
    return sorted(values, reverse=BEST[kind] is max)[1]


def record(key: str, value: float, kind: str = "clock") -> None:
    """Add a stable run's value (an implausible one is not kept); the file keeps the last KEEP."""
    if not _plausible(value, kind):
        return
    p = _path(key, kind)
    values = (_load(p, kind) + [round(value, 4)])[-KEEP:]
    tmp = p.with_suffix(f".tmp{os.getpid()}")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(values))
        os.replace(tmp, p)
    except OSError:   # a read-only cache, or a folder where the file should be: only this check is lost
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
