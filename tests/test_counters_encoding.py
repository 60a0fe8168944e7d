"""perf_event numbers and event-select bit layouts: exact values, checked against the vendor layouts
and against the system's <linux/perf_event.h> compiled by gcc (an independent source)."""
import shutil
import subprocess
from pathlib import Path

import pytest

from cyclebench.counters import events as ev
from cyclebench.counters.events import EventSpec, builtin_event
from cyclebench.counters.nanobench_config import encode, parse_config

HEADER = Path("/usr/include/linux/perf_event.h")


# --- software and generic events --------------------------------------------------------------

@pytest.mark.parametrize("name,type_,config", [
    ("cpu-clock", 1, 0), ("task-clock", 1, 1), ("page-faults", 1, 2), ("faults", 1, 2),
    ("context-switches", 1, 3), ("cs", 1, 3), ("cpu-migrations", 1, 4), ("migrations", 1, 4),
    ("minor-faults", 1, 5), ("major-faults", 1, 6),
    ("cycles", 0, 0), ("cpu-cycles", 0, 0), ("instructions", 0, 1), ("cache-references", 0, 2),
    ("cache-misses", 0, 3), ("branches", 0, 4), ("branch-instructions", 0, 4),
    ("branch-misses", 0, 5), ("ref-cycles", 0, 9),
])
def test_builtin_event_numbers(name, type_, config):
    spec = builtin_event(name)
    assert (spec.type, spec.config) == (type_, config)
    assert builtin_event(name.upper()) == spec


def test_builtin_defaults_count_user_mode_only():
    for name in ("cycles", "instructions", "page-faults", "task-clock"):
        spec = builtin_event(name)
        assert not spec.exclude_user and spec.exclude_kernel
    # these happen in kernel context: excluding the kernel would always read 0
    assert not builtin_event("context-switches").exclude_kernel
    assert not builtin_event("cpu-migrations").exclude_kernel


def test_fixed_counter_hint():
    assert builtin_event("cycles").fixed and builtin_event("instructions").fixed
    assert builtin_event("ref-cycles").fixed
    assert not builtin_event("branches").fixed and not builtin_event("task-clock").fixed


def test_unknown_builtin_is_none():
    assert builtin_event("RETIRED_OPS") is None


def test_attr_flags_bit_positions():
    spec = EventSpec("x", ev.PERF_TYPE_RAW, exclude_user=True, exclude_kernel=True,
                     exclude_hv=True, exclude_guest=True, pinned=True)
    assert spec.attr_flags() == (1 << 4) | (1 << 5) | (1 << 6) | (1 << 20) | (1 << 2)
    assert EventSpec("x", 4, exclude_kernel=False, exclude_hv=False).attr_flags() == 0


_C_PROBE = r"""
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#define P(x) printf(#x " %llu\n", (unsigned long long)(x))
static unsigned long long word(struct perf_event_attr *a) {
    unsigned long long w; memcpy(&w, (char *)a + 40, 8); return w; }
#define BIT(f) do { struct perf_event_attr a; memset(&a, 0, sizeof a); a.f = 1; \
    printf("bit_" #f " %llu\n", word(&a)); } while (0)
int main(void) {
    P(PERF_TYPE_HARDWARE); P(PERF_TYPE_SOFTWARE); P(PERF_TYPE_TRACEPOINT); P(PERF_TYPE_HW_CACHE);
    P(PERF_TYPE_RAW); P(PERF_TYPE_BREAKPOINT);
    P(PERF_COUNT_HW_CPU_CYCLES); P(PERF_COUNT_HW_INSTRUCTIONS); P(PERF_COUNT_HW_CACHE_REFERENCES);
    P(PERF_COUNT_HW_CACHE_MISSES); P(PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
    P(PERF_COUNT_HW_BRANCH_MISSES); P(PERF_COUNT_HW_BUS_CYCLES);
    P(PERF_COUNT_HW_STALLED_CYCLES_FRONTEND); P(PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
    P(PERF_COUNT_HW_REF_CPU_CYCLES);
    P(PERF_COUNT_SW_CPU_CLOCK); P(PERF_COUNT_SW_TASK_CLOCK); P(PERF_COUNT_SW_PAGE_FAULTS);
    P(PERF_COUNT_SW_CONTEXT_SWITCHES); P(PERF_COUNT_SW_CPU_MIGRATIONS);
    P(PERF_COUNT_SW_PAGE_FAULTS_MIN); P(PERF_COUNT_SW_PAGE_FAULTS_MAJ);
    P(PERF_COUNT_SW_ALIGNMENT_FAULTS); P(PERF_COUNT_SW_EMULATION_FAULTS); P(PERF_COUNT_SW_DUMMY);
    P(PERF_ATTR_SIZE_VER0); P(PERF_ATTR_SIZE_VER1); P(PERF_ATTR_SIZE_VER5);
    P(PERF_ATTR_SIZE_VER6); P(PERF_ATTR_SIZE_VER7);
    P(PERF_FORMAT_TOTAL_TIME_ENABLED); P(PERF_FORMAT_TOTAL_TIME_RUNNING); P(PERF_FORMAT_ID);
    P(PERF_FORMAT_GROUP); P(PERF_FORMAT_LOST);
    P(PERF_FLAG_FD_NO_GROUP); P(PERF_FLAG_FD_OUTPUT); P(PERF_FLAG_PID_CGROUP);
    P(PERF_FLAG_FD_CLOEXEC);
    P(PERF_EVENT_IOC_ENABLE); P(PERF_EVENT_IOC_DISABLE); P(PERF_EVENT_IOC_REFRESH);
    P(PERF_EVENT_IOC_RESET); P(PERF_IOC_FLAG_GROUP);
    BIT(disabled); BIT(inherit); BIT(pinned); BIT(exclusive); BIT(exclude_user);
    BIT(exclude_kernel); BIT(exclude_hv); BIT(exclude_idle); BIT(mmap); BIT(comm); BIT(freq);
    BIT(inherit_stat); BIT(enable_on_exec); BIT(task); BIT(watermark); BIT(precise_ip);
    BIT(mmap_data); BIT(sample_id_all); BIT(exclude_host); BIT(exclude_guest);
    return 0;
}
"""


