"""Counter backends and their automatic choice.

- ``perf``: core cycles (and any other events) from hardware counters via perf_event_open,
  read inline with rdpmc where the kernel allows it, otherwise with read() on the group.
- ``tsc``: core cycles calibrated from the TSC against a dependent add chain; any requested
  perf events (software ones on a PMU-less VM) are still read through the same group path.

Events are split into perf_event groups that each fit the hardware counters (nanoBench runs its
benchmark once per counter configuration; the runner measures the groups one after the other with
only one enabled). Software events need no counter and ride along in the first group.

The runner's ``--probe`` opens the events for real, so the choice reflects what this machine and
kernel allow, and the reason given when a backend is missing comes from the actual errno.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace

from ..errors import CounterUnavailable, UsageError
from ..machine.cpu import cpu_info
from .. import runner
from ..runner.layout import MAX_EVENTS      # the runner's limit per group
from . import probe_cache, reads

PERF_TYPE_HARDWARE = 0
PERF_TYPE_SOFTWARE = 1
PERF_TYPE_RAW = 4
PERF_COUNT_HW_CPU_CYCLES = 0
PERF_COUNT_HW_INSTRUCTIONS = 1
PERF_COUNT_HW_REF_CPU_CYCLES = 9
_KERNEL_SIDE_SW = (3, 4)          # context-switches, cpu-migrations: raised in kernel context
DEFAULT_COUNTERS = 4              # programmable counters when libpfm cannot tell (Intel minimum with HT)


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
# nanoBench's -fixed_counters (Intel's fixed-function counters; perf puts these generic events
# there when the CPU has them, and on a programmable counter otherwise, e.g. on AMD).
FIXED_COUNTERS = (Event("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
                  Event("ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES))


def with_privilege(ev, user: bool = True, kernel: bool = False):
    """The event counting user mode when ``user`` and kernel mode when ``kernel`` (nanoBench's
    -usr and -os). Software events the kernel raises in kernel context keep counting the kernel."""
    if ev.type == PERF_TYPE_SOFTWARE and ev.config in _KERNEL_SIDE_SW:
        return ev
    if ev.exclude_user == (not user) and ev.exclude_kernel == (not kernel):
        return ev
    return replace(ev, exclude_user=not user, exclude_kernel=not kernel)


def uses_counter(ev, vendor: str | None = None) -> bool:
    """Whether an event occupies a programmable hardware counter: software events do not, and on
    Intel cycles, instructions and ref-cycles go to the fixed counters."""
    if ev.type == PERF_TYPE_SOFTWARE or ev.type == 2:       # software, tracepoint
        return False
    vendor = vendor or cpu_info().vendor
    if (vendor == "GenuineIntel" and ev.type == PERF_TYPE_HARDWARE
            and ev.config in (PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_REF_CPU_CYCLES)):
        return False
    return True


def plan_groups(events: list, limit: int, counts=uses_counter, leading: list | tuple = ()) -> list[list]:
    """Split events into perf_event groups, in order, so that each group holds at most ``limit``
    events for which ``counts(event)`` is true (and at most MAX_EVENTS in all).

    ``leading`` events open the first group (cycles and the fixed counters). An event marked
    ``taken_alone`` (nanoBench's .TakenAlone) gets a group of its own.
    """
    if limit < 1:
        raise UsageError(f"group size {limit} is out of range", "use a group size of at least 1")
    alone = [e for e in events if getattr(e, "taken_alone", False)]
    groups, cur = [], list(leading)
    used = sum(1 for e in cur if counts(e))
    for e in events:
        if getattr(e, "taken_alone", False):
            continue
        c = counts(e)
        if cur and (len(cur) >= MAX_EVENTS or (c and used + 1 > limit)):
            groups.append(cur)
            cur, used = [], 0
        cur.append(e)
        used += int(bool(c))
    if cur:
        groups.append(cur)
    return groups + [[e] for e in alone]


def counter_limit() -> int:
    """Programmable counters of this machine's core PMU as libpfm4 knows them (Zen: 6; Intel: 4
    with SMT on, 8 with it off), else DEFAULT_COUNTERS."""
    from . import libpfm            # here: only the perf backend asks, and ctypes costs start-up
    try:
        if libpfm.available():
            cores = [p for p in libpfm.get().pmus() if p.kind == "core" and p.n_counters]
            if cores:
                return cores[0].n_counters
    except CounterUnavailable:
        pass
    return DEFAULT_COUNTERS


def runner_event_arg(ev) -> str:
    return (f"{ev.type}:{ev.config:#x}:{getattr(ev, 'config1', 0):#x}:{getattr(ev, 'config2', 0):#x}:"
            f"{int(bool(ev.exclude_user))}:{int(bool(ev.exclude_kernel))}")


@dataclass
class Backend:
    """The chosen counter backend, its event groups and how the harness reads them."""
    name: str                       # "tsc" or "perf"
    reason: str                     # why this backend, in one line
    groups: list = field(default_factory=list)  # perf_event groups, measured one after the other;
                                                # perf: cycles first in the first group
    use_rdpmc: bool = False
    no_mem: bool = False            # readings kept in registers (nanoBench's -no_mem)
    warnings: list = field(default_factory=list)

    @property
    def events(self) -> list:
        return [e for g in self.groups for e in g]

    @property
    def slots(self) -> int:
        """Events of the largest group: how many values each reading holds."""
        return max((len(g) for g in self.groups), default=0)

    @property
    def calibration(self) -> bool:
        return self.name == "tsc"

    def read_kwargs(self) -> dict:
        n = self.slots
        return {"use_tsc": True, "group": bool(n) and not self.use_rdpmc,
                "rdpmc_events": list(range(n)) if self.use_rdpmc else None, "no_mem": self.no_mem}

    def runner_args(self) -> list[str]:
        return _group_args(self.groups) + (["--rdpmc"] if self.use_rdpmc else [])


def _group_args(groups) -> list[str]:
    args = []
    for g, group in enumerate(groups):
        if g:
            args.append("--group")
        for ev in group:
            args += ["--event", runner_event_arg(ev)]
    return args


@dataclass(frozen=True)
class ProbeResult:
    """Whether one event opened in the runner's probe (errno if not) and its rdpmc index."""
    ok: bool
    errno: str = ""
    rdpmc: int = 0


