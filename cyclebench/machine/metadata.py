"""The machine metadata block stored in every result (pyperf-style)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .. import __version__
from .cpu import cpu_info
from .uarch import this_machine


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _turbo() -> str | None:
    boost = _read("/sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        return "on" if boost == "1" else "off"
    no_turbo = _read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        return "off" if no_turbo == "1" else "on"
    return None


def core_block() -> dict:
    """The core as the microarchitecture table names it (machine/uarch.py)."""
    i = this_machine()
    code, nearest = i.reference
    return {"key": i.uarch.key if i.uarch else None, "name": i.name, "inferred": i.inferred,
            "core_type": i.uarch.core_type if i.uarch else None, "uops_info": code,
            "uops_info_nearest": nearest}


CPU_FIELDS = ("cpu_vendor", "cpu_family", "cpu_model", "cpu_stepping")


def cpu_of(record, stepping: bool = True) -> tuple | None:
    """(vendor, family, model[, stepping]) that a stored machine record (:func:`machine_metadata`)
    names, or None where it names none.  The model name is no identity: a VM guest may read "AMD
    EPYC" on Zen 3 and on Zen 4 alike."""
    if not isinstance(record, dict) or not record.get("cpu_vendor"):
        return None
    return tuple(record.get(k) for k in CPU_FIELDS[:None if stepping else 3])


def names_this_cpu(record) -> bool | None:
    """Whether a stored machine record names this machine's CPU (vendor, family, model: another
    stepping is the same core); None where it names none."""
    cpu, c = cpu_of(record, stepping=False), cpu_info()
    return None if cpu is None else cpu == (c.vendor, c.family, c.model)


def cpu_text(record) -> str:
    """A stored machine record's CPU in words: its core's name where the table knew it, the model
    name, vendor, family, model and stepping."""
    if not isinstance(record, dict):
        return "an unknown CPU (no machine record)"
    core = record.get("core") if isinstance(record.get("core"), dict) else {}
    name = f"{core['name']}: " if core.get("name") else ""
    return (f"{name}{record.get('cpu_model_name') or record.get('cpu_vendor')}, family {record.get('cpu_family')} "
            f"model {record.get('cpu_model')} stepping {record.get('cpu_stepping')}")


def machine_metadata() -> dict:
    c = cpu_info()
    u = os.uname()      # not platform.uname(): the same fields, without the platform module's start-up
    return {
        "cpu_vendor": c.vendor,
        "cpu_family": c.family,
        "cpu_model": c.model,
        "cpu_stepping": c.stepping,
        "cpu_model_name": c.model_name,
        "microcode": c.microcode,
        "hypervisor": c.hypervisor,
        "core": core_block(),
        "cpus_online": os.cpu_count(),
        "smt_active": _read("/sys/devices/system/cpu/smt/active"),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "turbo": _turbo(),
        "perf_event_paranoid": _read("/proc/sys/kernel/perf_event_paranoid"),
        "kernel": f"{u.sysname} {u.release}",
        "hostname": u.nodename,
        "python": sys.version.split()[0],
        "tool": "cyclebench",
        "tool_version": __version__,
    }
