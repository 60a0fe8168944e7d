"""The study's tasks, one list per experiment. A task's key names everything that changes its figure,
so ``--resume`` measures only what is missing.

* instructions, sequences: one snippet per task through ``measure_sequence`` (measure(): the
  reference's 1,000 copies in a loop, repeated; TSC-calibrated cycles per copy, IPC from the
  static count).
* overhead: one task per kernel, its builds timed **interleaved** by ``time_programs`` (n and 2n
  passes differenced: allocation, the first touch of the array, start-up and exit cancel).
* tables: one task per (variant, chunks), its builds interleaved the same way (a round is one
  allocation of every chunk; alloc keeps them until exit, so the difference includes their
  release at exit, as the reference's whole runs did).
* race: plain runs (not timed), counted outcomes per build.
"""
from __future__ import annotations

from cyclebench.errors import SnippetFault
from cyclebench.instructions.sequence import measure_sequence
from cyclebench.routines.program import ProgramLimits
from cyclebench.study.base import Task
from cyclebench.study.programs import time_group

from . import snippets
from .config import StudyConfig
from .programs import Programs, caught, run

LIMITS = ProgramLimits(cpu_seconds=900, memory=None, timeout=900)    # the emulated table reserves 1 GiB


def _snippet(row: snippets.Row, cfg: StudyConfig) -> dict:
    s = measure_sequence(row.code, init=row.init, unroll=cfg.unroll, loop=cfg.loop, n_measurements=cfg.reps,
                         budget=cfg.budget)
    r = s["result"]
    # the checks' branches are never taken (snippets.py), so the static count is exact: drop the
    # generic upper-bound warning measure_sequence gives any sequence with a branch
    warnings = [w for w in s["warnings"] if "IPC is an upper bound" not in w]
    result = {"cycles": s["cycles"], "uncertainty": s["uncertainty"], "instructions": s["instructions"],
              "ipc": s["ipc"], "ipc_bound": "exact", "branches": s["branches"], "stable": s["stable"],
              "warnings": warnings, "backend": r["backend"],
              "options": {"n_measurements": cfg.reps, "unroll": cfg.unroll, "loop": cfg.loop}}
    return {"routine": "snippet", "params": {"name": row.name, "kind": row.kind, "replaces": row.replaces,
                                             "code": row.code, "init": row.init}, "result": result}


def instruction_tasks(cfg) -> list[Task]:
    return [Task(f"instructions/{r.kind}/{r.code}/u{cfg.unroll}x{cfg.loop}/r{cfg.reps}", "instructions",
                 f"bnd table: {r.name}", lambda r=r: _snippet(r, cfg)) for r in snippets.instruction_rows()]


def sequence_tasks(cfg) -> list[Task]:
    out, seen = [], set()
    for access in ("load", "store"):
        for check in snippets.CHECKS:
            for kind in snippets.KINDS:
                row = snippets.sequence(access, check, kind)
                if (row.code, row.init) in seen:          # the bare access, ASan's both-bounds rows
                    continue
                seen.add((row.code, row.init))
                out.append(Task(f"sequences/{row.code}/u{cfg.unroll}x{cfg.loop}/r{cfg.reps}", "sequences",
                                f"check sequence: {row.name}", lambda row=row: _snippet(row, cfg)))
    return out


def _group(progs: Programs, program: str, builds, args: list, iterations: int, reps: int, params: dict) -> dict:
    results, group = time_group([(progs.built[(program, b)], args) for b in builds], iterations, reps, LIMITS)
    return {"routine": program, "params": {**params, "builds": list(builds), "iterations": iterations},
            "result": group, "members": [{"build": b, "result": res} for b, res in zip(builds, results)]}


