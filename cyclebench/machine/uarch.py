"""The one table of x86-64 microarchitectures cyclebench knows, and which one this CPU is.

One record per microarchitecture (the shape of uiCA's ``microArchConfigs.py`` and nanoBench's
``tools/CPUID/cpuid.py``; nothing copied), keyed by vendor, family, model range, stepping range and,
on hybrid parts, core type. Each record names the core, uops.info's code (or its nearest column,
flagged ``nearest``), llvm's ``-mcpu``, the shipped counter config, libpfm4's PMU, published cache
and TLB figures with their source, and the columns the studies compare with.

Sources for the keys: Intel SDM vol. 4 table 2-1 (DisplayFamily_DisplayModel) and Linux
``arch/x86/include/asm/intel-family.h``; for AMD, Linux ``arch/x86/kernel/cpu/amd.c`` (which model
ranges are Zen 1..5). Figures marked in ``guesses`` are not from the vendor's manual.

Identification (:func:`identify`): the model number first; then the CPUID features, which win when
they name a newer core than the model does (a KVM guest of a Sapphire Rapids host may report family
6 model 167, Rocket Lake's number, while it has AMX and AVX512-FP16). A CPU that matches no record
is *unknown*: it is never treated as some other core.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .cpu import CpuInfo, cpu_info

VENDOR_IDS = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}     # cpuinfo vendor_id -> ours
AMD_GUIDE = "AMD Software Optimization Guide for AMD Family {}h Processors"
INTEL_MANUAL = "Intel 64 and IA-32 Architectures Optimization Reference Manual, {}"


@dataclass(frozen=True)
class Published:
    """A core's published cache and TLB figures (per core; latencies in core cycles, load-to-use)."""
    source: str
    l1d: str
    l2: str
    l3: str
    l1_dtlb: int | None          # first-level data TLB entries for 4 KiB pages
    l2_dtlb: int | None          # second-level (or shared) TLB entries for 4 KiB pages
    l1_latency: str | None = None
    l2_latency: str | None = None
    l3_latency: str | None = None


@dataclass(frozen=True)
class Uarch:
    """One microarchitecture: how to recognise it and the published columns that describe it."""
    key: str                     # uops.info's code where it has one, else ours (ZEN, ZEN5, ICX, SPR...)
    vendor: str                  # "amd" | "intel"
    name: str                    # "Sapphire Rapids", "Zen 4"
    core: str                    # "Golden Cove", "Zen 4"
    family: int
    models: tuple[tuple[int, int], ...]
    products: str
    uops_info: str | None        # uops.info's column for this core, None when it has none
    nearest: str | None          # ... and then its nearest column
    llvm_mcpu: str
    feature_class: str           # key of the CLASSES entry this core's own features give
    counter_config: str | None = None       # shipped nanoBench-format file (counters/configs/)
    libpfm_pmu: str | None = None
    published: Published | None = None
    ertl: str | None = None      # Ertl's column in the dispatch study's published table
    steppings: tuple[int, int] = (0, 0xF)
    core_type: str | None = None  # "P" / "E" on hybrid parts (CPUID leaf 0x1A)
    guesses: str = ""            # which values are not from the vendor's documents

    @property
    def reference(self) -> tuple[str | None, bool]:
        """(uops.info column to compare with, whether it is only the nearest one)."""
        return (self.uops_info, False) if self.uops_info else (self.nearest, self.nearest is not None)

    @property
    def label(self) -> str:
        """'Sapphire Rapids (Golden Cove)', 'Alder Lake P-core (Golden Cove)', 'AMD Zen 4'."""
        name = f"{self.name} {self.core_type}-core" if self.core_type else self.name
        if self.vendor == "amd" and self.name == self.core:
            return f"AMD {self.name}"
        return name if self.name == self.core else f"{name} ({self.core})"

    def matches(self, vendor: str, family: int, model: int, stepping: int) -> bool:
        return (vendor == self.vendor and family == self.family
                and any(lo <= model <= hi for lo, hi in self.models)
                and self.steppings[0] <= stepping <= self.steppings[1])


