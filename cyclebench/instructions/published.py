"""Readers for published instruction data: uops.info's instructions.xml and its table as CSV.

Both return ``{form name: Published}`` keyed by the uops.info form name (``IMUL (R64, R64)``,
normalized like catalogue names), so a measured form can be looked up directly.

Value notation (uops.info's table): ``1`` exact; ``[3;4]`` a range over operand pairs / inputs;
``≤6`` (or ``<=6``) an upper bound only; ``[≤5;≤9]`` a range of upper bounds; empty, ``-`` or
``n/a``: no value.  Two values ``a / b``: in the table's throughput column ``a`` is computed from
the port usage and ``b`` is measured (uops.info's notation, see the reference data's README):
``throughput`` is the measured ``b`` (the one to compare with), ``throughput_computed`` keeps
``a``; one value is a measured one.  In the µops column ``a / b`` is fused / unfused (``uops`` is
``a``).  Ports: ``1*p0+1*p15`` (Intel
port groups) or ``1*FP0123`` (AMD pipes), parsed into ``{"p0": 1, "p15": 1}``.

CSV: a header row with (case-insensitive) columns ``instruction`` and any of ``latency``,
``throughput``, ``uops``, ``ports`` (others such as ``extension`` or ``family`` are kept as
strings).  Rows that cannot be parsed are reported as :class:`ConfigError` naming the file and
line: :func:`read_csv` raises on the first batch unless ``collect=True``, which returns them.

XML: ``<instruction string=...>`` elements with ``<architecture name=ZEN4><measurement uops=
ports= TP_unrolled= TP_loop=><latency start_op= target_op= cycles= .../>`` children; only the
requested architecture is kept.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import stat
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..textfile import read_bytes
from .catalogue import normalize_name

_NUM = r"[0-9]+(?:\.[0-9]*)?"
_BOUND = re.compile(rf"^(?P<le>≤|<=)?(?P<v>{_NUM})$")
_PORT = re.compile(r"^(?P<n>[0-9]+)\*(?P<p>[A-Za-z0-9_]+)$")


@dataclass(frozen=True)
class Value:
    """A published number: exact (lo == hi), a range, and/or upper bounds."""

    lo: float | None
    hi: float | None
    lo_upper_bound: bool = False   # the lower end is itself only an upper bound (≤)
    hi_upper_bound: bool = False
    text: str = ""

    @property
    def exact(self) -> bool:
        return self.lo == self.hi and not self.hi_upper_bound

    @property
    def upper_bound(self) -> bool:
        return self.hi_upper_bound

    def __str__(self) -> str:
        return self.text or _fmt(self)


def _fmt(v: Value) -> str:
    def one(x, ub):
        return ("≤" if ub else "") + (f"{x:g}" if x is not None else "?")
    if v.lo == v.hi and v.lo_upper_bound == v.hi_upper_bound:
        return one(v.hi, v.hi_upper_bound)
    return f"[{one(v.lo, v.lo_upper_bound)};{one(v.hi, v.hi_upper_bound)}]"


def parse_value(text: str) -> Value | None:
    """uops.info number notation -> Value (None when empty). Raises ValueError when malformed."""
    s = (text or "").strip().replace(" ", "")
    if s in ("", "-", "n/a", "N/A", "?"):
        return None
    if s.startswith("[") and s.endswith("]"):
        parts = s[1:-1].split(";")
        if len(parts) != 2:
            raise ValueError(f"range needs two parts: {text!r}")
        a, b = (_BOUND.match(p) for p in parts)
        if not a or not b:
            raise ValueError(f"bad range {text!r}")
        lo, hi = _finite(a["v"], text), _finite(b["v"], text)
        if lo > hi:
            raise ValueError(f"range goes down: {text!r}")
        return Value(lo, hi, bool(a["le"]), bool(b["le"]), text.strip())
    m = _BOUND.match(s)
    if not m:
        raise ValueError(f"not a number, range or bound: {text!r}")
    v = _finite(m["v"], text)
    return Value(v, v, bool(m["le"]), bool(m["le"]), text.strip())


def _finite(digits: str, text: str) -> float:
    v = float(digits)
    if not math.isfinite(v):
        raise ValueError(f"number too large: {text[:40]!r}")
    return v


def parse_pair(text: str) -> tuple[Value | None, Value | None]:
    """``'0.50 / 0.25'`` -> (first, second); a single value gives (value, None)."""
    parts = (text or "").split("/")
    if len(parts) > 2:
        raise ValueError(f"more than two values: {text!r}")
    first = parse_value(parts[0])
    second = parse_value(parts[1]) if len(parts) == 2 else None
    return first, second


def parse_ports(text: str) -> dict[str, int]:
    """``'1*p0+1*p15'`` -> ``{'p0': 1, 'p15': 1}``; ``'1*FP0123'`` -> ``{'FP0123': 1}``."""
    s = (text or "").strip().replace(" ", "")
    if not s:
        return {}
    out: dict[str, int] = {}
    for term in s.split("+"):
        m = _PORT.match(term)
        if not m:
            raise ValueError(f"bad port usage term {term!r} in {text!r}")
        out[m["p"]] = out.get(m["p"], 0) + int(m["n"])
    return out


@dataclass
class Published:
    name: str                               # uops.info form name (normalized)
    source: str                             # "file:line" or "file (ARCH)"
    arch: str | None = None
    latency: Value | None = None            # overall: min..max over operand pairs
    throughput: Value | None = None         # measured reciprocal throughput, cycles/instruction
    throughput_computed: Value | None = None  # CSV 'a / b': a, computed from the port usage
    throughput_alt: Value | None = None     # XML: TP_loop beside TP_unrolled (both measured)
    throughput_text: str = ""               # the published cell as written
    uops: Value | None = None
    uops_alt: Value | None = None
    ports: dict[str, int] = field(default_factory=dict)
    ports_text: str = ""
    latencies: dict[tuple[str, str], Value] = field(default_factory=dict)  # XML: (start, target)
    extra: dict[str, str] = field(default_factory=dict)


MAX_CSV = 64 << 20           # uops.info's largest column is ~1 MB
_REQUIRED = "instruction"
MAX_PROBLEMS = 20
_KNOWN = ("latency", "throughput", "uops", "ports")


def read_csv(path: str, collect: bool = False):
    """uops.info-style CSV -> ``{name: Published}``.

    With ``collect=False`` (default) bad rows raise one ConfigError listing them (file:line: why);
    with ``collect=True`` returns ``(records, [ConfigError, ...])``."""
    # read_bytes: a FIFO or a device (/dev/zero) is refused or read once, never waited on forever
    data = read_bytes(path, "comparison file", limit=MAX_CSV, error=ConfigError,
                      hint="give the path of a CSV exported from uops.info's table")
    try:
        records, problems = _read_rows(path, io.StringIO(data.decode("utf-8-sig"), newline=""))
    except (UnicodeDecodeError, csv.Error) as e:
        why = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else _short(str(e))
        raise ConfigError(f"{path}: not a CSV table ({why})",
                          hint="give a CSV exported from uops.info's table, saved as UTF-8") from None
    if collect and len(problems) > MAX_PROBLEMS:      # each is printed as a warning: keep that readable
        more = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS] + [ConfigError(f"{path}: {more} more bad rows not listed",
                                                          file=path)]
    if collect:
        return records, problems
    if problems:
        raise ConfigError(
            f"{path}: {len(problems)} bad row(s); first: {problems[0].cause}",
            hint="; ".join(p.cause for p in problems[1:4]) or "fix the row and run again",
            problems=[p.cause for p in problems])
    return records


def _short(text: str, limit: int = 80) -> str:
    """A file's text quoted in a message, cut so that a huge field cannot flood the terminal."""
    return text if len(text) <= limit else text[:limit] + "…"


