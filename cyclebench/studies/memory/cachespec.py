"""What the machine says about its caches and TLBs: sysfs (/sys/devices/system/cpu/cpu0/cache)
and CPUID (leaf 0x8000001D, AMD's cache topology, and leaves 0x80000005/6, the TLBs). In a KVM
guest both come from the hypervisor's description, which may be synthetic; the study puts them
beside what it measures and says where they disagree.

Published figures are labelled with the CPU and the source they are for."""
from __future__ import annotations

from pathlib import Path

from cyclebench.machine.features import cpuid

SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")
TYPES = {1: "Data", 2: "Instruction", 3: "Unified"}

# Published figures, each with the CPU and the source it is for (never presented as ours).
PUBLISHED = {
    "zen3": {"cpu": "AMD Zen 3 (family 19h, models 00h-0Fh)",
             "source": "AMD Software Optimization Guide for AMD EPYC 7003 Processors (family 19h)",
             "l1_latency": None, "l2_latency": None, "l3_latency": None, "l1_dtlb": 64, "l2_dtlb": 2048,
             "l1d": "32 KiB, 8-way", "l2": "512 KiB, 8-way", "l3": "up to 32 MiB per CCX, 16-way"},
    "zen4": {"cpu": "AMD Zen 4 (family 19h, models 10h-1Fh and 60h-7Fh)",
             "source": "AMD Software Optimization Guide for AMD family 19h; Chips and Cheese's Zen 4 articles",
             "l1_latency": "4-5 cycles", "l2_latency": "about 14 cycles", "l3_latency": "about 50 cycles",
             "l1_dtlb": 72, "l2_dtlb": 3072,
             "l1d": "32 KiB, 8-way", "l2": "1 MiB, 8-way", "l3": "up to 32 MiB per CCX, 16-way"},
}


def published_for(family: int | None, model: int | None) -> dict | None:
    """The published figures for this CPU's core, or None when we have none."""
    if family == 25 and model is not None:
        return PUBLISHED["zen4"] if 0x10 <= model <= 0x1F or 0x60 <= model <= 0x7F else PUBLISHED["zen3"]
    return None


def _size(text: str) -> int | None:
    text = text.strip()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    try:
        return int(text[:-1]) * mult[text[-1]] if text and text[-1] in mult else int(text)
    except (ValueError, KeyError):
        return None


def sysfs_caches(root: Path = SYSFS) -> list[dict]:
    out = []
    for d in sorted(root.glob("index*")):
        def rd(name):
            try:
                return (d / name).read_text().strip()
            except OSError:
                return None
        level = rd("level")
        out.append({"level": int(level) if level and level.isdigit() else None, "type": rd("type"),
                    "size": _size(rd("size") or ""), "ways": rd("ways_of_associativity"),
                    "line": rd("coherency_line_size"), "shared_cpus": rd("shared_cpu_list")})
    return out


def cpuid_caches() -> tuple[list[dict], str | None]:
    """(caches from CPUID 0x8000001D, or [] with the reason)."""
    try:
        if cpuid(0x80000000)[0] < 0x8000001D:
            return [], "CPUID has no leaf 0x8000001D"
        if not cpuid(0x80000001)[2] >> 22 & 1:
            return [], "CPUID 0x8000001D is not valid (no TopologyExtensions bit)"
        out = []
        for sub in range(16):
            a, b, c, _ = cpuid(0x8000001D, sub)
            kind = a & 0x1F
            if kind == 0:
                break
            line, parts, ways, sets = (b & 0xFFF) + 1, (b >> 12 & 0x3FF) + 1, (b >> 22 & 0x3FF) + 1, c + 1
            out.append({"level": a >> 5 & 7, "type": TYPES.get(kind, str(kind)), "size": line * parts * ways * sets,
                        "ways": ways, "line": line, "sharing": (a >> 14 & 0xFFF) + 1})
        return out, None
    except OSError as e:
        return [], str(e)


def cpuid_tlbs() -> dict:
    """Data-TLB entries from CPUID 0x80000005/6 (AMD): {"l1_4k", "l1_2m", "l2_4k", "l2_2m"}."""
    try:
        if cpuid(0x80000000)[0] < 0x80000006:
            return {}
        a5, b5, _, _ = cpuid(0x80000005)
        a6, b6, _, _ = cpuid(0x80000006)
    except OSError:
        return {}
    return {"l1_4k": b5 >> 16 & 0xFF, "l1_2m": a5 >> 16 & 0xFF, "l2_4k": b6 >> 16 & 0xFFF, "l2_2m": a6 >> 16 & 0xFFF}


def data_caches(caches: list[dict]) -> dict[int, int]:
    """level -> size of the data (or unified) cache of each level."""
    return {c["level"]: c["size"] for c in caches if c.get("type") in ("Data", "Unified") and c.get("size")}


def describe() -> dict:
    """Everything above, for the run's prepared facts."""
    cp, why = cpuid_caches()
    return {"sysfs": sysfs_caches(), "cpuid": cp, "cpuid_note": why, "cpuid_tlb": cpuid_tlbs()}
