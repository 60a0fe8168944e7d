"""measure(): assemble a snippet into the harness, run it in the runner, and turn readings into
per-copy figures with uncertainty, re-running when the host is noisy."""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, replace

from ..counters import reads
from ..counters.backends import Backend, select_backend
from ..errors import UnsupportedInstruction, UsageError
from ..harness import HarnessSpec, generate
from ..harness.codegen import LOOP_REGISTER, generate_check
from ..harness.link import assemble_harness
from ..harness.nomem import apply_magic, check_reserved_registers
from ..harness.locate import statement_ranges
from ..harness.loopend import flag_counter
from ..machine.cpu import cpu_info
from ..machine.frequency import max_core_mhz
from ..snippet import assemble, parse_part
from ..snippet.features import check as check_features, decode_each, load_decoder, used_gprs
from ..snippet.flagchain import carries_flags, flag_chain
from .. import runner
from . import attempts as attempt_loop
from .clocks import CALIB_OUTLIER, CalibrationInterrupted, Clock, clock_for  # noqa: F401
from .evaluate import POOR_TICKS, modes as modes_of
from .linearity import unstable_advice
from .params import check as check_params
from .result import Result
from .runargs import runner_args

MAX_CODE_BYTES = 64 << 20
SYSCALL_NOTE = ("its cost includes the sandbox's seccomp check, which the kernel makes on every system call "
                "(getpid: 492 cycles with it, 381 without, on a Zen 3 guest; bench/sandbox_cost.py)")


@dataclass
class Prepared:
    """Everything built before running: the harness source, the blob and the choices made."""
    parts: dict
    backend: Backend
    clock: Clock
    spec: HarnessSpec
    lines: list[str]
    obj: object
    copy_bytes: int
    n_measurements: int
    warnings: list[str]
    symbols: list[str]


def prepare(code, *, init=None, late_init=None, one_time_init=None, loop_init=None, unroll=None, loop=None,
            n_measurements=None, warm_up=5, initial_warm_up=0, alignment_offset=0,
            aggregate="avg", basic_mode=False, drain_frontend=False, counters="auto",
            events=None, cpu=None, timeout=10.0, budget=2.0, symbols=None, user=True, kernel=False,
            fixed_counters=False, group_size=None, no_mem=False, clock_mhz=None, reset=(), **_ignored) -> Prepared:
    """Validate, choose the backend and counts, and assemble the harness (nothing runs)."""
    check_params(code=code, init=init, late_init=late_init, one_time_init=one_time_init, loop_init=loop_init,
                 unroll=unroll, loop=loop, n_measurements=n_measurements, warm_up=warm_up, initial_warm_up=initial_warm_up,
                 alignment_offset=alignment_offset, aggregate=aggregate, basic_mode=basic_mode,
                 drain_frontend=drain_frontend, counters=counters, events=events, cpu=cpu, timeout=timeout,
                 budget=budget, symbols=symbols, user=user, kernel=kernel, fixed_counters=fixed_counters,
                 group_size=group_size, no_mem=no_mem, clock_mhz=clock_mhz, reset=reset, **_ignored)
    parts = {name: parse_part(name, c) for name, c in
             (("code", code), ("init", init), ("late_init", late_init), ("one_time_init", one_time_init),
              ("loop_init", loop_init))}
    if parts["code"].empty:
        raise UsageError("there is no code to measure", 'give a snippet, e.g. cyclebench asm "imul rax, rax"')
    symbols = list(symbols or [])
    if events:      # names and config files: a plain measurement (events=None) loads no event tables
        from ..counters.resolve import event_specs
        events = event_specs(events)
    backend = select_backend(counters, events or [], user=bool(user), kernel=bool(kernel),
                             fixed_counters=fixed_counters, group_size=group_size, no_mem=no_mem)
    warnings: list[str] = list(backend.warnings)
    if no_mem and "bmi2" not in cpu_info().flags:
        raise UnsupportedInstruction("--no-mem joins edx:eax with rorx (BMI2), which this CPU lacks",
                                     "drop --no-mem")

    # One copy of every part: clean assembler errors, the copy size, and a CPUID check.
    check_lines, check_origin = generate_check(list(parts.values()), symbols)
    # A check assembled anew is a snippet whose decoding is not kept either: iced-x86 loads while as
    # runs, and the clock's CPUID reading (clock_for, below) is taken while readelf does
    checked = assemble(check_lines, check_origin, max_bytes=MAX_CODE_BYTES // 2,   # one copy of each part
                       while_running=_Meanwhile(load_decoder, max_core_mhz))
    copy_bytes = checked.symbols["cb_check_code_end"] - checked.symbols["cb_check_code_0"]
    if copy_bytes == 0:     # e.g. ".set x, 1" or a lone label: B - A would time nothing
        raise UsageError("the code assembles to no instruction bytes: there is nothing to measure",
                         'give at least one instruction, e.g. cyclebench asm "nop"')
    # The CPUID check decodes the copy with iced-x86 while as builds the harness; its verdict is
    # given before anything later could fail, as if it had run first.
    ranges = list(statement_ranges(checked.symbols, "check", list(parts.values())))
    decoded = _Once(decode_each, [checked.blob[lo:hi] for _, _, lo, hi in ranges])
    try:
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
        clock = clock_for(backend.name, clock_mhz)
        if n_measurements is None:
            n_measurements = 50 if backend.name == "tsc" else 10

        flags = cpu_info().flags
        spec = HarnessSpec(parts["code"], parts["init"], parts["late_init"], parts["one_time_init"],
                           unroll=unroll, use_loop=use_loop, basic_mode=basic_mode,
                           alignment_offset=alignment_offset, drain_frontend=drain_frontend,
                           read=backend.read_kwargs(), calibration=clock.calibrated,
                           symbols=symbols, avx="avx" in flags,
                           avx512={"avx512f", "avx512vl"} <= flags, avx512bw="avx512bw" in flags,
                           reset=tuple(r.lower() for r in reset or ()), loop_init=parts["loop_init"])
        lines, origin = generate(spec)
        # as runs while the check is decoded; readelf, while the result's metadata module loads
        obj = assemble_harness(spec, lines, origin, while_running=_Meanwhile(decoded.prefetch, _load_metadata))
    except Exception:
        _check_cpu(ranges, decoded(), warnings)
        raise
    _check_cpu(ranges, decoded(), warnings)
    # a chain from copy to copy through the flags must not be cut by the loop's end (loopend.py);
    # such code is rare, so it is assembled again rather than waiting for the decoding each time
    if use_loop and carries_flags([d.flags for (part, _, _, _), ds in zip(ranges, decoded())
                                   if part.name == "code" for d in ds]):
        copy = checked.blob[checked.symbols["cb_check_code_0"]:checked.symbols["cb_check_code_end"]]
        if flag_chain(copy):
            spec = replace(spec, keep_flags=True, counter=_flag_counter(spec, copy, no_mem, loop, warnings))
            lines, origin = generate(spec)
            obj = assemble_harness(spec, lines, origin)
    warnings += checked.warnings
    return Prepared(parts, backend, clock, spec, lines, obj, copy_bytes, n_measurements, warnings, symbols)


