"""Which CPUID features the running CPU has, in iced-x86's ``CpuidFeature`` vocabulary.

One module serves both users: ``snippet/features.py`` checks assembled snippets before running
them (:func:`flag_for`, :func:`feature_names`, :func:`missing`), and the instruction catalogue
decides which forms this CPU can run (:class:`CpuFeatures`, :func:`this_cpu`).

The source of truth is the ``flags`` line of /proc/cpuinfo: the kernel lists a feature only when
the CPU has it *and* the OS enabled it (AVX-512 needs XCR0 state, FSGSBASE needs CR4.FSGSBASE), which
is exactly "can user code run this".  A few features have no Linux flag; for those we execute CPUID
ourselves (:func:`cpuid`).  Every iced feature is in exactly one of these tables:

* ``FLAG_OF``: the /proc/cpuinfo flag(s) that mean the feature is there (all must be present);
* ``BASELINE``: features every x86-64 CPU has (8086..486 instructions, x64, multi-byte NOP, PAUSE);
* ``CPUID_BITS``: (leaf, subleaf, register, bit) for features Linux does not report;
* ``NEVER``: other vendors' or long-gone features (Cyrix, Centaur, Knights Corner...);
* ``UNKNOWN``: no Linux flag we trust and no CPUID bit wired up.

A feature in ``UNKNOWN`` (or in no table at all, e.g. one a newer iced adds) is *unknown*: catalogue
forms that need it are not offered, with the reason "cannot tell whether this CPU supports
<feature>" rather than a guess; a user's snippet that needs it is run (a SIGILL is reported cleanly).
"""
from __future__ import annotations

import functools
import os

from .cpu import cpu_info

# iced CpuidFeature name -> /proc/cpuinfo flags that must all be present.
FLAG_OF: dict[str, tuple[str, ...]] = {
    "FPU": ("fpu",), "TSC": ("tsc",), "MSR": ("msr",), "CX8": ("cx8",), "SEP": ("sep",),
    "CMOV": ("cmov",), "CLFSH": ("clflush",), "MMX": ("mmx",), "FXSR": ("fxsr",), "SSE": ("sse",),
    "SSE2": ("sse2",), "SSE3": ("pni",), "SSSE3": ("ssse3",), "SSE4_1": ("sse4_1",),
    "SSE4_2": ("sse4_2",), "SSE4A": ("sse4a",), "POPCNT": ("popcnt",), "LZCNT": ("abm",),
    "CMPXCHG16B": ("cx16",), "MONITOR": ("monitor",), "MONITORX": ("mwaitx",),
    "SYSCALL": ("syscall",), "RDTSCP": ("rdtscp",), "RDPID": ("rdpid",), "CPUID": ("cpuid",),
    "PCLMULQDQ": ("pclmulqdq",), "AES": ("aes",), "MOVBE": ("movbe",), "XSAVE": ("xsave",),
    "XSAVEOPT": ("xsaveopt",), "XSAVEC": ("xsavec",), "XSAVES": ("xsaves",), "AVX": ("avx",),
    "F16C": ("f16c",), "FMA": ("fma",), "FMA4": ("fma4",), "XOP": ("xop",), "TBM": ("tbm",),
    "LWP": ("lwp",), "RDRAND": ("rdrand",), "RDSEED": ("rdseed",), "AVX2": ("avx2",),
    "BMI1": ("bmi1",), "BMI2": ("bmi2",), "ADX": ("adx",), "FSGSBASE": ("fsgsbase",),
    "HLE": ("hle",), "RTM": ("rtm",), "INVPCID": ("invpcid",), "SMAP": ("smap",),
    "MPX": ("mpx",), "SHA": ("sha_ni",), 
    "CLFLUSHOPT": ("clflushopt",), "CLWB": ("clwb",), "CLZERO": ("clzero",),
    "PREFETCHW": ("3dnowprefetch",), "PKU": ("pku", "ospke"), "WAITPKG": ("waitpkg",),
    "GFNI": ("gfni",), "VAES": ("vaes",), "VPCLMULQDQ": ("vpclmulqdq",),
    "MOVDIRI": ("movdiri",), "MOVDIR64B": ("movdir64b",), "ENQCMD": ("enqcmd",),
    "CLDEMOTE": ("cldemote",), "SERIALIZE": ("serialize",), "TSXLDTRK": ("tsxldtrk",),
    "WBNOINVD": ("wbnoinvd",), "RDPRU": ("rdpru",), "MCOMMIT": ("mcommit",),
    "INVLPGB": ("invlpgb",), "UINTR": ("uintr",), "HRESET": ("hreset",), "PCONFIG": ("pconfig",),
    "AVX512F": ("avx512f",), "AVX512DQ": ("avx512dq",), "AVX512CD": ("avx512cd",),
    "AVX512BW": ("avx512bw",), "AVX512VL": ("avx512vl",), "AVX512ER": ("avx512er",),
    "AVX512PF": ("avx512pf",), "AVX512_IFMA": ("avx512ifma",), "AVX512_VBMI": ("avx512vbmi",),
    "AVX512_VBMI2": ("avx512_vbmi2",), "AVX512_VNNI": ("avx512_vnni",),
    "AVX512_BITALG": ("avx512_bitalg",), "AVX512_VPOPCNTDQ": ("avx512_vpopcntdq",),
    "AVX512_4VNNIW": ("avx512_4vnniw",), "AVX512_4FMAPS": ("avx512_4fmaps",),
    "AVX512_BF16": ("avx512_bf16",), "AVX512_FP16": ("avx512_fp16",),
    "AVX512_VP2INTERSECT": ("avx512_vp2intersect",), "AVX_VNNI": ("avx_vnni",),
    "AVX_IFMA": ("avx_ifma",), "AVX_NE_CONVERT": ("avx_ne_convert",),
    "AVX_VNNI_INT8": ("avx_vnni_int8",), 
    "CMPCCXADD": ("cmpccxadd",), "AMX_TILE": ("amx_tile",), "AMX_INT8": ("amx_int8",),
    "AMX_BF16": ("amx_bf16",), "AMX_FP16": ("amx_fp16",), 
    "SVM": ("svm",), "SKINIT": ("skinit",), "SKINIT_OR_SVM": ("svm",), "VMX": ("vmx",),
    "SMX": ("smx",), "SGX1": ("sgx",), "CET_SS": ("user_shstk",), "CET_IBT": ("ibt",),
    
    
    "FRED": ("fred",), "LKGS": ("lkgs",), "WRMSRNS": ("wrmsrns",), 
    "SEV_ES": ("sev_es",), "SEV_SNP": ("sev_snp",), "RMPQUERY": ("sev_snp",), 
    "INVEPT": ("vmx",), "INVVPID": ("vmx",), 
    "HLE_OR_RTM": ("rtm",), "D3NOW": ("3dnow",), "D3NOWEXT": ("3dnowext",),
    "PADLOCK_ACE": ("ace_en",), "PADLOCK_RNG": ("rng_en",), "PADLOCK_PHE": ("phe_en",),
    "PADLOCK_PMM": ("pmm_en",),
}