def overhead_tasks(cfg, progs) -> list[Task]:
    out = []
    for k in cfg.kernels:
        n = cfg.size_of(k)
        builds = ("native",) + tuple(b for b in cfg.builds if b != "native")
        out.append(Task(f"overhead/{k}/{n}/p{cfg.passes}/{'-'.join(builds)}/r{cfg.reps}", "overhead",
                        f"overhead: {k}",
                        lambda k=k, n=n, builds=builds: _group(progs, "kernels", builds, [k, str(n), "{n}"],
                                                               cfg.passes, cfg.reps, {"kernel": k, "size": n})))
    return out


def table_tasks(cfg, progs) -> list[Task]:
    out = []
    for variant in ("alloc", "free"):
        for n in cfg.chunks:
            builds = ("native", "mpx_emu") + (("asan",) if n <= cfg.asan_chunks else ())
            out.append(Task(f"tables/{variant}/{n}/{'-'.join(builds)}/r{cfg.table_reps}", "tables",
                            f"bounds tables: {variant}, {n:,} chunks",
                            lambda v=variant, n=n, b=builds: _group(progs, "tables", b, [v, str(n), "{n}"], 1,
                                                                    cfg.table_reps, {"variant": v, "chunks": n})))
    return out


def race(progs: Programs, mode: str, build: str, elements: int, iterations: int, runs: int) -> dict:
    """Counted outcomes of ``runs`` runs of the race (c/race.c) built as ``build``."""
    outcomes = []
    for _ in range(runs):
        o = run(progs.path("race", build), [mode, elements, iterations, 0, 1], timeout=600)
        rep, stopped = o.report, caught(o)
        outcomes.append({"status": o.status, "caught": stopped, "accesses": rep.get("accesses"),
                         "flagged": rep.get("flagged"), "init_bounds": rep.get("init_bounds"),
                         "object_distance": rep.get("object_distance"),
                         "report": o.stderr.strip().splitlines()[:3] if stopped else []})
        if o.status != 0 and not stopped:
            raise SnippetFault(f"race {mode} ({build}) failed with status {o.status}: {o.stderr.strip()[-200:]}",
                               "run it by hand: race fn|fp ELEMENTS ITERATIONS 0 1")
    done = [x for x in outcomes if x["accesses"] is not None]
    flagged = sum(x["flagged"] for x in done)
    accesses = sum(x["accesses"] for x in done)
    false = (accesses - flagged) if mode == "fn" else flagged
    return {"runs": runs, "accesses": accesses, "flagged": flagged, "false_outcomes": false,
            "runs_with_false": sum(1 for x in done if (x["accesses"] - x["flagged"] if mode == "fn" else x["flagged"])),
            "init_bounds": sum(x["init_bounds"] for x in done), "caught_runs": sum(x["caught"] for x in outcomes),
            "object_distance": outcomes[0]["object_distance"], "reports": [x["report"] for x in outcomes if x["report"]][:1],
            "outcomes": outcomes}


def race_tasks(cfg, progs) -> list[Task]:
    out = []
    for mode in ("fn", "fp"):
        its = cfg.race_iterations_of(mode)
        for build in ("mpx_emu", "asan", "native"):
            out.append(Task(f"race/{mode}/{build}/{cfg.race_elements}x{its}/runs{cfg.race_runs}", "race",
                            f"race: {mode}, {build}",
                            lambda m=mode, b=build, i=its: {
                                "routine": "race", "params": {"mode": m, "build": b, "elements": cfg.race_elements,
                                                              "iterations": i},
                                "result": race(progs, m, b, cfg.race_elements, i, cfg.race_runs)}))
    return out


def plan(cfg: StudyConfig, progs: Programs) -> list[Task]:
    tasks = {"instructions": lambda: instruction_tasks(cfg), "sequences": lambda: sequence_tasks(cfg),
             "overhead": lambda: overhead_tasks(cfg, progs), "tables": lambda: table_tasks(cfg, progs),
             "race": lambda: race_tasks(cfg, progs)}
    return [t for e in cfg.experiments for t in tasks[e]()]
