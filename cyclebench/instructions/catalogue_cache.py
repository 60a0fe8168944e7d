"""A disk copy of the built catalogue, so that ``inst`` does not enumerate iced-x86 in every process.

Building the catalogue takes about 2.5 s here (16,832 forms through iced's InstructionInfoFactory);
reading the pickled forms back takes under a second. The copy is named by everything the build
depends on: the source of this package, the iced-x86 and Python versions, and this CPU's features.
Any change gives a new name, so a stale copy is never read. A copy that cannot be read (torn,
foreign, from another pickle format) is rebuilt and replaced; one that cannot be written is skipped.
The COPIES_KEPT most recently used copies stay (two source trees, or two CPU feature sets, used in
turn must not rebuild each other's); deleting them is always safe.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

import iced_x86

from ..cache import cache_dir, is_persistent, prune

_PACKAGE = Path(__file__).resolve().parents[1]
COPIES_KEPT = 4             # about 8 MB each


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    """The package's source, once a process (43 ms each time: every model load asked again)."""
    h = hashlib.sha256()
    for p in sorted(_PACKAGE.rglob("*.py")):
        h.update(str(p.relative_to(_PACKAGE)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def path_for(cpu) -> Path:
    """Where the catalogue built for ``cpu`` is kept."""
    key = hashlib.sha256("\n".join((_source_digest(), getattr(iced_x86, "__version__", "?"),
                                     sys.version, cpu.key())).encode()).hexdigest()[:24]
    return cache_dir("catalogue") / f"catalogue-{key}.pickle"


def load(path: Path, form_type) -> list | None:
    """The stored forms, or None when there is no usable copy."""
    try:
        with open(path, "rb") as f:
            forms = pickle.load(f)
    except Exception:           # missing, torn or foreign: any error means "rebuild"
        return None
    if not isinstance(forms, list) or not all(isinstance(x, form_type) for x in forms):
        return None
    with contextlib.suppress(OSError):      # a use: the least recently used copies are the ones removed
        os.utime(path)
    return forms


def store(path: Path, forms: list) -> None:
    """Write atomically (a reader never sees half a file); only the most recently used copies of
    other keys are kept."""
    if not is_persistent(path):
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=".catalogue-", dir=path.parent)
    except OSError:             # a read-only cache: only the saving is lost
        return
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(forms, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        prune(path.parent, [p.name for p in path.parent.glob("catalogue-*.pickle")], COPIES_KEPT)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
