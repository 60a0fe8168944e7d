"""nanoBench config files: parsing, perf mapping of the extra MSRs, error reports, shipped files,
and picking the file for a CPU."""
import re
from pathlib import Path

import pytest

from cyclebench.counters.nanobench_config import (CONFIG_DIR, load_config, parse_config, select_config,
                                                  shipped_configs)
from cyclebench.machine.uarch import this_machine
from cyclebench.counters.resolve import resolve_events
from cyclebench.errors import ConfigError


def one(line, vendor="intel"):
    (spec,) = parse_config(line, vendor=vendor)
    return spec


# --- format -----------------------------------------------------------------------------------

def test_comments_blank_lines_and_names():
    text = "# header\n\n   \n0E.01 UOPS_ISSUED.ANY\n  # indented comment\nC0.00\tINST_RETIRED.ANY_P\n"
    specs = parse_config(text, vendor="intel")
    assert [s.name for s in specs] == ["UOPS_ISSUED.ANY", "INST_RETIRED.ANY_P"]
    assert [s.source for s in specs] == ["<config>:4", "<config>:6"]


def test_missing_name_uses_config_string():
    assert one("0E.01.CMSK=1").name == "0E.01.CMSK=1"


def test_name_keeps_spaces_and_dots():
    assert one("0E.01  uops issued. any ").name == "uops issued. any"


def test_hex_prefix_and_case():
    assert one("0x0e.0X01 A").config == 0x10E
    assert one("a1.ff A").config == 0xFFA1


def test_flags_are_case_insensitive_and_recorded():
    spec = one("C6.01.takenalone.ctr=3.edg X")
    assert spec.taken_alone and spec.counter == 3 and spec.config == 0x401C6


def test_ctr_is_a_hint_not_config_bits():
    assert one("A1.01.CTR=2 X").config == one("A1.01 X").config


# --- extra MSRs -> config1 --------------------------------------------------------------------

@pytest.mark.parametrize("line,config,config1,field", [
    ("C6.01.MSR_PF=0x12 FRONTEND_RETIRED.L1I_MISS", 0x1C6, 0x12, "msr_pf"),
    ("CD.01.MSR_3F6H=4 MEM_TRANS_RETIRED.LOAD_LATENCY_GT_4", 0x1CD, 4, "msr_3f6h"),
    ("B7.01.MSR_RSP0=0x3F84000001 OFFCORE_RESPONSE_0", 0x1B7, 0x3F84000001, "msr_rsp0"),
    ("BB.01.MSR_RSP1=0x10001 OFFCORE_RESPONSE_1", 0x1BB, 0x10001, "msr_rsp1"),
    ("2A.01.MSR_RSP0=0x10001 OCR.DEMAND_DATA_RD.ANY_RESPONSE", 0x12A, 0x10001, "msr_rsp0"),
    ("2B.01.MSR_RSP1=0x10001 OCR.X", 0x12B, 0x10001, "msr_rsp1"),
])
def test_intel_msrs_become_config1(line, config, config1, field):
    spec = one(line)
    assert (spec.config, spec.config1) == (config, config1)
    assert getattr(spec, field) == config1


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("line,vendor,words", [
    ("0E.01.FOO X", "intel", "unknown field 'FOO'"),
    ("0E X", "intel", "no unit mask"),
    ("ZZ.01 X", "intel", "not hexadecimal"),
    ("0E.1FF X", "intel", "unit mask 0x1ff"),
    ("1C0.00 X", "intel", "larger than INTEL allows"),
    ("1000.00 X", "amd", "larger than AMD allows"),
    ("0E.01.CMSK=256 X", "intel", "CMSK=256"),
    ("0E.01.CMSK=x X", "intel", "not a number"),
    ("0E.01.CMSK=010 X", "intel", "not a number"),
    ("0E.01.CTR=9 X", "intel", "CTR=9"),
    ("0E.01.INV.INV X", "intel", "given twice"),
    ("0E.01..INV X", "intel", "empty field"),
    ("0E.01. X", "intel", "empty field"),
    ("0E.01.EDG=1 X", "intel", "unknown field"),
    ("0E.01.CMSK X", "intel", "unknown field"),
    ("0C0.00.AnyT X", "amd", "AnyT on AMD"),
    ("0C0.00.MSR_RSP0=1 X", "amd", "Intel MSRs"),
    ("0E.01.MSR_PF=0x12 X", "intel", "only for FRONTEND_RETIRED"),
    ("C6.02.MSR_PF=0x12 X", "intel", "only for FRONTEND_RETIRED"),
    ("B7.01.MSR_RSP1=1 X", "intel", "only for OFFCORE_RESPONSE_1"),
    ("BB.01.MSR_RSP0=1 X", "intel", "only for OFFCORE_RESPONSE_0"),
    ("CD.01.MSR_3F6H=0x10000 X", "intel", "16-bit"),
    ("C6.01.MSR_PF=0x1000000 X", "intel", "24-bit"),
    ("C6.01.MSR_PF=1.MSR_3F6H=1 X", "intel", "one config1 per event"),
])
def test_bad_lines_name_file_line_and_text(line, vendor, words):
    text = "# first line is a comment\n" + line + "\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "my.cfg", vendor=vendor)
    err = info.value
    assert err.exit_code == 9
    assert words in err.cause
    assert err.cause.startswith("my.cfg, line 2: ") and f"'{line}'" in err.cause
    assert err.hint
    assert [p.line for p in err.details["problems"]] == [2]


