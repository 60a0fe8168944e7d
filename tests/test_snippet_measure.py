"""Facts that hold on any modern x86 core; tolerances are wide enough for a noisy host."""
from cyclebench.measurement.evaluate import evaluate as EVAL
from cyclebench.measurement.clocks import TscCalibrated
import json

import pytest

import cyclebench
from cyclebench.counters.backends import Event
from settle import settled_cycles

ROUGH = dict(n_measurements=15, budget=1.0)


def cycles(code, **kw):
    return cyclebench.measure(code, **{**ROUGH, **kw}).value("cycles")


def run(code, **kw):
    """One measurement, to be made (and made again) by settled_cycles."""
    return lambda: cyclebench.measure(code, **{**ROUGH, **kw})


IMUL = run("imul rax, rax")


@pytest.mark.measured
def test_two_dependent_imuls_cost_twice_one():
    one, two = settled_cycles(IMUL, run("imul rax, rax; imul rax, rax"))
    assert one >= 1
    assert two / one == pytest.approx(2.0, rel=0.03)


@pytest.mark.measured
def test_result_does_not_depend_on_unroll_or_loop():
    for kw in (dict(unroll=10, loop=2000), dict(unroll=300, loop=50), dict(unroll=5000, loop=0)):
        base, other = settled_cycles(IMUL, run("imul rax, rax", **kw))
        assert other == pytest.approx(base, rel=0.03), kw


@pytest.mark.measured
def test_init_code_is_not_counted():
    heavy_init = "; ".join(["imul rbx, rbx"] * 200)
    with_init, base = settled_cycles(run("imul rax, rax", init=heavy_init), IMUL)
    assert with_init == pytest.approx(base, rel=0.03)


@pytest.mark.measured
def test_late_init_cancels_in_the_difference():
    late = "; ".join(["imul rbx, rbx"] * 50)
    with_late, base = settled_cycles(run("imul rax, rax", late_init=late), IMUL)
    assert with_late == pytest.approx(base, rel=0.03)


@pytest.mark.measured
def test_basic_mode_gives_the_same_per_copy_cost():
    basic, base = settled_cycles(run("imul rax, rax", basic_mode=True), IMUL)
    assert basic == pytest.approx(base, rel=0.03)


@pytest.mark.measured
def test_no_normalization_scales_by_the_copies():
    whole, base = settled_cycles(run("imul rax, rax", unroll=100, loop=10, no_normalization=True), IMUL)
    assert whole == pytest.approx(1000 * base, rel=0.03)


def test_registers_start_as_documented():
    # R14 points into a writable area and other registers are 0: this faults otherwise.
    cyclebench.measure("mov [r14], rax; mov [rdi - 8], rbx; mov [rsi + 8], rcx; push rax; pop rax; "
                       "mov [rbp], rdx", **ROUGH)


DENORMAL_X1 = "mov eax, 1; movd xmm1, eax"          # the float 1.4e-45: a denormal in xmm1's low lane


def test_floating_point_work_on_denormals_is_named_and_normal_values_are_not():
    warned = lambda r: [w for w in r.warnings if "denormal" in w]
    assert warned(cyclebench.measure("mulss xmm2, xmm1", init=DENORMAL_X1, **ROUGH))
    assert not warned(cyclebench.measure("mulss xmm2, xmm1", **ROUGH))                   # 1.0 lanes
    daz = DENORMAL_X1 + "; mov dword ptr [rsp-64], 0x9fc0; ldmxcsr dword ptr [rsp-64]"   # read as zero
    assert not warned(cyclebench.measure("mulss xmm2, xmm1", init=daz, **ROUGH))
    assert not warned(cyclebench.measure("movaps xmm2, xmm1", init=DENORMAL_X1, **ROUGH))   # no arithmetic


def test_x87_work_on_denormals_is_named_too():
    r = cyclebench.measure("fld dword ptr [r14]; fstp st(0)", init="mov dword ptr [r14], 1", **ROUGH)
    assert [w for w in r.warnings if "denormal operands (the denormal flag of the x87 status word)" in w]


