"""measure()'s keyword arguments checked at the API boundary: every type and range, with the
CLI's wording, so a Python caller gets a UsageError (exit code 2) instead of a raw TypeError
deep inside, and nothing runs on absurd values."""
from __future__ import annotations

import inspect
import math
import os
from pathlib import Path

from ..counters.backends import Event
from ..errors import UsageError
from .stats import AGGREGATES

CODE_PARTS = ("code", "init", "late_init", "one_time_init", "loop_init")
FLAGS = ("basic_mode", "no_normalization", "drain_frontend", "user", "kernel", "fixed_counters",
         "no_mem", "remove_empty_events", "paired", "allow_syscalls", "varies")
MIN_AREA = 8 << 10           # the runner refuses smaller memory areas
MAX_AREA = 1 << 36
MIN_MEMORY = 64 << 20        # the child's address-space cap must leave room for the runner itself
MAX_DATA = 1 << 32
MAX_MAP_PAGES = 65536        # the runner's cap on fault-mapped pages (cb_runner.c, --map-pages)
# The keywords that set what a figure means, with the option that sets each (``--{}``: the value is
# the option): the copies and loop, the statistic over the repetitions (their count included), the
# runs before them, the code's placement, the counters, the clock and the harness's reads.  A
# results file keeps them, and a run resumed with other values is refused (study/store.py).  The
# rest change which figures there are (events), the runner's limits and where it runs, not a figure.
METHOD = {"unroll": "--unroll", "loop": "--loop", "n_measurements": "-n", "aggregate": "--{}",
          "warm_up": "--warm-up", "initial_warm_up": "--initial-warm-up", "alignment_offset": "--alignment-offset",
          "basic_mode": "--basic-mode", "no_normalization": "--no-normalization",
          "drain_frontend": "--drain-frontend", "counters": "--counters", "clock_mhz": "--clock-mhz/CYCLEBENCH_CLOCK_MHZ",
          "user": "--usr", "kernel": "--os", "no_mem": "--no-mem"}


def method(kwargs: dict) -> dict:
    """The :data:`METHOD` values of measure() keywords as a results file keeps them: the clock the
    environment states where no keyword does (measurement/clocks.py), user and kernel as --usr/--os
    spell them."""
    from .clocks import CLOCK_ENV
    out = {k: kwargs.get(k) for k in METHOD}
    env = os.environ.get(CLOCK_ENV)
    if out["clock_mhz"] is None and env:
        try:
            out["clock_mhz"] = float(env)
        except ValueError:
            out["clock_mhz"] = env
    for k in ("user", "kernel"):
        if out[k] is not None:
            out[k] = int(out[k])
    return out


def used(key: str, options: dict, records: list[dict] | None = None):
    """What a :data:`METHOD` option came to: ``--counters auto`` is the backend it chose, the one
    ``records`` (a results file's documents) name when they all agree, or, for a run still to be
    made (``records`` None), the one it chooses here (a probe, no timing); None when that is not
    known. On a machine without a PMU auto and tsc both time with the TSC."""
    value = options.get(key)
    if key != "counters" or value != "auto":
        return value
    if records is not None:
        names = {r.get("backend") for r in records if r.get("status") == "ok"}
        return names.pop() if len(names) == 1 and None not in names else None
    from ..counters.backends import select_backend
    from ..errors import CycleBenchError
    user = options.get("user")
    try:
        return select_backend("auto", user=True if user is None else bool(user), kernel=bool(options.get("kernel")),
                              no_mem=bool(options.get("no_mem"))).name
    except CycleBenchError:
        return None


def spell(option: str, value) -> str | None:
    """An option (a :data:`METHOD` value) with its value as it is typed: ``-n 20``, ``--median``
    (an option spelt ``--{}``), ``--basic-mode``; None for an option not given (None or False)."""
    from ..textfile import quote
    if value is None or value is False:
        return None
    if value is True:
        return option
    return option.format(quote(str(value), 40)) if "{}" in option else f"{option} {quote(str(value), 40)}"


