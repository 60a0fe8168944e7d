"""iced-x86 CPUID feature names -> Linux /proc/cpuinfo flags, to check code before running it."""
from __future__ import annotations

import functools

from .cpu import cpu_info

# Features every x86-64 CPU has, or that the kernel does not list as a flag.
ALWAYS = frozenset({"INTEL8086", "INTEL186", "INTEL286", "INTEL386", "INTEL486", "X64", "CPUID",
                    "MULTIBYTENOP", "PAUSE", "FPU", "FPU287", "FPU387", "SSE", "SSE2", "CX8",
                    "CMOV", "FXSR", "MMX", "TSC", "SYSCALL", "SEP", "MSR"})
# Where the kernel's flag name is not the lower-cased iced name.
FLAG = {
    "SSE3": "pni", "LZCNT": "abm", "CMPXCHG16B": "cx16", "CLFSH": "clflush",
    "AVX512_VBMI": "avx512vbmi", "AVX512_IFMA": "avx512ifma", "D3NOW": "3dnow",
    "D3NOWEXT": "3dnowext", "PREFETCHW": "3dnowprefetch", "MONITORX": "mwaitx",
    "CET_SS": "shstk", "CET_IBT": "ibt", "SHA": "sha_ni", "PCLMULQDQ": "pclmulqdq",
    "SKINIT_OR_SVM": "svm", "HLE_OR_RTM": "rtm",
}


def flag_for(feature: str) -> str | None:
    if feature in ALWAYS:
        return None
    return FLAG.get(feature, feature.lower())


@functools.lru_cache(maxsize=None)
def feature_names() -> dict[int, str]:
    import iced_x86
    return {getattr(iced_x86.CpuidFeature, n): n for n in dir(iced_x86.CpuidFeature) if n.isupper()}


def missing(features: list[str]) -> list[str]:
    """The features (iced names) this CPU lacks."""
    flags = cpu_info().flags
    return [f for f in features if (fl := flag_for(f)) is not None and fl not in flags]
