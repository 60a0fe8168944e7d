"""Correctness before timing, for any routine: the checker interface and the memo of checked routines.

A **checker** knows what a routine must do and on which inputs. It has

* ``key()``: a string naming what it checks (with the shared object's identity, the memo key);
* ``check(routine)``: returns a result, or raises (RoutineIncorrect, exit 11; UnsupportedInstruction);
* ``admits(stream, routine)``: raises UsageError when a stream holds calls outside what was checked.

A study brings its checker: ``studies/memset/correctness.py`` (MemsetDomain, the native whole-domain
check), ``studies/dispatch/checking.py``. ``CallableChecker`` wraps a function for routines of other shapes (a dispatcher, an array kernel).
Every routine is checked once per (shared object, symbol, checker) in a process (``ensure_correct``);
``mark_checked`` records a check done elsewhere (e.g. ``check_many`` in parallel).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

from cyclebench.routines.build import Routine


@runtime_checkable
class Checker(Protocol):
    def key(self) -> str: ...

    def check(self, routine: Routine) -> object: ...

    def admits(self, stream, routine: Routine) -> None: ...


@dataclass(frozen=True, eq=False)
class CallableChecker:
    """A checker from a function that raises for a wrong routine; ``admits`` optionally refuses
    streams outside what the function checked (it raises UsageError)."""

    function: Callable[[Routine], object]
    admits_stream: Callable[[object, Routine], None] | None = None

    def key(self) -> str:
        return f"callable:{id(self.function)}"

    def check(self, routine: Routine) -> object:
        return self.function(routine)

    def admits(self, stream, routine: Routine) -> None:
        if self.admits_stream is not None:
            self.admits_stream(stream, routine)


def as_checker(checker) -> Checker:
    """A Checker as is; a plain function wrapped in a CallableChecker."""
    if isinstance(checker, Checker):
        return checker
    if callable(checker):
        return CallableChecker(checker)
    raise TypeError(f"not a checker: {checker!r}")


_checked: dict[tuple, object] = {}
_checked_lock = threading.Lock()


def _key(routine: Routine, checker: Checker) -> tuple:
    try:
        st = os.stat(routine.library)
        ident = (st.st_mtime_ns, st.st_size)
    except OSError:
        ident = None
    return (os.path.realpath(routine.library), ident, routine.symbol, checker.key())


def mark_checked(routine: Routine, checker: Checker, result: object = True) -> None:
    """Record that ``routine`` passed ``checker`` (e.g. after memset's ``check_many``)."""
    with _checked_lock:
        _checked[_key(routine, as_checker(checker))] = result


def checked(routine: Routine, checker: Checker) -> bool:
    """Has ``routine`` passed ``checker`` in this process (and not changed since)?"""
    with _checked_lock:
        return _key(routine, as_checker(checker)) in _checked


def ensure_correct(routine: Routine, checker: Checker) -> object:
    """Check ``routine`` once per (shared object, symbol, checker); raises what the checker raises."""
    checker = as_checker(checker)
    key = _key(routine, checker)
    with _checked_lock:
        if key in _checked:
            return _checked[key]
    result = checker.check(routine)
    with _checked_lock:
        _checked[key] = result
    return result
