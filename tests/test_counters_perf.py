"""The perf_event path end to end, with the events this machine really has.

Software events (page-faults, task-clock ...) go through exactly the code hardware events use:
perf_event_open in the runner, groups, enable/disable per group, read() inline in the generated
code, time_enabled/time_running. Hardware-only parts (rdpmc, hardware events) are exercised where
a fact can be checked without a PMU (planning, generated code, error paths); nothing here pretends
that a PMU exists.
"""
from cyclebench.measurement.evaluate import evaluate as EVAL
from cyclebench.measurement.clocks import TscCalibrated
from cyclebench.measurement.runargs import runner_args
import os
import struct

import pytest

import cyclebench
from cyclebench.counters import backends
from cyclebench.counters.backends import (HW_CYCLES, plan_groups, runner_event_arg,
                                          select_backend, with_privilege)
from cyclebench.counters.events import EventSpec, builtin_event
from cyclebench.errors import CounterUnavailable, UsageError
from cyclebench.harness import HarnessSpec, generate
from cyclebench.harness.codegen import PAUSE_MARK, RESUME_MARK
from cyclebench.harness.nomem import PAUSE_VALUE, RESUME_VALUE
from cyclebench import runner
from cyclebench.measurement import api
from cyclebench.snippet import assemble, parse_part
from settle import settled_cycles

HAS_PMU = os.path.exists("/sys/bus/event_source/devices/cpu")
no_pmu_only = pytest.mark.skipif(HAS_PMU, reason="this machine has a hardware PMU")
ROUGH = dict(n_measurements=15, budget=1.0)

# init drops the lower half of the R14 area (madvise MADV_DONTNEED), so every run touches fresh pages
FRESH_PAGES_INIT = ("mov rbx, r14; sub rbx, 0x80000; mov rdi, rbx; mov esi, 0x80000; mov edx, 4; "
                    "mov eax, 28; syscall; mov rdi, rbx")
TOUCH_PAGE = "mov byte ptr [rdi], 1; add rdi, 4096"


def touch(pages, events, **kw):
    return cyclebench.measure(TOUCH_PAGE, init=FRESH_PAGES_INIT, unroll=pages, loop=0, events=events,
                              basic_mode=True, no_normalization=True, n_measurements=5,
                              allow_syscalls=True, **kw)   # madvise in init


# --- software events by name, through the group path ------------------------------------------

@pytest.mark.parametrize("pages", [4, 16])
def test_page_faults_by_name(pages):
    r = touch(pages, "page-faults,minor-faults,major-faults")
    assert r.events["page-faults"].median == pages
    assert r.events["minor-faults"].median == pages
    assert r.events["major-faults"].median == 0
    assert all(not r.events[n].multiplexed for n in ("page-faults", "minor-faults"))
    assert r.backend["groups"][0]["events"] == ["page-faults", "minor-faults", "major-faults"]


def test_cli_events_print_one_line_per_event(cli):
    rc, out, _ = cli("asm", "--events", "page-faults,task-clock", "-n", "10", "add rax, rbx")
    assert rc == 0
    labels = [line.split(":")[0] for line in out.splitlines() if not line.startswith("#")]
    assert labels[0].startswith("cycles") and labels[1:3] == ["page-faults", "task-clock"]


@pytest.mark.measured
def test_task_clock_grows_with_the_work():
    # task-clock counts nanoseconds of the task: 8x the copies take more of it (a fact, not a timing)
    small = cyclebench.measure("imul rax, rax", unroll=100, loop=100, events="task-clock",
                               no_normalization=True, **ROUGH).events["task-clock"].median
    big = cyclebench.measure("imul rax, rax", unroll=100, loop=800, events="task-clock",
                             no_normalization=True, **ROUGH).events["task-clock"].median
    assert big > 4 * small > 0


# --- several groups, one after the other, merged ------------------------------------------------

