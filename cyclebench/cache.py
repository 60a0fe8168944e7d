"""The one cache folder (built runner, built routines, clock history, counter probe answers,
assembled and decoded snippets, the harness's calibration object), and what to do when it is unusable.

``$CYCLEBENCH_CACHE``, else ``$XDG_CACHE_HOME/cyclebench``, else ``~/.cache/cyclebench``. A HOME
that is empty or not absolute, a read-only HOME, or a cache path that is a file must not stop a
measurement: the caller then gets a private temporary folder for this process (built things are
rebuilt next time; recorded history is simply not kept). Deleting the cache is always safe.

Entries (``load_entry``/``store_entry``) are small files named by a key that hashes everything
their content depends on: the work they save is redone on a miss, so a missing, damaged or evicted
entry only costs time. Each kind keeps its ENTRIES_KEPT most recently used entries.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_fallback: Path | None = None
ENTRY_LIMIT = 1 << 20       # bytes: a bigger result is made again each time rather than kept
ENTRIES_KEPT = 256          # per kind; the least recently used half goes when there are more


def _configured() -> Path | None:
    if os.environ.get("CYCLEBENCH_CACHE"):
        return Path(os.environ["CYCLEBENCH_CACHE"])
    if os.environ.get("XDG_CACHE_HOME", "").startswith("/"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "cyclebench"
    home = os.environ.get("HOME", "")
    if not home.startswith("/") or os.path.realpath(home) == "/":
        return None       # HOME='' (or '/', '//') would mean /.cache: not ours to create
    return Path(home) / ".cache" / "cyclebench"


def _usable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def cache_dir(sub: str = "") -> Path:
    """The cache folder (or its sub-folder ``sub``), created; a per-process temporary folder when
    the configured one cannot be used."""
    global _fallback
    root = _configured()
    if root is not None and _usable(root / sub if sub else root):
        return root / sub if sub else root
    if _fallback is None:
        _fallback = Path(tempfile.mkdtemp(prefix="cyclebench-cache-"))
        atexit.register(shutil.rmtree, _fallback, True)
    path = _fallback / sub if sub else _fallback
    path.mkdir(parents=True, exist_ok=True)
    return path


def is_persistent(path: Path) -> bool:
    """False for the temporary fallback: what is written there is gone when the process ends."""
    return _fallback is None or _fallback not in (path, *path.parents)


def files_stamp(paths) -> bytes:
    """Path, size and modification time of each file (an upgrade changes them), for a key that
    must change with the programs or packages that made an entry."""
    stamps = []
    for path in paths:
        try:
            st = os.stat(path)
            stamps.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            stamps.append(f"{path}:?")
    return "\0".join(stamps).encode()


def load_entry(kind: str, key: str) -> bytes | None:
    """The entry stored under ``key`` (a hex digest), or None; a hit counts as a use."""
    path = cache_dir(kind) / key
    try:
        with open(path, "rb") as f:
            data = f.read(ENTRY_LIMIT + 1)
        os.utime(path)
    except OSError:
        return None
    return data if len(data) <= ENTRY_LIMIT else None


def store_entry(kind: str, key: str, data: bytes) -> None:
    """Keep ``data`` under ``key``: written whole and renamed into place, so a reader never sees
    half an entry. Failures are ignored (the cache only saves time)."""
    if len(data) > ENTRY_LIMIT:
        return
    folder = cache_dir(kind)
    tmp = folder / f".{key}.{os.getpid()}.tmp"
    try:
        tmp.write_bytes(data)
        os.replace(tmp, folder / key)
        names = os.listdir(folder)
        if len(names) > ENTRIES_KEPT:
            prune(folder, names, ENTRIES_KEPT // 2)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def prune(folder: Path, names, keep: int) -> None:
    """Remove all but the ``keep`` most recently used of ``names`` in ``folder`` (by modification
    time, which a use refreshes). Another process may be doing the same: a file already gone is
    not an error."""
    used = []
    for name in names:
        try:
            used.append((os.stat(folder / name).st_mtime_ns, name))
        except OSError:
            pass
    for _, name in sorted(used)[:max(0, len(used) - keep)]:
        try:
            os.unlink(folder / name)
        except OSError:
            pass
