"""The result of a measurement and its versioned JSON form.

``Result.from_json`` raises ResultFileError (exit code 10) for anything that is not a result this
version can read: invalid JSON, NaN or Infinity, nesting too deep, a missing field or a field of
the wrong type. ``to_json`` writes standard JSON (a non-finite figure becomes null).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from ..errors import ResultFileError
from . import measured

SCHEMA = "cyclebench.result"
SCHEMA_VERSION = 1


@dataclass
class EventResult:
    """One event's figure per copy, with its uncertainty and samples."""
    name: str
    unit: str
    value: float                 # the chosen aggregate, per copy (unless no_normalization)
    uncertainty: float           # 95% half-width of the aggregate
    aggregate: str
    label: str                   # e.g. "cycles (TSC-calibrated, 3.69 GHz)"
    min: float
    median: float
    max: float
    samples: list[float] = field(default_factory=list)   # per repetition, same unit as value
    # perf_event events: True when time_running < time_enabled in some run (multiplexed or not
    # scheduled); the values are never scaled. running_fraction: the lowest running/enabled seen.
    multiplexed: bool = False
    running_fraction: float | None = None
    group: int | None = None                               # the perf_event group it was read in
    # Set when the figure is not distinguishable from zero given the resolution (its uncertainty
    # and the counter's quantisation): the code costs less than this, per copy. ``value`` is then
    # no cost to quote, only the bound is.
    upper_bound: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Result:
    """One measurement: parameters, backend, figures, stability, machine and raw samples."""
    kind: str                            # "snippet"
    parameters: dict
    backend: dict
    events: dict[str, EventResult]
    stability: dict
    machine: dict
    warnings: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict)          # runner readings, per attempt
    attempts: list[dict] = field(default_factory=list)

    def value(self, event: str = "cycles") -> float:
        return self.events[event].value

    @property
    def cycles(self) -> float:
        """Core cycles per copy (the Measurement protocol's headline figure)."""
        return self.value("cycles")

    def facts(self) -> dict:
        p = self.parameters
        return measured.facts(self.backend, p.get("n_measurements"), self.stable, self.warnings,
                              p.get("events") or (), **{k: p.get(k) for k in ("unroll", "loop", "aggregate", "cpu")})

    @property
    def stable(self) -> bool:
        return bool(self.stability.get("stable", True))

    @property
    def below_resolution(self) -> bool:
        """The main figure is an upper bound: the code costs less than the resolution."""
        cycles = self.events.get("cycles")
        return cycles is not None and cycles.upper_bound is not None

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "kind": self.kind,
            "parameters": self.parameters, "backend": self.backend,
            "events": {k: v.to_dict() for k, v in self.events.items()},
            "stability": self.stability, "warnings": self.warnings,
            "attempts": self.attempts, "machine": self.machine, "raw": self.raw,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(_finite(self.to_dict()), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            _bad("not a cyclebench result (schema field missing or different)")
        version = d.get("schema_version", 0)
        if isinstance(version, bool) or not isinstance(version, int):
            _bad(f"schema_version is {_kind(version)}, not a whole number")
        if version > SCHEMA_VERSION:
            raise ResultFileError(f"result schema version {version} is newer than this cyclebench "
                                  f"({SCHEMA_VERSION})", "upgrade cyclebench")
        for name, types in (("kind", str), ("parameters", dict), ("backend", dict), ("events", dict),
                            ("stability", dict), ("machine", dict), ("warnings", list), ("raw", dict),
                            ("attempts", list)):
            optional = name in ("warnings", "raw", "attempts")
            if not isinstance(d.get(name, types() if optional else None), types):
                _bad(f"field '{name}' is {_kind(d.get(name))}, not {types.__name__}"
                     if name in d else f"field '{name}' is missing")
        if not isinstance(d["stability"].get("stable", True), bool):
            _bad("field 'stability.stable' is not true or false")
        return cls(kind=d["kind"], parameters=d["parameters"], backend=d["backend"],
                   events={k: _event(k, v) for k, v in d["events"].items()},
                   stability=d["stability"], machine=d["machine"], warnings=d.get("warnings", []),
                   raw=d.get("raw", {}), attempts=d.get("attempts", []))

    @classmethod
    def from_json(cls, text: str | bytes) -> "Result":
        if not isinstance(text, (str, bytes, bytearray)):
            _bad(f"a result is JSON text, not {_kind(text)}")
        try:
            doc = json.loads(text, parse_constant=_no_constant)
        except RecursionError:
            _bad("the JSON is nested too deeply")
        except ValueError as e:           # JSONDecodeError, bad UTF-8, a 5000-digit number
            _bad(f"not valid JSON: {str(e)[:120]}")
        return cls.from_dict(doc)


_NUMBER = (int, float)
_EVENT_TYPES = {"name": str, "unit": str, "value": _NUMBER, "uncertainty": _NUMBER, "aggregate": str,
                "label": str, "min": _NUMBER, "median": _NUMBER, "max": _NUMBER, "samples": list,
                "multiplexed": bool, "running_fraction": _NUMBER, "group": int, "upper_bound": _NUMBER}
_EVENT_OPTIONAL = {"samples", "multiplexed", "running_fraction", "group", "upper_bound"}


def _event(key, v) -> EventResult:
    if not isinstance(v, dict):
        _bad(f"event '{str(key)[:40]}' is {_kind(v)}, not an object")
    known = {}
    for name, types in _EVENT_TYPES.items():
        if name not in v:
            if name not in _EVENT_OPTIONAL:
                _bad(f"event '{str(key)[:40]}' has no '{name}'")
            continue
        x = v[name]
        if x is None and types is _NUMBER and name not in _EVENT_OPTIONAL:
            x = math.nan                  # to_json writes a figure that is not a number as null
        elif not (x is None and name in _EVENT_OPTIONAL and name != "samples") and not _is(x, types):
            _bad(f"event '{str(key)[:40]}' field '{name}' is {_kind(x)}")
        known[name] = x
    if "samples" in known:
        if not all(x is None or _is(x, _NUMBER) for x in known["samples"]):
            _bad(f"event '{str(key)[:40]}' has a sample that is not a number")
        known["samples"] = [math.nan if x is None else x for x in known["samples"]]
    return EventResult(**known)


def _is(x, types) -> bool:
    """isinstance, where a JSON true/false is not a number."""
    return isinstance(x, types) and (types is bool or not isinstance(x, bool))


def _bad(cause: str):
    raise ResultFileError(f"cannot read the result: {cause}", "give a file written by cyclebench --json")


def _kind(x) -> str:
    return "null" if x is None else type(x).__name__


def _no_constant(name: str):
    _bad(f"{name} is not a number in JSON")


def _finite(x):
    """The document with NaN and infinities as null: standard JSON that from_json reads back."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x
