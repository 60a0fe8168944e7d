"""Correctness of every dispatcher before timing (a ``routines.checking`` checker).

One child Python process per shared object loads it with ctypes and calls every dispatcher with
every index it selects among (and x = 5): each must return ``x + constant(target)``. Then, for each
bounds-checking dispatcher, a forked grandchild calls it with an out-of-range index, which must
end in SIGABRT (the abort path). Nothing of the built code runs in this process. The child's
verdict is cached per shared object, so the nine dispatchers of a build cost one child.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass

from cyclebench.errors import RoutineIncorrect, UsageError
from cyclebench.routines import Routine

from .sources import CHECKS_BOUNDS, DISPATCHERS, RANGE, constant, expected_target, symbol

X = 5
CHILD = r"""
import ctypes, json, os, signal, sys
lib = ctypes.CDLL(sys.argv[1])
spec = json.loads(sys.argv[2])
out = {}
for name, (sym, expect, bounded, bad) in spec.items():
    f = getattr(lib, sym); f.restype = ctypes.c_long; f.argtypes = (ctypes.c_uint, ctypes.c_long)
    wrong = [[i, f(i, %(x)d), e] for i, e in enumerate(expect) if f(i, %(x)d) != e]
    abort = None
    if bounded:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            os.close(2); f(bad, %(x)d); os._exit(0)
        _, st = os.waitpid(pid, 0)
        abort = os.WTERMSIG(st) if os.WIFSIGNALED(st) else -os.WEXITSTATUS(st)
    out[name] = {"wrong": wrong[:5], "abort_signal": abort}
print(json.dumps(out))
""" % {"x": X}

_verdicts: dict[tuple, dict] = {}
_lock = threading.Lock()


def expected(dispatcher: str) -> list[int]:
    return [X + constant(expected_target(dispatcher, i)) for i in range(RANGE[dispatcher])]


def run_checks(library: str, symbols: dict[str, str] | None = None) -> dict:
    """{dispatcher: {"wrong": [[index, got, want]...], "abort_signal": n or None}} for one object;
    ``symbols`` maps dispatchers to the symbols to check (default: every dispatcher's own)."""
    symbols = symbols or {d: symbol(d) for d in DISPATCHERS}
    st = os.stat(library)
    key = (os.path.realpath(library), st.st_mtime_ns, st.st_size, tuple(sorted(symbols.items())))
    with _lock:
        if key in _verdicts:
            return _verdicts[key]
    spec = {d: [sym, expected(d), d in CHECKS_BOUNDS, RANGE[d] + 1000] for d, sym in symbols.items()}
    proc = subprocess.run([sys.executable, "-c", CHILD, library, json.dumps(spec)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RoutineIncorrect(f"the dispatchers of {os.path.basename(library)} crashed when called "
                               f"(exit {proc.returncode}): {proc.stderr.strip()[-200:]}",
                               hint="run the check by hand: python3 -c 'import ctypes; ctypes.CDLL(...)'")
    verdict = json.loads(proc.stdout)
    with _lock:
        _verdicts[key] = verdict
    return verdict


def problems(verdict: dict) -> list[str]:
    """What is wrong in a verdict (empty: all correct)."""
    out = []
    for d, v in verdict.items():
        for i, got, want in v["wrong"]:
            out.append(f"{symbol(d)}({i}, {X}) returned {got}, not {want}")
        if d in CHECKS_BOUNDS and v["abort_signal"] != 6:
            out.append(f"{symbol(d)} with index {RANGE[d] + 1000} did not abort "
                       f"(signal/status {v['abort_signal']})")
    return out


@dataclass(frozen=True)
class DispatchChecker:
    """The checker of one dispatcher: right value for every index, abort out of range."""

    dispatcher: str

    def key(self) -> str:
        return f"dispatch:{self.dispatcher}:x={X}"

    def check(self, routine: Routine) -> dict:
        v = run_checks(routine.library, {self.dispatcher: routine.symbol})
        bad = problems({self.dispatcher: v[self.dispatcher]})
        if bad:
            raise RoutineIncorrect(f"{routine.name} is wrong: {bad[0]}",
                                   hint="the dispatcher's source is in sources.py; look at its disassembly")
        return v[self.dispatcher]

    def admits(self, stream, routine: Routine) -> None:
        idx = stream.column("index")
        if len(idx) and int(idx.max()) >= RANGE[self.dispatcher]:
            raise UsageError(f"index {int(idx.max())} is outside what {routine.name} selects among",
                             hint=f"use indices 0..{RANGE[self.dispatcher] - 1}")
