"""libpfm4 binding: PMUs, events, name -> perf_event_attr, error paths, and the cross-check of the
shipped config files against libpfm's own event tables (two independent sources).

libpfm detects the PMU model from CPUID, so it encodes events even on a VM without a usable PMU.
With include_inactive it encodes other CPUs' events too, which makes these checks host-independent.
"""
import pytest

from cyclebench.counters import libpfm, resolve
from cyclebench.counters.events import GENERIC_EVENTS, PERF_TYPE_RAW, SOFTWARE_EVENTS
from cyclebench.counters.nanobench_config import load_config
from cyclebench.errors import CounterUnavailable

pytestmark = pytest.mark.skipif(not libpfm.available(), reason="libpfm4 (libpfm.so.4) not installed")

ZEN4 = "amd64_fam19h_zen4"
CONFIG_PMUS = {
    "cfg_Zen4.txt": ZEN4,
    "cfg_Zen3.txt": "amd64_fam19h_zen3",
    "cfg_Zen2.txt": "amd64_fam17h_zen2",
    "cfg_Skylake.txt": "skl",
    "cfg_GoldenCove.txt": "spr",       # Sapphire Rapids: the Golden Cove core
}
# Lines where libpfm 4.13 and the vendor document disagree, with the reason.
KNOWN_DIFFERENCES = {
    ("cfg_GoldenCove.txt", "ARITH.IDIV_ACTIVE"):
        "Intel's event list gives CounterMask 1 (added in a later revision); libpfm 4.13 has none",
}


@pytest.fixture(scope="module")
def pfm():
    return libpfm.get()


@pytest.fixture(scope="module")
def pfm_all():
    return libpfm.get(include_inactive=True)


def test_present_pmus(pfm):
    names = [p.name for p in pfm.pmus()]
    assert "perf" in names
    assert all(p.present for p in pfm.pmus())
    assert len(pfm.pmus(present_only=False)) > len(pfm.pmus())
    assert pfm.api_version.startswith("4.")


def test_supported_pmus_include_the_config_pmus(pfm_all):
    supported = {p.name: p for p in pfm_all.pmus(present_only=False)}
    for pmu in CONFIG_PMUS.values():
        assert supported[pmu].kind == "core"
        assert supported[pmu].n_counters >= 4


def test_events_have_descriptions_and_umasks(pfm_all):
    events = {e.name: e for e in pfm_all.events(ZEN4)}
    assert events["RETIRED_OPS"].code == 0xC1
    faults = events["FP_DISPATCH_FAULTS"]
    assert faults.code == 0x0E and faults.description
    assert {u.name: u.code for u in faults.umasks}["YMM_SPILL_FAULT"] == 0x08
    assert "c" in faults.modifiers and "u" in faults.modifiers
    assert faults.qualified_name == f"{ZEN4}::FP_DISPATCH_FAULTS"


@pytest.mark.parametrize("name,config", [
    (f"{ZEN4}::RETIRED_OPS", 0xC1),
    (f"{ZEN4}::RETIRED_INSTRUCTIONS", 0xC0),
    (f"{ZEN4}::FP_DISPATCH_FAULTS:X87_FILL_FAULT", 0x10E),
    (f"{ZEN4}::DISPATCH_STALLS_1:FE_NO_OPS", 0x1_0000_01A0),   # select > 0xFF -> bits 32-35
    (f"{ZEN4}::RETIRED_OPS:c=1:i=1", 0x1_80_00C1),
    ("skl::UOPS_ISSUED:ANY", 0x10E),
    ("skl::UOPS_DISPATCHED_PORT:PORT_0", 0x1A1),
    ("spr::UOPS_DISPATCHED:PORT_0", 0x1B2),
])
def test_encode_known_events(pfm_all, name, config):
    spec = pfm_all.encode(name)
    assert (spec.type, spec.config) == (PERF_TYPE_RAW, config)
    assert not spec.exclude_user and spec.exclude_kernel     # user mode by default
    assert spec.source.startswith("libpfm ")