@pytest.fixture(scope="module")
def header_values(tmp_path_factory):
    if not HEADER.exists() or shutil.which("gcc") is None:
        pytest.skip("needs gcc and <linux/perf_event.h>")
    d = tmp_path_factory.mktemp("perfprobe")
    (d / "p.c").write_text(_C_PROBE)
    subprocess.run(["gcc", "-o", str(d / "p"), str(d / "p.c")], check=True)
    out = subprocess.run([str(d / "p")], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_constants_match_linux_header(header_values):
    for name, value in header_values.items():
        if name.startswith("bit_"):
            continue
        assert getattr(ev, name) == value, name


def test_attr_bit_positions_match_linux_header(header_values):
    for field, bit in ev.ATTR_BIT.items():
        assert header_values[f"bit_{field}"] == 1 << bit, field


def test_builtin_tables_use_header_numbers(header_values):
    assert builtin_event("minor-faults").config == header_values["PERF_COUNT_SW_PAGE_FAULTS_MIN"]
    assert builtin_event("ref-cycles").config == header_values["PERF_COUNT_HW_REF_CPU_CYCLES"]
    assert builtin_event("task-clock").type == header_values["PERF_TYPE_SOFTWARE"]


# --- event-select layouts ---------------------------------------------------------------------

PRIVILEGE_AND_ENABLE = (1 << 16) | (1 << 17) | (1 << 20) | (1 << 22)   # USR, OS, INT, EN


@pytest.mark.parametrize("line,config", [
    ("0E.01 UOPS_ISSUED.ANY", 0x10E),                          # Intel: umask at 8-15
    ("A1.01.CMSK=1.INV UOPS_DISPATCHED_PORT.PORT_0_CYCLES", 0x18001A1),  # cmask 24-31, inv 23
    ("C3.01.CMSK=1.EDG MACHINE_CLEARS.COUNT", 0x10401C3),      # edge 18
    ("3C.00.AnyT CPU_CLK_UNHALTED.THREAD_P_ANY", 0x20003C),     # any-thread 21
    ("A3.14.CMSK=20 CYCLE_ACTIVITY.STALLS_MEM_ANY", 0x140014A3),
    ("A3.14.CMSK=0x14 CYCLE_ACTIVITY.STALLS_MEM_ANY", 0x140014A3),
    ("0E.01.CMSK=255 X", 0xFF00010E),
])
def test_intel_layout(line, config):
    (spec,) = parse_config(line, vendor="intel")
    assert spec.config == config and spec.type == ev.PERF_TYPE_RAW
    assert spec.config & PRIVILEGE_AND_ENABLE == 0


@pytest.mark.parametrize("line,config", [
    ("0C1.00 RETIRED_OPS", 0xC1),
    ("0C0.00 RETIRED_INSTRUCTIONS", 0xC0),
    ("076.00 CYCLES_NOT_IN_HALT", 0x76),
    ("000.01 FPU_PIPE_ASSIGNMENT.TOTAL0", 0x100),
    ("00E.08 FP_DISPATCH_FAULTS.YMM_SPILL_FAULT", 0x80E),
    ("1C0.00 SELECT_1C0", 0x1_0000_00C0),                      # event[11:8] -> bits 32-35
    ("1A0.01 DISPATCH_STALLS_1.FE_NO_OPS", 0x1_0000_01A0),
    ("28F.04 OP_CACHE_HIT_MISS.OC_MISS", 0x2_0000_048F),
    ("FFF.FF TOP", 0xF_0000_FFFF),
    ("1A0.01.CMSK=6 FE_NO_OPS_ALL_SLOTS", 0x1_0600_01A0),
    ("0C1.00.CMSK=1.INV.EDG RETIRED_OPS_EDGES", 0x18400C1),
])
def test_amd_layout(line, config):
    (spec,) = parse_config(line, vendor="amd")
    assert spec.config == config
    assert spec.config & PRIVILEGE_AND_ENABLE == 0


def test_encode_function_matches_bit_by_bit():
    for event in (0x00, 0x0E, 0xA1, 0xFF):
        for umask in (0x00, 0x01, 0x80, 0xFF):
            assert encode("intel", event, umask) == event | umask << 8
    assert encode("intel", 0, 0, edge=True) == 1 << 18
    assert encode("intel", 0, 0, any_thread=True) == 1 << 21
    assert encode("intel", 0, 0, inv=True) == 1 << 23
    assert encode("intel", 0, 0, cmask=1) == 1 << 24
    assert encode("amd", 0x100, 0) == 1 << 32
    assert encode("amd", 0x800, 0) == 1 << 35
    assert encode("amd", 0, 0, any_thread=True) == 0        # AMD has no such bit


def test_same_line_differs_only_in_high_select_bits_between_vendors():
    intel, = parse_config("C0.00.CMSK=2.INV X", vendor="intel")
    amd, = parse_config("0C0.00.CMSK=2.INV X", vendor="amd")
    assert intel.config == amd.config == 0x28000C0