def measure(code, *, init=None, late_init=None, one_time_init=None, loop_init=None, unroll=None, loop=None,
            n_measurements=None, warm_up=5, initial_warm_up=0, alignment_offset=0,
            aggregate="avg", basic_mode=False, no_normalization=False, drain_frontend=False,
            counters="auto", events=None, cpu=None, timeout=10.0, budget=2.0,
            data: bytes | None = None, symbols=None, libraries=None, r14_size=None,
            area_size=None, user=True, kernel=False, fixed_counters=False, group_size=None,
            no_mem=False, remove_empty_events=False, paired=False, allow_syscalls=False,
            max_memory=None, clock_mhz=None, map_pages=None, map_fill=0, varies=False, reset=()) -> Result:
    """Measure the cost per copy of ``code`` (assembly text or raw bytes); see docs/ARCHITECTURE.md.

    ``reset``: area registers (R14, RDI, RSI, RBP, RSP) set back to their start at the head of every
    loop iteration, for code that moves one with every copy (push, stos, call): the copies of one
    iteration then stay in the register's 1 MB area whatever the loop count (harness/codegen.py).
    ``loop_init``: code run after that reset at the head of every iteration (A and B run it equally
    often, so its cost drops out): state every iteration must start from, e.g. the flags a branch reads.

    ``allow_syscalls``: lift the sandbox's allow-list of system calls (process creation, signals to
    other processes, sockets and file-system changes stay refused); ``max_memory``: the runner's
    address-space cap in bytes (default 4 GiB). See docs/safety.md.

    ``map_pages``: map up to this many pages the code faults on onto one shared page holding the
    64-bit ``map_fill`` (cyclebench/blocks, docs/block.md); the runner's ``mapped_pages``/``mapped_at``
    info lines land in ``raw["attempts"][i]["runner_info"]``, and in a raised error's ``details``.

    ``clock_mhz``: convert TSC ticks to cycles at this core clock instead of calibrating (as the
    environment variable CYCLEBENCH_CLOCK_MHZ does; measurement/clocks.py).

    ``varies``: the code's cost varies by nature from repetition to repetition and from process to
    process (a walk through memory beyond L1: cache and TLB state, prefetch, page placement).
    Repetitions that spread with clean host gauges are then pooled over processes into a median
    with a 95% interval that covers the processes' medians, reported as a variable figure
    (``stability.variable``, ``stability.range``) when that interval is within 5% of it
    (measurement/stability.py), instead of as unstable.

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
                 allow_syscalls=allow_syscalls, varies=varies, map_pages=map_pages)
    p = prepare(code, init=init, late_init=late_init, one_time_init=one_time_init, loop_init=loop_init, unroll=unroll,
                loop=loop, n_measurements=n_measurements, warm_up=warm_up,
                initial_warm_up=initial_warm_up, alignment_offset=alignment_offset,
                aggregate=aggregate, basic_mode=basic_mode, drain_frontend=drain_frontend,
                counters=counters, events=events, cpu=cpu, timeout=timeout, budget=budget,
                symbols=symbols, user=user, kernel=kernel, fixed_counters=fixed_counters,
                group_size=group_size, no_mem=no_mem, clock_mhz=clock_mhz, reset=reset)
    parts, backend, obj, warnings = p.parts, p.backend, p.obj, list(p.warnings)
    unroll, use_loop, copy_bytes, n_measurements = p.spec.unroll, p.spec.use_loop, p.copy_bytes, p.n_measurements
    symbols = p.symbols
    blob_path = runner.write_temp(obj.blob, ".bin")
    data_path = runner.write_temp(data, ".dat") if data is not None else None
    try:
        args = runner_args(obj, blob_path, data_path, backend, n_measurements, warm_up,
                           initial_warm_up, loop, cpu, timeout, symbols, libraries, r14_size, area_size,
                           allow_syscalls, max_memory)
        if map_pages:
            args += ["--map-pages", str(int(map_pages)), "--map-fill", str(int(map_fill))]
        attempts = attempt_loop.run(p, args, cpu=cpu, timeout=timeout, budget=budget,
                                    allow_syscalls=allow_syscalls, no_normalization=no_normalization,
                                    aggregate=aggregate, no_slope=basic_mode or paired, varies=varies)
    finally:
        os.unlink(blob_path)
        if data_path:
            os.unlink(data_path)

    best = attempt_loop.best(attempts, p.clock.calibrated)
    st = best["stability"]
    if not st.stable:
        warnings.append("unstable measurement (" + "; ".join(st.reasons) + f") after {len(attempts)} attempts: "
                        "the figure may be off by more than its uncertainty; " + unstable_advice(st.reasons))
    if st.variable:
        c = best["events"]["cycles"]
        runs = (best.get("pooled") or {}).get("runs", 1)
        warnings.append(f"a variable cost: the repetitions range {st.range[0]:.4g}-{st.range[1]:.4g} cycles (10th-90th "
                        f"percentile) over {runs} processes with clean host gauges (cache, TLB and prefetch state, "
                        f"page placement); the figure is their median, {c.value:.4g} +- {c.uncertainty:.2g} at 95%")
    two = modes_of(attempts) if p.clock.calibrated else None
    if two:
        fast, slow = two["cycles"]
        which = "slower" if best["events"]["cycles"].value > (fast + slow) / 2 else "faster"
        warnings.append(f"two modes: the repetitions read {fast:.4g} or {slow:.4g} cycles ({two['fast_share']:.0%} "
                        f"the faster), stretch by stretch, with quiet host gauges; the figure is the "
                        f"{which} mode's")
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
              "one_time_init": _text(one_time_init), "loop_init": _text(loop_init), "unroll": unroll, "loop": best["loop"],
              "loop_auto": loop is None, "use_loop": use_loop, "n_measurements": n_measurements,
              "warm_up": warm_up, "initial_warm_up": initial_warm_up,
              "alignment_offset": alignment_offset, "aggregate": aggregate, "basic_mode": basic_mode,
              "no_normalization": no_normalization, "drain_frontend": drain_frontend,
              "counters": counters, "clock": p.clock.name, "events": [e.name for e in backend.events if e is not backend.events[0]
                                               or backend.name != "perf"],
              "cpu": best["cpu"], "timeout": timeout, "budget": budget, "copy_bytes": copy_bytes,
              "normalization": best["norm"], "symbols": symbols, "user": bool(user), "kernel": bool(kernel),
              "fixed_counters": fixed_counters, "group_size": group_size, "no_mem": no_mem,
              "remove_empty_events": remove_empty_events, "removed_events": removed,
              "allow_syscalls": bool(allow_syscalls), "max_memory": max_memory, "reset": list(reset or ())}
    backend_info = {"name": backend.name, "reason": backend.reason, "rdpmc": backend.use_rdpmc,
                    "tsc_hz": best["tsc_hz"], "calibrated_ghz": best["ghz"],
                    "tick_step": best["step"], "label": best["events"]["cycles"].label,
                    "no_mem": backend.no_mem, "groups": best["groups"]}
    machine = _load_metadata().machine_metadata()
    machine.update({"tsc_hz": best["tsc_hz"], "calibrated_core_ghz": best["ghz"], "counter_backend": backend.name})
    return Result(kind="snippet", parameters=params, backend=backend_info, events=events_out,
                  stability={**st.to_dict(), "loop_limited": best["loop_limited"],
                             "linearity": best["linearity"] and best["linearity"].to_dict(),
                             "contention_probe": best["contention"], "contention_reference": best["contention_reference"],
                             "pooled": best.get("pooled"), "modes": two},
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


def _load_metadata():
    """machine/metadata.py (and the microarchitecture table it reads), loaded when first needed."""
    return importlib.import_module("cyclebench.machine.metadata")


class _Meanwhile:
    """Work to do while the assembler's tools run: one task each time one starts (and is waited for)."""

    def __init__(self, *tasks):
        self.tasks = list(tasks)

    def __call__(self) -> None:
        if self.tasks:
            try:
                self.tasks.pop(0)()
            except Exception:       # raised again where its result is needed, not inside a tool's run
                pass