def test_all_bad_lines_are_reported_together():
    text = "# vendor: Intel\n0E.01 OK\n0E.01.FOO A\nZZ.00 B\n\nC0.00 OK2\n0E C\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "multi.txt")
    err = info.value
    assert [p.line for p in err.details["problems"]] == [3, 4, 7]
    first, *rest = err.cause.splitlines()
    assert first == "3 bad lines in counter config multi.txt:"
    assert [re.match(r"  line (\d+):", r).group(1) for r in rest] == ["3", "4", "7"]
    assert "'0E.01.FOO A'" in rest[0] and "'0E C'" in rest[2]


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "missing.txt")
    assert "missing.txt" in info.value.cause and "cfg_Zen4.txt" in info.value.hint


# --- vendor -----------------------------------------------------------------------------------

def test_vendor_directive_wins_over_digits():
    (spec,) = parse_config("# vendor: AMD\n0C0.00 X\n")
    assert spec.config == 0xC0
    with pytest.raises(ConfigError, match="larger than INTEL"):
        parse_config("# Vendor: intel\n1C0.00 X\n")


def test_three_digit_select_means_amd():
    (spec,) = parse_config("1C0.00 X\n")
    assert spec.config == 0x1_0000_00C0


def test_amd_and_intel_only_differ_above_bit_31():
    assert one("0C0.00.INV.CMSK=1 X", "amd").config == one("C0.00.INV.CMSK=1 X").config


# --- shipped files ----------------------------------------------------------------------------

SHIPPED_FILES = sorted(p.name for p in CONFIG_DIR.glob("cfg_*.txt"))


def test_shipped_table_and_files_agree():
    assert SHIPPED_FILES == sorted(shipped_configs())
    assert {"cfg_Zen4.txt", "cfg_Skylake.txt", "cfg_GoldenCove.txt"} <= set(SHIPPED_FILES)


@pytest.mark.parametrize("name", SHIPPED_FILES)
def test_every_shipped_config_parses(name):
    specs = load_config(name)
    assert len(specs) >= 20
    names = [s.name for s in specs]
    assert len(names) == len(set(names)), "duplicate event names"
    text = (CONFIG_DIR / name).read_text()
    vendor = shipped_configs()[name]
    assert re.search(rf"^# vendor: {vendor}$", text, re.IGNORECASE | re.MULTILINE)
    header = text.split("\n\n", 1)[0]
    assert "Source" in header or "Sources" in header


@pytest.mark.parametrize("name", SHIPPED_FILES)
def test_readme_lists_every_shipped_config(name):
    assert f"`{name}`" in (CONFIG_DIR / "README.md").read_text()


