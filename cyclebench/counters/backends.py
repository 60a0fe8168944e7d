"""Counter backends and their automatic choice.

- ``perf``: core cycles (and any other events) from hardware counters via perf_event_open,
  read inline with rdpmc where the kernel allows it, otherwise with read() on the group.
- ``tsc``: core cycles calibrated from the TSC against a dependent add chain; any requested
  perf events (software ones on a PMU-less VM) are still read through the same group path.

The runner's ``--probe`` opens the events for real, so the choice reflects what this machine and
kernel allow, and the reason given when a backend is missing comes from the actual errno.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

from ..errors import CounterUnavailable, UsageError
from ..machine.cpu import cpu_info
from ..measurement import runner

PERF_TYPE_HARDWARE = 0
PERF_COUNT_HW_CPU_CYCLES = 0


@dataclass(frozen=True)
class Event:
    """What the runner needs to open one perf event (counters.events.EventSpec fits too)."""
    name: str
    type: int
    config: int
    config1: int = 0
    config2: int = 0
    exclude_user: bool = False
    exclude_kernel: bool = True


HW_CYCLES = Event("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)


def runner_event_arg(ev) -> str:
    return (f"{ev.type}:{ev.config:#x}:{getattr(ev, 'config1', 0):#x}:{getattr(ev, 'config2', 0):#x}:"
            f"{int(bool(ev.exclude_user))}:{int(bool(ev.exclude_kernel))}")


@dataclass
class Backend:
    name: str                       # "tsc" or "perf"
    reason: str                     # why this backend, in one line
    events: list = field(default_factory=list)  # opened as one group; perf: cycles first
    use_rdpmc: bool = False

    @property
    def calibration(self) -> bool:
        return self.name == "tsc"

    def read_kwargs(self) -> dict:
        n = len(self.events)
        return {"use_tsc": True, "group": bool(n) and not self.use_rdpmc,
                "rdpmc_events": list(range(n)) if self.use_rdpmc else None}

    def runner_args(self) -> list[str]:
        args = []
        for ev in self.events:
            args += ["--event", runner_event_arg(ev)]
        return args + (["--rdpmc"] if self.use_rdpmc else [])


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    errno: str = ""
    rdpmc: int = 0


def probe(events: tuple) -> list[ProbeResult]:
    return list(_probe_cached(tuple(runner_event_arg(e) for e in events)))


@functools.lru_cache(maxsize=32)
def _probe_cached(args: tuple[str, ...]) -> tuple[ProbeResult, ...]:
    argv = ["--probe"]
    for a in args:
        argv += ["--event", a]
    out = runner.run(argv, timeout=5)
    results = []
    for _, ok, detail in sorted(out.probes):
        if ok:
            results.append(ProbeResult(True, rdpmc=int(detail.partition("=")[2] or 0)))
        else:
            results.append(ProbeResult(False, errno=detail.split()[0] if detail else "EOTHER"))
    return tuple(results)


def _paranoid() -> str:
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return f.read().strip()
    except OSError:
        return "?"


def explain_failure(ev, res: ProbeResult) -> tuple[str, str]:
    """(cause, hint) for an event that perf_event_open refused."""
    if res.errno in ("EACCES", "EPERM"):
        return (f"perf_event_paranoid is {_paranoid()}, which forbids counting '{ev.name}'",
                "run 'sudo sysctl kernel.perf_event_paranoid=1' (or grant CAP_PERFMON)")
    if res.errno == "EBUSY":
        return (f"the counters for '{ev.name}' are taken by another user (e.g. the NMI watchdog or another profiler)",
                "stop the other user, or 'sudo sysctl kernel.nmi_watchdog=0'")
    if ev.type == PERF_TYPE_HARDWARE or ev.type == 4:  # 4 = PERF_TYPE_RAW
        if not os.path.exists("/sys/bus/event_source/devices/cpu") and cpu_info().hypervisor:
            return ("no hardware PMU: running in a VM without PMU passthrough "
                    f"(perf_event_open for '{ev.name}' failed with {res.errno})",
                    "use --counters tsc (TSC-calibrated cycles), or enable vPMU passthrough in the hypervisor")
        if not os.path.exists("/sys/bus/event_source/devices/cpu"):
            return (f"no hardware PMU is exposed by this kernel (perf_event_open for '{ev.name}' failed with {res.errno})",
                    "use --counters tsc for TSC-calibrated cycles")
        return (f"this CPU has no event '{ev.name}' (perf_event_open failed with {res.errno})",
                "list what it offers with 'cyclebench asm --list-events'")
    return (f"cannot open event '{ev.name}' (perf_event_open failed with {res.errno})",
            "list what this machine offers with 'cyclebench asm --list-events'")


def select_backend(counters: str = "auto", events: list | None = None) -> Backend:
    events = list(events or [])
    if counters not in ("auto", "tsc", "perf"):
        raise UsageError(f"unknown counter backend '{counters}'", "use --counters auto, tsc or perf")
    names = [e.name for e in events]
    if "cycles" in names:
        raise UsageError("'cycles' is always measured; do not list it in --events",
                         "it is reported first, from the PMU or TSC-calibrated")
    hw_reason = None
    if counters in ("auto", "perf"):
        res = probe((HW_CYCLES, *events))
        if res[0].ok and all(r.ok for r in res):
            rdpmc = all(r.rdpmc for r in res)
            return Backend("perf", "hardware PMU available through perf_event_open",
                           [HW_CYCLES, *events], use_rdpmc=rdpmc)
        if not res[0].ok:
            cause, hint = explain_failure(HW_CYCLES, res[0])
            if counters == "perf":
                raise CounterUnavailable(cause, hint)
            hw_reason = cause
        else:
            bad = next(i for i, r in enumerate(res) if not r.ok)
            raise CounterUnavailable(*explain_failure(events[bad - 1], res[bad]))
    if events:
        res = probe(tuple(events))
        for ev, r in zip(events, res):
            if not r.ok:
                raise CounterUnavailable(*explain_failure(ev, r))
    reason = hw_reason or "TSC backend requested"
    return Backend("tsc", reason, events)