def _read_rows(path: str, f) -> tuple[dict[str, Published], list[ConfigError]]:
    records: dict[str, Published] = {}
    problems: list[ConfigError] = []
    reader = csv.reader(f, skipinitialspace=True)
    header = None
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [h.strip().lower() for h in row]
            if _REQUIRED not in header or not any(k in header for k in _KNOWN):
                raise ConfigError(
                    f"{path}:{line}: header must name an 'instruction' column and at least one "
                    f"of {', '.join(_KNOWN)}",
                    hint="first row like: instruction,latency,throughput,uops,ports")
            continue
        if len(row) != len(header):
            problems.append(ConfigError(
                f"{path}:{line}: {len(row)} columns, header has {len(header)}",
                hint="quote fields that contain commas", file=path, line=line))
            continue
        cells = {h: c.strip() for h, c in zip(header, row)}
        name = cells["instruction"]
        if not name:
            problems.append(ConfigError(f"{path}:{line}: empty instruction name",
                                        file=path, line=line))
            continue
        try:
            computed, measured = parse_pair(cells.get("throughput", ""))
            if measured is None:             # one value: a measured one
                computed, measured = None, computed
            up, up2 = parse_pair(cells.get("uops", ""))
            rec = Published(
                name=normalize_name(name), source=f"{path}:{line}",
                latency=parse_value(cells.get("latency", "")), throughput=measured,
                throughput_computed=computed, throughput_text=cells.get("throughput", ""),
                uops=up, uops_alt=up2,
                ports=parse_ports(cells.get("ports", "")), ports_text=cells.get("ports", ""),
                extra={k: v for k, v in cells.items() if k not in _KNOWN + (_REQUIRED,)})
        except ValueError as e:
            problems.append(ConfigError(f"{path}:{line}: {_short(name)}: {_short(str(e))}",
                                        file=path, line=line))
            continue
        if rec.name in records:
            problems.append(ConfigError(
                f"{path}:{line}: {_short(name)} already given at {records[rec.name].source}",
                file=path, line=line))
            continue
        records[rec.name] = rec
    if header is None:
        problems.append(ConfigError(f"{path}: no header row (empty file)", file=path, line=0))
    return records, problems


