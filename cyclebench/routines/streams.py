"""Input streams for routine benchmarks: the argument sets a timed pass walks through.

A stream is N argument sets of a call shape (``shape.CallShape``), stored as a packed array of
little-endian u64 fields in argument order. ``make_stream(shape, name, **columns)`` builds one for
any shape (a dispatcher's index stream, an array kernel's pointer/length/index streams). The
constructors below build streams of the memset shape ``fn(dst, c, n)``: u64 triples, ready for
generated code to walk 24 bytes at a time::

    struct { uint64_t dst_offset; uint64_t value; uint64_t size; } records[N];

``dst_offset`` is relative to a page-aligned destination buffer of at least ``buffer_size`` bytes
(so ``dst = base + dst_offset``, and ``dst_offset % 4096`` is the offset from a page boundary),
``value`` is the fill byte c, ``size`` is n. ``Stream.to_bytes()`` gives the blob for the runner.

Streams:

* ``fixed_stream(size, ...)``: the same arguments repeated (branch predictors fully trained).
* ``random_stream(...)``: N (default 50,000) seeded random argument sets, the reference's
  random-size test: sizes uniform over the multiples of ``granularity`` in [min_size, max_size],
  destination offsets uniform over the multiples of ``offset_granularity`` in
  [min_offset, max_offset].
* ``distribution_stream(path, ...)``: sizes drawn from a size-distribution file.

Size-distribution files (see ``size_distribution_example.txt`` next to this module)::

    # comments start with '#', anywhere on a line; blank lines are ignored
    # SIZE WEIGHT      one size
    # LO-HI WEIGHT     every multiple of the granularity in LO..HI (inclusive), equally likely
    16      40
    24      10
    32-64   25.5

Sizes are non-negative decimal integers, weights non-negative numbers (relative: they need not sum
to 1 or 100), at least one weight positive. A bad line raises ConfigError (exit 9) with its line
number.

The same seed gives the same stream on every machine (numpy's PCG64 via ``default_rng``), so
routines measured on the same stream are directly comparable.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cyclebench.errors import ConfigError, UsageError
from cyclebench.routines.shape import MEMSET, CallShape

DEFAULT_COUNT = 50_000
MAX_COUNT = 50_000_000
PAGE = 4096

RECORD = MEMSET.dtype           # the memset shape's record: dst_offset, value, size
RECORD_SIZE = RECORD.itemsize  # 24 bytes


@dataclass(frozen=True, eq=False)
class Stream:
    """N argument sets of ``shape`` and how they were made."""

    records: np.ndarray
    name: str
    params: dict = field(default_factory=dict)
    shape: CallShape = MEMSET

    def __post_init__(self):
        if self.records.dtype != self.shape.dtype or self.records.ndim != 1:
            raise TypeError(f"records must be a 1-d array of the {self.shape.name} shape's dtype")
        if len(self.records) == 0:
            raise UsageError("a stream needs at least one argument set")

    def __len__(self) -> int:
        return len(self.records)

    def column(self, name: str) -> np.ndarray:
        """One argument's values over the stream."""
        return self.records[name]

    # the memset shape's columns, by their meaning
    @property
    def sizes(self) -> np.ndarray:
        return self.records["size"]

    @property
    def offsets(self) -> np.ndarray:
        return self.records["dst_offset"]

    @property
    def values(self) -> np.ndarray:
        return self.records["value"]

    @property
    def buffer_size(self) -> int:
        """Bytes the buffer needs: the furthest end a pointer argument reaches, in whole pages."""
        end = self.shape.buffer_end(self.records)
        return max(PAGE, -(-end // PAGE) * PAGE)

    @property
    def total_bytes(self) -> int:
        return int(self.sizes.sum())

    def to_bytes(self) -> bytes:
        """The packed little-endian u64 records, N * shape.record_size bytes."""
        return np.ascontiguousarray(self.records).tobytes()

    @classmethod
    def from_bytes(cls, blob: bytes, name: str = "stream", shape: CallShape = MEMSET) -> "Stream":
        if len(blob) % shape.record_size:
            raise ConfigError(f"stream blob of {len(blob)} bytes is not a whole number of "
                              f"{shape.record_size}-byte records", hint="was it written by Stream.to_bytes?")
        return cls(np.frombuffer(blob, dtype=shape.dtype).copy(), name, shape=shape)

    def digest(self) -> str:
        """sha256 of the blob: identifies the exact stream in results."""
        return hashlib.sha256(self.to_bytes()).hexdigest()


def make_stream(shape: CallShape, name: str, params: dict | None = None, **columns) -> Stream:
    """A stream of ``shape`` from one column per argument: arrays of equal length, or numbers
    (repeated; at least one column must be an array, or ``count=`` must be given)."""
    count = columns.pop("count", None)
    if set(columns) != set(shape.fields):
        raise UsageError(f"a {shape.name} stream needs the columns {', '.join(shape.fields)}, "
                         f"got {', '.join(columns) or 'none'}")
    lengths = {len(v) for v in columns.values() if np.ndim(v) == 1}
    if count is not None:
        lengths.add(int(count))
    if len(lengths) != 1:
        raise UsageError(f"the columns of a {shape.name} stream differ in length ({sorted(lengths)})"
                         if lengths else "give count= when every column is a number")
    n = lengths.pop()
    _check_count(n)
    rec = np.empty(n, dtype=shape.dtype)
    for k, v in columns.items():
        a = np.asarray(v)
        if np.any(a < 0):
            raise UsageError(f"column {k} of a {shape.name} stream has negative values")
        rec[k] = a
    return Stream(rec, name, dict(params or {}), shape=shape)


def _records(offsets, values, sizes) -> np.ndarray:
    rec = np.empty(len(sizes), dtype=RECORD)
    rec["dst_offset"] = offsets
    rec["value"] = values
    rec["size"] = sizes
    return rec


def _check_count(count: int) -> None:
    if not isinstance(count, (int, np.integer)) or not 1 <= count <= MAX_COUNT:
        raise UsageError(f"stream length must be 1..{MAX_COUNT}, got {count!r}")


def _check_value(value: int) -> None:
    if not 0 <= value <= 255:
        raise UsageError(f"fill value must be 0..255, got {value}")


def _multiples(lo: int, hi: int, step: int, what: str) -> tuple[int, int]:
    """First and last multiple of step in [lo, hi]."""
    if step < 1:
        raise UsageError(f"{what} granularity must be at least 1, got {step}")
    if lo < 0 or hi < 0:
        raise UsageError(f"{what} bounds must be non-negative, got {lo}..{hi}")
    if lo > hi:
        raise UsageError(f"minimum {what} {lo} is above the maximum {hi}")
    first = -(-lo // step) * step
    last = hi // step * step
    if first > last:
        raise UsageError(f"no {what} in {lo}..{hi} is a multiple of {step}")
    return first, last


def _uniform_multiples(rng: np.random.Generator, lo: int, hi: int, step: int, what: str,
                       count: int) -> np.ndarray:
    first, last = _multiples(lo, hi, step, what)
    k = (last - first) // step
    return first + step * rng.integers(0, k + 1, size=count, dtype=np.uint64)


def fixed_stream(size: int, *, dst_offset: int = 0, value: int = 0,
                 count: int = DEFAULT_COUNT) -> Stream:
    """The same (dst_offset, value, size) repeated count times."""
    _check_count(count)
    _check_value(value)
    if size < 0 or dst_offset < 0:
        raise UsageError("size and dst_offset must be non-negative")
    rec = _records(np.full(count, dst_offset, np.uint64), np.full(count, value, np.uint64),
                   np.full(count, size, np.uint64))
    return Stream(rec, f"fixed:size:{size}_offset:{dst_offset}",
                  dict(kind="fixed", size=size, dst_offset=dst_offset, value=value, count=count))


def random_stream(*, min_size: int, max_size: int, granularity: int = 1, min_offset: int = 0,
                  max_offset: int = 0, offset_granularity: int = 1, value: int = 0,
                  count: int = DEFAULT_COUNT, seed: int = 0) -> Stream:
    """count seeded random argument sets, the reference's random-size test.

    Sizes are uniform over the multiples of granularity in [min_size, max_size]; destination
    offsets (from the page-aligned buffer start) uniform over the multiples of offset_granularity in
    [min_offset, max_offset].
    """
    _check_count(count)
    _check_value(value)
    rng = np.random.default_rng(seed)
    sizes = _uniform_multiples(rng, min_size, max_size, granularity, "size", count)
    offsets = _uniform_multiples(rng, min_offset, max_offset, offset_granularity, "offset", count)
    rec = _records(offsets, np.full(count, value, np.uint64), sizes)
    name = (f"gran:{granularity}_minSize:{min_size}_maxSize:{max_size}"
            f"_minOffsetFromPageAlignment:{min_offset}_maxOffsetFromPageAlignment:{max_offset}")
    return Stream(rec, name, dict(kind="random", granularity=granularity, min_size=min_size,
                                  max_size=max_size, min_offset=min_offset, max_offset=max_offset,
                                  offset_granularity=offset_granularity, value=value, count=count,
                                  seed=seed))


@dataclass(frozen=True)
class SizeBucket:
    lo: int
    hi: int
    weight: float
    line: int


_NUM = r"\d+"
_BUCKET_RE = re.compile(rf"^({_NUM})(?:\s*-\s*({_NUM}))?$")
_FORMAT_HINT = "each line is `SIZE WEIGHT` or `LO-HI WEIGHT` (decimal sizes, weights >= 0); '#' starts a comment"


def parse_distribution(text: str, source: str = "<string>") -> list[SizeBucket]:
    """Parse a size-distribution text (format in the module docstring)."""
    buckets: list[SizeBucket] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        parts = line.rsplit(None, 1)
        if len(parts) != 2:
            raise ConfigError(f"{where}: expected a size and a weight, got {raw.strip()!r}",
                              hint=_FORMAT_HINT, line=lineno)
        size_text, weight_text = parts
        m = _BUCKET_RE.match(size_text.strip())
        if not m:
            raise ConfigError(f"{where}: bad size {size_text.strip()!r}", hint=_FORMAT_HINT,
                              line=lineno)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if lo > hi:
            raise ConfigError(f"{where}: range {lo}-{hi} is empty (low end above high end)",
                              hint=_FORMAT_HINT, line=lineno)
        try:
            weight = float(weight_text)
        except ValueError:
            raise ConfigError(f"{where}: bad weight {weight_text!r}", hint=_FORMAT_HINT,
                              line=lineno) from None
        if not math.isfinite(weight) or weight < 0:
            raise ConfigError(f"{where}: weight must be a finite number >= 0, got {weight_text}",
                              hint=_FORMAT_HINT, line=lineno)
        buckets.append(SizeBucket(lo, hi, weight, lineno))
    if not buckets:
        raise ConfigError(f"{source}: no sizes in the distribution", hint=_FORMAT_HINT)
    if not any(b.weight > 0 for b in buckets):
        raise ConfigError(f"{source}: every weight is 0", hint="give at least one size a positive weight")
    return buckets


def load_distribution(path: str | os.PathLike) -> list[SizeBucket]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read size distribution {p}: {e.strerror}",
                          hint="check the path") from None
    return parse_distribution(text, str(p))


def distribution_stream(distribution: "str | os.PathLike | list[SizeBucket]", *, granularity: int = 1,
                        min_offset: int = 0, max_offset: int = 0, offset_granularity: int = 1,
                        value: int = 0, count: int = DEFAULT_COUNT, seed: int = 0) -> Stream:
    """count seeded argument sets with sizes drawn from a size distribution (file path or buckets).

    A bucket is chosen with probability weight / total; a size uniformly among the multiples of
    granularity in it (a single-size bucket must itself be a multiple).
    """
    _check_count(count)
    _check_value(value)
    if isinstance(distribution, (str, os.PathLike)):
        source = str(distribution)
        buckets = load_distribution(distribution)
    else:
        source = "<buckets>"
        buckets = list(distribution)
    bounds = []
    for b in buckets:
        try:
            bounds.append(_multiples(b.lo, b.hi, granularity, "size"))
        except UsageError as e:
            raise ConfigError(f"{source}:{b.line}: {e.cause}",
                              hint="change the size or the granularity", line=b.line) from None
    weights = np.array([b.weight for b in buckets], dtype=float)
    rng = np.random.default_rng(seed)
    which = rng.choice(len(buckets), size=count, p=weights / weights.sum())
    first = np.array([f for f, _ in bounds], dtype=np.uint64)[which]
    span = np.array([(last - f) // granularity for f, last in bounds], dtype=np.uint64)[which]
    sizes = first + granularity * (rng.random(count) * (span + 1)).astype(np.uint64)
    sizes = np.minimum(sizes, first + granularity * span)  # guard against rounding up at 1.0
    offsets = _uniform_multiples(rng, min_offset, max_offset, offset_granularity, "offset", count)
    rec = _records(offsets, np.full(count, value, np.uint64), sizes)
    return Stream(rec, f"dist:{Path(source).name}_gran:{granularity}",
                  dict(kind="distribution", source=source, granularity=granularity,
                       min_offset=min_offset, max_offset=max_offset,
                       offset_granularity=offset_granularity, value=value, count=count, seed=seed))