def _m(*models: int) -> tuple[tuple[int, int], ...]:
    return tuple((m, m) for m in models)


# --- published figures ---------------------------------------------------------------------------
_ZEN1 = Published(AMD_GUIDE.format("17"), "32 KiB, 8-way", "512 KiB, 8-way", "8 MiB per CCX, 16-way",
                  64, 1536, "4-5", "about 17", "about 40")
_ZEN2 = Published(AMD_GUIDE.format("17") + " Models 30h and Greater (#56305)", "32 KiB, 8-way",
                  "512 KiB, 8-way", "16 MiB per CCX, 16-way", 64, 2048, "4-5", "about 12", "about 39")
_ZEN3 = Published(AMD_GUIDE.format("19") + " (#56665)", "32 KiB, 8-way", "512 KiB, 8-way",
                  "up to 32 MiB per CCX, 16-way", 64, 2048, "4-5", "about 12", "about 46")
_ZEN4 = Published(AMD_GUIDE.format("19") + "; Chips and Cheese's Zen 4 articles", "32 KiB, 8-way",
                  "1 MiB, 8-way", "up to 32 MiB per CCX, 16-way", 72, 3072, "4-5", "about 14",
                  "about 50")
_ZEN5 = Published(AMD_GUIDE.format("1A") + " (#58455)", "48 KiB, 12-way", "1 MiB, 16-way",
                  "up to 32 MiB per CCX, 16-way", 96, 4096, "4-5", "about 14", None)
_HSW = Published(INTEL_MANUAL.format("Haswell microarchitecture"), "32 KiB, 8-way", "256 KiB, 8-way",
                 "up to 2.5 MiB per core, shared", 64, 1024, "4-5", "12", "about 36")
_BDW = Published(INTEL_MANUAL.format("Broadwell microarchitecture"), "32 KiB, 8-way",
                 "256 KiB, 8-way", "up to 2.5 MiB per core, shared", 64, 1536, "4-5", "12", None)
_SKL = Published(INTEL_MANUAL.format("Skylake client microarchitecture"), "32 KiB, 8-way",
                 "256 KiB, 4-way", "up to 2 MiB per core, shared, 16-way", 64, 1536, "4-5", "12",
                 "about 42")
_SKX = Published(INTEL_MANUAL.format("Skylake server microarchitecture"), "32 KiB, 8-way",
                 "1 MiB, 16-way", "1.375 MiB per core, shared, non-inclusive", 64, 1536, "4-5",
                 "14", None)
_ICL = Published(INTEL_MANUAL.format("Ice Lake client microarchitecture"), "48 KiB, 12-way",
                 "512 KiB, 8-way", "up to 2 MiB per core, shared", 64, 2048, "5", "13", None)
_ICX = Published(INTEL_MANUAL.format("Ice Lake server microarchitecture"), "48 KiB, 12-way",
                 "1.25 MiB, 20-way", "1.5 MiB per core, shared, non-inclusive", 64, 2048, "5", "14",
                 None)
_TGL = Published(INTEL_MANUAL.format("Tiger Lake (Willow Cove)"), "48 KiB, 12-way",
                 "1.25 MiB, 20-way", "up to 3 MiB per core, shared", 64, 2048, "5", "14", None)
_GLC = Published(INTEL_MANUAL.format("Golden Cove microarchitecture"), "48 KiB, 12-way",
                 "1.25 MiB, 10-way", "up to 3 MiB per core, shared", 96, 2048, "5", "15", None)
_RPC = Published(INTEL_MANUAL.format("Raptor Cove"), "48 KiB, 12-way", "2 MiB, 16-way",
                 "up to 3 MiB per core, shared", 96, 2048, "5", "16", None)
_GRT = Published(INTEL_MANUAL.format("Gracemont microarchitecture"), "32 KiB, 8-way",
                 "2 MiB per 4-core module, 16-way", "shared with the P-cores", None, 2048, "3", "17",
                 None)
_SPR = Published(INTEL_MANUAL.format("Sapphire Rapids (Golden Cove server)"), "48 KiB, 12-way",
                 "2 MiB, 16-way", "1.875 MiB per core, shared, non-inclusive", 96, 2048, "5", "16",
                 None)
