"""A disk copy of each ``cyclebench ports`` results file as the predictor loads it (predict.load).

Loading a file mends its model against its readings and builds its floors and probe records:
about 0.8 s a file on a Zen 4 guest, most of ``cyclebench predict``'s time with two files.  The
copy (a pickle, 0.1-0.2 MB) is read back in a few milliseconds.  It is named by the file's bytes
and by everything the catalogue copy is named by (this package's source, the iced-x86 and Python
versions, this CPU's features: catalogue_cache.path_for), so a changed file, a changed predictor
or another CPU never reads a stale copy.  The catalogue itself, which some floors keep a reference
to, is not copied: the copy names it, and reading it back gives this process's catalogue.  A copy
that cannot be read is made again; one that cannot be written only costs the time next run
(cache.store_entry).  ``CYCLEBENCH_CACHE`` moves the cache; deleting it is always safe.
"""
from __future__ import annotations

import hashlib
import io
import pickle
from pathlib import Path
from typing import Callable, TypeVar

from ...cache import load_entry, store_entry
from ...machine.features import this_cpu
from .. import catalogue_cache
from ..catalogue import Catalogue

CACHE_KIND = "ports-loaded"
_CATALOGUE = "catalogue"          # the persistent id of the process's catalogue in a copy
T = TypeVar("T")


def key(data: bytes) -> str:
    """The copy's name for a results file of these bytes, on this CPU with this code."""
    return hashlib.sha256(catalogue_cache.path_for(this_cpu()).name.encode() + b"\0"
                          + hashlib.sha256(data).digest()).hexdigest()[:32]


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        return _CATALOGUE if isinstance(obj, Catalogue) else None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        if pid != _CATALOGUE:
            raise pickle.UnpicklingError(f"unknown reference {pid!r}")
        return Catalogue.load()


def dumps(loaded) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(loaded)
    return out.getvalue()


def loads(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()


def cached(path: Path, build: Callable[[Path], T]) -> T:
    """``build(path)``, or the copy a run before kept of it."""
    try:
        name = key(Path(path).read_bytes())
    except OSError:
        return build(path)            # the loader says what is wrong with the path
    data = load_entry(CACHE_KIND, name)
    if data is not None:
        try:
            return loads(data)
        except Exception:             # torn, foreign or from code that no longer unpickles: made again
            pass
    out = build(path)
    try:
        store_entry(CACHE_KIND, name, dumps(out))
    except Exception:                 # an object that does not pickle: loaded each time, as before
        pass
    return out
