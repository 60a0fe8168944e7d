"""The study's tasks. Each timed task is a **comparison group**: a baseline and its variants
(normal and split builds; a plain array and the trees at every page size) timed interleaved by ``routines.program.time_programs``, so a burst of host noise falls on all
of them alike and the normalised figures stay steady. Its record holds one member per program
(``members``: params and time_program's figures); ``expand`` turns a record into per-program
records for the analysis. A task's key names everything that changes its figures, so
``--resume`` measures only what is missing. The huge-page runs are one program per task (see
plan()). Instruction counts are instructions.py's tasks.

Units of one iteration (what time_program divides by): a split-stack benchmark's iteration is one
fib(ARG) or one sum(DEPTH), divided afterwards by its calls; blackscholes counts one option priced
once; the chase one access."""
from __future__ import annotations

from cyclebench.routines.program import ProgramLimits
from cyclebench.study.base import Task
from cyclebench.study.programs import Programs, time_group

from . import instructions
from .config import INPUTS, StudyConfig

LIMITS = ProgramLimits(cpu_seconds=120, memory=8 << 30, timeout=120)


def timed_group(progs: Programs, members: list[tuple[dict, str, list]], iterations: int, reps: int) -> dict:
    """members: (params, build, args) each. The record body: the group's facts in ``result``
    (backend, stability, warnings: what the run's facts count, once per group) and ``members``
    (params and time_program's figures with the program's own report)."""
    results, group = time_group([(progs.built[b], args) for _, b, args in members], iterations, reps, LIMITS)
    out = [{"params": p, "result": res} for (p, _, _), res in zip(members, results)]
    return {"routine": "group", "params": {"members": [m["params"] for m in out]}, "result": group, "members": out}


def expand(records: list[dict]) -> list[dict]:
    """Per-program records (experiment, routine, params, result) from group records."""
    out = []
    for r in records:
        if "members" in r:
            out += [{"experiment": r["experiment"], "routine": m["params"]["routine"], "params": m["params"],
                     "result": m["result"]} for m in r["members"]]
        else:
            out.append(r)
    return out


def _group(key, exp, label, progs, members, its, reps) -> Task:
    return Task(key, exp, label, lambda: timed_group(progs, members, its, reps))


def split_tasks(cfg: StudyConfig, progs) -> list[Task]:
    out = []
    def m(bench, arg, build, sig, args):                                         # noqa: E306
        return ({"routine": "splitstack", "bench": bench, "arg": arg, "build": build, "signals": sig},
                build, args + (["nosig"] if sig == "off" else []))
    fib = [m("fib", cfg.fib_arg, b, "on", ["fib", str(cfg.fib_arg), "{n}"]) for b in ("normal", "split")]
    out.append(_group(f"splitstack/fib/{cfg.fib_arg}/n{cfg.fib_iterations}/r{cfg.reps}", "splitstack",
                      f"split stack: fib({cfg.fib_arg})", progs, fib, cfg.fib_iterations, cfg.reps))
    for depth in cfg.sum_depths:
        its = max(1, cfg.sum_calls // depth)
        ms = [m("sum", depth, b, s, ["sum", str(depth), "{n}"]) for b, s in (("normal", "on"), ("split", "on"), ("split", "off"))]
        out.append(_group(f"splitstack/sum/{depth}/n{its}/r{cfg.reps}", "splitstack", f"split stack: sum({depth:,})",
                          progs, ms, its, cfg.reps))
    cheap = [m("hot", h, b, s, ["hot", str(h), "{n}"]) for b, h, s in (("normal", 1, "on"), ("split", 0, "on"), ("split", 1, "off"))]
    its = cfg.hot_iterations * cfg.hot_cheap_factor
    out.append(_group(f"splitstack/hot-cheap/n{its}/r{cfg.reps}", "splitstack", "split stack: hot loop, no crossing",
                      progs, cheap, its, cfg.reps))
    costly = [m("hot", 1, "split", "on", ["hot", "1", "{n}"])]
    out.append(_group(f"splitstack/hot-crossing/n{cfg.hot_iterations}/r{cfg.reps}", "splitstack",
                      "split stack: hot split", progs, costly, cfg.hot_iterations, cfg.reps))
    return out


def _bs(layout, inp, kind, page) -> tuple:
    p = {"routine": "blackscholes", "layout": layout, "input": inp, "options": INPUTS[inp], "kind": kind, "page": page}
    return p, "blackscholes", [layout, kind, str(page), str(INPUTS[inp]), "{n}"]


def tree_tasks(cfg, progs) -> list[Task]:
    out = []
    for inp in cfg.inputs:
        passes = cfg.passes_for(inp)
        reps = cfg.native_reps if inp == "native" else cfg.reps
        for layout in ("soa", "aos"):
            ms = [_bs(layout, inp, "plain", 4096)] + [_bs(layout, inp, k, pg) for pg in cfg.pages for k in ("tree", "tree3")]
            pages = "-".join(str(pg >> 10) for pg in cfg.pages)
            out.append(_group(f"tree/blackscholes/{layout}/{inp}/pages{pages}/p{passes}/r{reps}", "tree",
                              f"blackscholes {layout} {inp}: plain and trees", progs, ms, passes, reps))
    return out


def _chase(cfg, size, kind) -> tuple:
    n = cfg.chase_small if size == "small" else cfg.chase_large
    p = {"routine": "chase", "size": size, "elements": n, "kind": kind, "page": cfg.chase_page}
    return p, "chase", [kind, str(cfg.chase_page), str(n), "{n}"]


def plan(cfg: StudyConfig, progs) -> list[Task]:
    out = []
    if "splitstack" in cfg.experiments:
        out += split_tasks(cfg, progs)
    if "tree" in cfg.experiments:
        out += tree_tasks(cfg, progs)
    if "random" in cfg.experiments:
        for size, acc, reps in (("small", cfg.small_accesses, cfg.reps), ("large", cfg.large_accesses, cfg.large_reps)):
            n = cfg.chase_small if size == "small" else cfg.chase_large
            ms = [_chase(cfg, size, k) for k in ("plain", "tree", "tree3")]
            out.append(_group(f"random/chase/{size}/{n}/{cfg.chase_page}/a{acc}/r{reps}", "random",
                              f"random access: {size} array", progs, ms, acc, reps))
    if "hugepages" in cfg.experiments:
        # Not interleaved: a 2 MiB-page run right after a 4 KiB-page run of 256 MiB finds memory
        # fragmented and pays for compaction when it builds its array, its next run does not; such
        # an order effect would not cancel in the n / 2n difference. Each kind is its own task.
        for kind in ("plain4k", "plain2m"):
            out.append(_group(f"hugepages/chase/{cfg.chase_large}/{kind}/a{cfg.large_accesses}/r{cfg.large_reps}",
                              "hugepages", f"huge pages: chase {kind}", progs, [_chase(cfg, "large", kind)],
                              cfg.large_accesses, cfg.large_reps))
        for layout in cfg.huge_layouts:
            for kind in ("plain4k", "plain2m"):
                out.append(_group(f"hugepages/blackscholes/{layout}/{cfg.huge_input}/{kind}"
                                  f"/p{cfg.passes_for(cfg.huge_input)}/r{cfg.native_reps}", "hugepages",
                                  f"huge pages: blackscholes {layout} {kind}", progs,
                                  [_bs(layout, cfg.huge_input, kind, 4096)], cfg.passes_for(cfg.huge_input),
                                  cfg.native_reps))
    if cfg.count_instructions:
        out += instructions.tasks(cfg, progs)
    return out