_EMR = Published(INTEL_MANUAL.format("Emerald Rapids (Raptor Cove server)"), "48 KiB, 12-way",
                 "2 MiB, 16-way", "up to 5 MiB per core, shared, non-inclusive", 96, 2048, "5", "16",
                 None)
_GNR = Published(INTEL_MANUAL.format("Granite Rapids (Redwood Cove server)"), "48 KiB, 12-way",
                 "2 MiB, 16-way", "about 4 MiB per core, shared, non-inclusive", 96, 2048, "5", "16",
                 None)

AMD, INTEL = "amd", "intel"
_GUESS_ZEN5 = "libpfm PMU and llvm -mcpu need libpfm 4.14 / LLVM 19 or later"
_GUESS_NEW_PMU = "libpfm PMU name is that of libpfm releases after 4.13"

# --- the table: newest first within a vendor ------------------------------------------------------
TABLE: tuple[Uarch, ...] = (
    Uarch("ZEN5", AMD, "Zen 5", "Zen 5", 0x1A, ((0x00, 0x2F), (0x40, 0x4F), (0x60, 0x7F)),
          "EPYC 9005 (Turin), Ryzen 9000 (Granite Ridge, Strix Point)", None, "ZEN4", "znver5", "ZEN5",
          libpfm_pmu="amd64_fam1ah_zen5", published=_ZEN5, guesses=_GUESS_ZEN5),
    Uarch("ZEN4", AMD, "Zen 4", "Zen 4", 0x19, ((0x10, 0x1F), (0x60, 0xAF)),
          "EPYC 9004 (Genoa, Bergamo, Siena), Ryzen 7000 (Raphael, Phoenix)", "ZEN4", None, "znver4",
          "ZEN4", "cfg_Zen4.txt", "amd64_fam19h_zen4", _ZEN4),
    Uarch("ZEN3", AMD, "Zen 3", "Zen 3", 0x19, ((0x00, 0x0F), (0x20, 0x5F)),
          "EPYC 7003 (Milan), Ryzen 5000 (Vermeer, Cezanne), Ryzen 6000 (Rembrandt)", "ZEN3", None,
          "znver3", "ZEN3", "cfg_Zen3.txt", "amd64_fam19h_zen3", _ZEN3, "Zen3"),
    Uarch("ZEN2", AMD, "Zen 2", "Zen 2", 0x17, ((0x30, 0x4F), (0x60, 0x7F), (0x90, 0x91), (0xA0, 0xAF)),
          "EPYC 7002 (Rome), Ryzen 3000/4000 (Matisse, Renoir), Van Gogh, Mendocino", "ZEN2", None,
          "znver2", "ZEN2", "cfg_Zen2.txt", "amd64_fam17h_zen2", _ZEN2, "Zen2"),
    Uarch("ZEN+", AMD, "Zen+", "Zen+", 0x17, _m(0x08, 0x18), "Ryzen 2000 (Pinnacle Ridge, Picasso)",
          "ZEN+", None, "znver1", "ZEN", None, "amd64_fam17h_zen1", _ZEN1, "Zen"),
    Uarch("ZEN", AMD, "Zen", "Zen", 0x17, ((0x00, 0x07), (0x09, 0x17), (0x19, 0x2F), (0x50, 0x5F)),
          "EPYC 7001 (Naples), Ryzen 1000 (Summit Ridge, Raven Ridge)", None, "ZEN+", "znver1", "ZEN",
          None, "amd64_fam17h_zen1", _ZEN1, "Zen"),
    Uarch("GNR", INTEL, "Granite Rapids", "Redwood Cove", 6, _m(0xAD, 0xAE), "Xeon 6 P-core (6900P/6700P)",
          None, "ADL-P", "graniterapids", "GNR", None, "gnr", _GNR, guesses=_GUESS_NEW_PMU),
    Uarch("EMR", INTEL, "Emerald Rapids", "Raptor Cove", 6, _m(0xCF), "5th-generation Xeon Scalable",
          None, "ADL-P", "emeraldrapids", "SPR", "cfg_GoldenCove.txt", "emr", _EMR,
          guesses=_GUESS_NEW_PMU),
    Uarch("SPR", INTEL, "Sapphire Rapids", "Golden Cove", 6, _m(0x8F), "4th-generation Xeon Scalable",
          None, "ADL-P", "sapphirerapids", "SPR", "cfg_GoldenCove.txt", "spr", _SPR),
    Uarch("RPL-P", INTEL, "Raptor Lake", "Raptor Cove", 6, _m(0xB7, 0xBA, 0xBF), "13th/14th-gen Core",
          None, "ADL-P", "raptorlake", "ADL", "cfg_GoldenCove.txt", "adl_glc", _RPC, core_type="P",
          guesses=_GUESS_NEW_PMU),
    Uarch("RPL-E", INTEL, "Raptor Lake", "Gracemont", 6, _m(0xB7, 0xBA, 0xBF), "13th/14th-gen Core",
          "ADL-E", None, "raptorlake", "ADL", None, "adl_grt", _GRT, core_type="E",
          guesses=_GUESS_NEW_PMU),
    Uarch("ADL-P", INTEL, "Alder Lake", "Golden Cove", 6, _m(0x97, 0x9A), "12th-gen Core", "ADL-P", None,
          "alderlake", "ADL", "cfg_GoldenCove.txt", "adl_glc", _GLC, core_type="P",
          guesses=_GUESS_NEW_PMU),
    Uarch("ADL-E", INTEL, "Alder Lake", "Gracemont", 6, _m(0x97, 0x9A), "12th-gen Core", "ADL-E", None,
          "alderlake", "ADL", None, "adl_grt", _GRT, core_type="E", guesses=_GUESS_NEW_PMU),
    Uarch("RKL", INTEL, "Rocket Lake", "Cypress Cove", 6, _m(0xA7), "11th-gen Core desktop", "RKL", None,
          "rocketlake", "ICL", None, "icl", _ICL),
    Uarch("TGL", INTEL, "Tiger Lake", "Willow Cove", 6, _m(0x8C, 0x8D), "11th-gen Core mobile", "TGL",
          None, "tigerlake", "TGL", None, "icl", _TGL),
    Uarch("ICX", INTEL, "Ice Lake server", "Sunny Cove", 6, _m(0x6A, 0x6C), "3rd-gen Xeon Scalable",
          None, "ICL", "icelake-server", "ICL", None, "icx", _ICX),
    Uarch("ICL", INTEL, "Ice Lake", "Sunny Cove", 6, _m(0x7D, 0x7E), "10th-gen Core (Ice Lake)", "ICL",
          None, "icelake-client", "ICL", None, "icl", _ICL),
    Uarch("CNL", INTEL, "Cannon Lake", "Palm Cove", 6, _m(0x66), "Core i3-8121U", "CNL", None,
          "cannonlake", "SKX", None, "skl", None),
    Uarch("CLX", INTEL, "Cascade Lake", "Skylake server", 6, _m(0x55), "2nd-gen Xeon Scalable", "CLX",
          None, "cascadelake", "CLX", "cfg_Skylake.txt", "clx", _SKX, "Skylake", steppings=(5, 0xF)),
    Uarch("SKX", INTEL, "Skylake-SP", "Skylake server", 6, _m(0x55), "Xeon Scalable (1st gen)", "SKX",
          None, "skylake-avx512", "SKX", "cfg_Skylake.txt", "skx", _SKX, "Skylake", steppings=(0, 4)),
    Uarch("CML", INTEL, "Comet Lake", "Skylake", 6, _m(0xA5, 0xA6), "10th-gen Core (Comet Lake)", None,
          "CFL", "skylake", "SKL", "cfg_Skylake.txt", "skl", _SKL, "Skylake"),
    Uarch("CFL", INTEL, "Coffee Lake", "Skylake", 6, _m(0x8E, 0x9E),
          "8th/9th-gen Core (Coffee, Whiskey, Amber Lake)", "CFL", None, "skylake", "SKL",
          "cfg_Skylake.txt", "skl", _SKL, "Skylake", steppings=(0xA, 0xF)),
    Uarch("KBL", INTEL, "Kaby Lake", "Skylake", 6, _m(0x8E, 0x9E), "7th-gen Core", "KBL", None, "skylake",
          "SKL", "cfg_Skylake.txt", "skl", _SKL, "Skylake", steppings=(0, 9)),
    Uarch("SKL", INTEL, "Skylake", "Skylake", 6, _m(0x4E, 0x5E), "6th-gen Core", "SKL", None, "skylake",
          "SKL", "cfg_Skylake.txt", "skl", _SKL, "Skylake"),
    Uarch("BDW", INTEL, "Broadwell", "Broadwell", 6, _m(0x3D, 0x47, 0x4F, 0x56), "5th-gen Core, Xeon E5 v4",
          "BDW", None, "broadwell", "BDW", None, "bdw", _BDW),
    Uarch("HSW", INTEL, "Haswell", "Haswell", 6, _m(0x3C, 0x3F, 0x45, 0x46), "4th-gen Core, Xeon E5 v3",
          "HSW", None, "haswell", "HSW", None, "hsw", _HSW),
)

