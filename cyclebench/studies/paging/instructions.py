"""Instruction counts without a PMU: valgrind's callgrind counts the instructions a program
executes (its ``Ir``, exact for a deterministic program on valgrind's simulated CPU). Each count
runs the program at n and 2n iterations and takes the difference, so start-up, input generation
and exit cancel, as in the timings: ``(Ir(2n) - Ir(n)) / (reported(2n) - reported(n))``.

Counted where it is cheap: the split-stack benchmarks, blackscholes on ``count_input`` (plain, and
the tree at ``count_pages``), and the small-array chase (the large one would take valgrind minutes
to initialise)."""
from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from cyclebench.errors import SnippetFault
from cyclebench.toolchain import tool_version
from cyclebench.study.base import Task
from cyclebench.study.programs import parse_report

from .config import INPUTS, StudyConfig

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def valgrind() -> str | None:
    return shutil.which("valgrind")


def version() -> str | None:
    v = valgrind()
    if not v:
        return None
    return tool_version(v)


def count(path: str, args: list[str]) -> tuple[int, int]:
    """(instructions executed, iterations reported) of one run under callgrind."""
    argv = [valgrind(), "--tool=callgrind", "--callgrind-out-file=/dev/null", str(path), *args]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise SnippetFault(f"callgrind did not finish {' '.join(args)} in 600 s", "count a smaller input") from None
    m = _COLLECTED.search(p.stderr)
    its = parse_report(p.stdout).get("iterations")
    if p.returncode != 0 or not m or not its:
        raise SnippetFault(f"callgrind could not count {' '.join(args)} (status {p.returncode})",
                           "run it by hand: " + " ".join(argv))
    return int(m.group(1)), int(its)


def per_iteration(path: str, args: list[str], n: int) -> dict:
    fill = lambda k: [a.replace("{n}", str(k)) for a in args]           # noqa: E731
    with ThreadPoolExecutor(2) as ex:                                    # the two runs side by side
        (ia, na), (ib, nb) = ex.map(lambda k: count(path, fill(k)), (n, 2 * n))
    return {"instructions": (ib - ia) / (nb - na), "iterations": [na, nb], "counted": [ia, ib],
            "method": "valgrind --tool=callgrind Ir, difference of n and 2n runs"}


def _t(key, label, params, build, args, n, progs) -> Task:
    return Task(f"instructions/{key}", "instructions", f"instructions: {label}",
                lambda: {"routine": "callgrind", "params": {**params, "build": build},
                         "result": per_iteration(progs.path(build), args, n)})


def tasks(cfg: StudyConfig, progs) -> list[Task]:
    if not valgrind():
        return []
    out = []
    if "splitstack" in cfg.experiments:
        for build in ("normal", "split"):
            out.append(_t(f"fib/20/{build}", f"fib {build}", {"bench": "fib", "arg": 20}, build, ["fib", "20", "{n}"], 2, progs))
            out.append(_t(f"sum/50000/{build}", f"sum {build}", {"bench": "sum", "arg": 50000}, build,
                          ["sum", "50000", "{n}"], 1, progs))     # no re-exec for a bigger stack
        for hot, sig in ((1, "on"), (1, "off"), (0, "on")):
            out.append(_t(f"hot/{hot}/sig-{sig}", f"hot split {hot} signals {sig}", {"bench": "hot", "arg": hot, "signals": sig},
                          "split", ["hot", str(hot), "{n}"] + (["nosig"] if sig == "off" else []), 2000, progs))
    if "tree" in cfg.experiments:
        n = INPUTS[cfg.count_input]
        for layout in ("soa", "aos"):
            kinds = [("plain", 4096)] + [(k, pg) for k in ("tree", "tree3") for pg in cfg.count_pages]
            for kind, pg in kinds:
                p = {"bench": "blackscholes", "layout": layout, "input": cfg.count_input, "kind": kind, "page": pg}
                out.append(_t(f"blackscholes/{layout}/{cfg.count_input}/{kind}/{pg}", f"blackscholes {layout} {kind} {pg}",
                              p, "blackscholes", [layout, kind, str(pg), str(n), "{n}"], 1, progs))
    if "random" in cfg.experiments:
        for kind in ("plain", "tree", "tree3"):
            p = {"bench": "chase", "size": "small", "kind": kind, "page": cfg.chase_page}
            out.append(_t(f"chase/small/{cfg.chase_small}/{kind}", f"chase small {kind}", p, "chase",
                          [kind, str(cfg.chase_page), str(cfg.chase_small), "{n}"], 100_000, progs))
    return out