def test_the_flags_read_as_the_warning_says():
    from cyclebench.measurement.evaluate import fp_flags_warning
    def flags(mxcsr, x87=0):
        return fp_flags_warning({"fp_status": [hex(x87 << 32 | mxcsr)]})
    assert fp_flags_warning({}) is None and flags(0x1fa0) is None       # inexact only
    assert "denormal operands (the denormal flag of MXCSR)" in flags(0x1f82)
    assert flags(0x1fc2) is None                                        # DAZ: read as zero, no slow path
    assert "too small for a normal float (the underflow flag of MXCSR)" in flags(0x1fb0)
    assert flags(0x9fb0) is None                                        # FTZ: flushed
    assert "denormal flag of MXCSR and the x87 status word" in flags(0x1f82, 0x2)
    assert "underflow flag of the x87 status word" in flags(0x1f80, 0x10)


def test_snippet_may_move_rsp():
    assert cycles("sub rsp, 8; mov [rsp], rax; add rsp, 8") > 0


def test_software_events_count_page_faults_per_run():
    pf = Event("page-faults", 1, 2, exclude_kernel=False)
    # init drops the lower half of the R14 area, so each run touches fresh pages
    init = ("mov rbx, r14; sub rbx, 0x80000; mov rdi, rbx; mov esi, 0x80000; mov edx, 4; "
            "mov eax, 28; syscall; mov rdi, rbx")
    for pages in (4, 16):
        r = cyclebench.measure("mov byte ptr [rdi], 1; add rdi, 4096", init=init, unroll=pages, loop=0,
                               events=[pf], basic_mode=True, no_normalization=True, n_measurements=5,
                               allow_syscalls=True)
        assert r.events["page-faults"].median == pages
        assert r.backend["name"] in ("tsc", "perf")


def test_json_round_trip():
    r = cyclebench.measure("add rax, rbx", **ROUGH)
    again = cyclebench.Result.from_json(r.to_json())
    assert again.to_dict() == r.to_dict()
    d = json.loads(r.to_json())
    assert d["schema"] == "cyclebench.result" and d["schema_version"] == 1
    for key in ("cpu_vendor", "cpu_family", "cpu_model", "cpu_stepping", "microcode", "kernel",
                "tsc_hz", "calibrated_core_ghz", "counter_backend", "tool_version"):
        assert key in d["machine"]
    # every repetition's raw readings are kept; the figure's samples may leave some out, each
    # named: interrupted calibrations, repetitions whose A and B ran at different speeds,
    # repetitions a burst touched, a head still warming up
    first = d["raw"]["attempts"][0]
    assert len(first["a"]) == 15
    left_out = (first["calibration_outliers"] + first.get("unpaired", []) + first["burst_outliers"]
                + first.get("warming_up", []))
    assert sorted(first["kept"] + left_out) == list(range(15))
    assert 1 <= len(d["events"]["cycles"]["samples"]) <= 15
    assert d["raw"]["attempts"][0]["a"]


def test_tsc_backend_labels_its_cycles():
    r = cyclebench.measure("nop", counters="tsc", **ROUGH)
    assert r.events["cycles"].label.startswith("cycles (TSC-calibrated, ")
    assert r.backend["name"] == "tsc" and r.backend["calibrated_ghz"] > 0.5


def test_mpx_on_a_cpu_without_mpx_is_labelled_a_nop():
    from cyclebench.machine.cpu import cpu_info
    if cpu_info().has_mpx:
        pytest.skip("this CPU has MPX")
    r = cyclebench.measure("bndcl bnd0, rax", **ROUGH)
    assert any("hint-NOP" in w for w in r.warnings)


def test_interrupted_calibrations_do_not_reach_min_and_max():
    from cyclebench.measurement import api
    from cyclebench.runner import RunnerOutput
    from cyclebench.counters.backends import Backend
    # 10 repetitions of a 3-cycle snippet; repetition 4's calibration B was interrupted (ticks inflated)
    ca = [[70000]] * 10
    cb = [[140000]] * 10
    cb[4] = [160000]
    ca[7] = [140000]          # a preempted calibration A: the difference is 0
    out = RunnerOutput(info={"loop": ["1"], "tsc_hz": ["2.6e9"]},
                       samples={"ca": ca, "cb": cb, "a": [[0]] * 10, "b": [[210]] * 10})
    ev = EVAL(out, Backend("tsc", "test"), TscCalibrated(), 100, False, "range")
    cyc = ev["events"]["cycles"]
    assert ev["raw"]["calibration_outliers"] == [4, 7]
    assert len(cyc.samples) == 8 and cyc.min == cyc.max