def probe(events: tuple, groups: list | None = None) -> list[ProbeResult]:
    """Open the events for real (as one group, or as the given groups) and report each one."""
    return list(_probe_cached(tuple(_group_args(groups if groups is not None else [list(events)]))))


@functools.lru_cache(maxsize=32)
def _probe_cached(args: tuple[str, ...]) -> tuple[ProbeResult, ...]:
    """Per process, and on disk (probe_cache) for as long as nothing the answer depends on changes."""
    key = probe_cache.environment_key(runner.runner_path())
    stored = probe_cache.lookup(key, args)
    if stored is not None:
        return tuple(ProbeResult(ok, errno, rdpmc) for ok, errno, rdpmc in stored)
    out = runner.run(["--probe", *args], timeout=5)
    if out.error:
        raise CounterUnavailable(f"the counter probe failed: {out.error.get('message', '')}",
                                 "list what this machine offers with 'cyclebench asm --list-events'")
    results = []
    for _, ok, detail in sorted(out.probes):
        if ok:
            results.append(ProbeResult(True, rdpmc=int(detail.partition("=")[2] or 0)))
        else:
            results.append(ProbeResult(False, errno=detail.split()[0] if detail else "EOTHER"))
    if len(results) == args.count("--event"):
        probe_cache.store(key, args, [[r.ok, r.errno, r.rdpmc] for r in results])
    return tuple(results)


def _paranoid() -> str:
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _has_cpu_pmu() -> bool:
    return os.path.exists("/sys/bus/event_source/devices/cpu")


def _where(ev) -> str:
    src = getattr(ev, "source", "")
    return f" ({src})" if src and src not in ("generic", "software") else ""


