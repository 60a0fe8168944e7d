"""Caches and data TLBs as CPUID describes them, on Intel and on AMD.

- Caches: Intel's deterministic cache parameters (leaf 4) or AMD's (leaf 0x8000001D, valid when
  leaf 0x80000001 ECX bit 22, TopologyExtensions, is set). Both have the same register layout
  (Intel SDM vol. 2A, CPUID; AMD APM vol. 3, appendix E).
- Data TLBs: AMD's leaves 0x80000005 (L1) and 0x80000006 (L2); Intel's leaf 0x18 (deterministic
  address translation parameters) or, on cores that predate it, the leaf 2 descriptor bytes
  (SDM vol. 2A table 3-12; only the data and shared TLB descriptors are kept here).

Every function takes the CPUID function to call, so fixtures can stand in for the CPU. In a KVM guest
the answers are the hypervisor's description, which may be synthetic.
"""
from __future__ import annotations

from typing import Callable

from .features import cpuid as _cpuid

Cpuid = Callable[..., tuple]
TYPES = {1: "Data", 2: "Instruction", 3: "Unified"}

# leaf 2 descriptor -> (TLB level, page sizes it holds, entries); SDM vol. 2A table 3-12
LEAF2_DTLB = {
    0x03: (1, ("4k",), 64), 0x04: (1, ("4m",), 8), 0x05: (1, ("4m",), 32), 0x56: (1, ("4m",), 16),
    0x57: (1, ("4k",), 16), 0x59: (1, ("4k",), 16), 0x5A: (1, ("2m",), 32), 0x5B: (1, ("4k",), 64),
    0x5C: (1, ("4k",), 128), 0x5D: (1, ("4k",), 256), 0x63: (1, ("2m",), 32), 0x64: (1, ("4k",), 512),
    0x6A: (1, ("4k",), 64), 0x6B: (1, ("4k",), 256), 0x6C: (1, ("2m",), 128), 0xA0: (1, ("4k",), 32),
    0xB3: (1, ("4k",), 128), 0xB4: (1, ("4k",), 256), 0xBA: (1, ("4k",), 64), 0xC0: (1, ("4k",), 8),
    0xC2: (1, ("4k", "2m"), 16), 0xC4: (1, ("2m",), 32),
    0xC1: (2, ("4k", "2m"), 1024), 0xC3: (2, ("4k", "2m"), 1536), 0xCA: (2, ("4k",), 512),
}
LEAF2_USE_LEAF18 = 0xFE


def _max(cpuid: Cpuid, base: int) -> int:
    return cpuid(base)[0]


def vendor(cpuid: Cpuid = _cpuid) -> str | None:
    """'amd' / 'intel' from leaf 0's vendor string, else None."""
    _, b, c, d = cpuid(0)
    text = b"".join(x.to_bytes(4, "little") for x in (b, d, c)).decode("ascii", "replace")
    return {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(text)


def caches(cpuid: Cpuid = _cpuid) -> tuple[list[dict], str | None]:
    """(caches from CPUID leaf 4 or 0x8000001D, or [] with the reason)."""
    try:
        v = vendor(cpuid)
        if v == "intel":
            if _max(cpuid, 0) < 4:
                return [], "CPUID has no leaf 4"
            leaf = 4
        elif v == "amd":
            if _max(cpuid, 0x80000000) < 0x8000001D:
                return [], "CPUID has no leaf 0x8000001D"
            if not cpuid(0x80000001)[2] >> 22 & 1:
                return [], "CPUID 0x8000001D is not valid (no TopologyExtensions bit)"
            leaf = 0x8000001D
        else:
            return [], "CPUID vendor is neither Intel nor AMD"
        out = []
        for sub in range(16):
            a, b, c, _ = cpuid(leaf, sub)
            kind = a & 0x1F
            if kind == 0:
                break
            line, parts, ways, sets = (b & 0xFFF) + 1, (b >> 12 & 0x3FF) + 1, (b >> 22 & 0x3FF) + 1, c + 1
            out.append({"level": a >> 5 & 7, "type": TYPES.get(kind, str(kind)),
                        "size": line * parts * ways * sets, "ways": ways, "line": line, "sets": sets,
                        "sharing": (a >> 14 & 0xFFF) + 1, "leaf": f"{leaf:#x}"})
        return out, None
    except OSError as e:
        return [], str(e)


def tlbs(cpuid: Cpuid = _cpuid) -> dict:
    """Data-TLB entries {"l1_4k", "l1_2m", "l2_4k", "l2_2m", "source"}; {} when CPUID says nothing.
    A level CPUID does not describe is absent (never 0)."""
    try:
        v = vendor(cpuid)
        if v == "amd":
            return _amd_tlbs(cpuid)
        if v == "intel":
            return _intel_tlbs(cpuid)
    except OSError:
        pass
    return {}


def _amd_tlbs(cpuid: Cpuid) -> dict:
    if _max(cpuid, 0x80000000) < 0x80000006:
        return {}
    a5, b5, _, _ = cpuid(0x80000005)
    a6, b6, _, _ = cpuid(0x80000006)
    got = {"l1_4k": b5 >> 16 & 0xFF, "l1_2m": a5 >> 16 & 0xFF, "l2_4k": b6 >> 16 & 0xFFF,
           "l2_2m": a6 >> 16 & 0xFFF}
    return {**{k: n for k, n in got.items() if n}, "source": "CPUID 0x80000005/0x80000006"}


def _intel_tlbs(cpuid: Cpuid) -> dict:
    top = _max(cpuid, 0)
    if top < 2:
        return {}
    descriptors = _leaf2_bytes(cpuid(2))
    if top >= 0x18 and (LEAF2_USE_LEAF18 in descriptors or not descriptors & LEAF2_DTLB.keys()):
        got = _leaf18(cpuid)
        if got:
            return {**got, "source": "CPUID 0x18"}
    out: dict = {}
    for d in sorted(descriptors & LEAF2_DTLB.keys()):
        level, pages, n = LEAF2_DTLB[d]
        for p in pages:
            key = f"l{level}_{'2m' if p in ('2m', '4m') else p}"
            out[key] = out.get(key, 0) + n
    return {**out, "source": "CPUID 2"} if out else {}


def _leaf2_bytes(regs: tuple) -> set[int]:
    """The descriptor bytes of leaf 2 (a register with bit 31 set holds none; AL is a count)."""
    out = set()
    for i, r in enumerate(regs):
        if r >> 31 & 1:
            continue
        for k in range(4):
            if i == 0 and k == 0:
                continue
            b = r >> (8 * k) & 0xFF
            if b:
                out.add(b)
    return out


def _leaf18(cpuid: Cpuid) -> dict:
    """Leaf 0x18: one subleaf per TLB; type 1 data, 3 unified, 4 load-only; level in EDX[7:5];
    page sizes in EBX[3:0] (4K, 2M, 4M, 1G); entries = ways (EBX[31:16]) x sets (ECX)."""
    out: dict = {}
    last = cpuid(0x18, 0)[0]
    for sub in range(min(last, 63) + 1):
        _, b, c, d = cpuid(0x18, sub)
        kind = d & 0x1F
        if kind not in (1, 3, 4):
            continue
        level, entries = d >> 5 & 7, (b >> 16 & 0xFFFF) * c
        for bit, page in ((0, "4k"), (1, "2m")):
            if b >> bit & 1:
                key = f"l{level}_{page}"
                out[key] = max(out.get(key, 0), entries)
    return out
