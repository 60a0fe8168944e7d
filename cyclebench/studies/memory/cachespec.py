"""What the machine says about its caches and TLBs: sysfs (/sys/devices/system/cpu/cpu0/cache) and
CPUID (machine/caches.py: Intel's leaves 4, 2 and 0x18, AMD's 0x8000001D and 0x80000005/6). In a KVM
guest both come from the hypervisor's description, which may be synthetic; the study puts them beside
what it measures and says where they disagree.

Published figures come from the microarchitecture table (machine/uarch.py), labelled with the core
and the source they are for."""
from __future__ import annotations

from pathlib import Path

from cyclebench.machine import caches as cpuid_leaves
from cyclebench.machine.uarch import Identity

SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")


def published_for(ident: Identity) -> dict | None:
    """The published figures for this CPU's core (as the summary prints them), or None."""
    u = ident.uarch
    if u is None or u.published is None:
        return None
    p = u.published
    return {"cpu": f"{u.label} ({u.products})", "source": p.source, "l1_latency": p.l1_latency,
            "l2_latency": p.l2_latency, "l3_latency": p.l3_latency, "l1_dtlb": p.l1_dtlb,
            "l2_dtlb": p.l2_dtlb, "l1d": p.l1d, "l2": p.l2, "l3": p.l3}


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


def data_caches(caches: list[dict]) -> dict[int, int]:
    """level -> size of the data (or unified) cache of each level."""
    return {c["level"]: c["size"] for c in caches if c.get("type") in ("Data", "Unified") and c.get("size")}


def describe() -> dict:
    """Everything above, for the run's prepared facts."""
    cp, why = cpuid_leaves.caches()
    return {"sysfs": sysfs_caches(), "cpuid": cp, "cpuid_note": why, "cpuid_tlb": cpuid_leaves.tlbs()}