def explain_failure(ev, res: ProbeResult) -> tuple[str, str]:
    """(cause, hint) for an event that perf_event_open refused."""
    if res.errno in ("EACCES", "EPERM"):
        return (f"perf_event_paranoid is {_paranoid()}, which forbids counting '{ev.name}'"
                + (" in kernel mode" if not ev.exclude_kernel else ""),
                "run 'sudo sysctl kernel.perf_event_paranoid=1' (or grant CAP_PERFMON)"
                + ("; or count user mode only (--os 0)" if not ev.exclude_kernel else ""))
    if res.errno == "EBUSY":
        return (f"the counters for '{ev.name}' are taken by another user (e.g. the NMI watchdog or another profiler)",
                "stop the other user, or 'sudo sysctl kernel.nmi_watchdog=0'")
    if ev.type in (PERF_TYPE_HARDWARE, 3, PERF_TYPE_RAW) or ev.type >= 6:   # 3 = HW_CACHE; >= 6: dynamic PMUs
        is_cycles = ev.type == PERF_TYPE_HARDWARE and ev.config == PERF_COUNT_HW_CPU_CYCLES
        what = ("use --counters tsc (TSC-calibrated cycles)" if is_cycles else
                "only TSC-calibrated cycles and software events (page-faults, task-clock ...) can be "
                "measured here: drop the hardware events")
        if not _has_cpu_pmu() and cpu_info().hypervisor:
            return ("no hardware PMU: running in a VM without PMU passthrough "
                    f"(perf_event_open for '{ev.name}'{_where(ev)} failed with {res.errno})",
                    f"{what}; or enable vPMU passthrough in the hypervisor")
        if not _has_cpu_pmu():
            return (f"no hardware PMU is exposed by this kernel (perf_event_open for '{ev.name}'{_where(ev)} "
                    f"failed with {res.errno})", what)
        if res.errno in ("ENOENT", "EOPNOTSUPP", "EINVAL", "ENODEV"):
            return (f"this CPU has no event '{ev.name}'{_where(ev)}: perf_event_open failed with {res.errno} "
                    f"(type={ev.type} config={ev.config:#x})",
                    "list what it offers with 'cyclebench asm --list-events'; config files are per CPU "
                    "(shipped: cfg_Zen4.txt, cfg_Skylake.txt ...)")
        return (f"cannot open '{ev.name}'{_where(ev)}: perf_event_open failed with {res.errno}",
                "list what this machine offers with 'cyclebench asm --list-events'")
    return (f"cannot open event '{ev.name}'{_where(ev)} (perf_event_open failed with {res.errno})",
            "list what this machine offers with 'cyclebench asm --list-events'")


def _rdpmc_refusal() -> tuple[str, str]:
    try:
        with open("/sys/bus/event_source/devices/cpu/rdpmc") as f:
            setting = f.read().strip()
    except OSError:
        setting = "?"
    return (f"--no-mem needs user-space rdpmc, which the kernel does not allow here "
            f"(/sys/bus/event_source/devices/cpu/rdpmc is {setting})",
            "run 'echo 2 | sudo tee /sys/bus/event_source/devices/cpu/rdpmc', or drop --no-mem")


