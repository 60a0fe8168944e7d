"""The plan: one Task per (build, dispatcher, target pattern), each a ``routines.time_routine``.

Experiments:

* ``fixed``: one target every call (Ertl's case). For Ertl's two builds every target of the
  searches 1 and 4 and ``targets_3`` of search 3; for the other builds one target per dispatcher
  (FIXED = 6 for direct/0/0m/2/switch/1, 7 for 4, 72 for 3).
* ``pattern``: round-robin (indices 0, 1, .., k-1, 0, ...) and pseudo-random (a pre-generated
  array of ``random_calls`` uniform indices, replayed) over k targets, for the dispatchers that
  take an index (0m, 2, 1, 4, 3, switch), k up to the dispatcher's range.
* ``penalty``: the one-branch dispatcher under a fixed and a 50% random pattern: the misprediction
  penalty in this harness is 2 x (random - fixed).

A record's figure is the pass's cycles per call: ``gross`` (= cycles per iteration of the loop
around one dispatch, Ertl's figure) and ``net`` (minus the empty pass).
"""
from __future__ import annotations

import numpy as np

from cyclebench.routines import TimingOptions, dispatch_shape, make_stream, time_routine
from cyclebench.routines.build import compiler_version
from cyclebench.study.base import Task

from .builds import BY_NAME
from .checking import DispatchChecker
from .config import ERTL_BUILDS, StudyConfig
from .sources import FIXED, RANGE

SHAPE = dispatch_shape("x")
INDEXED = ("0m", "2", "1", "4", "3", "switch")
ONE_TARGET = {"direct": FIXED, "0": FIXED, "0m": FIXED, "2": FIXED, "switch": FIXED, "1": FIXED, "4": 7, "3": 72}


def fixed_targets(cfg: StudyConfig, build: str, d: str) -> list[int]:
    if build in ERTL_BUILDS:
        if d == "1":
            return list(range(7))
        if d == "4":
            return list(range(8))
        if d == "3":
            return list(cfg.targets_3)
    return [ONE_TARGET[d]]


def indices(cfg: StudyConfig, pattern: str, k: int, target: int = 0) -> np.ndarray:
    if pattern == "fixed":
        return np.full(cfg.fixed_calls, target)
    if pattern == "roundrobin":
        return np.arange(-(-cfg.fixed_calls // k) * k) % k
    return np.random.default_rng([cfg.seed, k]).integers(0, k, cfg.random_calls)


def _task(cfg, built, exp, build, d, pattern, k, target=None) -> Task:
    idx = indices(cfg, pattern, k, target or 0)
    what = f"t{target}" if pattern == "fixed" else f"k{k}"
    label = f"{exp}/{build}/{d}/{pattern}/{what}"
    key = f"{label}/n{len(idx)}/r{cfg.reps}"      # a resume with another -n measures afresh, as every study's
    params = {"build": build, "dispatcher": d, "pattern": pattern, "k": None if pattern == "fixed" else k,
              "target": target, "calls": len(idx)}

    def run() -> dict:
        b = built[build]
        stream = make_stream(SHAPE, f"{pattern}-{what}", index=idx, x=np.full(len(idx), 5))
        opts = TimingOptions(n_measurements=cfg.reps, budget=cfg.budget)
        t = time_routine(b.routines[d], stream, opts, checker=DispatchChecker(d))
        return {"routine": t.routine, "params": params, "result": t.to_dict(),
                "build": {"flags": list(BY_NAME[build].cflags), "compiler": compiler_version(BY_NAME[build].cc)}}
    return Task(key, exp, label, run)


def plan(cfg: StudyConfig, built: dict) -> list[Task]:
    tasks = []
    for b in cfg.builds if "fixed" in cfg.experiments else ():
        if b not in built:
            continue
        for d in ("direct", "0", "0m", "2", "1", "4", "3", "switch"):
            for t in fixed_targets(cfg, b, d):
                tasks.append(_task(cfg, built, "fixed", b, d, "fixed", 1, t))
    for b in cfg.pattern_builds if "pattern" in cfg.experiments else ():
        if b not in built:
            continue
        for d in INDEXED:
            for pattern in ("roundrobin", "random"):
                for k in cfg.ks:
                    if k <= RANGE[d]:
                        tasks.append(_task(cfg, built, "pattern", b, d, pattern, k))
    if "clang-Os" in built and "penalty" in cfg.experiments:
        tasks.append(_task(cfg, built, "penalty", "clang-Os", "branch", "fixed", 1, 0))
        tasks.append(_task(cfg, built, "penalty", "clang-Os", "branch", "random", 2))
    return tasks
