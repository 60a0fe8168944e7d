"""The runner's command line for a prepared measurement: entry points, counts, memory areas,
sandbox options and the counter backend's events."""
from __future__ import annotations

from ..counters import reads
from ..counters.backends import Backend
from . import clock_history
from .clocks import CALIB_LOOP

# The auto loop makes B - A span STEPS_PER_LOOP of the TSC's steps (quantisation under 0.07% per
# sample), within [MIN_LOOP_TICKS, AUTO_LOOP_TICKS]; the runner measures the step (tsc_step in
# cb_runner.c). Not longer: noise only adds time, and a long repetition is more often hit by a
# burst. On a Golden Cove guest (2-tick TSC steps) `add rax, rbx; add rbx, rax` read 2.04-2.16
# with B - A near 80,000 ticks and 1.998-2.003 near 8,000-20,000, in the same minutes. A KVM
# guest's 26-tick steps need the full 40,000. MIN_LOOP_TICKS keeps twice the resolution floor
# (evaluate.POOR_TICKS) where the step is 1 or 2.
AUTO_LOOP_TICKS = 40_000
STEPS_PER_LOOP = 1_600
MIN_LOOP_TICKS = 10_000


def runner_args(obj, blob_path, data_path, backend: Backend, reps, warm_up, initial_warm_up,
                loop, cpu, timeout, symbols, libraries, r14_size, area_size, allow_syscalls=False,
                max_memory=None) -> list[str]:
    """The runner's command line for one prepared measurement (cb_runner.c parses it)."""
    s = obj.symbols
    args = [blob_path, "--code-size", str(s["cb_data_pages"]), "--ctl", str(s["cb_ctl"]),
            "--run-a", str(s["cb_run_a"]), "--run-b", str(s["cb_run_b"]),
            "--reps", str(reps), "--warm-up", str(warm_up), "--initial-warm-up", str(initial_warm_up),
            "--timeout", str(timeout)]
    if "cb_one_time" in s:
        args += ["--one-time-init", str(s["cb_one_time"])]
    if "cb_calib_a" in s:        # the harness built the calibration: the clock needs it
        args += ["--calib-a", str(s["cb_calib_a"]), "--calib-b", str(s["cb_calib_b"]),
                 "--check-a", str(s["cb_check_a"]), "--check-b", str(s["cb_check_b"]),
                 "--contention-a", str(s["cb_contention_a"]), "--contention-b", str(s["cb_contention_b"]),
                 "--calib-loop", str(CALIB_LOOP)]
    if loop is None:
        args += ["--auto-loop-ticks", str(AUTO_LOOP_TICKS), "--auto-loop-steps", str(STEPS_PER_LOOP),
                 "--auto-loop-min", str(MIN_LOOP_TICKS)]
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
    known = clock_history.tsc_hz()
    if known:
        args += ["--tsc-hz", str(round(known))]
    if max_memory:
        args += ["--max-memory", str(int(max_memory))]
    return args + backend.runner_args()
