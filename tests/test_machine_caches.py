"""CPUID cache and TLB decoding on both vendors, from leaf fixtures (tests/data/cpus/*.cpuid.json)."""
import json
from pathlib import Path

import pytest

from cyclebench.machine import caches

CPUS = Path(__file__).parent / "data" / "cpus"


def fake(name):
    leaves = json.loads((CPUS / f"{name}.cpuid.json").read_text())

    def cpuid(leaf, sub=0):
        return tuple(leaves.get(f"{leaf:#x},{sub}", (0, 0, 0, 0)))
    return cpuid


@pytest.mark.parametrize("name,vendor,l1d,l2", [
    ("zen4", "amd", (32 << 10, 8), (1 << 20, 8)),
    ("skylake", "intel", (32 << 10, 8), (256 << 10, 4)),
    ("sapphire-rapids", "intel", (48 << 10, 12), (2 << 20, 16)),
])
def test_cache_leaves_on_both_vendors(name, vendor, l1d, l2):
    cpuid = fake(name)
    assert caches.vendor(cpuid) == vendor
    found, why = caches.caches(cpuid)
    assert why is None
    by = {(c["level"], c["type"]): (c["size"], c["ways"]) for c in found}
    assert by[(1, "Data")] == l1d and by[(2, "Unified")] == l2


@pytest.mark.parametrize("name,expected,source", [
    ("zen4", {"l1_4k": 72, "l1_2m": 72, "l2_4k": 3072, "l2_2m": 3072}, "CPUID 0x80000005/0x80000006"),
    ("skylake", {"l1_4k": 64, "l1_2m": 32, "l2_4k": 1536, "l2_2m": 1536}, "CPUID 2"),
    ("sapphire-rapids", {"l1_4k": 96, "l1_2m": 32, "l2_4k": 2048, "l2_2m": 2048}, "CPUID 0x18"),
])
def test_data_tlbs_on_both_vendors(name, expected, source):
    got = caches.tlbs(fake(name))
    assert got.pop("source") == source
    assert got == expected


def test_no_leaf_means_no_entry_never_zero():
    def bare(leaf, sub=0):       # an Intel CPU whose leaf 2 names no TLB and has no leaf 0x18
        return {0: (2, 0x756E6547, 0x6C65746E, 0x49656E69), 2: (0x00FF0001, 0, 0, 0)}.get(leaf, (0, 0, 0, 0))
    assert caches.tlbs(bare) == {}
