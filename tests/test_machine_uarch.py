"""The microarchitecture table: every fixture CPU is named by the table, the features win over a
masked model number, an unknown CPU stays unknown, and the table itself is consistent."""
from pathlib import Path

import pytest

from cyclebench.machine import topology, uarch
from cyclebench.machine.cpu import parse_cpuinfo

CPUS = Path(__file__).parent / "data" / "cpus"


def ident(name, core_type=None):
    return uarch.identify(parse_cpuinfo((CPUS / f"{name}.cpuinfo").read_text().splitlines()), core_type)


# fixture, core type, key, display name, (reference column, nearest)
CASES = [
    ("zen2", None, "ZEN2", "AMD Zen 2", ("ZEN2", False)),
    ("zen3", None, "ZEN3", "AMD Zen 3, VM guest", ("ZEN3", False)),
    ("zen4", None, "ZEN4", "AMD Zen 4, VM guest", ("ZEN4", False)),
    ("zen5", None, "ZEN5", "AMD Zen 5", ("ZEN4", True)),
    ("skylake", None, "SKL", "Skylake", ("SKL", False)),
    ("alderlake", "P", "ADL-P", "Alder Lake P-core (Golden Cove)", ("ADL-P", False)),
    ("alderlake", "E", "ADL-E", "Alder Lake E-core (Gracemont)", ("ADL-E", False)),
    ("alderlake", None, "ADL-P",
     "Alder Lake P-core (Golden Cove) (core type not reported: P-core assumed)", ("ADL-P", False)),
    ("sapphire-rapids", None, "SPR", "Sapphire Rapids (Golden Cove)", ("ADL-P", True)),
    ("masked-guest", None, "SPR",
     "Sapphire Rapids class (Golden Cove), inferred from CPUID features, VM guest", ("ADL-P", True)),
    ("rocket-lake", None, "RKL", "Rocket Lake (Cypress Cove)", ("RKL", False)),
]


@pytest.mark.parametrize("name,core_type,key,display,reference", CASES)
def test_fixture_cpus_are_named_by_the_table(name, core_type, key, display, reference):
    i = ident(name, core_type)
    assert i.uarch is not None and i.uarch.key == key
    assert i.name == display
    assert i.reference == reference


@pytest.mark.parametrize("name", ["unknown-intel", "hygon"])
def test_an_unknown_cpu_is_named_unknown(name):
    i = ident(name)
    assert i.uarch is None and not i.known
    assert i.name.startswith("unknown core (") and "Zen" not in i.name
    assert i.reference == (None, False)


def test_features_win_only_when_they_name_a_newer_core():
    masked, real = ident("masked-guest"), ident("rocket-lake")
    assert (masked.model, real.model) == (167, 167)
    assert masked.inferred and not real.inferred
    assert "inferred from CPUID features" in masked.name


def test_table_keys_and_ranges_do_not_overlap():
    assert len({u.key for u in uarch.TABLE}) == len(uarch.TABLE)
    for a in uarch.TABLE:
        for b in uarch.TABLE:
            if a is b or a.vendor != b.vendor or a.family != b.family or a.core_type != b.core_type:
                continue
            for lo, hi in a.models:
                for lo2, hi2 in b.models:
                    overlap = lo <= hi2 and lo2 <= hi
                    steps = a.steppings[0] <= b.steppings[1] and b.steppings[0] <= a.steppings[1]
                    assert not (overlap and steps), (a.key, b.key)


@pytest.mark.parametrize("u", uarch.TABLE, ids=lambda u: u.key)
def test_every_record_has_a_reference_column_and_its_class(u):
    code, nearest = u.reference
    assert code in uarch.UOPS_INFO_CODES
    assert nearest == (u.uops_info is None)
    assert u.feature_class in {k for _, _, k, _ in uarch.CLASSES}
    assert u.llvm_mcpu and u.core and u.name
    assert u.published is None or u.published.source


@pytest.mark.parametrize("key,mcpu,pmu", [("ZEN4", "znver4", "amd64_fam19h_zen4"),
                                          ("SKL", "skylake", "skl"), ("SPR", "sapphirerapids", "spr")])
def test_records_name_the_tools_columns(key, mcpu, pmu):
    assert (uarch.BY_KEY[key].llvm_mcpu, uarch.BY_KEY[key].libpfm_pmu) == (mcpu, pmu)


def test_zen4_models_a0_af_are_zen4_everywhere():
    # Linux amd.c: family 19h models A0h-AFh are Zen 4 (Bergamo, Siena)
    info = parse_cpuinfo(["vendor_id : AuthenticAMD", "cpu family : 25", "model : 160", "flags : avx512f"])
    assert uarch.identify(info).uarch.key == "ZEN4"


def test_recorded_machine_block_round_trips():
    meta = {"cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 167, "cpu_stepping": 1,
            "hypervisor": True, "core": {"key": "SPR", "inferred": True}}
    assert uarch.from_metadata(meta).name.startswith("Sapphire Rapids class (Golden Cove), inferred")
    old = {"cpu_vendor": "AuthenticAMD", "cpu_family": 25, "cpu_model": 1, "hypervisor": True}
    assert uarch.core_name(old) == "AMD Zen 3, VM guest"


def _sysfs(tmp_path, siblings):
    for cpu, text in siblings.items():
        d = tmp_path / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "thread_siblings_list").write_text(text + "\n")
    return tmp_path


def test_distinct_cores_skip_smt_siblings(tmp_path):
    # Intel's usual numbering: CPUs n and n+4 share a core; here 0 and 1 do
    root = _sysfs(tmp_path, {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3"})
    assert topology.distinct_cores([0, 1, 2, 3], root) == [0, 2]
    assert topology.core_pair(root, [0, 1, 2, 3]) == (0, 2)
    assert topology.core_pair(root, [0, 1]) is None


def test_distinct_cores_keep_one_core_type_on_a_hybrid_part(tmp_path):
    # Alder Lake's numbering: P-cores 0-3 with SMT siblings (0-1, 2-3), E-cores 4-7
    root = _sysfs(tmp_path / "devices" / "system" / "cpu",
                  {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3", 4: "4", 5: "5", 6: "6", 7: "7"})
    (tmp_path / "devices" / "cpu_core").mkdir()
    (tmp_path / "devices" / "cpu_core" / "cpus").write_text("0-3\n")
    (tmp_path / "devices" / "cpu_atom").mkdir()
    (tmp_path / "devices" / "cpu_atom" / "cpus").write_text("4-7\n")
    assert topology.distinct_cores(list(range(8)), root) == [0, 2]
    assert topology.core_pair(root, [2, 3, 4, 5]) is None            # one P-core allowed: no pair
    assert topology.distinct_cores([4, 5, 6], root) == [4, 5, 6]    # E-cores only


def test_distinct_cores_without_sysfs(tmp_path):
    assert topology.distinct_cores([0, 1], tmp_path) == [0, 1]


def test_the_machines_page_lists_every_record():
    page = (Path(__file__).parent.parent / "docs" / "machines.md").read_text()
    for u in uarch.TABLE:
        code, nearest = u.reference
        assert f"| {u.key} | {u.vendor} | {u.label} |" in page, u.key
        assert f"| {code} (nearest) |" in page if nearest else f"| {code} |" in page
