"""What every timed figure is, whatever timed it: the ``Measurement`` protocol.

Three things measure: ``measure()`` (a snippet's ``Result``), the routine harness (a routine's
``routines.timing.Timing``) and the whole-program timer (``routines.program.ProgramTiming``). Each
gives a headline figure in core cycles, says whether it is stable and why not, which counter
backend made it, and how many repetitions it took. A study stores ``facts()`` in its record's
``result`` (beside the study's own figures); ``facts_of`` reads them back from a stored record, and
the summary's Machine, Method and Caveats sections count them (study/facts.py).
"""
from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

FACTS = ("backend", "options", "stable", "warnings")   # events: optional (extra events counted)


@runtime_checkable
class Measurement(Protocol):
    backend: dict              # the counter backend: name ("tsc", "perf"), reason, calibrated_ghz ...
    warnings: list

    @property
    def stable(self) -> bool:
        """False when the host disturbed the figure more than its uncertainty says."""

    @property
    def cycles(self) -> float:
        """The headline figure in core cycles (per copy, per call or per iteration)."""

    def facts(self) -> dict:
        """``{"backend", "options": {"n_measurements", ...}, "stable", "warnings"[, "events"]}``."""

    def to_dict(self) -> dict:
        """Everything, as JSON-ready data."""


def facts(backend: dict, n_measurements: int | None, stable: bool, warnings: Iterable[str],
          events: Iterable[str] = (), **options) -> dict:
    """The stored facts of one measurement; ``events``: the extra events it counted."""
    out = {"backend": dict(backend), "options": {"n_measurements": n_measurements, **options},
           "stable": bool(stable), "warnings": list(warnings)}
    if events:
        out["events"] = list(events)
    return out


def group_facts(members: list[dict]) -> dict:
    """The facts of measurements taken together (programs timed interleaved): the first one's
    backend and options, stable when all are, every warning once."""
    first = members[0]
    return {"backend": first["backend"], "options": first["options"],
            "stable": all(m["stable"] for m in members),
            "warnings": list(dict.fromkeys(w for m in members for w in m["warnings"]))}


def facts_of(result) -> dict | None:
    """The facts of a stored measurement (a record's ``result``), or None when it is none."""
    if not isinstance(result, dict) or not isinstance(result.get("backend"), dict):
        return None
    return {"backend": result["backend"], "options": result.get("options") or {},
            "stable": result.get("stable"), "warnings": list(result.get("warnings") or []),
            "events": list(result.get("events") or [])}