def _attr_value(el, key: str) -> Value | None:
    if key not in el.attrib:
        return None
    try:
        v = _finite(el.attrib[key], el.attrib[key])
    except ValueError:
        raise ConfigError(f"latency attribute {key}={_short(el.attrib[key], 40)!r} is not a number",
                          hint="give uops.info's instructions.xml") from None
    ub = el.attrib.get(f"{key}_is_upper_bound") == "1"
    return Value(v, v, ub, ub)


def read_xml(path: str, arch: str) -> dict[str, Published]:
    """uops.info instructions.xml -> ``{name: Published}`` for architecture ``arch`` (ZEN4, ADL-P,
    SKX ...).  Raises ConfigError when the file is not such a file or lacks ``arch``."""
    records: dict[str, Published] = {}
    archs: set[str] = set()
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):   # a FIFO would block, a device never end
            raise ConfigError(f"{path} is not a regular file", hint="give uops.info's instructions.xml", file=path)
        for _event, el in ET.iterparse(path, events=("end",)):
            if el.tag != "instruction":
                continue
            name = el.attrib.get("string")
            ops = {o.attrib.get("idx"): o for o in el.iter("operand")}
            for a in el.iter("architecture"):
                archs.add(a.attrib.get("name", ""))
                if a.attrib.get("name") != arch or name is None:
                    continue
                m = a.find("measurement")
                if m is None:
                    continue
                rec = Published(name=normalize_name(name), source=f"{path} ({arch})", arch=arch,
                                extra={k: v for k, v in el.attrib.items() if k != "string"})
                try:
                    tp = m.attrib.get("TP_unrolled") or m.attrib.get("TP")
                    rec.throughput = parse_value(tp) if tp else None
                    if m.attrib.get("TP_loop"):
                        rec.throughput_alt = parse_value(m.attrib["TP_loop"])
                    rec.uops = parse_value(m.attrib.get("uops", ""))
                    rec.ports_text = m.attrib.get("ports", "")
                    rec.ports = parse_ports(rec.ports_text)
                except ValueError as e:
                    raise ConfigError(f"{path}: {name} ({arch}): {e}", hint="give uops.info's instructions.xml",
                                      file=path)
                lows, highs = [], []
                for lat in m.iter("latency"):
                    s, t = lat.attrib.get("start_op"), lat.attrib.get("target_op")
                    label_s = _op_label(ops.get(s), s)
                    label_t = _op_label(ops.get(t), t)
                    for key in ("cycles", "cycles_mem", "cycles_addr", "cycles_addr_index",
                                "cycles_same_reg", "min_cycles", "max_cycles"):
                        v = _attr_value(lat, key)
                        if v is None:
                            continue
                        suffix = "" if key == "cycles" else f" [{key}]"
                        rec.latencies[(label_s, label_t + suffix)] = v
                        if key in ("cycles", "min_cycles", "cycles_mem", "cycles_addr"):
                            lows.append((v.lo, v.lo_upper_bound))
                        if key in ("cycles", "max_cycles", "cycles_mem", "cycles_addr"):
                            highs.append((v.hi, v.hi_upper_bound))
                if lows and highs:
                    lo = min(lows)                       # an exact value wins a tie with a bound
                    hi = max(highs, key=lambda x: (x[0], x[1]))
                    rec.latency = Value(lo[0], hi[0], lo[1], hi[1])
                records[rec.name] = rec
            el.clear()
    except ET.ParseError as e:
        raise ConfigError(f"{path}: not valid XML: {e}", hint="give uops.info's instructions.xml",
                          file=path)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}", hint="give uops.info's instructions.xml",
                          file=path)
    if not records:
        known = ", ".join(sorted(x for x in archs if x)) or "none"
        raise ConfigError(f"{path}: no measurements for architecture '{arch}'",
                          hint=f"architectures in the file: {known}", file=path)
    return records


def _op_label(op, idx) -> str:
    if op is None:
        return f"op{idx}"
    t = op.attrib.get("type", "")
    name = op.attrib.get("name") or ""
    return f"op{idx} ({t}{':' + name if name else ''})"


def read(path: str, arch: str | None = None):
    """Either format, by extension: ``.xml`` needs ``arch``; anything else is read as CSV."""
    if path.lower().endswith(".xml"):
        if not arch:
            raise ConfigError(f"{path}: instructions.xml holds many CPUs; say which",
                              hint="e.g. --arch ZEN4 or --arch ADL-P")
        return read_xml(path, arch)
    return read_csv(path)
