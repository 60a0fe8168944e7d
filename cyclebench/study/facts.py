"""What a run actually did, read from its records and the results file's header: the machine,
the counter backend each measurement used (TSC-calibrated or PMU), the extra events counted,
repetitions, and stability. The summary's Machine, Method and Caveats sections and the JSON
metadata block are filled from these facts, never from fixed text."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from ..measurement.measured import facts_of


@dataclass
class RunFacts:
    study: str
    config: str                                   # the config's name: "quick", "full" ...
    machine: dict = field(default_factory=dict)
    prepared: dict = field(default_factory=dict)  # the study's facts from prepare()
    records: int = 0
    measurements: int = 0                         # records whose result came from a timed run
    backends: dict = field(default_factory=dict)  # backend name -> measurements ("tsc", "perf")
    backend_reasons: list = field(default_factory=list)
    calibrated_ghz: tuple | None = None           # (lowest, highest) TSC calibration seen
    events: list = field(default_factory=list)    # extra events counted (branch-misses ...)
    repetitions: list = field(default_factory=list)
    unstable: int = 0
    variable: int = 0                             # a cost that varies by nature (stability.variable)
    warnings: list = field(default_factory=list)  # [(text, how many measurements)], most common first

    @property
    def pmu(self) -> bool:
        """True when every measurement counted with a hardware PMU."""
        return bool(self.backends) and set(self.backends) == {"perf"}

    @property
    def tsc(self) -> bool:
        return "tsc" in self.backends

    def counted(self, event: str) -> bool:
        return event in self.events

    def to_dict(self) -> dict:
        return asdict(self)


def run_facts(study: str, config: str, meta: dict | None, records: list[dict],
              prepared: dict | None = None) -> RunFacts:
    meta = meta or {}
    f = RunFacts(study, config, dict(meta.get("machine") or {}), dict(prepared or meta.get("prepared") or {}),
                 records=len(records))
    backends, reasons, ghz, events, reps, warns = Counter(), [], [], [], set(), Counter()
    for rec in records:
        res = facts_of(rec.get("result"))
        if res is None:
            continue
        f.measurements += 1
        b = res["backend"]
        backends[b.get("name", "?")] += 1
        if b.get("reason") and b["reason"] not in reasons:
            reasons.append(b["reason"])
        if b.get("calibrated_ghz"):
            ghz.append(b["calibrated_ghz"])
        for e in res["events"]:
            if e not in events:
                events.append(e)
        n = res["options"].get("n_measurements")
        if n:
            reps.add(n)
        if res["stable"] is False:
            f.unstable += 1
        if rec["result"].get("variable"):
            f.variable += 1
        for w in res["warnings"]:
            warns[w] += 1
    f.backends = dict(backends)
    f.backend_reasons = reasons
    f.calibrated_ghz = (min(ghz), max(ghz)) if ghz else None
    f.events = events
    f.repetitions = sorted(reps)
    f.warnings = warns.most_common()
    return f
