"""The memset study, run: ``cyclebench study memset [--quick] [--out DIR] [--resume]``.

Experiments (each measurement is one record in ``results.jsonl``):

1. ``fixed``: one size at a time, the same arguments every call (trained predictors), 1 B to
   1 MiB, every implementation (the byte loop only up to ``byte_loop_max``), 1,000 calls per pass
   for small sizes and fewer for large ones (``fixed_bytes_per_pass``). Measured *serialized*
   (an ``lfence`` after every call, so each call is timed in isolation, as the reference timed
   single calls) and, in the full run, *back to back* (what a loop of calls pays: on Zen 4 a
   small memset hides entirely behind the ~5-cycle call overhead and costs about 0 net).
2. ``random``: the reference's random-size tests (``grid.RANDOM_SIZE_TESTS``), 50,000 seeded
   argument sets replayed per pass, L1d evicted before every call in the "clear L1" rows.
3. ``stores``: exact stores and conditional branches per call at the reference's sizes, every
   dst alignment 0..63, by single-stepping (``routines.trace``); and ``learn``: the same size
   distribution replayed from a short array (5,000 calls, which Zen 4's predictors learn) and from
   50,000 calls (which they do not), the cost of unpredictable sizes. Branch *misses* need a PMU:
   with one, the random-size measurements also count ``branch-misses``.
4. ``threshold``: the new design's rep stosb cut-over, one shared object per threshold, one
   measurement each on random sizes around the cut-over; compared with the reference's 800 bytes and
   glibc's ``x86_rep_stosb_threshold`` (``ld.so --list-tunables``).

Every routine is checked for correctness (``routines.correctness``) before anything is timed; a
wrong one stops the study with RoutineIncorrect (exit 11). Records are appended as they are made
(a killed run keeps them); ``resume=True`` skips every record whose key is already in the file.
A key names the experiment, the routine and its shared object (which carries a hash of its sources
and flags), the parameters and the timing options, so changed kernels or settings are measured
again. Outputs (tables, CSV, JSON, PNG plots, ``summary.md``) are written next to the results by
``report.write_outputs``.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import subprocess
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from cyclebench.errors import CycleBenchError, ResultFileError, UsageError
from cyclebench.machine import machine_metadata
from cyclebench.routines.build import Routine, resolve
from cyclebench.routines.correctness import MemsetDomain, check_many
from cyclebench.routines.streams import fixed_stream, random_stream
from cyclebench.routines.timing import TimingOptions, mark_checked, time_routine
from cyclebench.study.store import ResultsStore

from . import KERNELS, grid, missing_features, routine as kernel_routine

SCHEMA = "cyclebench.memset-study.record"
SCHEMA_VERSION = 1
RESULTS = "results.jsonl"
EXPERIMENTS = ("fixed", "random", "stores", "threshold")
FIXED_MODES = ("serialized", "back-to-back")

# the reference's table of stores per size, plus the sizes where the designs change paths
TRACE_SIZES = (8, 16, 24, 32, 36, 48, 64, 80, 96, 128, 144, 160, 176, 192, 256, 512, 1024, 4096)
QUICK_FIXED_SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 36, 48, 64, 80, 96, 128, 144, 160, 176, 192,
                     256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384, 32768, 65536,
                     131072, 262144, 524288, 1048576)
FULL_FIXED_SIZES = tuple(s for s in grid.FIXED_SIZES if s > 0)


def _row(gran, lo, hi, off, clear) -> int:
    for i, r in enumerate(grid.RANDOM_SIZE_TESTS):
        if (r.granularity, r.min_size, r.max_size, r.max_offset, r.clear_l1) == (gran, lo, hi, off, clear):
            return i
    raise KeyError((gran, lo, hi, off, clear))


QUICK_ROWS = (_row(1, 1, 16, 0, False), _row(1, 1, 64, 0, False), _row(1, 1, 128, 0, False),
              _row(1, 1, 256, 4095, False), _row(1, 1, 1024, 0, False), _row(16, 32, 256, 0, False),
              _row(16, 256, 512, 0, False), _row(16, 1024, 4096, 0, False), _row(1, 1, 128, 0, True))
LEARN_ROWS_QUICK = (_row(1, 1, 64, 0, False), _row(16, 256, 512, 0, False))
LEARN_ROWS_FULL = (_row(1, 1, 16, 0, False), _row(1, 1, 64, 0, False), _row(1, 1, 256, 0, False),
                   _row(16, 256, 512, 0, False), _row(16, 1024, 4096, 0, False))


@dataclass(frozen=True)
class SweepStream:
    min_size: int
    max_size: int
    granularity: int = 1
    max_offset: int = 0

    @property
    def label(self) -> str:
        return (f"random {self.min_size}..{self.max_size} B" + (f" /{self.granularity}" if self.granularity > 1 else "")
                + (f", offsets 0..{self.max_offset}" if self.max_offset else ""))


@dataclass(frozen=True)
class StudyConfig:
    name: str = "full"
    kernels: tuple[str, ...] | None = None          # None: every kernel this CPU supports
    extra: tuple[tuple[str, str], ...] = ()         # (name, "lib.so:symbol") routines to add
    experiments: tuple[str, ...] = EXPERIMENTS
    reps: int = 30
    budget: float = 1.0
    seed: int = 0
    # 1. fixed sizes
    fixed_sizes: tuple[int, ...] = FULL_FIXED_SIZES
    fixed_calls: int = grid.FIXED_SIZE_CALLS
    fixed_bytes_per_pass: int = 16 << 20
    fixed_min_calls: int = 16
    byte_loop_max: int = 4096
    # "serialized": lfence after every call, each call timed in isolation like the reference's
    # per-call timing (the primary figures); "back-to-back": calls overlap, what a loop pays
    fixed_modes: tuple[str, ...] = ("serialized", "back-to-back")
    # 2. random sizes
    random_rows: tuple[int, ...] = tuple(range(len(grid.RANDOM_SIZE_TESTS)))
    random_calls: int = grid.RANDOM_TEST_CALLS
    random_byte_loop: bool = True
    random_processes: int = 3                        # runner processes pooled per random-size row
    # 3. stores and branches
    trace_sizes: tuple[int, ...] = TRACE_SIZES
    trace_all_aligns_max: int = 256                  # every alignment 0..63 up to this size
    learn_rows: tuple[int, ...] = LEARN_ROWS_FULL
    learn_calls: int = 5000
    learn_kernels: tuple[str, ...] = ("nt_old", "new_sse", "new_avx512", "libc")
    # 4. rep stosb threshold
    thresholds: tuple[int, ...] = grid.STOSB_THRESHOLDS
    sweep_kernels: tuple[str, ...] = ("new_sse", "new_avx512")
    sweep_streams: tuple[SweepStream, ...] = (SweepStream(256, 4096), SweepStream(256, 1024),
                                              SweepStream(512, 2048, 16))
    sweep_calls: int = grid.RANDOM_TEST_CALLS

    def __post_init__(self):
        if any(m not in FIXED_MODES for m in self.fixed_modes) or not self.fixed_modes:
            raise UsageError(f"fixed_modes must be from {', '.join(FIXED_MODES)}")
        bad = [e for e in self.experiments if e not in EXPERIMENTS]
        if bad:
            raise UsageError(f"unknown experiment {bad[0]!r}", hint="use " + ", ".join(EXPERIMENTS))
        if self.kernels is not None:
            for k in self.kernels:
                if k not in KERNELS:
                    raise UsageError(f"unknown memset kernel {k!r}", hint="one of " + ", ".join(KERNELS))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["sweep_streams"] = [asdict(s) for s in self.sweep_streams]
        return d


QUICK = StudyConfig(
    name="quick", reps=15, budget=0.3, fixed_sizes=QUICK_FIXED_SIZES, fixed_bytes_per_pass=4 << 20,
    fixed_modes=("serialized",),
    random_rows=QUICK_ROWS, random_byte_loop=False, random_processes=1,
    trace_sizes=TRACE_SIZES, learn_rows=LEARN_ROWS_QUICK,
    thresholds=(256, 512, 640, 800, 1024, 1536, 2048, 3072, 4096), sweep_kernels=("new_sse",),
    sweep_streams=(SweepStream(256, 4096),))
FULL = StudyConfig()


# ---------------------------------------------------------------------------------------------
# routines

@dataclass
class Impl:
    """One implementation in the study: its routine and the domain it was checked on."""
    name: str
    routine: Routine
    domain: MemsetDomain
    kernel: str | None          # the KERNELS name, None for --routine extras


def _selected_kernels(cfg: StudyConfig) -> list[str]:
    names = list(cfg.kernels) if cfg.kernels is not None else list(KERNELS)
    return [n for n in names if not missing_features(KERNELS[n])]


def implementations(cfg: StudyConfig) -> list[Impl]:
    out = [Impl(n, kernel_routine(n), KERNELS[n].domain, n) for n in _selected_kernels(cfg)]
    for name, spec in cfg.extra:
        out.append(Impl(name, resolve(spec, name=name), MemsetDomain(), None))
    return out


def _threshold_impls(cfg: StudyConfig, selected: list[str]) -> list[tuple[str, int, Impl]]:
    out = []
    for k in cfg.sweep_kernels:
        if k not in selected or not KERNELS[k].uses_stosb_threshold:
            continue
        for t in cfg.thresholds:
            out.append((k, t, Impl(f"{k}@{t}", kernel_routine(k, t), KERNELS[k].domain, k)))
    return out


def check_all(impls: list[Impl]) -> None:
    """Check every implementation (in parallel) before anything is timed; raise the first failure."""
    results = check_many([(i.routine, i.domain) for i in impls])
    for impl, res in zip(impls, results):
        if isinstance(res, CycleBenchError):
            raise res
        mark_checked(impl.routine, impl.domain, res)


# ---------------------------------------------------------------------------------------------
# glibc facts

def glibc_info() -> dict:
    """glibc's version and its rep stosb threshold tunable (``ld.so --list-tunables``)."""
    info = {"version": os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None,
            "x86_rep_stosb_threshold": None, "x86_rep_stosb_threshold_source": None,
            "GLIBC_TUNABLES": os.environ.get("GLIBC_TUNABLES")}
    for ld in ("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"):
        if not Path(ld).exists():
            continue
        try:
            out = subprocess.run([ld, "--list-tunables"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.search(r"glibc\.cpu\.x86_rep_stosb_threshold:\s*(0x[0-9a-fA-F]+|\d+)", out)
        if m:
            info["x86_rep_stosb_threshold"] = int(m.group(1), 0)
            info["x86_rep_stosb_threshold_source"] = f"{ld} --list-tunables"
            break
    if info["x86_rep_stosb_threshold"] is None:
        info["x86_rep_stosb_threshold"] = 2048
        info["x86_rep_stosb_threshold_source"] = "glibc's documented default (ld.so --list-tunables unavailable)"
    return info


def pmu_events() -> tuple[tuple[str, ...], str]:
    """(events to count, why): branch-misses when a hardware PMU works, else none and the reason."""
    try:
        from cyclebench.counters.backends import select_backend
        from cyclebench.counters.resolve import resolve_events
        b = select_backend("auto")
        if b.name != "perf":
            return (), b.reason
        select_backend("auto", resolve_events("branch-misses"))
        return ("branch-misses",), "hardware PMU available: branch-misses counted"
    except CycleBenchError as e:
        return (), e.cause


# ---------------------------------------------------------------------------------------------
# the plan

@dataclass
class Task:
    key: str
    experiment: str
    label: str
    run: Callable[[], dict]        # -> {"routine", "spec", "params", "result"}


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _key(experiment: str, impl: Impl, params: dict, opts) -> str:
    lib = Path(impl.routine.library).name
    return f"{experiment}|{impl.name}|{lib}:{impl.routine.symbol}|{_digest(params)}|{_digest(opts)}"


def fixed_calls(cfg: StudyConfig, size: int) -> int:
    return max(cfg.fixed_min_calls, min(cfg.fixed_calls, cfg.fixed_bytes_per_pass // max(size, 1)))


def _heap_zero_ok(impl: Impl, sizes_step: int, offsets_zero: bool) -> bool:
    d = impl.domain
    return (sizes_step % d.size_step == 0) and (offsets_zero or d.align_step == 1)


def plan(cfg: StudyConfig, impls: list[Impl], sweep: list[tuple[str, int, Impl]],
         events: tuple[str, ...] = ()) -> list[Task]:
    tasks: list[Task] = []
    base = TimingOptions(n_measurements=cfg.reps, budget=cfg.budget)

    def timing_task(exp, impl, params, stream_fn, opts, label):
        def run():
            t = time_routine(impl.routine, stream_fn(), opts, domain=impl.domain)
            return {"routine": impl.name, "spec": impl.routine.spec, "params": params, "result": t.to_dict()}
        tasks.append(Task(_key(exp, impl, params, opts.key()), exp, label, run))

    if "fixed" in cfg.experiments:
        for mode in cfg.fixed_modes:
            opts = replace(base, serialize=mode == "serialized")
            for size in cfg.fixed_sizes:
                n = fixed_calls(cfg, size)
                for impl in impls:
                    if impl.kernel == "byte_loop" and size > cfg.byte_loop_max:
                        continue
                    if size % impl.domain.size_step:
                        continue
                    params = {"size": size, "calls": n, "value": 0, "mode": mode}
                    timing_task("fixed", impl, params,
                                lambda size=size, n=n: fixed_stream(size, count=n, value=0), opts,
                                f"fixed {size} B {mode}: {impl.name}")

    if "random" in cfg.experiments:
        for idx in cfg.random_rows:
            row = grid.RANDOM_SIZE_TESTS[idx]
            opts = replace(base, flush="call" if row.clear_l1 else "none", events=events,
                           processes=cfg.random_processes)
            for impl in impls:
                if impl.kernel == "byte_loop" and not cfg.random_byte_loop:
                    continue
                if impl.domain.size_step > 1 and not (row.granularity % impl.domain.size_step == 0
                                                      and row.min_size % impl.domain.size_step == 0
                                                      and row.max_offset == 0):
                    continue
                params = {"row": idx, "name": row.name, "calls": cfg.random_calls, "seed": cfg.seed,
                          **{k: getattr(row, k) for k in ("granularity", "min_size", "max_size",
                                                          "min_offset", "max_offset", "clear_l1")}}
                timing_task("random", impl, params,
                            lambda row=row: row.stream(count=cfg.random_calls, seed=cfg.seed), opts,
                            f"random {row.min_size}..{row.max_size}{' clearL1' if row.clear_l1 else ''}: {impl.name}")

    if "stores" in cfg.experiments:
        from cyclebench.routines.trace import trace_memset
        for impl in impls:
            sizes = [s for s in cfg.trace_sizes if s % impl.domain.size_step == 0
                     and not (impl.kernel == "byte_loop" and s > 256)]
            step = impl.domain.align_step
            small = [s for s in sizes if s <= cfg.trace_all_aligns_max]
            large = [s for s in sizes if s > cfg.trace_all_aligns_max]
            params = {"sizes": sizes, "all_aligns_max": cfg.trace_all_aligns_max, "align_step": step}

            def run(impl=impl, small=small, large=large, step=step, params=params):
                rows = []
                if small:
                    rows += [t.as_dict() for t in trace_memset(impl.routine, small, range(0, 64, step))]
                if large:
                    aligns = sorted({a for a in (0, 1, 16, 63) if a % step == 0} | {63 // step * step})
                    rows += [t.as_dict() for t in trace_memset(impl.routine, large, aligns)]
                return {"routine": impl.name, "spec": impl.routine.spec, "params": params,
                        "result": {"traces": rows}}
            tasks.append(Task(_key("trace", impl, params, {}), "trace", f"trace: {impl.name}", run))
        learn_impls = [i for i in impls if i.name in cfg.learn_kernels]
        for idx in cfg.learn_rows:
            row = grid.RANDOM_SIZE_TESTS[idx]
            for calls in (cfg.learn_calls, cfg.random_calls):
                for impl in learn_impls:
                    params = {"row": idx, "name": row.name, "calls": calls, "seed": cfg.seed + 1,
                              "min_size": row.min_size, "max_size": row.max_size,
                              "granularity": row.granularity}
                    timing_task("learn", impl, params,
                                lambda row=row, calls=calls: row.stream(count=calls, seed=cfg.seed + 1),
                                base, f"learn {row.min_size}..{row.max_size} x{calls}: {impl.name}")

    if "threshold" in cfg.experiments:
        for kernel, t, impl in sweep:
            for ss in cfg.sweep_streams:
                params = {"kernel": kernel, "threshold": t, "stream": asdict(ss), "label": ss.label,
                          "calls": cfg.sweep_calls, "seed": cfg.seed}
                timing_task("threshold", impl, params,
                            lambda ss=ss: random_stream(min_size=ss.min_size, max_size=ss.max_size,
                                                        granularity=ss.granularity,
                                                        max_offset=ss.max_offset, value=0,
                                                        count=cfg.sweep_calls, seed=cfg.seed),
                            base, f"threshold {t} ({ss.label}): {kernel}")
    return tasks


# ---------------------------------------------------------------------------------------------
# results file

def _check_record(rec: dict) -> str | None:
    if rec.get("schema") != SCHEMA or rec.get("schema_version") != SCHEMA_VERSION:
        return f"not a {SCHEMA} version {SCHEMA_VERSION} record"
    return None if isinstance(rec.get("key"), str) else "no key"


def results_store(path: Path) -> ResultsStore:
    """The study's results.jsonl (cyclebench/study/store.py: torn last line cut, foreign refused)."""
    return ResultsStore(path, "memset", SCHEMA_VERSION, check_record=_check_record)


def load_records(path: Path) -> dict[str, dict]:
    """Records by key; damage other than a torn last line raises ResultFileError (exit 10)."""
    return {r["key"]: r for r in results_store(path).load()[1]}


# ---------------------------------------------------------------------------------------------
# running

@dataclass
class StudyRun:
    out: Path
    measured: int
    skipped: int
    records: list[dict]
    outputs: dict[str, Path] = field(default_factory=dict)
    elapsed: float = 0.0


def _progress(enabled: bool):
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    console = Console(stderr=True)
    return Progress(TextColumn("[bold]memset[/]"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.description}"),
                    console=console, disable=not enabled, transient=False)


def run_study(cfg: StudyConfig, out_dir: str | os.PathLike, *, resume: bool = False,
              progress: bool = True) -> StudyRun:
    """Run (or resume) the study into out_dir and write its outputs; see the module docstring."""
    import time
    t0 = time.monotonic()
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ResultFileError(f"cannot create {out}: {e.strerror}", hint="choose another --out") from None
    path = out / RESULTS
    if not resume and path.is_file() and path.stat().st_size:
        path.replace(out / "results.prev.jsonl")
    store = results_store(path)
    done = {r["key"]: r for r in store.start({"config": cfg.name}, resume=resume)}
    try:
        return _run(cfg, out, store, done, progress, t0)
    finally:
        store.close()


def _run(cfg: StudyConfig, out: Path, store: ResultsStore, done: dict, progress: bool, t0: float) -> StudyRun:
    import time
    from . import report

    impls = implementations(cfg)
    if not impls:
        raise UsageError("no implementation to study on this CPU", hint="check --kernels")
    selected = [i.kernel for i in impls if i.kernel]
    sweep = _threshold_impls(cfg, selected) if "threshold" in cfg.experiments else []
    check_all(impls + [i for _, _, i in sweep])        # correctness before any timing

    events, pmu_reason = pmu_events() if "random" in cfg.experiments else ((), "")
    glibc = glibc_info()
    machine = machine_metadata()
    tasks = plan(cfg, impls, sweep, events)
    info_key = f"info|{_digest([glibc, machine.get('cpu_model_name')])}"
    todo = [t for t in tasks if t.key not in done]
    skipped = len(tasks) - len(todo)
    if info_key not in done:
        rec = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "key": info_key, "experiment": "info",
               "result": {"glibc": glibc, "pmu_events": list(events), "pmu": pmu_reason},
               "machine": machine, "recorded": _now(), "config": cfg.name}
        store.append(rec)
        done[info_key] = rec

    measured = 0
    with _progress(progress) as prog:
        bar = prog.add_task("", total=len(tasks), completed=skipped)
        for task in todo:
            prog.update(bar, description=task.label)
            body = task.run()
            rec = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "key": task.key,
                   "experiment": task.experiment, **body, "machine": machine, "recorded": _now(),
                   "config": cfg.name}
            store.append(rec)
            done[task.key] = rec
            measured += 1
            prog.advance(bar)
        prog.update(bar, description="writing outputs")
    records = [done[info_key]] + [done[t.key] for t in tasks]
    outputs = report.write_outputs(cfg, records, out, impls=[i.name for i in impls])
    return StudyRun(out, measured, skipped, records, outputs, time.monotonic() - t0)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
