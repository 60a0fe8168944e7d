"""Routine timing: the empty pass is subtracted (paired in one runner process), correctness comes
first, the pass code and layout are what the docs say. Facts only, no timing values."""
import numpy as np
import pytest

from cyclebench.errors import RoutineIncorrect, UsageError
from cyclebench.routines import (CallableChecker, array_shape, build_shared, dispatch_shape, empty_routine,
                                 fixed_stream, make_stream, random_stream, resolve)
from cyclebench.routines import passes, timing
from cyclebench.routines.passes import layout_for, pass_code
from cyclebench.routines.options import TimingOptions
from cyclebench.routines.timing import time_routine
from cyclebench.studies.memset.correctness import MemsetDomain
from routines_kernels import HEAP_ZERO_DOMAIN, kernel, planted_bugs

NOTHING = MemsetDomain(max_size=0, large_samples=0)   # size 0 only: writes nothing, returns dst


@pytest.mark.measured
def test_a_routine_that_does_nothing_costs_about_nothing_net():
    t = time_routine(empty_routine(), fixed_stream(0, count=1000), TimingOptions(n_measurements=15),
                     checker=NOTHING)
    assert t.calls == 1000 and t.mode == "fixed"
    # measure() may drop a repetition whose calibration was disturbed: A and B go together
    assert 8 <= len(t.samples["pass"]) == len(t.samples["empty"]) <= 15
    empty = t.empty["median"]
    assert empty > 0 and t.gross["median"] > 0
    # both figures are reported, and the net is gross minus empty
    assert t.net["fastest10"] == pytest.approx(t.gross["fastest10"] - t.empty["fastest10"])
    assert abs(t.net["median"]) < 0.1 * empty
    assert abs(t.net["fastest10"]) < 0.1 * empty
    assert t.to_dict()["net"] == t.net


@pytest.mark.measured
def test_the_routine_runs_in_b_and_the_empty_routine_in_a():
    # a byte loop over 512 bytes does hundreds of stores per call; the empty routine none
    t = time_routine(kernel("byte_loop"), fixed_stream(512, count=200),
                     TimingOptions(n_measurements=5), checker=MemsetDomain())
    assert t.gross["median"] > 10 * t.empty["median"]
    assert t.net["median"] > 0 and t.cycles == t.net["fastest10"]
    # A and B run different passes by design: no warning about copies or unroll counts
    assert not any("copies" in w or "--unroll" in w for w in t.warnings), t.warnings


def test_replayed_array_and_fixed_stream_modes():
    s = random_stream(min_size=1, max_size=64, count=300, seed=3)
    t = time_routine(resolve("libc:memset"), s, TimingOptions(n_measurements=3), checker=MemsetDomain())
    assert t.mode == "replay" and t.calls == 300 and t.stream_digest == s.digest()
    t2 = time_routine(resolve("libc:memset"), fixed_stream(32, count=300),
                      TimingOptions(n_measurements=3, replay=True), checker=MemsetDomain())
    assert t2.mode == "replay"


def test_an_incorrect_routine_is_not_timed(monkeypatch):
    bad = resolve("cb_bug_tail_off_by_one", library=planted_bugs())

    def boom(*a, **k):
        raise AssertionError("measure() must not run for an incorrect routine")
    monkeypatch.setattr(timing, "measure", boom)
    with pytest.raises(RoutineIncorrect) as e:
        time_routine(bad, fixed_stream(64, count=100), checker=MemsetDomain(max_size=128, large_samples=0))
    assert e.value.exit_code == 11


def test_correctness_is_checked_once_per_routine_and_domain(monkeypatch):
    calls = []

    def checker(r):
        calls.append(r.symbol)
        return True
    r = empty_routine()
    for _ in range(2):
        time_routine(r, fixed_stream(0, count=50), TimingOptions(n_measurements=2), checker=checker)
    assert calls == ["cb_routine_empty"]


