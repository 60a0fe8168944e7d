"""CPU identity and feature flags, read once from /proc/cpuinfo: the package's one parser of it."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class CpuInfo:
    """This CPU as /proc/cpuinfo describes it."""
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


def parse_cpuinfo(lines: Iterable[str]) -> CpuInfo:
    """The first processor of /proc/cpuinfo lines; a field that is missing or not a number reads as
    "unknown" (text) or 0 (numbers: no x86 CPU has family 0)."""
    fields: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            if fields:
                break            # the first processor is enough
            continue
        k, _, v = line.partition(":")
        fields.setdefault(k.strip(), v.strip())

    def number(key: str) -> int:
        try:
            return int(fields.get(key, "0"))
        except ValueError:
            return 0
    return CpuInfo(
        vendor=fields.get("vendor_id", "unknown"),
        family=number("cpu family"),
        model=number("model"),
        stepping=number("stepping"),
        model_name=fields.get("model name", "unknown"),
        microcode=fields.get("microcode", "unknown"),
        flags=frozenset(fields.get("flags", "").split()),
    )


@functools.lru_cache(maxsize=1)
def cpu_info() -> CpuInfo:
    """This machine's first CPU (all fields unknown when /proc/cpuinfo cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return parse_cpuinfo(f)
    except OSError:
        return parse_cpuinfo(())