def test_one_group_per_event_gives_the_same_counts():
    r = touch(8, "page-faults,task-clock,minor-faults,major-faults", group_size=1)
    groups = r.backend["groups"]
    assert [g["events"] for g in groups] == [["page-faults"], ["task-clock"], ["minor-faults"], ["major-faults"]]
    assert [r.events[n].group for n in ("page-faults", "task-clock", "minor-faults", "major-faults")] == [0, 1, 2, 3]
    assert r.events["page-faults"].median == r.events["minor-faults"].median == 8
    assert r.events["major-faults"].median == 0
    assert r.events["task-clock"].median > 0
    # every group was measured the full number of repetitions, and the raw readings keep them apart
    raw = r.raw["attempts"][0]
    assert len(raw["a"]) == 5 and [len(g["a"]) for g in raw["groups"]] == [5, 5, 5]
    assert [g["events"] for g in raw["groups"]] == [["task-clock"], ["minor-faults"], ["major-faults"]]


def test_groups_of_two():
    r = touch(4, "page-faults,task-clock,minor-faults", group_size=2)
    assert [g["events"] for g in r.backend["groups"]] == [["page-faults", "task-clock"], ["minor-faults"]]
    assert r.events["page-faults"].median == r.events["minor-faults"].median == 4


def test_runner_reads_the_group_it_enabled():
    """Protocol facts: 'group G' lines, samples with the group's own number of values, times lines."""
    p = api.prepare("nop", events="page-faults,task-clock,minor-faults", group_size=2, loop=10, unroll=10,
                    n_measurements=3)
    blob = runner.write_temp(p.obj.blob, ".bin")
    try:
        out = runner.run(runner_args(p.obj, blob, None, p.backend, 3, 1, 0, 10, None, 10, [], None, None, None), 10)
    finally:
        os.unlink(blob)
    assert out.done and len(out.groups) == 2
    assert all(len(s) == 1 + 2 for s in out.groups[0]["a"]) and all(len(s) == 1 + 1 for s in out.groups[1]["b"])
    assert "ca" in out.groups[0] and "ca" not in out.groups[1]          # calibration in the first pass only
    assert all(en == run > 0 for g in out.times for kind in ("a", "b") for en, run in g[kind])


# --- group planning (pure logic: which events share a group) ------------------------------------

def _hw(name, **kw):
    return EventSpec(name, 4, 0x76, **kw)


def test_plan_respects_the_counter_limit_and_keeps_order():
    evs = [_hw(f"E{i}") for i in range(7)]
    groups = plan_groups(evs, 3)
    assert [[e.name for e in g] for g in groups] == [["E0", "E1", "E2"], ["E3", "E4", "E5"], ["E6"]]


def test_plan_leading_events_and_free_software_events():
    sw = builtin_event("page-faults")
    evs = [_hw("A"), sw, _hw("B"), _hw("C")]
    groups = plan_groups(evs, 2, lambda e: e.type != 1, leading=[HW_CYCLES])
    assert [[e.name for e in g] for g in groups] == [["cycles", "A", "page-faults"], ["B", "C"]]


def test_plan_taken_alone_gets_its_own_group():
    evs = [_hw("A"), _hw("ALONE", taken_alone=True), _hw("B")]
    assert [[e.name for e in g] for g in plan_groups(evs, 4)] == [["A", "B"], ["ALONE"]]


def test_plan_caps_groups_at_the_runner_limit():
    evs = [builtin_event("task-clock").renamed(f"t{i}") for i in range(40)]
    groups = plan_groups(evs, 4, lambda e: False)
    assert [len(g) for g in groups] == [16, 16, 8]


def test_intel_fixed_counters_take_no_programmable_counter():
    instr = builtin_event("instructions")
    assert not backends.uses_counter(instr, "GenuineIntel")
    assert backends.uses_counter(instr, "AuthenticAMD")
    assert not backends.uses_counter(builtin_event("page-faults"), "AuthenticAMD")


# --- user/kernel filters ---------------------------------------------------------------------------

def test_privilege_flags_reach_the_runner_arguments():
    ev = with_privilege(builtin_event("page-faults"), user=False, kernel=True)
    assert runner_event_arg(ev).endswith(":1:0")
    assert runner_event_arg(with_privilege(builtin_event("page-faults"))).endswith(":0:1")
    # context switches happen in kernel context: they keep counting it
    assert not with_privilege(builtin_event("cs"), user=True, kernel=False).exclude_kernel
    assert with_privilege(HW_CYCLES, kernel=True).exclude_kernel is False


