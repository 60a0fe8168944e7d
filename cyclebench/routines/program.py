"""Whole programs built from C with given compiler flags: per-iteration core cycles and wall time.

For comparing code generation options on a whole loop or program (``gcc -fsplit-stack``,
``-fsanitize=address``, ``clang -mretpoline`` where clang is installed), the way the reference
studies did: build the program, run it, divide by its iterations.

* ``build_program(sources, cc=, cflags=, ldflags=)`` compiles and links with the routines'
  compile-and-cache (``build.build_executable``): the same sources, compiler and flags are built once.
* The program **reports its iteration count**: a line ``iterations N`` (or ``iterations: N``) on
  stdout; the last such line counts. Given ``iterations=n``, the program is run with n, and with 2n,
  substituted for ``{n}`` in ``args`` (appended when no argument has ``{n}``).
* Each run goes through ``cb-run-program`` (``native/run_program.c``): pinned to one CPU, timed with
  the TSC read right before its fork and right after its wait4 (so the ticks include exec, loading
  and exit). Per repetition the n and the 2n run alternate; per-iteration ticks are
  ``(ticks(2n) - ticks(n)) / (reported(2n) - reported(n))``, so start-up and exit cancel (nanoBench's
  differencing, with iterations for copies). Without ``iterations`` one run per repetition gives
  ``ticks / reported`` (``method: whole-run``: start-up included).
* **One definition of a cycle**: ticks become core cycles with ``measure()``'s own calibration,
  read from a ``measure()`` on the same CPU before and after the repetitions
  (``cycles per tick = calibrated GHz / TSC GHz``; with a PMU, measure()'s cycles-per-tick ratio).
  The two must agree within ``CALIB_OUTLIER`` (3%), else the result carries a warning and
  ``stable: False``.
* Figures: per-iteration core cycles and ns over the repetitions' paired differences (median,
  minimum, mean of the fastest 10%, spread = interquartile range); ``best``, the difference of the
  fastest 2n run and the fastest n run (on a host noisy in bursts the least disturbed figure: a
  burst slows one run of a pair, which the paired figures absorb and the fastest runs avoid);
  wall-clock and CPU seconds (the program's rusage) of the 2n runs; ``outputs``, the stdout of
  every 2n run (its first ``MAX_KEPT_OUTPUT`` characters), for what the program reports beside its
  count (allocations it made, huge pages it got ...; a figure the program measures itself can be
  taken from its least disturbed run), and ``output``, that of the last run.

**Not sandboxed.** A whole program is the user's own C, run like a compiler's test suite: it does
not go through the runner's seccomp sandbox. It runs with resource limits instead: RLIMIT_CPU
(``cpu_seconds``), RLIMIT_AS (``memory``; none when the flags ask for a sanitizer, whose shadow
memory reserves terabytes of address space), RLIMIT_FSIZE 0 (it cannot write files), RLIMIT_CORE
0, its own process group killed after ``timeout`` seconds, and its stdout read up to 1 MiB.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from cyclebench.errors import SnippetFault, SnippetTimeout, UsageError
from cyclebench.measurement import measured
from cyclebench.measurement.api import CALIB_OUTLIER, measure
from cyclebench.measurement.stats import summarize
from cyclebench.routines.build import Built, build_executable

LAUNCHER_SOURCE = Path(__file__).with_name("native") / "run_program.c"
MAX_OUTPUT = 1 << 20
MAX_KEPT_OUTPUT = 4096
_ITER_RE = re.compile(rb"^\s*iterations\s*[:=]?\s*(\d+)\s*$", re.M)
BACKEND_REASON = ("whole programs are timed with the TSC around fork and wait4; ticks are converted to "
                  "core cycles with measure()'s clock calibration before and after the runs")
_SANITIZERS = ("-fsanitize=address", "-fsanitize=memory", "-fsanitize=thread", "-fsanitize=hwaddress")


@dataclass(frozen=True)
class ProgramLimits:
    """Resource limits of one run (see the module docstring)."""

    cpu_seconds: int = 60
    memory: int | None = 4 << 30        # RLIMIT_AS bytes; None: no cap
    timeout: float = 60.0

    def __post_init__(self):
        if not 1 <= self.cpu_seconds <= 86400:
            raise UsageError(f"cpu_seconds {self.cpu_seconds} is out of range", hint="use 1..86400")
        if self.memory is not None and self.memory < (16 << 20):
            raise UsageError(f"a {self.memory}-byte address space is too small to start a program",
                             hint="give at least 16 MiB, or None for no cap")
        if not 0 < self.timeout <= 86400:
            raise UsageError(f"timeout {self.timeout} s is out of range", hint="use 0 < timeout <= 86400")


def build_program(sources: Sequence[str | os.PathLike], *, cc: str | None = None,
                  cflags: str | Sequence[str] | None = None, ldflags: str | Sequence[str] | None = None,
                  name: str | None = None) -> Built:
    """Compile and link a program (flags such as -fsplit-stack or -fsanitize=address go in
    cflags: one compiler command compiles and links); cached like every routine build."""
    return build_executable(sources, cc=cc, cflags=cflags, ldflags=ldflags, name=name)


_launcher: Path | None = None


def launcher_path() -> Path:
    """The launcher, built (or found in the cache) once per process: hashing its sources for the
    cache key runs the compiler (``cc -M``), about 0.1 s, which every run would otherwise pay."""
    global _launcher
    if _launcher is None or not _launcher.exists():
        _launcher = build_executable([LAUNCHER_SOURCE], cflags=["-O2", "-Wall"], name="cb-run-program").path
    return _launcher


@dataclass
class ProgramTiming:
    """Per-iteration cost of a whole program; cycles are core cycles (see the module docstring)."""

    program: str
    command: list
    cpu: int
    method: str                    # "difference" (n and 2n runs) or "whole-run"
    iterations: list               # the counts the program reported: [n, 2n] or [N]
    per_iteration: dict            # Summary of core cycles per iteration, over repetitions
    best: float                    # the least disturbed estimate: from the fastest runs' ticks
    per_iteration_ns: dict
    wall_seconds: dict             # Summary of the longer run's wall-clock time
    cpu_seconds: dict              # Summary of its user + system CPU time
    calibration: dict              # ghz_before, ghz_after, tsc_hz, cycles_per_tick
    limits: dict
    samples: dict = field(default_factory=dict)    # ticks per run: {"short": [...], "long": [...]}
    outputs: list = field(default_factory=list)    # stdout of every 2n run, in order (MAX_KEPT_OUTPUT each)
    stable: bool = True
    warnings: list = field(default_factory=list)
    backend: dict = field(default_factory=dict)    # the TSC, and the calibration it was converted with
    options: dict = field(default_factory=dict)    # n_measurements: the repetitions

    @property
    def output(self) -> str:
        """The stdout of the last (2n) run."""
        return self.outputs[-1] if self.outputs else ""

    @property
    def cycles(self) -> float:
        """The headline figure: median core cycles per iteration."""
        return self.per_iteration["median"]

    def facts(self) -> dict:
        """The Measurement protocol's facts (cyclebench/measurement/measured.py)."""
        return measured.facts(self.backend, self.options.get("n_measurements"), self.stable, self.warnings)

    def to_dict(self) -> dict:
        return asdict(self)


