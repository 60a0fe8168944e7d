"""Input streams respect their parameters, are reproducible, and pack as little-endian u64 triples."""
import struct
from pathlib import Path

import numpy as np
import pytest

from cyclebench.errors import ConfigError, UsageError
from cyclebench.routines import streams
from cyclebench.routines.streams import (Stream, distribution_stream, fixed_stream, parse_distribution,
                                         random_stream)

EXAMPLE = Path(streams.__file__).with_name("size_distribution_example.txt")


def test_fixed_stream_and_blob_layout():
    s = fixed_stream(100, dst_offset=7, value=0xA5, count=10)
    assert len(s) == 10
    assert set(s.sizes) == {100} and set(s.offsets) == {7} and set(s.values) == {0xA5}
    blob = s.to_bytes()
    assert len(blob) == 10 * 24
    assert struct.unpack_from("<QQQ", blob, 24 * 3) == (7, 0xA5, 100)  # (dst_offset, value, size)
    assert Stream.from_bytes(blob).to_bytes() == blob
    assert s.buffer_size == 4096


def test_default_count_is_50000():
    assert len(random_stream(min_size=1, max_size=64)) == 50_000


def test_random_stream_respects_parameters():
    s = random_stream(granularity=16, min_size=256, max_size=512, min_offset=100, max_offset=4095,
                      count=20_000, seed=3)
    sz, off = s.sizes, s.offsets
    assert sz.min() == 256 and sz.max() == 512          # both ends are reached
    assert np.all(sz % 16 == 0)
    assert len(np.unique(sz)) == 17                     # 256, 272, ..., 512
    assert off.min() >= 100 and off.max() <= 4095
    assert off.min() < 200 and off.max() > 4000
    assert np.all(s.values == 0)
    assert s.buffer_size >= int((off + sz).max()) and s.buffer_size % 4096 == 0
    # roughly uniform: every size gets 1/17 of the calls within 15%
    counts = np.bincount((sz - 256) // 16)
    assert counts.min() > 0.85 * 20_000 / 17 and counts.max() < 1.15 * 20_000 / 17
    assert s.name == ("gran:16_minSize:256_maxSize:512_minOffsetFromPageAlignment:100"
                      "_maxOffsetFromPageAlignment:4095")


def test_random_stream_min_not_multiple_and_offset_granularity():
    s = random_stream(granularity=16, min_size=1, max_size=64, min_offset=0, max_offset=4095,
                      offset_granularity=64, count=5000, seed=1)
    assert set(np.unique(s.sizes)) == {16, 32, 48, 64}
    assert np.all(s.offsets % 64 == 0) and s.offsets.max() == 4032


def test_random_stream_is_seeded():
    a = random_stream(min_size=1, max_size=1024, max_offset=4095, count=1000, seed=7)
    b = random_stream(min_size=1, max_size=1024, max_offset=4095, count=1000, seed=7)
    c = random_stream(min_size=1, max_size=1024, max_offset=4095, count=1000, seed=8)
    assert a.to_bytes() == b.to_bytes() and a.digest() == b.digest()
    assert a.to_bytes() != c.to_bytes()


@pytest.mark.parametrize("kw", [
    dict(min_size=10, max_size=5),
    dict(min_size=17, max_size=31, granularity=16),     # no multiple of 16 in range
    dict(min_size=1, max_size=8, granularity=0),
    dict(min_size=-1, max_size=8),
    dict(min_size=1, max_size=8, count=0),
    dict(min_size=1, max_size=8, value=256),
    dict(min_size=1, max_size=8, min_offset=10, max_offset=0),
])
def test_random_stream_rejects_bad_parameters(kw):
    with pytest.raises(UsageError):
        random_stream(**kw)


def test_distribution_parsing_and_sampling(tmp_path):
    f = tmp_path / "d.txt"
    f.write_text("# sizes\n\n16 3   # common\n100-103 1\n0 0\n")
    buckets = parse_distribution(f.read_text())
    assert [(b.lo, b.hi, b.weight, b.line) for b in buckets] == [(16, 16, 3.0, 3), (100, 103, 1.0, 4),
                                                                  (0, 0, 0.0, 5)]
    s = distribution_stream(f, count=40_000, seed=2, min_offset=0, max_offset=63)
    sizes = s.sizes
    assert set(np.unique(sizes)) == {16, 100, 101, 102, 103}   # weight 0 never drawn
    assert abs(np.mean(sizes == 16) - 0.75) < 0.01
    assert s.offsets.max() <= 63
    assert s.params["source"] == str(f)
    again = distribution_stream(f, count=40_000, seed=2, min_offset=0, max_offset=63)
    assert again.to_bytes() == s.to_bytes()


def test_distribution_granularity(tmp_path):
    f = tmp_path / "d.txt"
    f.write_text("0-100 1\n")
    s = distribution_stream(f, granularity=32, count=4000)
    assert set(np.unique(s.sizes)) == {0, 32, 64, 96}
    f.write_text("40 1\n")
    with pytest.raises(ConfigError) as e:
        distribution_stream(f, granularity=32)
    assert ":1:" in e.value.cause


def test_example_file_parses():
    buckets = parse_distribution(EXAMPLE.read_text(), str(EXAMPLE))
    assert len(buckets) >= 5
    s = distribution_stream(EXAMPLE, count=1000)
    assert len(s) == 1000


@pytest.mark.parametrize("text,line", [
    ("16 1\n32\n", 2),                 # no weight
    ("16 1\nabc 2\n", 2),              # bad size
    ("# c\n\n-5 1\n", 3),              # negative size
    ("64-32 1\n", 1),                  # empty range
    ("16 x\n", 1),                     # bad weight
    ("16 -1\n", 1),                    # negative weight
    ("16 nan\n", 1),
    ("16 1 2\n", 1),                   # extra field
])
def test_bad_distribution_lines(text, line):
    with pytest.raises(ConfigError) as e:
        parse_distribution(text, "sizes.txt")
    assert e.value.exit_code == 9
    assert e.value.cause.startswith(f"sizes.txt:{line}:")
    assert "SIZE WEIGHT" in e.value.hint


def test_empty_or_zero_distribution(tmp_path):
    with pytest.raises(ConfigError):
        parse_distribution("# nothing\n")
    with pytest.raises(ConfigError):
        parse_distribution("16 0\n32 0\n")
    with pytest.raises(ConfigError):
        distribution_stream(tmp_path / "missing.txt")


def test_bad_blob():
    with pytest.raises(ConfigError):
        Stream.from_bytes(b"\0" * 25)
