"""The counter probe's answers kept on disk, so that only the first command after a boot (or after
anything that could change the answer) starts the runner to open the events.

What perf_event_open allows depends on the kernel (its release, this boot's PMU drivers and NMI
watchdog), its settings (perf_event_paranoid, the rdpmc switch), the caller's capabilities and
the runner binary: all of these make up the key, and a file written under another key, or one
that cannot be read as ours, is ignored and rewritten. Deleting it is always safe.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..cache import cache_dir

FILE = "counter-probes.json"
VERSION = 1
_SOURCES = ("/proc/sys/kernel/random/boot_id", "/proc/sys/kernel/perf_event_paranoid",
            "/proc/sys/kernel/nmi_watchdog", "/sys/bus/event_source/devices/cpu/rdpmc")


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "?"


def _capabilities() -> str:
    for line in _read("/proc/self/status").splitlines():
        if line.startswith("CapEff:"):
            return line.split()[1]
    return "?"


def environment_key(runner: Path) -> str:
    """What the probe's answer depends on besides its arguments, as one string."""
    try:
        st = runner.stat()
        # the file's identity, not its modification time: every use refreshes that (runner/build.py
        # keeps the most recently used builds), and a key that changed with it made every command probe
        exe = f"{runner.name}:{st.st_size}:{st.st_dev}:{st.st_ino}"
    except OSError:
        exe = f"{runner}:?"
    devices = sorted(os.listdir("/sys/bus/event_source/devices")) if os.path.isdir(
        "/sys/bus/event_source/devices") else []
    parts = [*(_read(p) for p in _SOURCES), os.uname().release, str(os.geteuid()), _capabilities(),
             ",".join(devices), exe]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _path() -> Path:
    return cache_dir() / FILE


def _load(key: str) -> dict:
    try:
        data = json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("key") != key:
        return {}
    probes = data.get("probes")
    return probes if isinstance(probes, dict) else {}


def lookup(key: str, args: tuple[str, ...]) -> list | None:
    """The stored answer (one [ok, errno, rdpmc] per event in ``args``), or None."""
    entry = _load(key).get("\0".join(args))
    n_events = args.count("--event")
    if (isinstance(entry, list) and len(entry) == n_events
            and all(isinstance(r, list) and len(r) == 3 and isinstance(r[0], bool) and isinstance(r[1], str)
                    and isinstance(r[2], int) for r in entry)):
        return entry
    return None


def store(key: str, args: tuple[str, ...], answer: list) -> None:
    """Add one answer; a file under another key is replaced. Written whole and renamed into place,
    so a reader never sees half a file; two writers at once lose at most an entry."""
    probes = _load(key)
    probes["\0".join(args)] = answer
    path = _path()
    tmp = path.with_name(f"{FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"version": VERSION, "key": key, "probes": probes}))
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