def clock(cpu: int | None = None) -> tuple[float, float, int]:
    """(core cycles per TSC tick, TSC Hz, CPU) from measure()'s calibration on ``cpu``."""
    r = measure("imul rax, rax", cpu=cpu, n_measurements=20)
    tsc_hz = float(r.backend["tsc_hz"])
    return float(r.backend["calibrated_ghz"]) * 1e9 / tsc_hz, tsc_hz, int(r.parameters["cpu"])


@dataclass(frozen=True)
class Run:
    ticks: int
    iterations: int
    cpu_seconds: float
    output: str = ""


def _argv(program: str, args: Sequence[str], n: int | None) -> list[str]:
    if n is None:
        return [program, *args]
    if any("{n}" in a for a in args):
        return [program, *(a.replace("{n}", str(n)) for a in args)]
    return [program, *args, str(n)]


def run_once(argv: list[str], cpu: int, limits: ProgramLimits, memory: int | None) -> Run:
    """One run through the launcher; raises for a crash, a failure, a timeout or no count."""
    rfd, wfd = os.pipe()
    cmd = [str(launcher_path()), str(wfd), str(cpu), str(limits.cpu_seconds), str(memory or 0),
           str(max(1, int(round(limits.timeout)))), "--", *argv]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=(wfd,))
    finally:
        os.close(wfd)
    with os.fdopen(rfd, "rb") as rep:
        try:
            out, err = proc.communicate(timeout=limits.timeout + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise SnippetTimeout(f"{argv[0]} still held its output open {limits.timeout + 30:g} s after starting",
                                 hint="does it leave a process running in the background?") from None
        report = rep.read().decode(errors="replace")
    fields = dict(kv.split("=", 1) for kv in report.split())
    name = Path(argv[0]).name
    if proc.returncode != 0 or "ticks" not in fields:
        raise SnippetFault(f"cannot run {name}: {err.decode(errors='replace').strip()[:200] or 'no report'}",
                           hint="check that the program was built for this machine")
    if fields["timed_out"] == "1":
        raise SnippetTimeout(f"{name} did not finish within {limits.timeout:g} s",
                             hint="give fewer iterations or a longer timeout")
    if fields["signal"] != "0":
        sig = int(fields["signal"])
        why = " (its CPU-time limit)" if sig == signal.SIGXCPU else \
            " (it tried to write a file)" if sig == signal.SIGXFSZ else ""
        raise SnippetFault(f"{name} was killed by {signal.Signals(sig).name}{why}",
                           hint="run it by hand with the same arguments: " + shlex.join(argv))
    if fields["status"] != "0":
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise SnippetFault(f"{name} exited with status {fields['status']}: {tail[0][:200]}",
                           hint="a program to time must exit 0; run it by hand: " + shlex.join(argv))
    counts = _ITER_RE.findall(out[:MAX_OUTPUT])
    if not counts:
        raise UsageError(f"{name} did not report its iteration count",
                         hint="print a line `iterations N` on stdout (N: the loop's iterations)")
    return Run(int(fields["ticks"]), int(counts[-1]),
               (int(fields["utime_us"]) + int(fields["stime_us"])) / 1e6,
               out[:MAX_KEPT_OUTPUT].decode(errors="replace"))


def time_program(program: "Built | str | os.PathLike", args: Sequence[str] = (), *,
                 iterations: int | None = None, repetitions: int = 11, cpu: int | None = None,
                 limits: ProgramLimits | None = None, flags: Sequence[str] = ()) -> ProgramTiming:
    """Per-iteration core cycles and wall time of a program (see the module docstring).

    ``flags``: the compiler flags it was built with (a Built carries them), to tell whether a
    sanitizer needs the address-space limit lifted.
    """
    return time_programs([(program, args)], iterations=iterations, repetitions=repetitions, cpu=cpu,
                         limits=limits, flags=flags)[0]


def time_programs(items: Sequence[tuple], *, iterations: int | None = None, repetitions: int = 11,
                  cpu: int | None = None, limits: ProgramLimits | None = None,
                  flags: Sequence[str] = ()) -> list[ProgramTiming]:
    """Several programs, ``items`` of ``(program, args)``, timed **interleaved**: every repetition
    runs each program's n and 2n runs in turn, all between one pair of calibrations. A burst of
    host noise lasting seconds then falls on every program alike, so their ratios (a variant
    against its baseline) are steadier than those of separate time_program calls. One
    ProgramTiming per item, in order, each as time_program would give it."""
    limits = limits or ProgramLimits()
    if not 1 <= repetitions <= 1000:
        raise UsageError(f"{repetitions} repetitions is out of range", hint="use 1..1000")
    if iterations is not None and not 1 <= iterations <= 1 << 40:
        raise UsageError(f"{iterations} iterations is out of range", hint="use 1..2^40")
    if not items:
        raise UsageError("no program to time", hint="give at least one (program, args)")
    progs = []
    for program, args in items:
        fl = tuple(flags)
        if isinstance(program, Built):
            fl += tuple(program.command)
            path = str(program.path)
        else:
            path = str(Path(program).resolve())
        if not os.access(path, os.X_OK):
            raise UsageError(f"{path} is not an executable program", hint="build it with build_program()")
        progs.append((path, list(args), None if any(f.startswith(_SANITIZERS) for f in fl) else limits.memory))
    cpt_before, tsc_hz, cpu = clock(cpu)
    points = (iterations, 2 * iterations) if iterations is not None else (None,)
    runs: list[list[list[Run]]] = [[[] for _ in points] for _ in progs]
    for _ in range(repetitions):
        for i, (path, args, memory) in enumerate(progs):
            for k, n in enumerate(points):
                runs[i][k].append(run_once(_argv(path, args, n), cpu, limits, memory))
    cpt_after, _, _ = clock(cpu)
    return [_timing(path, args, memory, points, runs[i], cpt_before, cpt_after, tsc_hz, cpu, limits)
            for i, (path, args, memory) in enumerate(progs)]


def _timing(path, args, memory, points, runs, cpt_before, cpt_after, tsc_hz, cpu, limits) -> ProgramTiming:
    iterations = points[0]
    warnings = []
    stable = abs(cpt_after / cpt_before - 1) <= CALIB_OUTLIER
    if not stable:
        warnings.append(f"the core clock moved by {abs(cpt_after / cpt_before - 1):.1%} between the "
                        "calibrations before and after the runs: the host was busy; re-run on a quieter machine")
    cpt = (cpt_before + cpt_after) / 2
    long = runs[-1]
    if iterations is not None:
        reported = sorted({(a.iterations, b.iterations) for a, b in zip(*runs)})
        if len(reported) != 1 or reported[0][1] <= reported[0][0]:
            raise UsageError(f"{Path(path).name} reported {reported} iterations for n={iterations} and 2n",
                             hint="it must run the count it is given ({n} in args, or the last argument)")
        (na, nb), = reported
        ticks = np.array([b.ticks - a.ticks for a, b in zip(*runs)], dtype=float) / (nb - na)
        best = (min(b.ticks for b in runs[1]) - min(a.ticks for a in runs[0])) / (nb - na)
        method, counts = "difference", [na, nb]
    else:
        counts = sorted({r.iterations for r in long})
        if len(counts) != 1 or counts[0] < 1:
            raise UsageError(f"{Path(path).name} reported {counts} iterations", hint="report one positive count")
        ticks = np.array([r.ticks for r in long], dtype=float) / counts[0]
        best = float(ticks.min())
        method = "whole-run"
    return ProgramTiming(
        program=Path(path).name, command=_argv(path, args, points[-1]), cpu=cpu, method=method,
        iterations=counts, per_iteration=summarize(ticks * cpt).as_dict(), best=best * cpt,
        per_iteration_ns=summarize(ticks / tsc_hz * 1e9).as_dict(),
        wall_seconds=summarize([r.ticks / tsc_hz for r in long]).as_dict(),
        cpu_seconds=summarize([r.cpu_seconds for r in long]).as_dict(),
        calibration={"ghz_before": cpt_before * tsc_hz / 1e9, "ghz_after": cpt_after * tsc_hz / 1e9,
                     "tsc_hz": tsc_hz, "cycles_per_tick": cpt},
        limits={**asdict(limits), "memory": memory}, stable=stable, warnings=warnings,
        backend={"name": "tsc", "calibrated_ghz": cpt * tsc_hz / 1e9, "reason": BACKEND_REASON},
        options={"n_measurements": len(runs[0])}, outputs=[r.output for r in long],
        samples={"short": [r.ticks for r in runs[0]], "long": [r.ticks for r in long]})
