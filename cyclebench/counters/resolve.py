"""One entry point from what the user typed to EventSpecs, and the rows behind ``--list-events``.

Lookup order for each comma-separated name: perf's software and generic hardware names (they work
on every Linux, whatever the CPU), then libpfm4 (CPU-specific names). An argument that names a
file, or ends in ``.txt``, is a nanoBench config file instead.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import CounterUnavailable, UsageError
from ..textfile import quote
from .events import GENERIC_EVENTS, SOFTWARE_EVENTS, EventSpec, builtin_event


def resolve_events(spec: str | Path | list[str]) -> list[EventSpec]:
    """``"cycles,instructions,RETIRED_OPS"``, a list of names, or a config file path -> EventSpecs."""
    if isinstance(spec, Path) or (isinstance(spec, str) and _is_config_file(spec)):
        return _config().load_config(spec)
    names = spec if isinstance(spec, list) else _split(spec)
    if not names:
        raise UsageError("no event names given", hint="e.g. --events cycles,instructions")
    specs = [resolve_name(name) for name in names]
    seen = set()
    for s in specs:
        if s.name in seen:
            raise UsageError(f"event '{quote(s.name)}' is given twice", hint="list each event once")
        seen.add(s.name)
    return specs


def event_specs(events) -> list:
    """What ``measure(events=...)`` accepts -> EventSpecs: names (one comma-separated str or a
    list), a config file path, or EventSpecs (and names) mixed in a list."""
    if not events:
        return []
    if isinstance(events, (str, Path)):
        return resolve_events(events)
    names = [e for e in events if isinstance(e, str)]
    resolved = iter(resolve_events(names) if names else [])
    return [next(resolved) if isinstance(e, str) else e for e in events]


def resolve_name(name: str) -> EventSpec:
    """One event: software/generic perf name first, then libpfm4."""
    builtin = builtin_event(name)
    if builtin is not None:
        return builtin
    from . import libpfm            # here: ctypes and its structures cost start-up when unused
    try:
        pfm = libpfm.get()
    except CounterUnavailable as err:
        known = ", ".join(sorted({e.name for e in (*GENERIC_EVENTS.values(),
                                                    *SOFTWARE_EVENTS.values())}))
        raise CounterUnavailable(f"unknown event '{quote(name)}': it is not a perf generic or software "
                                 f"event, and {err.cause}",
                                 hint=f"{err.hint}; names that need no libpfm: {known}") from None
    return pfm.encode(name)


def _split(text: str) -> list[str]:
    # Commas inside libpfm modifiers do not occur (they use ':'), so a plain split is enough.
    return [part.strip() for part in text.split(",") if part.strip()]


def _is_config_file(text: str) -> bool:
    if "," in text:
        return False
    # os.path.isfile: False (not an OSError) for names too long or with NUL bytes
    return text.endswith(".txt") or os.path.isfile(text) or os.path.isfile(_config().CONFIG_DIR / text)


def _config():
    from . import nanobench_config      # here: only named events reach it, and a measurement without events starts faster
    return nanobench_config


@dataclass(frozen=True)
class EventRow:
    """One line of ``--list-events``."""
    source: str        # "software", "generic", or the libpfm PMU name
    name: str          # what to type after --events
    description: str
    umasks: str = ""   # libpfm unit masks, comma-separated ("" when none)


def list_events(include_libpfm: bool = True) -> list[EventRow]:
    """Rows for ``--list-events``: perf's own names, then every libpfm event of this machine's PMUs.

    libpfm's generic "perf" pseudo-PMUs are skipped: they repeat the perf names above.
    """
    rows = [EventRow("software", n, s.description) for n, s in SOFTWARE_EVENTS.items()
            if n == s.name]
    rows += [EventRow("generic", n, s.description) for n, s in GENERIC_EVENTS.items()
             if n == s.name]
    from . import libpfm
    if include_libpfm and libpfm.available():
        pfm = libpfm.get()
        for event in pfm.events():
            if event.pmu in ("perf", "perf_raw"):
                continue
            rows.append(EventRow(event.pmu, event.name, event.description,
                                 ", ".join(u.name for u in event.umasks)))
    return rows
