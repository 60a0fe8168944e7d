"""The result of a measurement and its versioned JSON form."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ..errors import ResultFileError

SCHEMA = "cyclebench.result"
SCHEMA_VERSION = 1


@dataclass
class EventResult:
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

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Result:
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
    def stable(self) -> bool:
        return bool(self.stability.get("stable", True))

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "kind": self.kind,
            "parameters": self.parameters, "backend": self.backend,
            "events": {k: v.to_dict() for k, v in self.events.items()},
            "stability": self.stability, "warnings": self.warnings,
            "attempts": self.attempts, "machine": self.machine, "raw": self.raw,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        if d.get("schema") != SCHEMA:
            raise ResultFileError("not a cyclebench result (schema field missing or different)",
                                  "give a file written by cyclebench --json")
        if d.get("schema_version", 0) > SCHEMA_VERSION:
            raise ResultFileError(f"result schema version {d['schema_version']} is newer than this cyclebench "
                                  f"({SCHEMA_VERSION})", "upgrade cyclebench")
        return cls(kind=d["kind"], parameters=d["parameters"], backend=d["backend"],
                   events={k: EventResult(**v) for k, v in d["events"].items()},
                   stability=d["stability"], machine=d["machine"], warnings=d.get("warnings", []),
                   raw=d.get("raw", {}), attempts=d.get("attempts", []))

    @classmethod
    def from_json(cls, text: str) -> "Result":
        try:
            return cls.from_dict(json.loads(text))
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ResultFileError(f"cannot read result JSON: {e}", "give a file written by cyclebench --json") from None