def test_user_faults_are_not_counted_in_kernel_mode_only():
    # the faults happen in user mode: counting kernel mode only sees none of them
    assert touch(8, "page-faults", user=False, kernel=True).events["page-faults"].median == 0
    assert touch(8, "page-faults", user=True, kernel=True).events["page-faults"].median == 8


def test_counting_nothing_is_refused():
    with pytest.raises(UsageError, match="counts nothing"):
        cyclebench.measure("nop", user=False, kernel=False, **ROUGH)


# --- --remove-empty-events ------------------------------------------------------------------------

def test_remove_empty_events():
    r = touch(4, "page-faults,major-faults", remove_empty_events=True)
    assert "page-faults" in r.events and "major-faults" not in r.events
    assert r.parameters["removed_events"] == ["major-faults"]
    assert "cycles" in r.events


# --- multiplexing: time_running < time_enabled is flagged, never scaled ---------------------------

def test_time_running_below_time_enabled_is_flagged():
    """The kernel reports time_running < time_enabled for a group it could not schedule. Without a
    PMU there is no counter shortage to cause that, but an event bound to another CPU than the one
    the runner is pinned to is enabled and never running: the same kernel bookkeeping, real numbers."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two CPUs")
    p = api.prepare("add rax, rbx", events="task-clock,page-faults", loop=100, unroll=100, n_measurements=5)
    blob = runner.write_temp(p.obj.blob, ".bin")
    try:
        args = runner_args(p.obj, blob, None, p.backend, 5, 2, 0, 100, 0, 10, [], None, None, None)
        out = runner.run(args + ["--event-cpu", "1"], 10)
    finally:
        os.unlink(blob)
    assert out.done
    ev = EVAL(out, p.backend, p.clock, 100, False, "avg")
    assert ev["groups"][0]["multiplexed"] and ev["groups"][0]["min_running_fraction"] == 0.0
    assert ev["events"]["task-clock"].multiplexed and ev["events"]["task-clock"].value == 0   # not scaled
    assert any("NOT scaled" in w and "task-clock" in w for w in ev["warnings"])


def test_normal_runs_are_not_flagged():
    r = cyclebench.measure("nop", events="task-clock", **ROUGH)
    assert r.backend["groups"] == [{"events": ["task-clock"], "multiplexed": False, "min_running_fraction": 1.0,
                                    "runs_multiplexed": 0, "runs": 30}]
    assert not any("multiplexed" in w for w in r.warnings)


# --- errors from real failing system calls ---------------------------------------------------------

@no_pmu_only
def test_raw_event_without_pmu_exits_7(cli):
    rc, _, err = cli("asm", "--config", "cfg_Zen4.txt", "nop")
    assert rc == 7
    assert "error: no hardware PMU" in err and "cfg_Zen4.txt:" in err and "ENOENT" in err
    assert "hint:" in err


@no_pmu_only
def test_raw_event_in_a_file_without_pmu(cli, tmp_path):
    cfg = tmp_path / "mine.txt"
    cfg.write_text("# vendor: AMD\n0C1.00 RETIRED_OPS\n")
    rc, _, err = cli("asm", "--config", str(cfg), "nop")
    assert rc == 7 and "RETIRED_OPS" in err and "mine.txt:2" in err


@no_pmu_only
def test_hardware_event_name_without_pmu(cli):
    rc, _, err = cli("asm", "--events", "instructions", "nop")
    assert rc == 7 and "no hardware PMU" in err and "software events" in err


@no_pmu_only
def test_fixed_counters_without_pmu():
    with pytest.raises(CounterUnavailable, match="--fixed-counters: no hardware PMU"):
        select_backend("auto", [], fixed_counters=True)


@no_pmu_only
def test_perf_backend_without_pmu():
    with pytest.raises(CounterUnavailable, match="no hardware PMU"):
        select_backend("perf", [])


def test_unknown_event_name_exits_7(cli):
    rc, _, err = cli("asm", "--events", "NO_SUCH_EVENT_AT_ALL", "nop")
    assert rc == 7 and "NO_SUCH_EVENT_AT_ALL" in err


def test_events_given_twice(cli):
    rc, _, err = cli("asm", "--events", "page-faults,faults", "nop")
    assert rc == 2 and "twice" in err


# --- --list-events -----------------------------------------------------------------------------------

def test_list_events_shows_usable_sources(cli):
    rc, out, _ = cli("asm", "--list-events")
    assert rc == 0
    software = next(l for l in out.splitlines() if l.startswith("│ software ") and "kernel software events" in l)
    assert "usable" in software and "not usable" not in software
    generic = next(l for l in out.splitlines() if l.startswith("│ generic ") and "generic hardware" in l)
    if not HAS_PMU:
        assert "not usable: no hardware PMU" in generic
    assert "page-faults" in out and "task-clock" in out


# --- no-memory mode ------------------------------------------------------------------------------

PAUSE = f".quad {PAUSE_VALUE:#x}"
RESUME = f".quad {RESUME_VALUE:#x}"
CHAIN = "; ".join(["imul rbx, rbx"] * 100)         # 300 cycles on any core with 3-cycle imul


@pytest.mark.measured
def test_no_mem_measures_the_same():
    base, no_mem = settled_cycles(lambda: cyclebench.measure("imul rax, rax", **ROUGH),
                                  lambda: cyclebench.measure("imul rax, rax", no_mem=True, **ROUGH))
    assert no_mem == pytest.approx(base, rel=0.03)


def test_no_mem_keeps_memory_out_of_the_window():
    p = api.prepare("nop", no_mem=True, unroll=2, loop=3)
    lines = p.lines
    fn = lines.index("cb_run_b:")
    start = lines.index("rdtsc", fn)
    end = lines.index("cb_run_b_body_end:", start)
    window = [l for l in lines[start:end] if not l.startswith("cb_")]
    assert not [l for l in window if "[" in l and "lea" not in l]        # no memory operand at all
    assert "mov r15, qword ptr [rip + cb_ctl + 8]" in lines[fn:start]   # loop count loaded before


def test_no_mem_rejects_code_that_writes_its_registers():
    with pytest.raises(UsageError, match="R8 holds the TSC reading.*'add r8d, 1'"):
        cyclebench.measure("add r8d, 1", no_mem=True, **ROUGH)
    with pytest.raises(UsageError, match="late-init"):
        cyclebench.measure("nop", late_init="mov r8, rax", no_mem=True, **ROUGH)
    cyclebench.measure("nop", init="mov r8, 1", no_mem=True, **ROUGH)      # init runs before the reading


def test_no_mem_refuses_read_path_events():
    with pytest.raises(UsageError, match="'page-faults': software events are read with read\\(\\)"):
        cyclebench.measure("nop", events="page-faults", no_mem=True, **ROUGH)


@pytest.mark.measured
def test_pause_removes_the_paused_work():
    paused_chain = cyclebench.measure(f"imul rax, rax; {PAUSE}; {CHAIN}; {RESUME}", no_mem=True, **ROUGH).value()
    paused_nothing = cyclebench.measure(f"imul rax, rax; {PAUSE}; {RESUME}", no_mem=True, **ROUGH).value()
    unpaused = cyclebench.measure(f"imul rax, rax; {CHAIN}", no_mem=True, **ROUGH).value()
    assert unpaused >= 290
    assert paused_chain == pytest.approx(paused_nothing, abs=0.1 * unpaused)
    assert paused_chain < unpaused - 200


@pytest.mark.measured
def test_pause_in_raw_machine_code():
    imul_rax, imul_rbx = bytes.fromhex("480fafc0"), bytes.fromhex("480fafdb")
    raw = imul_rax + PAUSE_VALUE.to_bytes(8, "little") + imul_rbx * 100 + RESUME_VALUE.to_bytes(8, "little")
    paused = cyclebench.measure(raw, no_mem=True, **ROUGH).value()
    unpaused = cyclebench.measure(imul_rax + imul_rbx * 100, no_mem=True, **ROUGH).value()
    assert paused < unpaused - 200


@pytest.mark.parametrize("code,kw,words", [
    (f"nop; {PAUSE}; {RESUME}", {}, "only work with --no-mem"),
    (f"nop; {RESUME}; {PAUSE}", {"no_mem": True}, "in pairs"),
    (f"nop; {PAUSE}", {"no_mem": True}, "in pairs"),
    ("nop", {"no_mem": True, "init": f"{PAUSE}; {RESUME}"}, "only inside the measured code"),
])
def test_pause_misuse(code, kw, words):
    with pytest.raises(UsageError, match=words):
        cyclebench.measure(code, **kw, **ROUGH)


def test_rdpmc_no_mem_patch_table_points_at_the_immediates():
    """Generated code only (rdpmc itself needs a PMU): every patch-table entry is the imm32 of a
    `mov ecx, imm32` and names a counter slot; each slot is read at start, end, pause and resume."""
    code = parse_part("code", f"nop; {PAUSE_MARK}; nop; {RESUME_MARK}")
    spec = HarnessSpec(code, parse_part("init", None), parse_part("late_init", None),
                       parse_part("one_time_init", None), unroll=3, use_loop=False,
                       read={"use_tsc": True, "rdpmc_events": [0, 1], "no_mem": True}, calibration=False)
    lines, origin = generate(spec)
    obj = assemble(lines, origin)
    table = obj.symbols["cb_patch_table"]
    n = sum(1 for k in obj.symbols if k.startswith("cb_pmcsite_"))
    entries = [struct.unpack_from("<II", obj.blob, table + 8 * k) for k in range(n)]
    # run_a and run_b: start + end, 2 slots each; 3 + 6 copies x (pause + resume) x 2 slots
    assert n == 2 * 2 * 2 + (3 + 6) * 2 * 2
    for off, slot in entries:
        assert obj.blob[off - 1] == 0xB9 and obj.blob[off:off + 4] == b"\0\0\0\0" and slot in (0, 1)
    assert {slot for _, slot in entries} == {0, 1}


# --- the asm command line ---------------------------------------------------------------------

def test_cli_no_mem(cli):
    rc, out, _ = cli("asm", "--no-mem", "-n", "10", "imul rax, rax; .quad 0xF0B513B1C2813F04; imul rbx, rbx; "
                     ".quad 0xE0B513B1C2813F04")
    assert rc == 0 and out.startswith("cycles")
    rc, _, err = cli("asm", "--no-mem", "mov r8, 1")
    assert rc == 2 and "'mov r8, 1' (code) writes R8" in err and "hint:" in err
    rc, out, _ = cli("asm", "--no-mem", "--emit-asm", "nop")
    assert rc == 0 and "rorx rdx, rdx, 32" in out and "lea r8, [rax + rdx]" in out


def test_cli_privilege_and_group_options(cli):
    rc, out, _ = cli("asm", "--usr", "0", "--os", "1", "--events", "page-faults,task-clock", "--group-size", "1",
                     "--json", "-n", "5", "--allow-syscalls", "--init", FRESH_PAGES_INIT, "--unroll", "4", "--loop", "0",
                     "--basic-mode", "--no-normalization", TOUCH_PAGE)
    assert rc == 0
    import json
    doc = json.loads(out)
    assert doc["parameters"]["user"] is False and doc["parameters"]["kernel"] is True
    assert doc["events"]["page-faults"]["median"] == 0 and doc["events"]["page-faults"]["group"] == 0
    assert doc["events"]["task-clock"]["group"] == 1
    assert [g["events"] for g in doc["backend"]["groups"]] == [["page-faults"], ["task-clock"]]
    rc, _, err = cli("asm", "--usr", "0", "--os", "0", "nop")
    assert rc == 2 and "counts nothing" in err


def test_cli_remove_empty_events(cli):
    rc, out, _ = cli("asm", "--events", "major-faults,task-clock", "--remove-empty-events", "-n", "5", "nop")
    assert rc == 0 and "major-faults" not in out and "task-clock" in out
