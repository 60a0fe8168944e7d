"""The highest core clock this CPU reports, for checking a calibrated clock against it.

Sources, in order: cpufreq's ``cpuinfo_max_freq`` (bare metal with a cpufreq driver) and CPUID
leaf 0x16 EBX (Intel's maximum frequency in MHz; 0 on AMD and in most VM guests). Neither is
available in many VMs; the caller then falls back to a ceiling no x86 core has reached.
"""
from __future__ import annotations

import functools

from .features import cpuid

# No x86 core has shipped with a clock above 6.2 GHz (Core i9-14900KS, 2024): a calibrated clock
# above this ceiling is a calibration chain the core ran faster than one add per cycle.
CEILING_MHZ = 7000.0


@functools.lru_cache(maxsize=None)
def max_core_mhz() -> tuple[float, str] | None:
    """(MHz, source) of the highest core clock the CPU or kernel reports, or None."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            khz = int(f.read().strip())
        if khz > 0:
            return khz / 1000, "cpufreq cpuinfo_max_freq"
    except (OSError, ValueError):
        pass
    try:
        if cpuid(0)[0] >= 0x16 and cpuid(0x16)[1] & 0xFFFF:
            return float(cpuid(0x16)[1] & 0xFFFF), "CPUID leaf 0x16"
    except OSError:
        pass
    return None