def test_encode_privilege_levels(pfm_all):
    both = pfm_all.encode(f"{ZEN4}::RETIRED_OPS", kernel=True)
    assert not both.exclude_user and not both.exclude_kernel
    kernel_only = pfm_all.encode(f"{ZEN4}::RETIRED_OPS:u=0:k=1")
    assert kernel_only.exclude_user and not kernel_only.exclude_kernel
    assert both.config == kernel_only.config == 0xC1        # USR/OS never in config


def test_offcore_and_frontend_go_to_config1(pfm_all):
    assert pfm_all.encode("skl::FRONTEND_RETIRED:DSB_MISS").config1 == 0x11
    assert pfm_all.encode("skl::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=4").config1 == 4
    assert pfm_all.encode("spr::OCR:DEMAND_DATA_RD_ANY_RESPONSE").config1 == 0x10001


def test_generic_and_software_names_agree_with_our_tables(pfm):
    checked = 0
    for table in (SOFTWARE_EVENTS, GENERIC_EVENTS):
        for name, ours in table.items():
            try:
                theirs = pfm.encode(name)
            except CounterUnavailable:
                continue            # libpfm has no alias for a few (alignment-faults)
            assert (theirs.type, theirs.config) == (ours.type, ours.config), name
            checked += 1
    assert checked >= 20


# --- the cross-check: shipped configs vs libpfm's tables --------------------------------------

def _libpfm_name(pmu, event_name):
    event, _, umask = event_name.partition(".")
    return f"{pmu}::{event}" + (":" + umask.replace(".", "_") if umask else "")


@pytest.mark.parametrize("config_file", sorted(CONFIG_PMUS))
def test_shipped_config_matches_libpfm(pfm_all, config_file):
    pmu = CONFIG_PMUS[config_file]
    checked, mismatches = 0, []
    specs = load_config(config_file)
    for spec in specs:
        try:
            theirs = pfm_all.encode(_libpfm_name(pmu, spec.name))
        except CounterUnavailable:
            continue                # libpfm lacks the event: it rests on the vendor document
        if (config_file, spec.name) in KNOWN_DIFFERENCES:
            assert (theirs.config, theirs.config1) != (spec.config, spec.config1), \
                "known difference is gone: drop it from KNOWN_DIFFERENCES"
            continue
        checked += 1
        if (theirs.config, theirs.config1) != (spec.config, spec.config1):
            mismatches.append((spec.name, hex(spec.config), hex(theirs.config),
                               hex(spec.config1), hex(theirs.config1)))
    assert not mismatches
    assert checked >= 0.8 * len(specs), f"only {checked} of {len(specs)} lines cross-checked"


def test_zen4_high_select_line_matches_libpfm(pfm_all):
    ours = {s.name: s for s in load_config("cfg_Zen4.txt")}
    for name in ("IC_TAG_HIT_MISS.IC_MISS", "OP_CACHE_HIT_MISS.OC_MISS", "RETIRED_UCODE_OPS"):
        theirs = pfm_all.encode(_libpfm_name(ZEN4, name))
        assert theirs.config == ours[name].config and theirs.config >> 32


# --- error paths ------------------------------------------------------------------------------

def test_unknown_name_suggests_close_names(pfm):
    with pytest.raises(CounterUnavailable) as info:
        pfm.encode("RETIRED_OPZ_NOT_REAL")
    err = info.value
    assert err.exit_code == 7
    assert "unknown event 'RETIRED_OPZ_NOT_REAL'" in err.cause and "\n" not in err.cause
    assert "--list-events" in err.hint


def test_unknown_name_closest_match(pfm_all):
    assert "RETIRED_OPS" in pfm_all.closest(f"{ZEN4}::RETIRED_OPZ")


def test_one_pmus_events_are_the_same_read_alone_or_with_all():
    # a fresh instance per order: events(pmu) reads one PMU alone, events() all the present ones
    alone = libpfm.Libpfm()
    by_pmu = {p.name: [(e.name, e.code) for e in alone.events(p.name)] for p in alone.pmus()}
    together = libpfm.Libpfm().events()
    assert sum(by_pmu.values(), []) == [(e.name, e.code) for e in together]
    assert {p: [(e.name, e.code) for e in together if e.pmu == p] for p in by_pmu} == by_pmu


