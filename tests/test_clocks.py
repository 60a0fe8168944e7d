"""The clock strategies (measurement/clocks.py) on fabricated runner readings: a calibration
that a core folded, or that reads a clock above the CPU's maximum, is refused; a stated clock
converts ticks without calibrating. No timing is asserted."""
import pytest

import cyclebench
from cyclebench.counters.backends import Backend
from cyclebench.errors import CalibrationFailed, UsageError
from cyclebench.harness.codegen import CALIB_STATEMENT, CHECK_STATEMENT, CONTENTION_STATEMENT, generate, HarnessSpec
from cyclebench.measurement import attempts, clocks
from cyclebench.measurement.clocks import FixedClock, TscCalibrated, clock_for
from cyclebench.measurement.evaluate import evaluate
from cyclebench.runner import RunnerOutput
from cyclebench.snippet import parse_part

N = 10
CAL = 70_000          # ticks per 1e5 adds: 3.71 GHz on a 2.6 GHz TSC


def readings(cal=CAL, imul_ticks_per_op=3 * CAL / 1e5, b=210, n=N):
    """A 3-cycle snippet (100 copies, no loop) with the calibration, its check and the gauge."""
    check = round(imul_ticks_per_op * clocks.CHECK_UNROLL * clocks.CALIB_LOOP)
    return RunnerOutput(info={"loop": ["1"], "tsc_hz": ["2.6e9"], "cpu": ["0"]}, done=True, samples={
        "ca": [[cal]] * n, "cb": [[2 * cal]] * n, "ka": [[check]] * n, "kb": [[2 * check]] * n,
        "pa": [[cal]] * n, "pb": [[2 * cal]] * n, "a": [[0]] * n, "b": [[b]] * n})


def run(out, clock=None):
    return evaluate(out, Backend("tsc", "test"), clock or TscCalibrated(), 100, False, "avg", no_slope=True)


def test_a_sound_calibration_passes_and_records_its_check():
    ev = run(readings())
    assert ev["raw"]["check_ratio"] == pytest.approx(3.0, rel=1e-3)
    assert ev["events"]["cycles"].value == pytest.approx(3.0, rel=1e-3)


@pytest.mark.parametrize("fold", [6.0, 2.0])
def test_a_folded_calibration_chain_is_refused(fold):
    """A core that runs the calibration's adds `fold` per cycle: the clock reads fold x too high,
    and the imul chain costs 3 x fold calibrated cycles (6 adds per cycle: Golden Cove on
    `add rax, 1`, which read 19.7 GHz on a 4.1 GHz core)."""
    out = readings(cal=round(CAL / fold), imul_ticks_per_op=3 * CAL / 1e5)
    with pytest.raises(clocks.CalibrationSuspect) as e:
        run(out)
    assert isinstance(e.value.final, CalibrationFailed) and e.value.final.exit_code == 13
    assert "imul" in e.value.final.cause and "CYCLEBENCH_CLOCK_MHZ" in e.value.final.hint


def test_a_clock_above_the_cpus_maximum_is_refused():
    with pytest.raises(clocks.CalibrationSuspect, match="3.71 GHz core clock, against 3.00 GHz"):
        run(readings(), TscCalibrated((3000.0, "CPUID leaf 0x16")))
    # without a reported maximum, the ceiling no x86 core has reached
    with pytest.raises(clocks.CalibrationSuspect, match="highest clock any x86 core"):
        run(readings(cal=10_000, imul_ticks_per_op=3 * 10_000 / 1e5))     # 26 GHz, self-consistent


def test_a_check_that_fails_every_run_is_an_error_not_a_figure(monkeypatch):
    """measure() retries a failed check (a burst can spoil one run), then gives the error."""
    calls = []

    def folded(*a, **kw):
        calls.append(1)
        raise clocks.CalibrationSuspect(CalibrationFailed("the clock calibration failed its check", "hint"))
    monkeypatch.setattr(attempts, "evaluate", folded)
    monkeypatch.setattr(attempts, "CALIB_SPAN", 0.0)
    with pytest.raises(CalibrationFailed):
        cyclebench.measure("nop", n_measurements=3, budget=0)
    assert len(calls) == attempts.CALIB_RETRIES