# Every x86-64 CPU executes these in 64-bit mode.
BASELINE = frozenset({
    "INTEL8086", "INTEL186", "INTEL286", "INTEL386", "INTEL486", "X64", "MULTIBYTENOP", "PAUSE",
    "FPU387", "FPU287",
})

# Features Linux does not report: (leaf, subleaf, register index 0..3 = eax/ebx/ecx/edx, bit).
CPUID_BITS: dict[str, tuple[int, int, int, int]] = {
    "PREFETCHWT1": (7, 0, 2, 0),
}

# No /proc/cpuinfo flag in the kernels we target and no CPUID bit wired up here (or user-mode
# availability depends on OS state, like RDPMC and CR4.PCE): we say "cannot tell" instead of guessing.
UNKNOWN = frozenset({
    "SHA512", "SM3", "SM4", "AVX_VNNI_INT16", "AMX_COMPLEX", "PTWRITE", "KL", "AESKLE", "WIDE_KL",
    "RAO_INT", "PREFETCHITI", "MSRLIST", "TDX", "RDPMC",
})

# Features that exist only on other vendors' or long-gone CPUs (Cyrix, Centaur, Itanium, Knights
# Corner, CPU-model-specific one-off behaviour): no x86-64 CPU we run on has them.
NEVER = frozenset({
    "CYRIX_D3NOW", "CYRIX_DDI", "CYRIX_DMI", "CYRIX_EMMI", "CYRIX_FPU", "CYRIX_SHR", "CYRIX_SMINT",
    "CYRIX_SMINT_0F7E", "CYRIX_SMM", "CENTAUR_AIS", "IA64", "KNC", "UMOV", "MOV_TR", "PCOMMIT",
    "INTEL8086_ONLY", "INTEL286_ONLY", "INTEL386_ONLY", "INTEL386_A0_ONLY", "INTEL486_A_ONLY",
    "FPU287XL_ONLY", "FPU387SL_ONLY", "PADLOCK_GMI", "PADLOCK_UNDOC", "CL1INVMB", "UDBG", "TSE",
    "OSS", "SMM",
})