def _bad(cause: str, hint: str):
    raise UsageError(cause, hint)


def _show(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _int(name: str, v, lo: int, hi: int, hint: str, what: str | None = None, none_ok: bool = True):
    """A whole number in [lo, hi] (bool is not a number here: True would read as 1)."""
    if v is None and none_ok:
        return
    if isinstance(v, bool) or not isinstance(v, int):
        _bad(f"{name} must be a whole number, not {type(v).__name__} {_show(v)}", hint)
    if not lo <= v <= hi:
        _bad(what or f"{name} {v} is out of range", hint)


def _seconds(name: str, v, lo_open: float, hi: float, hint: str, lo_closed: bool = False):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        _bad(f"{name} must be a number of seconds, not {type(v).__name__} {_show(v)}", hint)
    ok = (lo_open <= v if lo_closed else lo_open < v) and v <= hi
    if not ok or not math.isfinite(v):
        _bad(f"{name} {v} s is out of range", hint)


def _code(name: str, v):
    if v is None and name != "code":
        return
    what = "the code to measure" if name == "code" else f"the {name.replace('_', '-')} code"
    if not isinstance(v, (str, bytes, bytearray, Path)):
        _bad(f"{what} must be assembly text (str) or raw machine code (bytes), not {type(v).__name__} {_show(v)}",
             'e.g. measure("imul rax, rax") or measure(bytes.fromhex("480fafc0"))')
    if isinstance(v, str) and "\x00" in v:
        _bad(f"{what} contains a NUL character", "give assembly text, or raw machine code as bytes")


def _events(v):
    if v is None or isinstance(v, (str, Path)):
        return
    from ..counters.events import EventSpec     # the event tables: only a list of events needs them
    if not isinstance(v, (list, tuple)) or not all(isinstance(e, (str, EventSpec, Event)) for e in v):
        _bad(f"events must be names (a comma-separated str or a list of str), EventSpecs or a config file "
             f"path, not {type(v).__name__} {_show(v)}", 'e.g. events="page-faults,task-clock"')


def _names(name: str, v, types, hint: str):
    if v is None:
        return
    if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)) or not all(isinstance(s, types) for s in v):
        _bad(f"{name} must be a list of names, not {type(v).__name__} {_show(v)}", hint)