def test_failed_checks_give_the_error_only_once_they_outlast_a_burst(monkeypatch):
    """A burst can spoil every short run inside it: the failures in a row must span CALIB_SPAN
    seconds too (here on a made-up clock: each failed run takes 0.5 s)."""
    calls, now = [], [100.0]

    def folded(*a, **kw):
        calls.append(1)
        now[0] += 0.5
        raise clocks.CalibrationSuspect(CalibrationFailed("the clock calibration failed its check", "hint"))
    monkeypatch.setattr(attempts, "evaluate", folded)
    monkeypatch.setattr(attempts, "_now", lambda: now[0])
    monkeypatch.setattr(attempts, "CALIB_SPAN", 2.0)
    with pytest.raises(CalibrationFailed):
        cyclebench.measure("nop", n_measurements=3, budget=0)
    assert len(calls) == 5           # the first failure at 100.5 s, the fifth at 102.5 s


def test_spoiled_calibrations_are_counted_in_a_row(monkeypatch):
    """A good run between spoiled ones starts the count of spoiled runs again: on a noisy host two
    spoiled calibrations, a run left unstable, and two more spoiled ones still end in a figure."""
    from dataclasses import replace
    real, calls = attempts.evaluate, []

    def bursty(*a, **kw):
        calls.append(1)
        if len(calls) in (1, 2, 4, 5):
            raise clocks.CalibrationInterrupted("the calibration chain took -56056 TSC ticks", "hint")
        out = real(*a, **kw)
        if len(calls) == 3:          # a good run the host left unsettled: measured again
            out["stability"] = replace(out["stability"], stable=False)
        return out
    monkeypatch.setattr(attempts, "evaluate", bursty)
    monkeypatch.setattr(attempts, "pool", lambda *a, **kw: None)     # the unsettled run stays unsettled
    monkeypatch.setattr(attempts, "MAX_ATTEMPTS", 10)                # the suite's one attempt is not the tool's
    assert cyclebench.measure("nop", n_measurements=3, budget=60).value() is not None
    assert len(calls) >= 6


def test_a_stated_clock_converts_ticks_without_a_calibration(monkeypatch):
    out = readings()
    ev = run(out, FixedClock(2600.0, "test"))          # 1 tick = 1 cycle at the TSC's own rate
    assert ev["events"]["cycles"].value == pytest.approx(2.1)
    assert "fixed clock 2600 MHz" in ev["events"]["cycles"].label
    monkeypatch.setenv(clocks.CLOCK_ENV, "4100")
    assert isinstance(clock_for("tsc"), FixedClock) and not clock_for("tsc").calibrated
    assert clock_for("perf").name == "pmu"
    for bad in ("fast", "0", "1e9"):
        monkeypatch.setenv(clocks.CLOCK_ENV, bad)
        with pytest.raises(UsageError, match="not a core clock"):
            clock_for("tsc")


def test_a_stated_clock_runs_no_calibration(monkeypatch):
    monkeypatch.setenv(clocks.CLOCK_ENV, "3000")
    r = cyclebench.measure("imul rax, rax", n_measurements=3, budget=0)
    assert "fixed clock 3000 MHz" in r.events["cycles"].label and r.parameters["clock"] == "fixed"
    assert "ca" not in r.raw["attempts"][0]


def test_no_calibration_chain_uses_an_immediate_a_move_or_a_zero_idiom():
    """What a core can eliminate or fold in its renamer: immediates (Golden Cove's adds), moves,
    and zero idioms. The calibration, its check and the gauge use register sources only."""
    for text in (CALIB_STATEMENT, CHECK_STATEMENT, CONTENTION_STATEMENT):
        for stmt in text.split(";"):
            op, _, operands = stmt.strip().partition(" ")
            regs = [o.strip() for o in operands.split(",")]
            assert not op.startswith("mov") and all(not r[0].isdigit() for r in regs), stmt
            assert len(set(regs)) == len(regs), stmt       # xor/sub of a register with itself


