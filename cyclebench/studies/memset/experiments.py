"""The memset study's plan: one Task per measurement (see study.py for the experiments). A task's
key names the experiment, the routine and its shared object (which carries a hash of its sources
and flags), the parameters and the timing options, so changed kernels or settings are measured
again on --resume."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, replace
from pathlib import Path

from cyclebench.routines.options import TimingOptions
from cyclebench.routines.streams import fixed_stream, random_stream
from cyclebench.routines.timing import time_routine
from cyclebench.study.base import Task

from . import grid
from .config import StudyConfig
from .implementations import Impl
from .trace import trace_memset


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _key(experiment: str, impl: Impl, params: dict, opts) -> str:
    lib = Path(impl.routine.library).name
    return f"{experiment}|{impl.name}|{lib}:{impl.routine.symbol}|{_digest(params)}|{_digest(opts)}"


def fixed_calls(cfg: StudyConfig, size: int) -> int:
    return max(cfg.fixed_min_calls, min(cfg.fixed_calls, cfg.fixed_bytes_per_pass // max(size, 1)))


def plan(cfg: StudyConfig, impls: list[Impl], sweep: list[tuple[str, int, Impl]],
         events: tuple[str, ...] = ()) -> list[Task]:
    tasks: list[Task] = []
    base = TimingOptions(n_measurements=cfg.reps, budget=cfg.budget)

    def timing_task(exp, impl, params, stream_fn, opts, label):
        def run():
            t = time_routine(impl.routine, stream_fn(), opts, checker=impl.domain)
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