def feature_name(feature: int) -> str:
    """iced ``CpuidFeature`` value -> its name (``AVX512F``)."""
    return _feature_names()[feature]


@functools.lru_cache(maxsize=1)
def _feature_names() -> dict[int, str]:
    import iced_x86     # here: about 9 ms of start-up, and checking flags by name needs none of it
    return {getattr(iced_x86.CpuidFeature, n): n for n in dir(iced_x86.CpuidFeature)
            if n.isupper() and not n.startswith("_")}


# mov r8d,edx (subleaf); mov eax,edi; mov ecx,r8d; push rbx; cpuid; mov [rsi],eax; mov [rsi+4],ebx;
# mov [rsi+8],ecx; mov [rsi+12],edx; pop rbx; ret   -- System V: edi=leaf, rsi=out, edx=subleaf
_CPUID_CODE = bytes.fromhex(
    "4189d0" "89f8" "4489c1" "53" "0fa2" "8906" "895e04" "894e08" "89560c" "5b" "c3")


@functools.lru_cache(maxsize=None)
def cpuid(leaf: int, subleaf: int = 0) -> tuple[int, int, int, int]:
    """Execute CPUID in this process; returns (eax, ebx, ecx, edx). x86-64 Linux only."""
    if os.uname().machine not in ("x86_64", "AMD64"):
        raise OSError("CPUID needs an x86-64 CPU")
    import ctypes, mmap         # here: about 2 ms of start-up, and most runs never execute CPUID
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(_CPUID_CODE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    fn = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32),
                          ctypes.c_uint32)(addr)
    out = (ctypes.c_uint32 * 4)()
    fn(leaf, out, subleaf)
    result = tuple(out)
    del fn
    return result


class CpuFeatures:
    """Answers "does this CPU have iced feature X?" with yes, no, or "cannot tell"."""

    def __init__(self, flags: frozenset[str] | None = None, use_cpuid: bool = True):
        self.flags = cpu_info().flags if flags is None else frozenset(flags)
        self.use_cpuid = use_cpuid and flags is None

    def key(self) -> str:
        """Everything the answers depend on, as a stable string (for naming cached results)."""
        bits = ",".join(f"{f}={self.has(f)}" for f in sorted(CPUID_BITS))
        return f"{','.join(sorted(self.flags))}|{self.use_cpuid}|{bits}"

    def has(self, feature: str) -> bool | None:
        """True/False, or None when we cannot tell (no flag mapping, no CPUID bit)."""
        if feature in BASELINE:
            return True
        if feature in NEVER:
            return False
        if feature in FLAG_OF:
            return all(f in self.flags for f in FLAG_OF[feature])
        if feature in CPUID_BITS:
            if not self.use_cpuid:
                return None
            leaf, sub, reg, bit = CPUID_BITS[feature]
            try:
                if cpuid(leaf & 0x80000000)[0] < leaf:
                    return False
                return bool(cpuid(leaf, sub)[reg] >> bit & 1)
            except OSError:
                return None
        return None

    def missing(self, features) -> tuple[list[str], list[str]]:
        """(features the CPU lacks, features we cannot tell about) among ``features`` (names)."""
        lacks, unknown = [], []
        for f in features:
            h = self.has(f)
            if h is None:
                unknown.append(f)
            elif not h:
                lacks.append(f)
        return lacks, unknown

    def supported(self) -> frozenset[str]:
        """All iced feature names this CPU has."""
        return frozenset(n for n in _feature_names().values() if self.has(n))


@functools.lru_cache(maxsize=1)
def this_cpu() -> CpuFeatures:
    return CpuFeatures()


# ------------------------------------------------------------------ the snippet checker's view

def flag_for(feature: str) -> str | None:
    """The /proc/cpuinfo flag that shows ``feature`` (iced name), or None when every x86-64 CPU has
    it or no flag reports it (multi-flag features: the first, e.g. PKU -> pku)."""
    if feature in BASELINE:
        return None
    flags = FLAG_OF.get(feature)
    return flags[0] if flags else None


def feature_names() -> dict[int, str]:
    """iced ``CpuidFeature`` value -> name, for every feature."""
    return _feature_names()


def missing(features) -> list[str]:
    """The features (iced names) this CPU definitely lacks; unknown ones are not listed."""
    return this_cpu().missing(features)[0]