def test_stream_outside_the_checked_domain_is_refused():
    hz = kernel("heap_zero")
    with pytest.raises(UsageError, match="outside"):
        time_routine(hz, random_stream(min_size=16, max_size=64, granularity=16, max_offset=100,
                                       count=10), checker=HEAP_ZERO_DOMAIN)
    with pytest.raises(UsageError, match="outside"):
        time_routine(hz, fixed_stream(24, count=10), checker=HEAP_ZERO_DOMAIN)


def test_pass_code_and_layout():
    opts = TimingOptions(flush="call")
    s = random_stream(min_size=1, max_size=16, count=10)
    lay = layout_for(s, opts)
    g = passes.l1d_geometry()
    assert lay.evict_lines == 1 and lay.evict_ways == 2 * g.ways
    assert lay.evict_offset % 4096 == 0 and lay.evict_offset >= lay.buffer
    assert lay.ctl >= lay.evict_offset + lay.evict_ways * g.set_span
    assert (lay.r14_size // 2) % 4096 == 0 and lay.r14_size // 2 >= lay.ctl + 8
    init, code = pass_code("memset", "cb_routine_empty", len(s), opts, lay, fixed=False)
    lines = code.splitlines()
    loop = lines.index("1:")
    assert lines[loop - 1] == ".p2align 12"
    assert any("lea rcx, [rbx + " in ln for ln in lines[loop:]) and "add r12, 24" in lines
    assert "call r15" in lines and "xor dword ptr" in init
    # a 4 KiB span evicts every set; flush="pass" evicts before the loop only
    big = fixed_stream(4096, count=10)
    assert layout_for(big, opts).evict_lines == g.sets
    _, code2 = pass_code("memset", "cb_routine_empty", 10, TimingOptions(flush="pass"),
                         layout_for(big, TimingOptions(flush="pass")), fixed=True)
    l2 = code2.splitlines()
    assert l2.index("2:") < l2.index("1:") and "add r12, 24" not in l2
    assert layout_for(s, TimingOptions()).evict_lines == 0


def test_flush_call_runs_and_records_its_eviction():
    t = time_routine(resolve("libc:memset"), random_stream(min_size=1, max_size=64, count=200),
                     TimingOptions(flush="call", n_measurements=3), checker=MemsetDomain())
    assert t.options["flush"] == "call" and t.options["evict_loads_per_eviction"] > 0


def test_options_are_validated():
    with pytest.raises(UsageError):
        TimingOptions(flush="sometimes")
    with pytest.raises(UsageError):
        TimingOptions(n_measurements=0)


class _FakeResult:
    """measure()'s raw contract: the chosen attempt's kept repetitions and their core cycles."""

    def __init__(self, raw, events=()):
        self.raw = {"attempts": [{"a": [], "b": []}, raw], "chosen": 1}
        self.parameters = {"n_measurements": len(raw["a"]), "events": list(events)}


def test_readings_are_measures_kept_repetitions():
    # TSC rows [tsc, events...]: the second repetition was dropped by measure() (its calibration)
    raw = {"a": [[100, 1], [100, 2], [100, 3]], "b": [[200, 4], [200, 5], [200, 6]],
           "ca": [[0]] * 3, "cb": [[70000]] * 3, "kept": [0, 2],
           "cycles_a": [142.0, 143.0], "cycles_b": [285.0, 286.0]}
    a, b, ev = timing.readings(_FakeResult(raw, events=["page-faults"]))
    assert a.tolist() == [142.0, 143.0] and b.tolist() == [285.0, 286.0]
    assert ev["page-faults"][0].tolist() == [1, 3] and ev["page-faults"][1].tolist() == [4, 6]
    # PMU rows [tsc, cycles, events...]
    raw_pmu = {"a": [[5, 100, 7]], "b": [[9, 300, 10]], "kept": [0], "cycles_a": [100], "cycles_b": [300]}
    a, b, ev = timing.readings(_FakeResult(raw_pmu, events=["branch-misses"]))
    assert a[0] == 100 and b[0] == 300 and ev["branch-misses"][1][0] == 10


def test_routines_have_no_calibration_of_their_own():
    assert not hasattr(timing, "TSC_CALIBRATION_TOLERANCE")
    assert "CALIB_LOOP" not in vars(timing) and "CALIB_UNROLL" not in vars(timing)


def test_extra_events_are_reported_per_call():
    # software events work without a PMU and go through the same path as branch-misses would
    t = time_routine(kernel("nt_old"), fixed_stream(256, count=100),
                     TimingOptions(n_measurements=3, events=("page-faults",)), checker=MemsetDomain())
    ev = t.events["page-faults"]
    # one count per repetition measure() kept (a repetition with an interrupted calibration is dropped)
    assert set(ev) == {"gross", "empty", "net"} and ev["gross"]["n"] == len(t.samples["pass"]) >= 1
    assert t.options["events"] == ["page-faults"]


def test_other_call_shapes_load_their_registers():
    lay_opts = TimingOptions()
    idx = make_stream(dispatch_shape(), "idx", index=[0, 1, 2, 1])
    _, code = pass_code("dispatch", "cb_routine_empty", len(idx), lay_opts, layout_for(idx, lay_opts),
                        fixed=False, shape=idx.shape)
    lines = code.splitlines()
    assert "mov edi, [r12 + 0]" in lines and "add r12, 8" in lines and "add rdi, rbx" not in lines
    arr = make_stream(array_shape(8), "arr", array_offset=64, length=[10, 1100], index=[3, 1099])
    assert arr.buffer_size == 3 * 4096               # 64 + 1100 x 8 bytes, in whole pages
    _, code = pass_code("get", "cb_routine_empty", len(arr), lay_opts, layout_for(arr, lay_opts),
                        fixed=False, shape=arr.shape)
    lines = code.splitlines()
    assert lines[lines.index("mov rdi, [r12 + 0]") + 1] == "add rdi, rbx"
    assert "mov rsi, [r12 + 8]" in lines and "mov rdx, [r12 + 16]" in lines and "add r12, 24" in lines
    # no shape has a default checker: the study brings its own
    with pytest.raises(UsageError, match="checker"):
        time_routine(empty_routine(), idx)


DISPATCHER = """
        .intel_syntax noprefix
        .text
        .globl cb_dispatch
        .type cb_dispatch, @function
cb_dispatch:                       # int cb_dispatch(unsigned index): calls target[index & 3]
        and edi, 3
        lea rax, [rip + table]
        jmp qword ptr [rax + 8 * rdi]
t0:     mov eax, 10
        ret
t1:     mov eax, 11
        ret
t2:     mov eax, 12
        ret
t3:     mov eax, 13
        ret
        .section .data.rel.ro, "aw"
table:  .quad t0, t1, t2, t3
        .section .note.GNU-stack, "", @progbits
"""


def test_a_dispatcher_is_timed_over_an_index_stream(tmp_path):
    src = tmp_path / "dispatch.S"
    src.write_text(DISPATCHER)
    r = resolve("cb_dispatch", library=build_shared([src], name="test_dispatch").path)
    checked = []
    stream = make_stream(dispatch_shape(), "idx", index=np.arange(400) % 4)
    admitted = []
    checker = CallableChecker(lambda rt: checked.append(rt.symbol) or True,
                              lambda s, rt: admitted.append(len(s)))
    t = time_routine(r, stream, TimingOptions(n_measurements=3), checker=checker)
    assert checked == ["cb_dispatch"] and admitted == [400]
    assert t.mode == "replay" and t.calls == 400 and len(t.samples["pass"]) >= 2


def test_a_broken_pairing_needs_more_than_chance():
    from cyclebench.routines.timing import _surely_negative
    assert not _surely_negative(np.array([-20.0, -20.0]), 1.0)            # 2 of 2: a 1-in-4 chance
    assert _surely_negative(np.full(20, -20.0), 1.0)
    assert not _surely_negative(np.array([-20.0] * 10 + [5.0] * 10), 1.0)
    assert not _surely_negative(np.full(20, -0.5), 1.0)                    # within the margin