def test_bad_unit_mask_lists_the_unit_masks(pfm_all):
    with pytest.raises(CounterUnavailable) as info:
        pfm_all.encode(f"{ZEN4}::FP_DISPATCH_FAULTS:NOT_A_UMASK")
    assert "YMM_SPILL_FAULT" in info.value.hint


def test_bad_modifier_value(pfm_all):
    with pytest.raises(CounterUnavailable) as info:
        pfm_all.encode(f"{ZEN4}::RETIRED_OPS:c=999")
    assert "RETIRED_OPS" in info.value.cause


def test_absent_pmu_is_refused_without_include_inactive(pfm):
    absent = next(p for p in pfm.pmus(present_only=False)
                  if p.kind == "core" and not p.present and p.name in ("skl", ZEN4))
    event = "UOPS_ISSUED:ANY" if absent.name == "skl" else "RETIRED_OPS"
    with pytest.raises(CounterUnavailable) as info:
        pfm.encode(f"{absent.name}::{event}")
    assert "does not have" in info.value.cause
    # the other instance still can
    assert libpfm.get(include_inactive=True).encode(f"{absent.name}::{event}").config


def test_switching_modes_keeps_each_mode(pfm, pfm_all):
    assert pfm_all.encode("skl::UOPS_ISSUED:ANY").config == 0x10E
    assert pfm.encode("instructions").config == 1
    assert pfm_all.encode("spr::UOPS_ISSUED:ANY").config == 0x1AE


def test_missing_library_is_a_clear_error():
    with pytest.raises(CounterUnavailable) as info:
        libpfm.Libpfm(library="/nonexistent/libpfm.so.4")
    assert "libpfm4 is not installed" in info.value.cause
    assert "apt-get install libpfm4" in info.value.hint


# --- resolve ----------------------------------------------------------------------------------

def test_resolve_order_builtin_then_libpfm(pfm):
    specs = resolve.resolve_events("cycles,task-clock,perf::PERF_COUNT_HW_INSTRUCTIONS")
    assert [(s.type, s.config) for s in specs] == [(0, 0), (1, 1), (0, 1)]
    assert [s.source for s in specs][:2] == ["generic", "software"]
    assert specs[2].source.startswith("libpfm")


def test_resolve_core_event_on_this_machine(pfm):
    if ZEN4 not in [p.name for p in pfm.pmus()]:
        pytest.skip("libpfm does not detect a Zen 4 core here")
    (spec,) = resolve.resolve_events("RETIRED_OPS")
    assert (spec.type, spec.config) == (PERF_TYPE_RAW, 0xC1)


def test_resolve_unknown_name(pfm):
    with pytest.raises(CounterUnavailable, match="unknown event 'NO_SUCH_EVENT'"):
        resolve.resolve_events("cycles,NO_SUCH_EVENT")


def test_resolve_without_libpfm(monkeypatch):
    def missing(include_inactive=False):
        raise CounterUnavailable("libpfm4 is not installed", hint=libpfm.APT_HINT)
    monkeypatch.setattr(libpfm, "get", missing)
    assert resolve.resolve_events("cycles,instructions")[1].config == 1
    with pytest.raises(CounterUnavailable) as info:
        resolve.resolve_events("RETIRED_OPS")
    assert "apt-get install libpfm4" in info.value.hint and "cycles" in info.value.hint


def test_list_events_rows(pfm):
    rows = resolve.list_events()
    names = {(r.source, r.name) for r in rows}
    assert ("generic", "cycles") in names and ("software", "task-clock") in names
    assert not any(r.source in ("perf", "perf_raw") for r in rows)
    core = [r for r in rows if r.source not in ("generic", "software")]
    if ZEN4 in [p.name for p in pfm.pmus()]:
        assert any(r.name == "FP_DISPATCH_FAULTS" and "YMM_SPILL_FAULT" in r.umasks for r in core)
    assert all(r.description for r in rows if r.source in ("generic", "software"))
