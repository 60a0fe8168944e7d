"""Which CPUs are distinct physical cores: sysfs ``topology/thread_siblings_list`` (and
``core_id``/``physical_package_id`` where the list is missing), so that code that wants two CPUs which
do not share a core never assumes CPUs 0 and 1 are not SMT siblings (on many Intel machines they are);
and, on a hybrid part, which CPUs are of one core type (the kernel's ``/sys/devices/cpu_core`` and
``cpu_atom`` lists), so that CPUs measured side by side, or a figure kept as the fastest of
several CPUs, never mix performance and efficiency cores."""
from __future__ import annotations

import os
from pathlib import Path

SYSFS = Path("/sys/devices/system/cpu")


def _cpu_list(text: str) -> frozenset[int]:
    """'0-3,8' -> {0, 1, 2, 3, 8}; a malformed list reads as empty."""
    out: set[int] = set()
    try:
        for part in text.strip().split(","):
            if not part:
                continue
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        return frozenset()
    return frozenset(out)


def _core_of(cpu: int, root: Path) -> object:
    """A key equal for CPUs that share a physical core (the CPU itself when sysfs says nothing)."""
    topo = root / f"cpu{cpu}" / "topology"
    try:
        siblings = _cpu_list((topo / "thread_siblings_list").read_text())
        if siblings:
            return min(siblings)
    except OSError:
        pass
    try:
        return ((topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip())
    except OSError:
        return cpu


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


KINDS = ("cpu_core", "cpu_atom")     # hybrid core types, performance cores first


def one_core_type(cpus: list[int], root: Path = SYSFS) -> list[int]:
    """``cpus`` of one core type: on a hybrid part the performance cores among them if any, else
    the efficiency cores; elsewhere (no kind lists in sysfs) all of them."""
    for kind in KINDS:
        try:
            mine = _cpu_list((root.parent.parent / kind / "cpus").read_text())
        except OSError:
            continue
        picked = [c for c in cpus if c in mine]
        if picked:
            return picked
    return list(cpus)


def distinct_cores(cpus: list[int] | None = None, root: Path = SYSFS) -> list[int]:
    """One CPU per physical core among ``cpus`` (default: the allowed ones), lowest first, all of
    one core type (:func:`one_core_type`)."""
    seen, out = set(), []
    for cpu in one_core_type(sorted(allowed_cpus() if cpus is None else cpus), root):
        key = _core_of(cpu, root)
        if key not in seen:
            seen.add(key)
            out.append(cpu)
    return out


def core_pair(root: Path = SYSFS, cpus: list[int] | None = None) -> tuple[int, int] | None:
    """Two CPUs on distinct physical cores, or None when this process has fewer than two cores."""
    cores = distinct_cores(cpus, root)
    return (cores[0], cores[1]) if len(cores) >= 2 else None