def bind(fn, args: tuple, kwargs: dict) -> None:
    """A call that does not fit ``fn``'s signature (a misspelt keyword, code missing, extra
    positional arguments) as a UsageError, not Python's TypeError."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        _bad(f"{fn.__name__}(): {e}", f"see help(cyclebench.{fn.__name__}) for its arguments")


def check(**kw) -> None:
    """Check the keyword arguments given (only those present); raise UsageError on the first bad one."""
    for part in CODE_PARTS:
        if part in kw:
            _code(part, kw[part])
    for flag in FLAGS:
        if flag in kw and not (isinstance(kw[flag], bool) or (type(kw[flag]) is int and kw[flag] in (0, 1))):
            _bad(f"{flag} must be True or False, not {type(kw[flag]).__name__} {_show(kw[flag])}",
                 f"e.g. {flag}=True")
    g = kw.get
    if "unroll" in kw:
        _int("unroll count", g("unroll"), 1, 10_000_000,
             "use 1 <= --unroll <= 10000000 (omit it to choose automatically)")
    if "loop" in kw:
        _int("loop count", g("loop"), 0, 10**12,
             "use 0 (no loop) <= --loop <= 1e12 (omit it to choose automatically)")
    if "n_measurements" in kw:
        n = g("n_measurements")
        _int("n_measurements", n, 1, 100_000, "use 1 <= --n-measurements <= 100000",
             f"{n} measurements is out of range")
    for name in ("warm_up", "initial_warm_up"):
        if name in kw:
            _int(name, g(name), 0, 100_000, "e.g. --warm-up 5", "warm-up counts must be between 0 and 100000",
                 none_ok=False)
    if "alignment_offset" in kw:
        _int("alignment offset", g("alignment_offset"), 0, 63,
             "the measured code is 64-byte aligned plus 0..63", none_ok=False)
    if "aggregate" in kw and (not isinstance(g("aggregate"), str) or g("aggregate") not in AGGREGATES):
        _bad(f"unknown aggregate {_show(g('aggregate'))}", "use one of " + ", ".join(AGGREGATES))
    if "counters" in kw and (not isinstance(g("counters"), str) or g("counters") not in ("auto", "tsc", "perf")):
        _bad(f"unknown counter backend {_show(g('counters'))}", "use --counters auto, tsc or perf")
    if "timeout" in kw:
        _seconds("timeout", g("timeout"), 0, 86_400, "use 0 < --timeout <= 86400")
    if "clock_mhz" in kw and g("clock_mhz") is not None:
        v = g("clock_mhz")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 200 <= v <= 7000:
            _bad(f"clock_mhz must be a core clock in MHz from 200 to 7000, not {_show(v)}",
                 "e.g. --clock-mhz 4100 (omit it to calibrate the clock)")
    if "budget" in kw:
        _seconds("re-run budget", g("budget"), 0, 3600, "use 0 <= --budget <= 3600", lo_closed=True)
    if "cpu" in kw:
        ncpu = os.cpu_count() or 1
        _int("cpu", g("cpu"), 0, ncpu - 1, f"this machine has CPUs 0..{ncpu - 1}", f"CPU {g('cpu')} does not exist")
    if "group_size" in kw:
        _int("group size", g("group_size"), 1, 1024, "use 1 <= --group-size <= 1024")
    if "map_pages" in kw:
        _int("page cap", g("map_pages"), 0, MAX_MAP_PAGES, f"use 1 <= --max-pages <= {MAX_MAP_PAGES}")
    if "events" in kw:
        _events(g("events"))
    if "reset" in kw and g("reset"):
        from ..runner.layout import REG_INIT
        r = g("reset")
        if isinstance(r, str) or not isinstance(r, (list, tuple)) or \
                not all(isinstance(x, str) and x.lower() in REG_INIT for x in r):
            _bad(f"reset must name area registers ({', '.join(REG_INIT)}), not {_show(r)}",
                 'e.g. reset=("rsp",) for code that pushes')
    if "data" in kw and g("data") is not None:
        d = g("data")
        if not isinstance(d, (bytes, bytearray)):
            _bad(f"data must be bytes (copied into the data area), not {type(d).__name__} {_show(d)}",
                 'e.g. data=bytes(4096) or data="text".encode()')
        if len(d) > MAX_DATA:
            _bad(f"data is {len(d) >> 20} MiB", f"at most {MAX_DATA >> 30} GiB of data can be mapped")
    if "symbols" in kw:
        _names("symbols", g("symbols"), str, 'e.g. symbols=["memcpy"]')
        if g("symbols") is not None and len(g("symbols")) > 16:
            _bad("at most 16 symbols can be resolved", "call the rest through a table in data")
    if "libraries" in kw:
        _names("libraries", g("libraries"), (str, Path), 'e.g. libraries=["./libfoo.so"]')
    for name in ("r14_size", "area_size"):
        if name in kw:
            _int(name.replace("_", " "), g(name), MIN_AREA, MAX_AREA,
                 f"use {MIN_AREA >> 10} KiB <= --{name.replace('_', '-')} <= {MAX_AREA >> 30} GiB (in bytes)")
    if "max_memory" in kw:
        _int("max_memory", g("max_memory"), MIN_MEMORY, 1 << 48,
             f"use --max-memory of at least {MIN_MEMORY >> 20}M (API: max_memory=None for the default cap, "
             f"or bytes >= {MIN_MEMORY >> 20} MiB)",
             f"a memory cap of {g('max_memory')} bytes is out of range")