class _Once:
    """``fn(*args)``, worked out once: ahead (``prefetch``, while as runs) or when first asked for."""

    def __init__(self, fn, *args):
        self.fn, self.args, self.box = fn, args, None

    def prefetch(self) -> None:
        if self.box is None:
            try:
                self.box = (True, self.fn(*self.args))
            except Exception as e:      # raised where the value is asked for, not inside as's run
                self.box = (False, e)

    def __call__(self):
        self.prefetch()
        ok, value = self.box
        if not ok:
            raise value
        return value


FEW_COPIES = 4     # below it, RCX exchanged around a flag-keeping loop end can set the pace (loopend.py)


def _flag_counter(spec: HarnessSpec, copy: bytes, no_mem: bool, loop, warnings: list[str]) -> str:
    """The register a flag-keeping loop end counts in (loopend.flag_counter): RCX where neither the
    copies, the loop's head nor a no-memory reading uses it; a warning where few copies share an
    end that exchanges RCX with its counter, and the loop goes round (``loop`` None: chosen at
    run time)."""
    used = used_gprs(copy) | set(spec.reset)
    counter = flag_counter(used, LOOP_REGISTER) if spec.loop_init.empty and not no_mem else LOOP_REGISTER
    if counter != "rcx" and spec.unroll < FEW_COPIES and loop != 1:
        warnings.append(f"the code carries a chain through the flags, so the loop's end keeps them, and it "
                        f"exchanges RCX with its counter: at --unroll {spec.unroll} those exchanges can set the "
                        f"pace; use --unroll {FEW_COPIES} or more, or leave RCX free")
    return counter


def _check_cpu(ranges, decoded_ranges, warnings):
    """Refuse an instruction this CPU lacks; warn of system calls and of MPX run as a NOP."""
    for (_, src, _, _), decoded in zip(ranges, decoded_ranges):
        lacking, mpx = check_features(decoded)
        if any(d.text.split()[:1] in (["syscall"], ["sysenter"]) or d.text.startswith("int 80h")
               for d in decoded) and not any(SYSCALL_NOTE in w for w in warnings):
            warnings.append(f"'{src}' makes a system call: {SYSCALL_NOTE}")
        if mpx and not any("MPX" in w for w in warnings):
            warnings.append(f"'{src}' is an MPX instruction and this CPU has no MPX (CPUID 7:EBX[14]): "
                            "it runs as a hint-NOP, so the figure measures a NOP")
        if lacking:
            _, feats = lacking[0]
            raise UnsupportedInstruction(
                f"instruction not supported by this CPU: '{src}' needs {', '.join(feats)}",
                f"this CPU ({cpu_info().model_name}) lacks {', '.join(f.lower() for f in feats)} in /proc/cpuinfo")