def test_a_drifting_clock_never_keeps_a_repetition_without_a_calibration():
    """When most calibrations are off (a drifting clock), the rest are kept, but never one whose
    calibration difference was not positive: its cycles would read as zero (seen in a study)."""
    from cyclebench.measurement import api
    from cyclebench.runner import RunnerOutput
    from cyclebench.counters.backends import Backend
    diffs = [70000, 76000, 82000, 88000, 94000, 0]          # repetition 5: calibration A preempted
    ca = [[100000]] * 6
    cb = [[100000 + d] for d in diffs]
    out = RunnerOutput(info={"loop": ["1"], "tsc_hz": ["2.6e9"]},
                       samples={"ca": ca, "cb": cb, "a": [[0]] * 6, "b": [[210]] * 6})
    ev = EVAL(out, Backend("tsc", "test"), TscCalibrated(), 100, False, "avg")
    assert ev["raw"]["kept"] == [0, 1, 2, 3, 4] and ev["raw"]["calibration_outliers"] == [5]
    assert min(ev["raw"]["cycles_b"]) > 0 and min(ev["events"]["cycles"].samples) > 0


def test_one_preempted_calibration_of_two_is_an_outlier_not_a_broken_tsc():
    from cyclebench.errors import CounterUnavailable
    from cyclebench.measurement import api
    from cyclebench.runner import RunnerOutput
    from cyclebench.counters.backends import Backend

    def run(ca, cb):
        n = len(ca)
        out = RunnerOutput(info={"loop": ["1"], "tsc_hz": ["2.6e9"]},
                           samples={"ca": ca, "cb": cb, "a": [[0]] * n, "b": [[210]] * n})
        return EVAL(out, Backend("tsc", "test"), TscCalibrated(), 100, False, "avg")
    # calibration A of repetition 1 was preempted for ~3 ms: its difference is hugely negative
    ev = run([[70000], [2_900_000]], [[140000], [140000]])
    assert ev["raw"]["calibration_outliers"] == [1] and ev["events"]["cycles"].samples == [3.0]
    with pytest.raises(CounterUnavailable, match="calibration chain took"):
        run([[70000], [2_900_000], [2_900_000]], [[140000], [140000], [140000]])


def test_a_run_with_mostly_preempted_calibrations_is_run_again(monkeypatch):
    from cyclebench.errors import CounterUnavailable
    from cyclebench.measurement import api, attempts
    real, calls = attempts.evaluate, []

    def flaky(*a, **kw):
        calls.append(1)
        if len(calls) <= 2:
            raise api.CalibrationInterrupted("the calibration chain took -56056 TSC ticks", "hint")
        return real(*a, **kw)
    monkeypatch.setattr(attempts, "evaluate", flaky)
    # the two made-up failures do not use up the retries a real burst may need as well (a noisy
    # host spoiled a third run's calibration check once)
    retries = attempts.CALIB_RETRIES
    monkeypatch.setattr(attempts, "CALIB_RETRIES", retries + 2)
    assert cyclebench.measure("nop", n_measurements=5, budget=0).value() is not None and len(calls) >= 3
    monkeypatch.setattr(attempts, "CALIB_RETRIES", retries)

    def broken(*a, **kw):
        raise api.CalibrationInterrupted("the calibration chain took -5 TSC ticks", "check constant_tsc")
    monkeypatch.setattr(attempts, "evaluate", broken)
    monkeypatch.setattr(attempts, "CALIB_SPAN", 0.0)
    with pytest.raises(CounterUnavailable, match="-5 TSC ticks in 3 runs in a row") as e:
        cyclebench.measure("nop", n_measurements=5, budget=0)
    assert not isinstance(e.value, api.CalibrationInterrupted) and e.value.hint == "check constant_tsc"
