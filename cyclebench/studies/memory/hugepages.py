"""Transparent huge pages: what the kernel offers, and whether the runner really got them.

``thp_status()`` reads /sys/kernel/mm/transparent_hugepage. ``HugePageProbe`` watches this
process's children (the runner) while a measurement runs and keeps the largest
``AnonHugePages`` their /proc/PID/smaps_rollup showed, so a 2 MB-page figure says how much of its
region was backed by huge pages instead of assuming it."""
from __future__ import annotations

import os
import threading
from pathlib import Path

THP = Path("/sys/kernel/mm/transparent_hugepage")
MADV_HUGEPAGE, MADV_NOHUGEPAGE = 14, 15


def _selected(path: Path) -> str | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    for word in text.split():
        if word.startswith("["):
            return word.strip("[]")
    return text.strip() or None


def thp_status() -> dict:
    """{"enabled": "always|madvise|never"|None, "defrag": ..., "usable": bool}"""
    enabled, defrag = _selected(THP / "enabled"), _selected(THP / "defrag")
    return {"enabled": enabled, "defrag": defrag, "usable": enabled in ("always", "madvise")}


def _children() -> list[int]:
    pids = []
    for task in Path("/proc/self/task").glob("*"):
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return pids


def _anon_huge_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class HugePageProbe:
    """``with HugePageProbe() as p: measure(...)``; then ``p.max_kb`` (0: none seen)."""

    def __init__(self, interval: float = 0.01):
        self.interval = interval
        self.max_kb = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            for pid in _children():
                if pid != me:
                    self.max_kb = max(self.max_kb, _anon_huge_kb(pid))
                    self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> "HugePageProbe":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
