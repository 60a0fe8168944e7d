"""measure(): assemble a snippet into the harness, run it in the runner, and turn readings into
per-copy figures with uncertainty, re-running when the host is noisy."""
from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass

from ..counters import reads
from ..counters.backends import HW_CYCLES, Backend, select_backend
from ..counters.resolve import event_specs
from ..errors import CounterUnavailable, UnsupportedInstruction, UsageError
from ..harness import HarnessSpec, generate
from ..harness.codegen import CALIB_UNROLL, generate_check
from ..harness.nomem import apply_magic, check_reserved_registers
from ..harness.locate import statement_ranges
from ..machine.cpu import cpu_info
from ..machine.metadata import machine_metadata
from ..snippet import assemble, parse_part
from ..snippet.features import check as check_features, decode
from .. import runner
from . import clock_history, linearity, stability, stats
from .multiplexing import multiplexing, multiplexing_warning
from .failures import raise_for
from .params import check as check_params
from .result import EventResult, Result

AUTO_LOOP_TICKS = 40_000      # B - A spans >= 4e4 TSC ticks: quantisation ~0.07% per sample
CALIB_LOOP = 100              # x CALIB_UNROLL = 1e5 dependent adds per calibration difference
CALIB_RETRIES = 3             # runs whose calibrations were mostly preempted, before giving up
CALIB_OUTLIER = 0.03          # a repetition's calibration this far from the run's median is dropped
MAX_CODE_BYTES = 64 << 20
SYSCALL_NOTE = ("its cost includes the sandbox's seccomp check, which the kernel makes on every system call "
                "(getpid: 492 cycles with it, 381 without, on a Zen 3 guest; bench/sandbox_cost.py)")
MAX_ATTEMPTS = 40            # re-runs stop earlier when the budget (default 2 s) is spent
POOR_TICKS = 5000            # B - A below this many TSC ticks: poor resolution


class CalibrationInterrupted(CounterUnavailable):
    """Most calibration differences of one run were not positive: preempted, or a broken TSC."""


@dataclass
class Prepared:
    """Everything built before running: the harness source, the blob and the choices made."""
    parts: dict
    backend: Backend
    spec: HarnessSpec
    lines: list[str]
    obj: object
    copy_bytes: int
    n_measurements: int
    warnings: list[str]
    symbols: list[str]