# What a CPU's features alone say it is at least, newest first per vendor: (vendor, flags any of
# which suffice, the class's key, the table record that stands for the class).
CLASSES: tuple[tuple[str, frozenset[str], str, str], ...] = (
    (AMD, frozenset({"avx512_vp2intersect", "movdiri", "avx_vnni"}), "ZEN5", "ZEN5"),
    (AMD, frozenset({"avx512f"}), "ZEN4", "ZEN4"),
    (AMD, frozenset({"vaes", "vpclmulqdq"}), "ZEN3", "ZEN3"),
    (AMD, frozenset({"clwb", "wbnoinvd", "rdpid"}), "ZEN2", "ZEN2"),
    (AMD, frozenset({"clzero"}), "ZEN", "ZEN"),
    (INTEL, frozenset({"amx_fp16"}), "GNR", "GNR"),
    (INTEL, frozenset({"amx_tile", "avx512_fp16"}), "SPR", "SPR"),
    (INTEL, frozenset({"avx_vnni"}), "ADL", "ADL-P"),
    (INTEL, frozenset({"avx512_vp2intersect"}), "TGL", "TGL"),
    (INTEL, frozenset({"avx512_vbmi2"}), "ICL", "ICL"),
    (INTEL, frozenset({"avx512_vnni"}), "CLX", "CLX"),
    (INTEL, frozenset({"avx512f"}), "SKX", "SKX"),
    (INTEL, frozenset({"clflushopt"}), "SKL", "SKL"),
    (INTEL, frozenset({"adx"}), "BDW", "BDW"),
    (INTEL, frozenset({"avx2"}), "HSW", "HSW"),
)
_RANK = {key: i for i, (_, _, key, _) in enumerate(CLASSES)}      # lower is newer
BY_KEY = {u.key: u for u in TABLE}
UOPS_INFO_CODES = ("ZEN+", "ZEN2", "ZEN3", "ZEN4", "HSW", "BDW", "SKL", "KBL", "CFL", "CNL", "SKX",
                   "CLX", "ICL", "TGL", "RKL", "ADL-P", "ADL-E", "AMT", "GLM", "GLP", "TRM")


