"""nanoBench counter config files -> EventSpec (PERF_TYPE_RAW), and the shipped file for this CPU.

Line format (nanoBench README): ``EvtSel.UMASK(.CMSK=n)(.AnyT)(.EDG)(.INV)(.TakenAlone)(.CTR=n)
(.MSR_3F6H=v)(.MSR_PF=v)(.MSR_RSP0=v)(.MSR_RSP1=v) Name``. EvtSel and UMASK are hex; the ``=``
values are C integers (``12`` or ``0x0c``). A line starting with ``#`` is a comment; a missing Name
means the config string is the name. A comment ``# vendor: AMD`` (or Intel) fixes the register
layout; without it, a 3-digit EvtSel means AMD, else the running CPU decides.

Raw config bits, per vendor (Intel SDM vol. 3B, IA32_PERFEVTSELx; AMD APM vol. 2 #24593 and the
family PPRs, Core::X86::Msr::PERF_CTL):
  Intel: event 0-7, umask 8-15, edge 18, any-thread 21, inv 23, cmask 24-31
  AMD:   event[7:0] 0-7, umask 8-15, edge 18, inv 23, cmask 24-31, event[11:8] 32-35
USR (16), OS (17), INT (20) and EN (22) are never set: perf_event writes them itself from
exclude_user / exclude_kernel and its own state, so privilege levels live in the EventSpec.

Extra MSRs: perf_event has one ``config1`` per event, and the kernel picks the MSR it goes to from
the event code (its Intel "extra_regs" tables). So MSR_3F6H (load-latency threshold, perf
``ldlat``), MSR_PF (MSR_PEBS_FRONTEND, perf ``frontend``) and MSR_RSP0/1 (offcore response, perf
``offcore_rsp``) become config1, but only on the event that owns that MSR; any other combination,
any MSR on AMD, and AnyT on AMD are refused with a ConfigError naming the line.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..machine.cpu import cpu_info, parse_cpuinfo
from ..machine.uarch import TABLE, VENDOR_IDS, Identity, identify, this_machine
from ..textfile import quote, read_text
from .events import PERF_TYPE_RAW, EventSpec

CONFIG_DIR = Path(__file__).with_name("configs")
MAX_CONFIG_BYTES = 1 << 20      # the largest shipped config is a few KiB
MAX_LISTED = 10                 # bad lines named in one error; the rest are counted
FORMAT_HINT = ("expected `EvtSel.UMASK[.CMSK=n][.AnyT][.EDG][.INV][.TakenAlone][.CTR=n]"
               "[.MSR_3F6H=v][.MSR_PF=v][.MSR_RSP0=v][.MSR_RSP1=v] Name`, e.g. `0E.01 UOPS_ISSUED.ANY`")

# Which event (EvtSel, UMASK) owns each extra MSR on Intel, as the kernel programs it; the value
# range is the perf format field width (ldlat config1:0-15, frontend config1:0-23, offcore_rsp
# config1:0-63).
_MSR_OWNERS = {
    "MSR_3F6H": ({(0xCD, 0x01)}, 16, "MEM_TRANS_RETIRED.LOAD_LATENCY (CD.01)"),
    "MSR_PF": ({(0xC6, 0x01)}, 24, "FRONTEND_RETIRED (C6.01)"),
    "MSR_RSP0": ({(0xB7, 0x01), (0x2A, 0x01)}, 64, "OFFCORE_RESPONSE_0 / OCR (B7.01 or 2A.01)"),
    "MSR_RSP1": ({(0xBB, 0x01), (0x2B, 0x01)}, 64, "OFFCORE_RESPONSE_1 / OCR (BB.01 or 2B.01)"),
}
_FLAGS = {"ANYT": "any_thread", "EDG": "edge", "INV": "inv", "TAKENALONE": "taken_alone"}
_VALUES = {"CMSK": "cmask", "CTR": "counter", **{k: k.lower() for k in _MSR_OWNERS}}
_HEX = re.compile(r"(?:0[xX])?([0-9a-fA-F]+)")
_AMD_SELECT = re.compile(r"(?:0[xX])?[0-9a-fA-F]{3}\.")
_VENDOR = re.compile(r"#\s*vendor\s*:\s*(intel|amd)\b", re.IGNORECASE)
VENDORS = ("intel", "amd")


def encode(vendor: str, event: int, umask: int, cmask: int = 0, edge: bool = False,
           inv: bool = False, any_thread: bool = False) -> int:
    """The raw perf config for one event-select setting (no USR/OS/EN bits, see module doc)."""
    config = (event & 0xFF) | (umask & 0xFF) << 8 | int(edge) << 18 | int(inv) << 23
    config |= (cmask & 0xFF) << 24
    if vendor == "amd":
        return config | (event >> 8 & 0xF) << 32
    return config | int(any_thread) << 21


@dataclass(frozen=True)
class Problem:
    line: int
    text: str
    problem: str
    hint: str


class _LineError(Exception):
    def __init__(self, problem: str, hint: str = FORMAT_HINT):
        super().__init__(problem)
        self.problem, self.hint = problem, hint


def parse_config(text: str, path: str = "<config>", vendor: str | None = None) -> list[EventSpec]:
    """All events of a config text; every bad line is reported in one ConfigError."""
    vendor = _vendor_of(text, vendor)
    specs, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            specs.append(_parse_line(line, vendor, f"{path}:{number}"))
        except _LineError as err:
            problems.append(Problem(number, line, err.problem, err.hint))
    if problems:
        raise _config_error(path, problems)
    return specs


def load_config(path: str | Path, vendor: str | None = None) -> list[EventSpec]:
    """Parse a config file; a bare file name is also looked up among the shipped configs."""
    file = Path(path)
    # os.path.exists: False (not an OSError) for names too long or with NUL bytes
    if not os.path.exists(file) and not file.parent.name and os.path.exists(CONFIG_DIR / file.name):
        file = CONFIG_DIR / file.name
    shipped = ", ".join(sorted(p.name for p in CONFIG_DIR.glob("cfg_*.txt")))
    text = read_text(file, "counter config", limit=MAX_CONFIG_BYTES, error=ConfigError,
                     hint=f"a counter config is a small text file of nanoBench lines: give its "
                          f"path, or one of the shipped configs: {shipped}")
    specs = parse_config(text, str(file), vendor)
    if not specs:
        raise ConfigError(f"the counter config {quote(str(file), 200)} has no event lines",
                          hint=f"{FORMAT_HINT}; lines starting with # are comments")
    return specs


def _vendor_of(text: str, vendor: str | None) -> str:
    if vendor:
        vendor = vendor.lower()
        if vendor not in VENDORS:
            raise ConfigError(f"vendor '{quote(vendor, 20)}' is not one of {', '.join(VENDORS)}",
                              hint="give vendor='intel' or 'amd', or None to read `# vendor:`")
        return vendor
    match = _VENDOR.search(text)
    if match:
        return match.group(1).lower()
    for line in text.splitlines():
        if _AMD_SELECT.match(line.strip()):
            return "amd"
    return VENDOR_IDS.get(cpu_info().vendor) or "intel"


def _parse_line(line: str, vendor: str, where: str) -> EventSpec:
    config_str, *rest = line.split(None, 1)
    name = rest[0].strip() if rest else config_str
    fields = config_str.split(".")
    if len(fields) < 2:
        raise _LineError("no unit mask: EvtSel and UMASK are separated by '.'")
    event = _hex(fields[0], "event select", 0xFFF if vendor == "amd" else 0xFF, vendor)
    umask = _hex(fields[1], "unit mask", 0xFF, vendor)
    opts: dict = {}
    for field in fields[2:]:
        if not field:
            raise _LineError("empty field (two dots in a row, or a trailing dot)")
        key, eq, value = field.partition("=")
        ukey = key.upper()
        if (_FLAGS.get(ukey) or _VALUES.get(ukey)) in opts:
            raise _LineError(f"{quote(key, 20)} given twice")
        if not eq and ukey in _FLAGS:
            opts[_FLAGS[ukey]] = True
        elif eq and ukey in _VALUES:
            opts[_VALUES[ukey]] = _int(key, value)
        else:
            raise _LineError(f"unknown field '{quote(field, 20)}'")
    return _spec(name, vendor, event, umask, opts, where)


def _spec(name, vendor, event, umask, opts, where) -> EventSpec:
    cmask = opts.get("cmask", 0)
    if not 0 <= cmask <= 0xFF:
        raise _LineError(f"CMSK={cmask} does not fit the 8-bit counter mask", "use 0..255")
    counter = opts.get("counter")
    if counter is not None and not 0 <= counter <= 7:
        raise _LineError(f"CTR={counter} is not a programmable counter", "use 0..7")
    msrs = {key: opts[key.lower()] for key in _MSR_OWNERS if key.lower() in opts}
    if vendor == "amd":
        if opts.get("any_thread"):
            raise _LineError("AnyT on AMD: PERF_CTL has no any-thread bit",
                             "drop .AnyT (AMD core counters count one thread)")
        if msrs:
            raise _LineError(f"{', '.join(msrs)} on AMD: these are Intel MSRs",
                             "drop the MSR field, or mark the file `# vendor: Intel`")
    if len(msrs) > 1:
        raise _LineError(f"{' and '.join(msrs)} together: perf_event has one config1 per event",
                         "split the line into one event per extra MSR")
    config1 = 0
    for key, value in msrs.items():
        owners, bits, owner_name = _MSR_OWNERS[key]
        if (event, umask) not in owners:
            raise _LineError(f"{key} on event {event:02X}.{umask:02X}: perf_event programs that "
                             f"MSR only for {owner_name}", f"use {key} with {owner_name}")
        if not 0 <= value < 1 << bits:
            raise _LineError(f"{key}={value:#x} does not fit perf's {bits}-bit field",
                             f"use a value below {1 << bits:#x}")
        config1 = value
    config = encode(vendor, event, umask, cmask, opts.get("edge", False), opts.get("inv", False),
                    opts.get("any_thread", False))
    return EventSpec(name=name, type=PERF_TYPE_RAW, config=config, config1=config1,
                     taken_alone=opts.get("taken_alone", False), counter=counter,
                     msr_3f6h=opts.get("msr_3f6h"), msr_pf=opts.get("msr_pf"),
                     msr_rsp0=opts.get("msr_rsp0"), msr_rsp1=opts.get("msr_rsp1"),
                     source=where)


def _hex(text: str, what: str, limit: int, vendor: str) -> int:
    match = _HEX.fullmatch(text)
    if not match:
        raise _LineError(f"{what} '{quote(text, 20)}' is not hexadecimal")
    value = int(match.group(1), 16)
    if value > limit:
        shown = f"{value:#x}" if value < 1 << 64 else f"0x{quote(match.group(1), 20)}"
        raise _LineError(f"{what} {shown} is larger than {vendor.upper()} allows ({limit:#x})",
                         "AMD event selects have 12 bits, Intel ones 8; check `# vendor:`"
                         if what == "event select" else FORMAT_HINT)
    return value


def _int(key: str, text: str) -> int:
    try:
        if len(text) > 24:      # wider than any field; a huge int would not even print
            raise ValueError(text)
        return int(text, 0)
    except ValueError:
        raise _LineError(f"{quote(key, 20)}={quote(text, 20)} is not a number",
                         "write decimal (12) or hex with 0x (0x0c)") from None


def _config_error(path: str, problems: list[Problem]) -> ConfigError:
    if len(problems) == 1:
        p = problems[0]
        return ConfigError(f"{path}, line {p.line}: {p.problem}: '{quote(p.text)}'", hint=p.hint,
                           problems=problems)
    lines = [f"{len(problems)} bad lines in counter config {path}:"]
    lines += [f"  line {p.line}: {p.problem}: '{quote(p.text)}'"
              + (f" ({p.hint})" if p.hint != FORMAT_HINT else "") for p in problems[:MAX_LISTED]]
    if len(problems) > MAX_LISTED:
        lines.append(f"  ... and {len(problems) - MAX_LISTED} more")
    return ConfigError("\n".join(lines), hint=FORMAT_HINT, problems=problems)


# --- the shipped configs: which CPU each is for comes from the microarchitecture table ------------

def shipped_configs() -> dict[str, str]:
    """file name -> vendor, for every shipped config the table names."""
    return {u.counter_config: u.vendor for u in TABLE if u.counter_config}


def config_for(ident: Identity) -> Path | None:
    """The shipped config for an identified CPU, or None when none fits."""
    u = ident.uarch
    return CONFIG_DIR / u.counter_config if u and u.counter_config else None


def select_config(cpuinfo: str | None = None) -> Path | None:
    """Path of the shipped config for the running CPU (or the given /proc/cpuinfo text)."""
    return config_for(this_machine() if cpuinfo is None else identify(parse_cpuinfo(cpuinfo.splitlines())))
