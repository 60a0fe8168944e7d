"""``--list-events``: which event sources this machine can count, and the events behind them.

Two questions are kept apart, because on a VM without a PMU their answers differ:
- *known*: libpfm4 recognises the CPU model from CPUID and can name and encode its events;
- *usable*: perf_event_open actually opens a counter of that source here.
Usability is probed for real (one event per source, through the runner's ``--probe``), so the
status column shows the errno-based reason when a source cannot be used.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from ..counters import libpfm
from ..counters.backends import explain_failure, probe
from ..counters.events import GENERIC_EVENTS, SOFTWARE_EVENTS
from ..counters.resolve import list_events
from ..errors import CycleBenchError


@dataclass(frozen=True)
class SourceStatus:
    name: str          # "software", "generic", or a libpfm PMU name
    kind: str          # what it is
    n_events: int
    counters: str      # programmable (+ fixed) counters, as libpfm reports them
    usable: bool
    status: str        # one line: why usable or not


def _probe_one(event) -> tuple[bool, str]:
    try:
        (res,) = probe((event,))
    except CycleBenchError as err:        # the runner itself failed: say so, do not guess
        return False, f"probe failed: {err.cause}"
    if res.ok:
        return True, "usable: perf_event_open works" + (" (rdpmc allowed)" if res.rdpmc else "")
    return False, "not usable: " + explain_failure(event, res)[0]


def source_statuses() -> list[SourceStatus]:
    """One row per event source: perf's software and generic names, then every libpfm PMU that
    libpfm detects on this machine, each probed with perf_event_open."""
    rows = []
    ok, why = _probe_one(SOFTWARE_EVENTS["task-clock"])
    rows.append(SourceStatus("software", "kernel software events", len({e.name for e in SOFTWARE_EVENTS.values()}),
                             "-", ok, why))
    ok, why = _probe_one(GENERIC_EVENTS["cycles"])
    rows.append(SourceStatus("generic", "perf's generic hardware events (the CPU's PMU)",
                             len({e.name for e in GENERIC_EVENTS.values()}), "-", ok, why))
    if not libpfm.available():
        return rows
    pfm = libpfm.get()
    for pmu in pfm.pmus():
        if pmu.name in ("perf", "perf_raw"):
            continue
        events = pfm.events(pmu.name)
        counters = f"{pmu.n_counters}" + (f" + {pmu.n_fixed} fixed" if pmu.n_fixed else "")
        if not events:
            rows.append(SourceStatus(pmu.name, pmu.description, 0, counters, False, "no events"))
            continue
        try:
            spec = pfm.encode(f"{pmu.name}::{events[0].name}"
                              + (f":{events[0].umasks[0].name}" if events[0].umasks and
                                 not any(u.default for u in events[0].umasks) else ""))
        except CycleBenchError as err:
            rows.append(SourceStatus(pmu.name, pmu.description, len(events), counters, False,
                                     f"libpfm cannot encode its first event: {err.cause}"))
            continue
        ok, why = _probe_one(spec)
        if not ok:
            why = "known to libpfm (detected from CPUID), " + why
        rows.append(SourceStatus(pmu.name, pmu.description, len(events), counters, ok, why))
    return rows


def print_events(all_pmus: bool = False, file=None) -> int:
    """Print the source table and the event table; returns the exit code (0)."""
    from rich.console import Console
    from rich.table import Table

    file = file or sys.stdout
    interactive = file.isatty() if hasattr(file, "isatty") else False
    console = Console(file=file, width=None if interactive else 200, soft_wrap=not interactive,
                      highlight=False, color_system="auto" if interactive else None)
    statuses = source_statuses()
    usable = {s.name: s.usable for s in statuses}

    t = Table(title="Event sources on this machine", title_justify="left")
    for col in ("source", "what", "events", "counters", "status here"):
        t.add_column(col, overflow="fold")
    for s in statuses:
        t.add_row(s.name, s.kind, str(s.n_events), s.counters, s.status)
    console.print(t)

    known_only = []
    if libpfm.available():
        present = {p.name for p in libpfm.get().pmus()}
        known_only = [p for p in libpfm.get().pmus(present_only=False) if p.name not in present]
        console.print(f"{len(known_only)} further PMUs are only known to libpfm4 (other CPUs; not on this machine)"
                      + ("." if all_pmus else "; --list-events --all-pmus lists them."))
        if all_pmus:
            k = Table(title="PMUs known to libpfm4 but not on this machine", title_justify="left")
            for col in ("PMU", "description", "kind", "events"):
                k.add_column(col, overflow="fold")
            for p in known_only:
                k.add_row(p.name, p.description, p.kind, str(p.n_events))
            console.print(k)
    else:
        console.print("libpfm4 is not installed: only perf's software and generic names are listed "
                      f"({libpfm.APT_HINT}).")

    e = Table(title="Events (give the name to --events)", title_justify="left")
    for col in ("source", "name", "usable here", "description", "unit masks"):
        e.add_column(col, overflow="fold")
    for row in list_events():
        e.add_row(row.source, row.name, "yes" if usable.get(row.source) else "no",
                  row.description, row.umasks)
    console.print(e)
    if not usable.get("generic"):
        console.print("Hardware events cannot be counted here; cycles are measured TSC-calibrated "
                      "(--counters tsc). Software events work through the same perf_event path.")
    return 0