@dataclass(frozen=True)
class Identity:
    """What this CPU is: the record (None: unknown), how it was found, and the raw identity."""
    vendor_id: str
    family: int
    model: int
    stepping: int
    uarch: Uarch | None
    inferred: bool = False       # the CPUID features overrode the model number
    guest: bool = False
    core_type_assumed: bool = False

    @property
    def known(self) -> bool:
        return self.uarch is not None

    @property
    def name(self) -> str:
        """'Sapphire Rapids class (Golden Cove), inferred from CPUID features, VM guest'."""
        u = self.uarch
        if u is None:
            text = f"unknown core ({self.vendor_id} family {self.family} model {self.model})"
        elif self.inferred:
            text = f"{u.name} class ({u.core}), inferred from CPUID features"
        else:
            text = u.label
        if u is not None and self.core_type_assumed:
            text += " (core type not reported: P-core assumed)"
        return text + (", VM guest" if self.guest else "")

    @property
    def cpuid_text(self) -> str:
        return f"{self.vendor_id} family {self.family} model {self.model} stepping {self.stepping}"

    @property
    def reference(self) -> tuple[str | None, bool]:
        """(uops.info column for this CPU, whether it is only the nearest); (None, False) if unknown."""
        return self.uarch.reference if self.uarch else (None, False)


