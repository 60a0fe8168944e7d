"""The study's tasks: one timed program configuration each (``routines.program.time_program``),
plus the instruction counts (``instructions.py``). A task's key names everything that changes its
figure, so ``--resume`` measures only what is missing.

Units of one iteration (what time_program divides by): a split-stack benchmark's iteration is one
fib(ARG) or one sum(DEPTH), divided afterwards by its calls; blackscholes counts one option priced
once; the chase one access."""
from __future__ import annotations

from cyclebench.routines.program import ProgramLimits, time_program
from cyclebench.study.base import Task

from . import instructions, programs
from .config import INPUTS, StudyConfig

LIMITS = ProgramLimits(cpu_seconds=120, memory=8 << 30, timeout=120)


def timed(progs: programs.Programs, build: str, args: list, iterations: int, reps: int) -> dict:
    """time_program's figures as a record's result, with the facts the summary reads (its cycles
    are TSC ticks converted with measure()'s calibration) and the program's own report."""
    t = time_program(progs.built[build], args, iterations=iterations, repetitions=reps, limits=LIMITS)
    res = t.to_dict()
    cal = res["calibration"]
    res["backend"] = {"name": "tsc", "calibrated_ghz": (cal["ghz_before"] + cal["ghz_after"]) / 2,
                      "reason": "whole programs are timed with the TSC around fork and wait4; ticks are "
                                "converted to core cycles by measure()'s 1-cycle add calibration"}
    res["options"] = {"n_measurements": reps}
    res["report"] = programs.report(t.output)
    res.pop("samples", None)
    return res


def _task(key, exp, label, fn) -> Task:
    return Task(key, exp, label, fn)


def split_tasks(cfg: StudyConfig, progs) -> list[Task]:
    out = []
    variants = (("normal", "on"), ("split", "on"), ("split", "off"))
    for build, sig in variants[:2]:
        p = {"bench": "fib", "build": build, "signals": sig, "arg": cfg.fib_arg}
        out.append(_split(cfg, progs, p, ["fib", str(cfg.fib_arg), "{n}"], cfg.fib_iterations))
    for depth in cfg.sum_depths:
        its = max(1, cfg.sum_calls // depth)
        for build, sig in variants:
            p = {"bench": "sum", "build": build, "signals": sig, "arg": depth}
            out.append(_split(cfg, progs, p, ["sum", str(depth), "{n}"] + (["nosig"] if sig == "off" else []), its))
    for build, hot, sig in (("normal", 1, "on"), ("split", 0, "on"), ("split", 1, "on"), ("split", 1, "off")):
        p = {"bench": "hot", "build": build, "signals": sig, "arg": hot}
        cheap = not (build == "split" and hot and sig == "on")
        out.append(_split(cfg, progs, p, ["hot", str(hot), "{n}"] + (["nosig"] if sig == "off" else []),
                          cfg.hot_iterations * (cfg.hot_cheap_factor if cheap else 1)))
    return out


def _split(cfg, progs, p, args, its) -> Task:
    key = f"splitstack/{p['bench']}/{p['arg']}/{p['build']}/sig-{p['signals']}/n{its}/r{cfg.reps}"
    label = f"split stack: {p['bench']}({p['arg']}) {p['build']}" + (", no signal blocking" if p["signals"] == "off" else "")
    return _task(key, "splitstack", label, lambda: {"routine": "splitstack", "params": {**p, "iterations": its},
                                                    "result": timed(progs, p["build"], args, its, cfg.reps)})


def bs_task(cfg, progs, exp, layout, inp, kind, page) -> Task:
    n, passes = INPUTS[inp], cfg.passes_for(inp)
    reps = cfg.native_reps if inp == "native" else cfg.reps
    p = {"layout": layout, "input": inp, "options": n, "kind": kind, "page": page, "passes": passes}
    key = f"{exp}/blackscholes/{layout}/{inp}/{kind}/{page}/p{passes}/r{reps}"
    label = f"blackscholes {layout} {inp} {kind}" + (f" {page // 1024} KiB" if kind.startswith("tree") else "")
    args = [layout, kind, str(page), str(n), "{n}"]
    return _task(key, exp, label, lambda: {"routine": "blackscholes", "params": p,
                                           "result": timed(progs, "blackscholes", args, passes, reps)})


def tree_tasks(cfg, progs) -> list[Task]:
    out = []
    for inp in cfg.inputs:
        for layout in ("soa", "aos"):
            out.append(bs_task(cfg, progs, "tree", layout, inp, "plain", 4096))
            for kind in ("tree", "tree3"):
                out += [bs_task(cfg, progs, "tree", layout, inp, kind, pg) for pg in cfg.pages]
    return out


def chase_task(cfg, progs, exp, size, kind) -> Task:
    n = cfg.chase_small if size == "small" else cfg.chase_large
    acc = cfg.small_accesses if size == "small" else cfg.large_accesses
    p = {"size": size, "elements": n, "kind": kind, "page": cfg.chase_page}
    reps = cfg.reps if size == "small" else cfg.large_reps
    key = f"{exp}/chase/{size}/{n}/{kind}/{cfg.chase_page}/a{acc}/r{reps}"
    args = [kind, str(cfg.chase_page), str(n), "{n}"]
    return _task(key, exp, f"random access: {size} array, {kind}",
                 lambda: {"routine": "chase", "params": p, "result": timed(progs, "chase", args, acc, reps)})


def plan(cfg: StudyConfig, progs) -> list[Task]:
    out = []
    if "splitstack" in cfg.experiments:
        out += split_tasks(cfg, progs)
    if "tree" in cfg.experiments:
        out += tree_tasks(cfg, progs)
    if "random" in cfg.experiments:
        out += [chase_task(cfg, progs, "random", size, kind) for size in ("small", "large")
                for kind in ("plain", "tree", "tree3")]
    if "hugepages" in cfg.experiments:
        out += [chase_task(cfg, progs, "hugepages", "large", kind) for kind in ("plain4k", "plain2m")]
        out += [bs_task(cfg, progs, "hugepages", layout, cfg.huge_input, kind, 4096)
                for layout in cfg.huge_layouts for kind in ("plain4k", "plain2m")]
    if cfg.count_instructions:
        out += instructions.tasks(cfg, progs)
    return out
