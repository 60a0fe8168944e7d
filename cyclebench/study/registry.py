"""The studies by name. A study is a folder ``cyclebench/studies/<name>/`` whose ``study.py``
defines a Study subclass decorated with ``@register``: nothing else lists it. Names come from the
folders (no import), so ``cyclebench --help`` stays fast; a study is imported when it is run or
listed.

cli/study.py gives every study the shared options (``--quick``, ``--out``, ``--resume``, ``-n``,
``--no-progress``) and the study's own (``Study.add_options``).
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..errors import UsageError
from .base import Study

STUDIES_PACKAGE = "cyclebench.studies"
STUDIES_DIR = Path(__file__).resolve().parent.parent / "studies"

_registered: dict[str, type[Study]] = {}


def register(cls: type[Study]) -> type[Study]:
    """Class decorator: make a Study known by its ``name``."""
    if not cls.name or not cls.title:
        raise TypeError(f"{cls.__name__} needs a name and a title")
    _registered[cls.name] = cls
    return cls


def names() -> list[str]:
    """Every study folder (a package with a study.py), without importing any."""
    return sorted(m.name for m in pkgutil.iter_modules([str(STUDIES_DIR)])
                  if m.ispkg and (STUDIES_DIR / m.name / "study.py").is_file())


def get(name: str) -> Study:
    """The registered study ``name`` (its study.py is imported now)."""
    if name not in names():
        raise UsageError(f"unknown study {name!r}", "one of " + ", ".join(names()) + " (see --list)")
    importlib.import_module(f"{STUDIES_PACKAGE}.{name}.study")
    if name not in _registered:
        raise UsageError(f"cyclebench/studies/{name}/study.py registers no study",
                         "decorate its Study subclass with @register")
    return _registered[name]()


def listing() -> list[tuple[str, str]]:
    """(name, title) of every study."""
    return [(n, get(n).title) for n in names()]