def prepare(code, *, init=None, late_init=None, one_time_init=None, unroll=None, loop=None,
            n_measurements=None, warm_up=5, initial_warm_up=0, alignment_offset=0,
            aggregate="avg", basic_mode=False, drain_frontend=False, counters="auto",
            events=None, cpu=None, timeout=10.0, budget=2.0, symbols=None, user=True, kernel=False,
            fixed_counters=False, group_size=None, no_mem=False, **_ignored) -> Prepared:
    """Validate, choose the backend and counts, and assemble the harness (nothing runs)."""
    check_params(code=code, init=init, late_init=late_init, one_time_init=one_time_init, unroll=unroll,
                 loop=loop, n_measurements=n_measurements, warm_up=warm_up, initial_warm_up=initial_warm_up,
                 alignment_offset=alignment_offset, aggregate=aggregate, basic_mode=basic_mode,
                 drain_frontend=drain_frontend, counters=counters, events=events, cpu=cpu, timeout=timeout,
                 budget=budget, symbols=symbols, user=user, kernel=kernel, fixed_counters=fixed_counters,
                 group_size=group_size, no_mem=no_mem, **_ignored)
    parts = {name: parse_part(name, c) for name, c in
             (("code", code), ("init", init), ("late_init", late_init), ("one_time_init", one_time_init))}
    if parts["code"].empty:
        raise UsageError("there is no code to measure", 'give a snippet, e.g. cyclebench asm "imul rax, rax"')
    symbols = list(symbols or [])
    backend = select_backend(counters, event_specs(events), user=bool(user), kernel=bool(kernel),
                             fixed_counters=fixed_counters, group_size=group_size, no_mem=no_mem)
    warnings: list[str] = list(backend.warnings)
    if no_mem and "bmi2" not in cpu_info().flags:
        raise UnsupportedInstruction("--no-mem joins edx:eax with rorx (BMI2), which this CPU lacks",
                                     "drop --no-mem")

    # One copy of every part: clean assembler errors, the copy size, and a CPUID check.
    check_lines, check_origin = generate_check(list(parts.values()), symbols)
    checked = assemble(check_lines, check_origin, max_bytes=MAX_CODE_BYTES // 2)   # one copy of each part
    copy_bytes = checked.symbols["cb_check_code_end"] - checked.symbols["cb_check_code_0"]
    if copy_bytes == 0:     # e.g. ".set x, 1" or a lone label: B - A would time nothing
        raise UsageError("the code assembles to no instruction bytes: there is nothing to measure",
                         'give at least one instruction, e.g. cyclebench asm "nop"')
    _check_cpu(checked, list(parts.values()), warnings)
    warnings += checked.warnings
    if no_mem:
        check_reserved_registers(parts, checked.blob, checked.symbols,
                                 reads.used_no_mem_registers(backend.read_kwargs()["rdpmc_events"]))
    parts = apply_magic(parts, checked.blob, checked.symbols, no_mem)

    use_loop = loop != 0
    if unroll is None:
        unroll = 1000 if not use_loop else max(1, min(100, 1024 // max(copy_bytes, 1)))
    if 2 * unroll * copy_bytes > MAX_CODE_BYTES:
        raise UsageError(f"the unrolled code would be {2 * unroll * copy_bytes >> 20} MiB",
                         "lower --unroll and use --loop for more work")
    if n_measurements is None:
        n_measurements = 50 if backend.calibration else 10

    spec = HarnessSpec(parts["code"], parts["init"], parts["late_init"], parts["one_time_init"],
                       unroll=unroll, use_loop=use_loop, basic_mode=basic_mode,
                       alignment_offset=alignment_offset, drain_frontend=drain_frontend,
                       read=backend.read_kwargs(), calibration=backend.calibration,
                       symbols=symbols, avx="avx" in cpu_info().flags)
    lines, origin = generate(spec)
    obj = assemble(lines, origin)
    return Prepared(parts, backend, spec, lines, obj, copy_bytes, n_measurements, warnings, symbols)


def measure(code, *, init=None, late_init=None, one_time_init=None, unroll=None, loop=None,
            n_measurements=None, warm_up=5, initial_warm_up=0, alignment_offset=0,
            aggregate="avg", basic_mode=False, no_normalization=False, drain_frontend=False,
            counters="auto", events=None, cpu=None, timeout=10.0, budget=2.0,
            data: bytes | None = None, symbols=None, libraries=None, r14_size=None,
            area_size=None, user=True, kernel=False, fixed_counters=False, group_size=None,
            no_mem=False, remove_empty_events=False, paired=False, allow_syscalls=False,
            max_memory=None) -> Result:
    """Measure the cost per copy of ``code`` (assembly text or raw bytes); see docs/ARCHITECTURE.md.

    ``allow_syscalls``: lift the sandbox's allow-list of system calls (process creation, signals to
    other processes, sockets and file-system changes stay refused); ``max_memory``: the runner's
    address-space cap in bytes (default 4 GiB). See the README's "Safety" section.

    ``paired``: the caller's code does different work in A and in B (the routine harness runs an
    empty pass in A and the routine in B), so the checks that assume U and 2U copies of the same
    work (linearity, resolution in copies) are skipped.

    Counter options (nanoBench's): ``events`` (names, EventSpecs, or a config file path),
    ``user``/``kernel`` (count user / kernel mode: nanoBench's -usr/-os), ``fixed_counters`` (instructions, ref-cycles),
    ``group_size`` (events per perf_event group; default from the PMU), ``no_mem`` (readings in
    registers R8-R13, pause/resume magic bytes), ``remove_empty_events`` (drop events that did not
    occur).

    ``result.raw["attempts"][result.raw["chosen"]]`` is the run the figures come from; its
    ``cycles_a``/``cycles_b`` are the core cycles of each kept repetition's A and B readings, and
    ``kept`` the indices of those repetitions (a TSC calibration more than CALIB_OUTLIER off the
    run's median drops its repetition)."""
    check_params(data=data, libraries=libraries, r14_size=r14_size, area_size=area_size, max_memory=max_memory,
                 no_normalization=no_normalization, remove_empty_events=remove_empty_events, paired=paired,
                 allow_syscalls=allow_syscalls)
    p = prepare(code, init=init, late_init=late_init, one_time_init=one_time_init, unroll=unroll,
                loop=loop, n_measurements=n_measurements, warm_up=warm_up,
                initial_warm_up=initial_warm_up, alignment_offset=alignment_offset,
                aggregate=aggregate, basic_mode=basic_mode, drain_frontend=drain_frontend,
                counters=counters, events=events, cpu=cpu, timeout=timeout, budget=budget,
                symbols=symbols, user=user, kernel=kernel, fixed_counters=fixed_counters,
                group_size=group_size, no_mem=no_mem)
    parts, backend, obj, warnings = p.parts, p.backend, p.obj, list(p.warnings)
    unroll, use_loop, copy_bytes, n_measurements = p.spec.unroll, p.spec.use_loop, p.copy_bytes, p.n_measurements
    symbols = p.symbols
    blob_path = runner.write_temp(obj.blob, ".bin")
    data_path = runner.write_temp(data, ".dat") if data is not None else None
    try:
        args = _runner_args(obj, blob_path, data_path, backend, n_measurements, warm_up,
                            initial_warm_up, loop, cpu, timeout, symbols, libraries, r14_size, area_size,
                            allow_syscalls, max_memory)
        attempts = []
        deadline = time.monotonic() + budget
        clock_key = clock_history.machine_key(cpu)
        ref = clock_history.reference(clock_key) if backend.calibration else None
        ref_con = clock_history.reference(clock_key, "contention") if backend.calibration else None
        interrupted = 0
        while True:
            out = runner.run(args, timeout)
            raise_for(out, obj, list(parts.values()), timeout, allow_syscalls)
            try:
                attempts.append(_evaluate(out, backend, unroll, no_normalization, aggregate, ref,
                                          no_slope=basic_mode or paired, ref_contention=ref_con))
            except CalibrationInterrupted as e:
                # most calibrations of this run were preempted: a burst, retried whatever the
                # budget; a TSC that fails every time is reported as unusable
                interrupted += 1
                if interrupted >= CALIB_RETRIES:
                    raise CounterUnavailable(f"{e.cause} in {CALIB_RETRIES} runs in a row", e.hint) from None
                continue
            if backend.calibration and attempts[-1]["stability"].stable:
                clock_history.record(clock_key, attempts[-1]["ghz"])
                if attempts[-1]["contention"]:
                    clock_history.record(clock_key, attempts[-1]["contention"], "contention")
            if attempts[-1]["stability"].stable or len(attempts) >= MAX_ATTEMPTS or time.monotonic() > deadline:
                break
    finally:
        os.unlink(blob_path)
        if data_path:
            os.unlink(data_path)

    # The stable attempt if there is one; else the least disturbed: with the TSC backend the one
    # with the fastest calibrated clock (bursts slow it), with a PMU the one with the least spread.
    best = min(attempts, key=lambda a: (not a["stability"].stable,
                                        -a["ghz"] if backend.calibration else _spread(a)))
    st = best["stability"]
    if not st.stable:
        warnings.append("unstable measurement (" + "; ".join(st.reasons) + f") after {len(attempts)} attempts: "
                        "the figure may be off by more than its uncertainty; re-run on a quieter machine")
    bound = best["events"]["cycles"].upper_bound
    if bound is not None:
        limited = f" at loop {best['loop']}, the longest the runner would run" if best["loop_limited"] is not None else ""
        warnings.append(f"the code costs less than the resolution: < {bound:.2g} cycles per copy, not distinguishable "
                        f"from zero (B - A was {best['diff_ticks']:.0f} TSC ticks{limited}). To resolve it, raise "
                        "--unroll: in a loop, A and B both run at the loop's own speed when the copies are nearly free")
    elif best["diff_ticks"] < POOR_TICKS and not paired:
        warnings.append(f"the two configurations differ by only {best['diff_ticks']:.0f} TSC ticks; "
                        "resolution is poor: raise --unroll or use a loop")
    warnings += best["warnings"]
    events_out = dict(best["events"])
    removed = []
    if remove_empty_events:
        for name, e in list(events_out.items()):
            if name not in ("cycles", "tsc", "ns") and e.min == 0 and e.max == 0:
                removed.append(name)
                del events_out[name]
    params = {"code": _text(code), "init": _text(init), "late_init": _text(late_init),
              "one_time_init": _text(one_time_init), "unroll": unroll, "loop": best["loop"],
              "loop_auto": loop is None, "use_loop": use_loop, "n_measurements": n_measurements,
              "warm_up": warm_up, "initial_warm_up": initial_warm_up,
              "alignment_offset": alignment_offset, "aggregate": aggregate, "basic_mode": basic_mode,
              "no_normalization": no_normalization, "drain_frontend": drain_frontend,
              "counters": counters, "events": [e.name for e in backend.events if e is not backend.events[0]
                                               or backend.name != "perf"],
              "cpu": best["cpu"], "timeout": timeout, "budget": budget, "copy_bytes": copy_bytes,
              "normalization": best["norm"], "symbols": symbols, "user": bool(user), "kernel": bool(kernel),
              "fixed_counters": fixed_counters, "group_size": group_size, "no_mem": no_mem,
              "remove_empty_events": remove_empty_events, "removed_events": removed,
              "allow_syscalls": bool(allow_syscalls), "max_memory": max_memory}
    backend_info = {"name": backend.name, "reason": backend.reason, "rdpmc": backend.use_rdpmc,
                    "tsc_hz": best["tsc_hz"], "calibrated_ghz": best["ghz"],
                    "tick_step": best["step"], "label": best["events"]["cycles"].label,
                    "no_mem": backend.no_mem, "groups": best["groups"]}
    machine = machine_metadata()
    machine.update({"tsc_hz": best["tsc_hz"], "calibrated_core_ghz": best["ghz"], "counter_backend": backend.name})
    return Result(kind="snippet", parameters=params, backend=backend_info, events=events_out,
                  stability={**st.to_dict(), "loop_limited": best["loop_limited"],
                             "linearity": best["linearity"] and best["linearity"].to_dict(),
                             "contention_probe": best["contention"], "contention_reference": ref_con},
                  machine=machine, warnings=warnings,
                  raw={"attempts": [a["raw"] for a in attempts], "chosen": attempts.index(best)},
                  attempts=[{"stable": a["stability"].stable, "spread": a["stability"].spread,
                             "cycles": a["events"]["cycles"].value, "calibrated_ghz": a["ghz"],
                             "contention_probe": a["contention"]} for a in attempts])


def _text(c):
    if c is None:
        return None
    if isinstance(c, (bytes, bytearray)):
        return {"raw_hex": bytes(c).hex()}
    return str(c)


def _check_cpu(obj, parts, warnings):
    for _, src, lo, hi in statement_ranges(obj.symbols, "check", parts):
        lacking, mpx = check_features(obj.blob[lo:hi])
        if any(d.text.split()[:1] in (["syscall"], ["sysenter"]) or d.text.startswith("int 80h")
               for d in decode(obj.blob[lo:hi])) and not any(SYSCALL_NOTE in w for w in warnings):
            warnings.append(f"'{src}' makes a system call: {SYSCALL_NOTE}")
        if mpx and not any("MPX" in w for w in warnings):
            warnings.append(f"'{src}' is an MPX instruction and this CPU has no MPX (CPUID 7:EBX[14]): "
                            "it runs as a hint-NOP, so the figure measures a NOP")
        if lacking:
            _, feats = lacking[0]
            raise UnsupportedInstruction(
                f"instruction not supported by this CPU: '{src}' needs {', '.join(feats)}",
                f"this CPU ({cpu_info().model_name}) lacks {', '.join(f.lower() for f in feats)} in /proc/cpuinfo")


def _runner_args(obj, blob_path, data_path, backend: Backend, reps, warm_up, initial_warm_up,
                 loop, cpu, timeout, symbols, libraries, r14_size, area_size, allow_syscalls=False,
                 max_memory=None) -> list[str]:
    s = obj.symbols
    args = [blob_path, "--code-size", str(s["cb_data_pages"]), "--ctl", str(s["cb_ctl"]),
            "--run-a", str(s["cb_run_a"]), "--run-b", str(s["cb_run_b"]),
            "--reps", str(reps), "--warm-up", str(warm_up), "--initial-warm-up", str(initial_warm_up),
            "--timeout", str(timeout)]
    if "cb_one_time" in s:
        args += ["--one-time-init", str(s["cb_one_time"])]
    if backend.calibration:
        args += ["--calib-a", str(s["cb_calib_a"]), "--calib-b", str(s["cb_calib_b"]),
                 "--contention-a", str(s["cb_contention_a"]), "--contention-b", str(s["cb_contention_b"]),
                 "--calib-loop", str(CALIB_LOOP)]
    if loop is None:
        args += ["--auto-loop-ticks", str(AUTO_LOOP_TICKS)]
    else:
        args += ["--loop", str(loop)]
    if cpu is not None:
        args += ["--cpu", str(cpu)]
    if data_path:
        args += ["--data", data_path]
    for lib in libraries or []:
        args += ["--lib", str(lib)]
    for sym in symbols:
        args += ["--sym", sym]
    if "cb_patch_table" in s:
        sites = sum(1 for k in s if k.startswith(reads.PATCH_SITE))
        args += ["--patch-table", str(s["cb_patch_table"]), "--patch-count", str(sites)]
    if r14_size:
        args += ["--r14-size", str(int(r14_size))]
    if area_size:
        args += ["--area-size", str(int(area_size))]
    if allow_syscalls:
        args.append("--allow-syscalls")
    if max_memory:
        args += ["--max-memory", str(int(max_memory))]
    return args + backend.runner_args()


def _evaluate(out, backend: Backend, unroll, no_normalization, aggregate, ref_ghz=None,
              no_slope=False, ref_contention=None) -> dict:
    loop = int(out.info["loop"][0])
    tsc_hz = float(out.info["tsc_hz"][0])
    a, b = out.samples["a"], out.samples["b"]
    norm = 1 if no_normalization else unroll * max(loop, 1)
    ticks = [bb[0] - aa[0] for aa, bb in zip(a, b)]
    raw = {"loop": loop, "tsc_hz": tsc_hz, "a": a, "b": b}
    if backend.calibration:
        ca, cb = out.samples["ca"], out.samples["cb"]
        raw.update(ca=ca, cb=cb)
        adds = CALIB_UNROLL * CALIB_LOOP
        cal = [y[0] - x[0] for x, y in zip(ca, cb)]
        # B runs 1e5 more adds than A in every repetition. A preempted calibration A can make one
        # difference zero or negative: an outlier, dropped below. Only when more than half are does
        # the TSC itself look unusable (with 2 repetitions, one outlier would decide the median).
        if sum(c > 0 for c in cal) < len(cal) / 2:
            raise CalibrationInterrupted(f"the calibration chain took {statistics.median(cal)} TSC ticks",
                                         "the TSC is not usable here (not constant, or not synchronised); "
                                         "check /proc/cpuinfo for constant_tsc")
        cpt = [adds / c if c > 0 else 0.0 for c in cal]                # core cycles per TSC tick
        # A repetition whose calibration was interrupted gets a wrong cycles-per-tick figure;
        # its cycles are left out (min/max/range would show it), the drift check still sees it.
        med_cpt = statistics.median([c for c in cpt if c > 0])
        keep = [i for i, c in enumerate(cpt) if abs(c / med_cpt - 1) <= CALIB_OUTLIER]
        if len(keep) < len(cpt) / 2:
            # the clock moved too much to tell outliers (the drift check flags the run); a
            # non-positive calibration is still no clock at all: it would read as zero cycles
            keep = [i for i, c in enumerate(cpt) if c > 0]
        raw["calibration_outliers"] = [i for i in range(len(cpt)) if i not in keep]
        cycles = [ticks[i] * cpt[i] / norm for i in keep]
        # the contention probe's cost relative to the chain, per kept repetition
        pa, pb = out.samples.get("pa", []), out.samples.get("pb", [])
        contention = [(pb[i][0] - pa[i][0]) / cal[i] for i in keep if i < len(pa) and i < len(pb)]
        raw.update(pa=pa, pb=pb)
        gross = ([a[i][0] * cpt[i] for i in keep], [b[i][0] * cpt[i] for i in keep])
        ghz_per_rep = [tsc_hz * c / 1e9 for c in cpt]
        step = stats.tick_step(ticks + [y[0] - x[0] for x, y in zip(ca, cb)])
        ghz = statistics.median(ghz_per_rep)
        quantum = step * statistics.median(cpt) / norm
        label = f"cycles (TSC-calibrated, {ghz:.2f} GHz)"
    else:
        cycles = [(bb[1] - aa[1]) / norm for aa, bb in zip(a, b)]
        gross = ([aa[1] for aa in a], [bb[1] for bb in b])
        contention = []
        ghz_per_rep = None
        ghz = statistics.median((bb[1] - aa[1]) / t * tsc_hz / 1e9 for aa, bb, t in zip(a, b, ticks) if t)
        step, quantum = 1, 1 / norm
        label = "cycles (PMU" + (", rdpmc)" if backend.use_rdpmc else ", read())")
    # the per-repetition core cycles of A and B (one definition of a cycle for every caller)
    raw.update(cycles_a=gross[0], cycles_b=gross[1], kept=keep if backend.calibration else list(range(len(a))))

    def ev(name, unit, values, label, q=0.0, **extra):
        return EventResult(name, unit, stats.aggregate(values, aggregate), stats.uncertainty(values, q),
                           aggregate, label, min(values), statistics.median(values), max(values), values, **extra)

    events = {"cycles": ev("cycles", "cycles", cycles, label, quantum)}
    groups, warnings = [], []
    for g, group in enumerate(backend.groups):
        samples = out.groups[g] if g < len(out.groups) else {}
        ga, gb = samples.get("a", []), samples.get("b", [])
        if len(ga) != len(a) or len(gb) != len(b):
            raise CounterUnavailable(f"the runner returned no readings for event group {g}",
                                     "this is a bug in cyclebench; re-run with --verbose")
        mux = multiplexing(out.times[g] if g < len(out.times) else {})
        names = [e.name for e in group]
        groups.append({"events": names, **mux})
        if mux["multiplexed"]:
            warnings.append(multiplexing_warning(g, names, mux))
        if g:
            raw.setdefault("groups", []).append({"events": names, "a": ga, "b": gb,
                                                 "times": out.times[g] if g < len(out.times) else {}})
        for i, e in enumerate(group):
            if g == 0 and i == 0 and backend.name == "perf" and e.name == HW_CYCLES.name:
                events["cycles"].multiplexed = mux["multiplexed"]
                events["cycles"].running_fraction = mux["min_running_fraction"]
                continue
            vals = [(bb[1 + i] - aa[1 + i]) / norm for aa, bb in zip(ga, gb)]
            events[e.name] = ev(e.name, "count", vals, e.name, 1 / norm, multiplexed=mux["multiplexed"],
                                running_fraction=mux["min_running_fraction"], group=g)
    if backend.groups:
        raw["times"] = out.times[0] if out.times else {}
    moves = int(out.info.get("rdpmc_moves", ["0"])[0])
    if moves:
        warnings.append(f"the kernel moved an event to another counter during {moves} runs (rdpmc index changed); "
                        "those readings mix two counters")
    # no_slope: basic mode runs 0 and U copies (no second point to check the slope against), or
    # A and B run different work (paired routine passes)
    lin = None if no_slope else linearity.check(*gross, unroll, loop)
    if lin is not None and not lin.linear:
        warnings.append(linearity.warning(lin, unroll, events["cycles"].value * (norm / unroll / max(loop, 1))))
    events["tsc"] = ev("tsc", "ticks", [t / norm for t in ticks], "TSC ticks", step / norm)
    events["ns"] = ev("ns", "ns", [t / tsc_hz * 1e9 / norm for t in ticks], "nanoseconds", step / tsc_hz * 1e9 / norm)
    # Nearly free code, or a loop that sets the pace of A and B alike: B - A stays within the
    # resolution (the runner says loop_limited when it stopped growing the loop), so the answer
    # is a bound, not a figure.
    limited = _loop_limited(out.info)
    force = limited is not None and limited < POOR_TICKS
    below = stats.upper_bound(events["cycles"].value, events["cycles"].uncertainty, quantum, force) is not None
    if below:
        for name, q in (("cycles", quantum), ("tsc", step / norm), ("ns", step / tsc_hz * 1e9 / norm)):
            events[name].upper_bound = stats.upper_bound(events[name].value, events[name].uncertainty, q, True)
    con = statistics.median(contention) if contention else None
    return {"events": events, "stability": stability.assess(cycles, ghz_per_rep, ref_ghz, con, ref_contention, below),
            "loop": loop, "contention": con, "loop_limited": limited,
            "tsc_hz": tsc_hz, "ghz": ghz, "step": step, "norm": norm, "raw": raw,
            "cpu": int(out.info.get("cpu", ["-1"])[0]), "diff_ticks": statistics.median(ticks),
            "groups": groups, "warnings": warnings, "linearity": lin}


def _spread(attempt) -> float:
    spread = attempt["stability"].spread
    return float("inf") if spread is None else spread


def _loop_limited(info: dict) -> float | None:
    """B - A ticks of the runner's last loop probe when it stopped growing the loop (a long run
    whose B - A stayed below the target), else None."""
    if "loop_limited" not in info:
        return None
    try:
        return float(info["loop_limited"][0])
    except (IndexError, ValueError):
        return 0.0
