"""Event names through libpfm4 (libpfm.so.4), via ctypes: PMUs, events, and name -> perf_event_attr.

libpfm picks the core PMU model from CPUID, not from the kernel, so it can name and encode events on
a machine whose PMU perf_event cannot use (a VM without a virtual PMU): resolving a name says
nothing about whether the counter can be opened.

``include_inactive=True`` sets LIBPFM_ENCODE_INACTIVE=1 before pfm_initialize(), so libpfm lists
and encodes events of PMUs that are not on this machine (``skl::UOPS_ISSUED:ANY``); that is for
checking config files, not for measuring. Without it, libpfm 4.13 still encodes pmu-qualified
names of absent PMUs, so encode() refuses those itself.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import difflib
import os
from dataclasses import dataclass

from ..errors import CounterUnavailable
from ..textfile import quote
from .events import ATTR_BIT, PERF_ATTR_SIZE_VER7, EventSpec

APT_HINT = ("install libpfm4 (Debian/Ubuntu: apt-get install libpfm4), or use generic names such "
            "as cycles, instructions")
LIST_HINT = "`cyclebench asm --list-events` lists the names this machine knows"

# pfmlib.h constants
PFM_SUCCESS = 0
PFM_ERR_NOTSUPP = -1
PFM_ERR_INVAL = -2
PFM_ERR_NOINIT = -3
PFM_ERR_NOTFOUND = -4
PFM_ERR_FEATCOMB = -5
PFM_ERR_UMASK = -6
PFM_ERR_ATTR = -8
PFM_ERR_ATTR_VAL = -9
PFM_ERR_ATTR_SET = -10
PFM_OS_NONE = 0
PFM_OS_PERF_EVENT = 1
PFM_OS_PERF_EVENT_EXT = 2
PFM_PLM0 = 0x01   # kernel
PFM_PLM3 = 0x08   # user
PFM_PLMH = 0x10   # hypervisor
PFM_ATTR_UMASK = 1
PFM_ATTR_MOD_BOOL = 2
PFM_ATTR_MOD_INTEGER = 3
PFM_PMU_TYPE_NAMES = {0: "unknown", 1: "core", 2: "uncore", 3: "OS generic"}
_PMU_ID_LIMIT = 2048   # pfm_pmu_t grows with releases (517 in 4.13); ids past the end just fail


class _PmuInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("desc", ctypes.c_char_p), ("size", ctypes.c_size_t),
                ("pmu", ctypes.c_int), ("type", ctypes.c_int), ("nevents", ctypes.c_int),
                ("first_event", ctypes.c_int), ("max_encoding", ctypes.c_int),
                ("num_cntrs", ctypes.c_int), ("num_fixed_cntrs", ctypes.c_int),
                ("flags", ctypes.c_uint)]   # bit 0 is_present, bit 1 is_dfl


class _EventInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("desc", ctypes.c_char_p), ("equiv", ctypes.c_char_p),
                ("size", ctypes.c_size_t), ("code", ctypes.c_uint64), ("pmu", ctypes.c_int),
                ("dtype", ctypes.c_int), ("idx", ctypes.c_int), ("nattrs", ctypes.c_int),
                ("reserved", ctypes.c_int), ("flags", ctypes.c_uint)]


class _AttrInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("desc", ctypes.c_char_p), ("equiv", ctypes.c_char_p),
                ("size", ctypes.c_size_t), ("code", ctypes.c_uint64), ("type", ctypes.c_int),
                ("idx", ctypes.c_int), ("ctrl", ctypes.c_int), ("flags", ctypes.c_uint),
                ("dfl", ctypes.c_uint64)]   # bit 0 of flags: is_dfl


class _PerfEventAttr(ctypes.Structure):
    # struct perf_event_attr up to sig_data (PERF_ATTR_SIZE_VER7); bit-fields kept as one word.
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("bits", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("config1", ctypes.c_uint64), ("config2", ctypes.c_uint64),
                ("branch_sample_type", ctypes.c_uint64), ("sample_regs_user", ctypes.c_uint64),
                ("sample_stack_user", ctypes.c_uint32), ("clockid", ctypes.c_int32),
                ("sample_regs_intr", ctypes.c_uint64), ("aux_watermark", ctypes.c_uint32),
                ("sample_max_stack", ctypes.c_uint16), ("reserved_2", ctypes.c_uint16),
                ("aux_sample_size", ctypes.c_uint32), ("reserved_3", ctypes.c_uint32),
                ("sig_data", ctypes.c_uint64)]


class _PerfEncodeArg(ctypes.Structure):
    _fields_ = [("attr", ctypes.POINTER(_PerfEventAttr)),
                ("fstr", ctypes.POINTER(ctypes.c_char_p)), ("size", ctypes.c_size_t),
                ("idx", ctypes.c_int), ("cpu", ctypes.c_int), ("flags", ctypes.c_int),
                ("pad0", ctypes.c_int)]


assert ctypes.sizeof(_PmuInfo) == 56 and ctypes.sizeof(_EventInfo) == 64
assert ctypes.sizeof(_AttrInfo) == 64 and ctypes.sizeof(_PerfEncodeArg) == 40
assert ctypes.sizeof(_PerfEventAttr) == PERF_ATTR_SIZE_VER7


@dataclass(frozen=True)
class PmuInfo:
    id: int
    name: str
    description: str
    present: bool
    default: bool
    kind: str          # core, uncore, OS generic
    n_events: int
    n_counters: int
    n_fixed: int


@dataclass(frozen=True)
class UnitMask:
    name: str
    description: str
    code: int
    default: bool


@dataclass(frozen=True)
class EventInfo:
    pmu: str
    name: str
    description: str
    code: int
    umasks: tuple[UnitMask, ...]
    modifiers: tuple[str, ...]

    @property
    def qualified_name(self) -> str:
        return f"{self.pmu}::{self.name}"


class Libpfm:
    """One initialised libpfm. Use :func:`get` instead of constructing it directly.

    libpfm has one global state; an instance re-initialises it when another instance (with the
    other include_inactive setting) was used last.
    """

    _active: "Libpfm | None" = None

    def __init__(self, include_inactive: bool = False, library: str | None = None):
        self.include_inactive = include_inactive
        self._lib = _load(library)
        self._libc = ctypes.CDLL(None)
        self._declare()
        self._initialize()
        self._pmus: list[PmuInfo] | None = None
        self._events: dict[str, list[EventInfo]] = {}    # by PMU name, each PMU read when first asked

    def _declare(self):
        lib = self._lib
        lib.pfm_initialize.restype = ctypes.c_int
        lib.pfm_terminate.restype = None
        lib.pfm_strerror.restype = ctypes.c_char_p
        lib.pfm_strerror.argtypes = [ctypes.c_int]
        lib.pfm_get_version.restype = ctypes.c_int
        lib.pfm_get_pmu_info.argtypes = [ctypes.c_int, ctypes.POINTER(_PmuInfo)]
        lib.pfm_get_event_next.argtypes = [ctypes.c_int]
        lib.pfm_get_event_info.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_EventInfo)]
        lib.pfm_get_event_attr_info.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                ctypes.POINTER(_AttrInfo)]
        lib.pfm_get_os_event_encoding.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                                  ctypes.c_void_p]
        self._libc.free.argtypes = [ctypes.c_void_p]

    def _use(self):
        if Libpfm._active is not self:
            self._initialize()

    def _initialize(self):
        # libpfm reads LIBPFM_ENCODE_INACTIVE in pfm_initialize() and keeps the old setting when
        # the variable is absent, so it is always set explicitly.
        self._lib.pfm_terminate()
        old = os.environ.get("LIBPFM_ENCODE_INACTIVE")
        os.environ["LIBPFM_ENCODE_INACTIVE"] = "1" if self.include_inactive else "0"
        try:
            ret = self._lib.pfm_initialize()
        finally:
            if old is None:
                os.environ.pop("LIBPFM_ENCODE_INACTIVE", None)
            else:
                os.environ["LIBPFM_ENCODE_INACTIVE"] = old
        Libpfm._active = self
        if ret != PFM_SUCCESS:
            Libpfm._active = None
            raise CounterUnavailable(f"libpfm4 failed to initialise: {self.strerror(ret)}",
                                     hint=APT_HINT)

    @property
    def api_version(self) -> str:
        v = self._lib.pfm_get_version()
        return f"{v >> 16}.{v & 0xFFFF}"

    def strerror(self, code: int) -> str:
        return self._lib.pfm_strerror(code).decode()

    def pmus(self, present_only: bool = True) -> list[PmuInfo]:
        """PMUs libpfm supports; by default only those present (detected) on this machine."""
        self._use()
        if self._pmus is None:
            found = []
            for pmu_id in range(_PMU_ID_LIMIT):
                info = _PmuInfo(size=ctypes.sizeof(_PmuInfo))
                if self._lib.pfm_get_pmu_info(pmu_id, ctypes.byref(info)) != PFM_SUCCESS:
                    continue
                found.append(PmuInfo(
                    id=pmu_id, name=info.name.decode(), description=(info.desc or b"").decode(),
                    present=bool(info.flags & 1), default=bool(info.flags & 2),
                    kind=PFM_PMU_TYPE_NAMES.get(info.type, "unknown"), n_events=info.nevents,
                    n_counters=info.num_cntrs, n_fixed=info.num_fixed_cntrs))
            self._pmus = found
        return [p for p in self._pmus if p.present or not present_only]

    def events(self, pmu: str | None = None) -> list[EventInfo]:
        """Events of the present PMUs (all supported PMUs when include_inactive), optionally one PMU."""
        self._use()
        # one PMU's events are read alone: with include_inactive, libpfm 4.13's PMUs hold 18393
        # events, 2.1 s to describe through ctypes, of which amd64_fam19h_zen4 has 77
        pmus = [p for p in self.pmus(present_only=not self.include_inactive) if pmu is None or p.name == pmu]
        for p in pmus:
            if p.name not in self._events:
                self._events[p.name] = [self._event_info(idx) for idx in self._event_indices(p)]
        return [e for p in pmus for e in self._events[p.name]]

    def _event_indices(self, p: PmuInfo):
        info = _PmuInfo(size=ctypes.sizeof(_PmuInfo))
        self._lib.pfm_get_pmu_info(p.id, ctypes.byref(info))
        idx = info.first_event
        while idx >= 0:
            yield idx
            idx = self._lib.pfm_get_event_next(idx)

    def _event_info(self, idx: int) -> EventInfo:
        all_pmus = self.pmus(present_only=False)
        info = _EventInfo(size=ctypes.sizeof(_EventInfo))
        ret = self._lib.pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, ctypes.byref(info))
        if ret != PFM_SUCCESS:
            raise CounterUnavailable(f"libpfm4 cannot describe event #{idx}: {self.strerror(ret)}")
        pmu = next(p.name for p in all_pmus if p.id == info.pmu)
        umasks, mods = [], []
        for aidx in range(info.nattrs):
            a = _AttrInfo(size=ctypes.sizeof(_AttrInfo))
            if self._lib.pfm_get_event_attr_info(idx, aidx, PFM_OS_PERF_EVENT_EXT,
                                                 ctypes.byref(a)) != PFM_SUCCESS:
                continue
            if a.type == PFM_ATTR_UMASK:
                umasks.append(UnitMask(a.name.decode(), (a.desc or b"").decode(), a.code,
                                       bool(a.flags & 1)))
            else:
                mods.append(a.name.decode())
        return EventInfo(pmu=pmu, name=info.name.decode(), description=(info.desc or b"").decode(),
                         code=info.code, umasks=tuple(umasks), modifiers=tuple(mods))

    def encode(self, name: str, user: bool = True, kernel: bool = False) -> EventSpec:
        """Resolve ``[pmu::]EVENT[:UMASK][:mod=val]`` to a perf_event_attr as an EventSpec.

        ``user``/``kernel`` are the default privilege levels; modifiers in the name (``:u``, ``:k``)
        override them, as in perf.
        """
        self._use()
        attr = _PerfEventAttr(size=PERF_ATTR_SIZE_VER7)
        fstr = ctypes.c_char_p()
        arg = _PerfEncodeArg(attr=ctypes.pointer(attr), fstr=ctypes.pointer(fstr),
                             size=ctypes.sizeof(_PerfEncodeArg))
        plm = (PFM_PLM3 if user else 0) | (PFM_PLM0 if kernel else 0)
        ret = self._lib.pfm_get_os_event_encoding(name.encode(), plm, PFM_OS_PERF_EVENT_EXT,
                                                  ctypes.byref(arg))
        if ret != PFM_SUCCESS:
            raise self._encode_error(name, ret)
        full = fstr.value.decode() if fstr.value else name
        self._libc.free(ctypes.cast(fstr, ctypes.c_void_p))
        bits = attr.bits
        info = self._event_info(arg.idx)
        pmu = next(p for p in self.pmus(present_only=False) if p.name == info.pmu)
        if not (pmu.present or self.include_inactive):
            # libpfm encodes pmu-qualified names of absent PMUs; their codes mean nothing here.
            here = ", ".join(p.name for p in self.pmus()) or "none"
            raise CounterUnavailable(
                f"event '{quote(name)}' belongs to the {pmu.description} PMU ({pmu.name}), which this "
                f"machine does not have", hint=f"this machine's PMUs: {here}; {LIST_HINT}")
        return EventSpec(
            name=name, type=attr.type, config=attr.config, config1=attr.config1,
            config2=attr.config2,
            exclude_user=bool(bits >> ATTR_BIT["exclude_user"] & 1),
            exclude_kernel=bool(bits >> ATTR_BIT["exclude_kernel"] & 1),
            exclude_hv=bool(bits >> ATTR_BIT["exclude_hv"] & 1),
            exclude_guest=bool(bits >> ATTR_BIT["exclude_guest"] & 1),
            pinned=bool(bits >> ATTR_BIT["pinned"] & 1),
            description=info.description, source=f"libpfm {full}")

    def _encode_error(self, name: str, ret: int) -> CounterUnavailable:
        pmu, sep, rest = name.rpartition("::")
        event = pmu + sep + rest.split(":")[0]
        if ret == PFM_ERR_NOTFOUND:
            close = self.closest(name)
            hint = (f"closest names: {', '.join(close)}; " if close else "") + LIST_HINT
            pmus = ", ".join(p.name for p in self.pmus()) or "none"
            return CounterUnavailable(f"unknown event '{quote(name)}' (libpfm4 PMUs here: {pmus})",
                                      hint=hint)
        if ret == PFM_ERR_UMASK:
            return CounterUnavailable(f"event '{quote(name)}': missing or invalid unit mask",
                                      hint=self._umask_hint(event))
        if ret in (PFM_ERR_ATTR, PFM_ERR_ATTR_VAL, PFM_ERR_ATTR_SET, PFM_ERR_FEATCOMB):
            return CounterUnavailable(f"event '{quote(name)}': {self.strerror(ret)}",
                                      hint=self._umask_hint(event))
        return CounterUnavailable(f"libpfm4 cannot encode '{quote(name)}': {self.strerror(ret)}",
                                  hint=LIST_HINT)

    def _umask_hint(self, event: str) -> str:
        pmu, _, ev = event.rpartition("::")
        for e in self.events(pmu or None):
            if e.name.lower() == ev.lower():
                names = [u.name + (" (default)" if u.default else "") for u in e.umasks]
                mods = list(e.modifiers)
                return (f"unit masks of {e.qualified_name}: {', '.join(names) or 'none'}; "
                        f"modifiers: {', '.join(mods) or 'none'}")
        return LIST_HINT

    def closest(self, name: str, n: int = 3) -> list[str]:
        """Event names that look like ``name`` (spelling mistakes, wrong separators)."""
        wanted = name.split("::")[-1].split(":")[0].upper().replace(".", "_")
        # a name qualified by a known PMU is compared with that PMU's events: another PMU's
        # event would not encode under this qualifier either
        pmu = name.rpartition("::")[0]
        known = pmu in {p.name for p in self.pmus(present_only=not self.include_inactive)}
        names = sorted({e.name.upper() for e in self.events(pmu if known else None)})
        return difflib.get_close_matches(wanted, names, n=n, cutoff=0.6)


def _load(library: str | None):
    candidates = [library] if library else [ctypes.util.find_library("pfm"), "libpfm.so.4"]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return ctypes.CDLL(candidate)
        except OSError:
            continue
    raise CounterUnavailable(f"libpfm4 is not installed ({candidates[-1]} not found), so "
                             "CPU-specific event names cannot be resolved", hint=APT_HINT)


_by_mode: dict[bool, Libpfm] = {}


def get(include_inactive: bool = False) -> Libpfm:
    """The shared Libpfm for one mode (only present PMUs, or all supported PMUs)."""
    inst = _by_mode.get(include_inactive)
    if inst is None:
        inst = _by_mode[include_inactive] = Libpfm(include_inactive)
    return inst


def available() -> bool:
    try:
        _load(None)
        return True
    except CounterUnavailable:
        return False