def feature_class(vendor: str | None, flags: frozenset[str]) -> str | None:
    """The newest class whose features this CPU has ("SPR"), or None."""
    return next((key for v, any_of, key, _ in CLASSES if v == vendor and flags & any_of), None)


def identify(info: CpuInfo | None = None, core_type: str | None = None) -> Identity:
    """This CPU (or the given /proc/cpuinfo parse) as a table record. ``core_type`` ("P"/"E") is the
    hybrid core type; by default CPUID leaf 0x1A of the CPU this process runs on, when the CPU is
    hybrid and ``info`` is this machine's."""
    own = info is None
    info = cpu_info() if own else info
    vendor = VENDOR_IDS.get(info.vendor)
    if own and core_type is None and vendor == INTEL and "hybrid_cpu" in info.flags:
        core_type = _own_core_type()
    hits = [u for u in TABLE if vendor and u.matches(vendor, info.family, info.model, info.stepping)]
    match, assumed = _by_core_type(hits, core_type)
    found = feature_class(vendor, info.flags)
    inferred = False
    if match is not None and found is not None and _RANK[found] < _RANK[match.feature_class]:
        # the features name a newer core than the model number does: they win
        match, inferred, assumed = BY_KEY[next(r for *_, k, r in CLASSES if k == found)], True, False
    return Identity(info.vendor, info.family, info.model, info.stepping, match, inferred,
                    info.hypervisor, assumed)


def _by_core_type(hits: list[Uarch], core_type: str | None) -> tuple[Uarch | None, bool]:
    if not hits:
        return None, False
    if len(hits) == 1 or all(u.core_type is None for u in hits):
        return hits[0], False
    typed = [u for u in hits if u.core_type == core_type]
    if typed:
        return typed[0], False
    return next(u for u in hits if u.core_type == "P"), True


def _own_core_type() -> str | None:
    """CPUID leaf 0x1A core type of the CPU this thread runs on (0x40 Core = P, 0x20 Atom = E)."""
    from .features import cpuid
    try:
        if cpuid(0)[0] < 0x1A or not cpuid(7)[3] >> 15 & 1:
            return None
        return {0x40: "P", 0x20: "E"}.get(cpuid(0x1A)[0] >> 24)
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def this_machine() -> Identity:
    """The running CPU, identified once."""
    return identify()


def from_metadata(machine: dict) -> Identity:
    """The identity recorded in a result's machine block (``core`` written by metadata.py), else
    re-identified from its vendor, family, model and stepping (results made before the table)."""
    info = CpuInfo(machine.get("cpu_vendor") or "unknown", machine.get("cpu_family") or 0,
                   machine.get("cpu_model") or 0, machine.get("cpu_stepping") or 0,
                   machine.get("cpu_model_name") or "unknown", machine.get("microcode") or "unknown",
                   frozenset(machine.get("cpu_flags") or ())
                   | (frozenset({"hypervisor"}) if machine.get("hypervisor") else frozenset()))
    core = machine.get("core") or {}
    ident = identify(info, core.get("core_type"))
    key = core.get("key")
    if key in BY_KEY and (ident.uarch is None or ident.uarch.key != key):
        ident = Identity(info.vendor, info.family, info.model, info.stepping, BY_KEY[key],
                         bool(core.get("inferred")), info.hypervisor)
    return ident


def core_name(machine: dict) -> str:
    """The display name for a recorded machine block (what table headers and summaries print)."""
    return (machine.get("core") or {}).get("name") or from_metadata(machine).name