def test_zen4_config_has_the_core_events():
    specs = {s.name: s for s in load_config("cfg_Zen4.txt")}
    assert specs["RETIRED_INSTRUCTIONS"].config == 0xC0
    assert specs["RETIRED_OPS"].config == 0xC1
    assert specs["CYCLES_NOT_IN_HALT"].config == 0x76
    assert specs["RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"].config == 0xC3
    assert specs["DIV_CYCLES_BUSY_COUNT"].config == 0xD3
    assert specs["FP_DISPATCH_FAULTS.YMM_SPILL_FAULT"].config == 0x80E
    assert specs["OP_CACHE_HIT_MISS.OC_MISS"].config == 0x2_0000_048F


def test_zen3_config_has_fp_pipe_assignment():
    specs = {s.name: s for s in load_config("cfg_Zen3.txt")}
    assert [specs[f"FPU_PIPE_ASSIGNMENT.TOTAL{i}"].config for i in range(4)] == [
        0x100, 0x200, 0x400, 0x800]


def test_intel_configs_mark_shared_msr_events_taken_alone():
    for name in ("cfg_Skylake.txt", "cfg_GoldenCove.txt"):
        for spec in load_config(name):
            if spec.config1:
                assert spec.taken_alone, spec.name


def test_resolve_events_accepts_config_paths(tmp_path):
    assert len(resolve_events("cfg_Skylake.txt")) == len(load_config("cfg_Skylake.txt"))
    own = tmp_path / "mine.txt"
    own.write_text("# vendor: Intel\n0E.01 UOPS_ISSUED.ANY\n")
    assert [s.config for s in resolve_events(str(own))] == [0x10E]
    assert [s.config for s in resolve_events(own)] == [0x10E]


# --- choosing the file for a CPU --------------------------------------------------------------

def cpuinfo(vendor, family, model):
    return (f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n"
            f"model name\t: test\n\nprocessor\t: 1\nvendor_id\t: Other\n")


@pytest.mark.parametrize("vendor,family,model,file", [
    ("AuthenticAMD", 0x19, 0x11, "cfg_Zen4.txt"),      # EPYC 9004 (this VM)
    ("AuthenticAMD", 0x19, 0x61, "cfg_Zen4.txt"),      # Ryzen 7000
    ("AuthenticAMD", 0x19, 0x01, "cfg_Zen3.txt"),      # EPYC 7003
    ("AuthenticAMD", 0x19, 0x21, "cfg_Zen3.txt"),      # Ryzen 5000
    ("AuthenticAMD", 0x17, 0x31, "cfg_Zen2.txt"),      # EPYC 7002
    ("AuthenticAMD", 0x17, 0x71, "cfg_Zen2.txt"),      # Ryzen 3000
    ("GenuineIntel", 6, 0x5E, "cfg_Skylake.txt"),
    ("GenuineIntel", 6, 0x9E, "cfg_Skylake.txt"),
    ("GenuineIntel", 6, 0x97, "cfg_GoldenCove.txt"),
    ("GenuineIntel", 6, 0x8F, "cfg_GoldenCove.txt"),
])
def test_select_config_by_cpuinfo(vendor, family, model, file):
    assert select_config(cpuinfo(vendor, family, model)) == CONFIG_DIR / file


@pytest.mark.parametrize("vendor,family,model", [
    ("AuthenticAMD", 0x17, 0x01),      # Zen 1: no shipped file
    ("AuthenticAMD", 0x1A, 0x02),      # Zen 5
    ("GenuineIntel", 6, 0x3C),         # Haswell
    ("HygonGenuine", 0x18, 0x00),
])
def test_select_config_none_for_other_cpus(vendor, family, model):
    assert select_config(cpuinfo(vendor, family, model)) is None


def test_select_config_on_this_machine():
    u = this_machine().uarch
    expected = CONFIG_DIR / u.counter_config if u and u.counter_config else None
    assert select_config() == expected
    assert expected is None or expected.exists()