def test_the_documented_initial_vector_state_is_emitted():
    empty = parse_part("none", None)
    spec = HarnessSpec(parse_part("code", "nop"), empty, empty, empty, 1, False, avx=True, avx512=True,
                       avx512bw=True)
    text = "\n".join(generate(spec)[0])
    assert "mov rax, 0x3ff0000000000000" in text and "vmovapd xmm31, xmm0" in text
    assert "kxnorq k7, k7, k7" in text and "ldmxcsr" in text and "emms" in text


def test_one_interrupted_repetition_does_not_fail_the_check():
    """An interrupted calibration makes one repetition's ratio low; a folded chain makes all of
    them high. Two repetitions, one interrupted (the chain 2.5x slow): not a failed check."""
    out = readings(n=2)
    out.samples["cb"] = [[2 * CAL + round(1.5 * CAL)], [2 * CAL]]
    assert run(out)["raw"]["check_ratio"] is not None


def test_the_tsc_rate_is_kept_per_boot_only_where_the_tsc_is_constant(tmp_path, monkeypatch):
    """A runner spends 5 ms measuring the TSC's rate unless told it (--tsc-hz); the rate is kept
    per boot, and only for a constant, non-stop TSC."""
    from dataclasses import replace
    from cyclebench.machine import cpu as cpu_mod
    from cyclebench.measurement import clock_history
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    info = cpu_mod.cpu_info()
    monkeypatch.setattr(clock_history, "cpu_info", lambda: replace(info, flags=info.flags | {"constant_tsc", "nonstop_tsc"}))
    assert clock_history.tsc_hz() is None
    clock_history.record_tsc_hz(2_596_062_050.0)
    clock_history.record_tsc_hz(2_600_000_000.0)       # the first rate of a boot is kept
    assert clock_history.tsc_hz() == 2_596_062_050.0
    monkeypatch.setattr(clock_history, "cpu_info", lambda: replace(info, flags=info.flags - {"constant_tsc"}))
    assert clock_history.tsc_hz() is None


def test_the_auto_loop_target_follows_the_tscs_step():
    """The runner measures the TSC's step and grows its loop until B - A spans enough of them,
    and no further: a coarse (26-tick) TSC gets the full target, a fine one a shorter run that
    fewer bursts hit. The step it measured divides every difference the run's samples hold."""
    from cyclebench.measurement.runargs import AUTO_LOOP_TICKS, MIN_LOOP_TICKS, STEPS_PER_LOOP
    r = cyclebench.measure("add rax, rbx; add rbx, rax", n_measurements=3)
    target = r.raw["attempts"][r.raw["chosen"]]["loop_target"]
    step = target["tsc_step"]
    assert step >= 1 and r.backend["tick_step"] % step == 0, (target, r.backend)
    assert target["ticks"] == min(AUTO_LOOP_TICKS, max(MIN_LOOP_TICKS, step * STEPS_PER_LOOP))
    fixed = cyclebench.measure("add rax, rbx; add rbx, rax", n_measurements=3, loop=10)
    assert "loop_target" not in fixed.raw["attempts"][0]


@pytest.mark.measured
def test_the_auto_loop_reaches_its_target():
    """B - A of the chosen loop spans the target in the median repetition (noise only adds time,
    so an interrupted trial must neither stop the growth short nor send it far past)."""
    r = cyclebench.measure("add rax, rbx; add rbx, rax", n_measurements=9)
    raw = r.raw["attempts"][r.raw["chosen"]]
    diffs = sorted(b[0] - a[0] for a, b in zip(raw["a"], raw["b"]))
    ticks = raw["loop_target"]["ticks"]
    # 0.8: the core's clock may rise between the runner's trials and the run (a burst ending)
    assert 0.8 * ticks <= diffs[len(diffs) // 2] <= 16 * ticks, (diffs, raw["loop_target"], raw["loop"])


def test_a_loop_limited_run_names_its_target():
    """A run whose loop stopped growing resolves the code only when B - A spans the runner's own
    target, which the runner's line names (without one: the longest target)."""
    from cyclebench.measurement.evaluate import _loop_target, _resolved
    assert _loop_target({"loop_limited": ["120"], "loop_target": ["10000", "2"]}) == 10_000
    assert _loop_target({"loop_limited": ["120"]}) == 40_000
    assert _resolved([12_000.0] * 5, target=10_000) and not _resolved([12_000.0] * 5, target=40_000)
