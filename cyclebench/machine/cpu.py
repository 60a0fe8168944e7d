"""CPU identity and feature flags, read once from /proc/cpuinfo."""
from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class CpuInfo:
    vendor: str
    family: int
    model: int
    stepping: int
    model_name: str
    microcode: str
    flags: frozenset[str]

    @property
    def hypervisor(self) -> bool:
        return "hypervisor" in self.flags

    @property
    def has_mpx(self) -> bool:
        # CPUID leaf 7 EBX bit 14; the kernel reports it as the 'mpx' flag.
        return "mpx" in self.flags


@functools.lru_cache(maxsize=1)
def cpu_info() -> CpuInfo:
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break            # the first processor is enough
                k, _, v = line.partition(":")
                fields[k.strip()] = v.strip()
    except OSError:
        pass
    return CpuInfo(
        vendor=fields.get("vendor_id", "unknown"),
        family=int(fields.get("cpu family", "0")),
        model=int(fields.get("model", "0")),
        stepping=int(fields.get("stepping", "0") or 0),
        model_name=fields.get("model name", "unknown"),
        microcode=fields.get("microcode", "unknown"),
        flags=frozenset(fields.get("flags", "").split()),
    )


def has_feature(flag: str) -> bool:
    return flag in cpu_info().flags