def select_backend(counters: str = "auto", events: list | None = None, *, user: bool = True,
                   kernel: bool = False, fixed_counters: bool = False, group_size: int | None = None,
                   no_mem: bool = False) -> Backend:
    """Choose the backend and plan the event groups.

    ``user``/``kernel``: count user / kernel mode (nanoBench's -usr/-os) (applied to every event, cycles included, except the
    kernel-side software events). ``fixed_counters``: also instructions and ref-cycles (perf backend
    only). ``group_size``: at most this many events per group, whatever their kind (default: the PMU's
    programmable counters for hardware events; software events need no counter). ``no_mem``: the
    register-only read sequences (rdpmc or TSC only).
    """
    events = [with_privilege(e, user, kernel) for e in (events or [])]
    if counters not in ("auto", "tsc", "perf"):
        raise UsageError(f"unknown counter backend '{counters}'", "use --counters auto, tsc or perf")
    if not (user or kernel):
        raise UsageError("--usr 0 --os 0 counts nothing", "count user mode (--usr 1, the default), kernel mode (--os 1), or both")
    names = [e.name for e in events]
    if "cycles" in names:
        raise UsageError("'cycles' is always measured; do not list it in --events",
                         "it is reported first, from the PMU or TSC-calibrated")
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise UsageError(f"event '{dup}' is given twice", "list each event once")
    if group_size is not None and not 1 <= group_size <= MAX_EVENTS:
        raise UsageError(f"group size {group_size} is out of range", f"use 1 <= group size <= {MAX_EVENTS}")
    soft = next((e for e in events if not uses_counter(e, "any") and e.type != PERF_TYPE_HARDWARE), None)
    if no_mem and soft is not None:
        raise UsageError(f"--no-mem cannot read '{soft.name}': software events are read with read(), and the "
                         "kernel writes that reading into memory",
                         "drop --no-mem, or drop the software events")
    cycles = with_privilege(HW_CYCLES, user, kernel)
    fixed = [with_privilege(e, user, kernel) for e in FIXED_COUNTERS] if fixed_counters else []
    fixed = [e for e in fixed if e.name not in names]
    count = (lambda e: True) if (group_size is not None or no_mem) else uses_counter
    hw_reason = None
    if counters in ("auto", "perf"):
        (res,) = probe((cycles,))
        if res.ok:
            return _perf_backend(cycles, fixed, events, group_size, count, no_mem)
        cause, hint = explain_failure(cycles, res)
        if counters == "perf" or fixed:
            if fixed:
                cause = "--fixed-counters: " + cause
            raise CounterUnavailable(cause, hint)
        hw_reason = cause
    elif fixed:
        raise CounterUnavailable("--fixed-counters needs the perf backend (hardware counters)",
                                 "drop --counters tsc")
    reason = hw_reason or "TSC backend requested"
    if no_mem and events:
        raise UsageError(f"--no-mem cannot read '{events[0].name}' on the TSC backend: without rdpmc its "
                         "counter is read with read(), and the kernel writes that reading into memory",
                         "drop --no-mem, or drop the events (the TSC reading itself stays in registers)")
    groups = plan_groups(events, group_size or MAX_EVENTS, count) if events else []
    _check_groups(groups)
    return Backend("tsc", reason, groups, no_mem=no_mem)


def _check_groups(groups):
    if not groups:
        return
    res = iter(probe((), groups))
    for group in groups:
        for ev in group:
            r = next(res)
            if r.ok:
                continue
            # a group that cannot be scheduled as a whole fails with EINVAL/ENOSPC although each
            # event alone opens: say that, not that the CPU lacks the event
            if r.errno in ("EINVAL", "ENOSPC") and len(group) > 1 and probe((ev,))[0].ok:
                names = ", ".join(e.name for e in group)
                raise CounterUnavailable(
                    f"the events {names} do not fit the PMU's counters together (perf_event_open failed "
                    f"with {r.errno} for '{ev.name}')",
                    f"lower --group-size (libpfm4 says this PMU has {counter_limit()} programmable counters; "
                    "the NMI watchdog may hold one: 'sudo sysctl kernel.nmi_watchdog=0')")
            raise CounterUnavailable(*explain_failure(ev, r))


def _perf_backend(cycles, fixed, events, group_size, count, no_mem) -> Backend:
    warnings = []
    usable_fixed = []
    for ev, r in zip(fixed, probe(tuple(fixed)) if fixed else []):
        if r.ok:
            usable_fixed.append(ev)
        else:
            warnings.append(f"fixed counter '{ev.name}' is not available: {explain_failure(ev, r)[0]}")
    limit = group_size or counter_limit()
    if no_mem:
        limit = min(limit, reads.MAX_NO_MEM_COUNTERS)
    groups = plan_groups(events, limit, count, leading=[cycles, *usable_fixed])
    _check_groups(groups)
    res = probe((), groups)
    rdpmc = all(r.rdpmc for r in res)
    if no_mem and not rdpmc:
        raise CounterUnavailable(*_rdpmc_refusal())
    return Backend("perf", "hardware PMU available through perf_event_open", groups,
                   use_rdpmc=rdpmc, no_mem=no_mem, warnings=warnings)
