"""This machine's recent calibrated clock, to spot a run that sat entirely inside a noise burst.

A burst (another tenant on our core's SMT sibling) lowers the TSC-calibrated clock for the whole
run, so a run can look internally stable yet be slow. Stable runs record their median clock here;
a later run whose clock is well below the recent maximum is treated as unstable and re-run.
"""
from __future__ import annotations

import json
import os

from .runner import _cache_dir

KEEP = 20


def _path(key: str):
    safe = "".join(ch if ch.isalnum() else "_" for ch in key)[:80]
    return _cache_dir() / f"clock-{safe}.json"


def reference(key: str) -> float | None:
    try:
        values = json.loads(_path(key).read_text())
        return max(values) if values else None
    except (OSError, ValueError, TypeError):
        return None


def record(key: str, ghz: float) -> None:
    p = _path(key)
    try:
        values = json.loads(p.read_text()) if p.exists() else []
    except (OSError, ValueError):
        values = []
    values = (values + [round(ghz, 4)])[-KEEP:]
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(values))
        os.replace(tmp, p)
    except OSError:
        pass          # a read-only cache only costs us this check
