"""This machine's recent calibrated clock and contention probe, to spot a run that sat entirely
inside a noise burst.

A burst (another tenant on our core's SMT sibling) lowers the TSC-calibrated clock for the whole
run, or slows throughput-bound code relative to the calibration chain, so a run can look
internally stable yet be slow. Stable runs record their median clock ("clock", best = highest)
and contention-probe ratio ("contention", best = lowest) here; a later run well off the recent
best is treated as unstable and re-run.
"""
from __future__ import annotations

import json
import os

from ..cache import cache_dir

KEEP = 20


BEST = {"clock": max, "contention": min}


def _path(key: str, kind: str):
    safe = "".join(ch if ch.isalnum() else "_" for ch in key)[:80]
    return cache_dir() / f"{kind}-{safe}.json"


def reference(key: str, kind: str = "clock") -> float | None:
    try:
        values = json.loads(_path(key, kind).read_text())
        return BEST[kind](values) if values else None
    except (OSError, ValueError, TypeError):
        return None


def record(key: str, value: float, kind: str = "clock") -> None:
    p = _path(key, kind)
    try:
        values = json.loads(p.read_text()) if p.exists() else []
    except (OSError, ValueError):
        values = []
    values = (values + [round(value, 4)])[-KEEP:]
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(values))
        os.replace(tmp, p)
    except OSError:
        pass          # a read-only cache only costs us this check
