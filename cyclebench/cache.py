"""The one cache folder (built runner, built routines, clock history, counter probe answers), and
what to do when it is unusable.

``$CYCLEBENCH_CACHE``, else ``$XDG_CACHE_HOME/cyclebench``, else ``~/.cache/cyclebench``. A HOME
that is empty or not absolute, a read-only HOME, or a cache path that is a file must not stop a
measurement: the caller then gets a private temporary folder for this process (built things are
rebuilt next time; recorded history is simply not kept). Deleting the cache is always safe.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_fallback: Path | None = None


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
