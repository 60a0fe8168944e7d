"""The study kit's whole programs: a build matrix, plain runs and the ``key value`` report a program
prints, and comparison groups timed interleaved.

* ``build_matrix(c_dir, builds, prefix)``: every (source, flags) build of a study through
  ``routines.program.build_program`` (compiled once, cached); a build's key is a name or a tuple
  (program, build), its cache name ``prefix-part-part``.
* ``run(path, args)``: one plain run in a child process (checks, counts, races: never timed), its
  exit status, stdout and stderr as an ``Outcome``; ``run_ok`` raises SnippetFault unless it
  succeeded.
* ``parse_report(text)``: the ``key value`` lines a program prints. One rule for values: an
  integer when it parses as one, else a float when it parses as one, else the text.
* ``time_group(items, iterations, repetitions, limits)``: programs timed interleaved by
  ``time_programs``, so a burst of host noise falls on all of them alike; each one's result
  (its ProgramTiming without raw ticks, its last run's report and every long run's) and the group's
  Measurement facts; ``program_figures``, a timed program's row in records.csv.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import SnippetFault
from ..measurement.measured import group_facts
from ..routines.program import ProgramLimits, build_program, time_programs


@dataclass(frozen=True)
class Build:
    source: str                      # a file in the study's C folder
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...] = ()


@dataclass
class Programs:
    built: dict                      # key -> routines.build.Built
    builds: dict                     # key -> Build

    def path(self, *key) -> str:
        return str(self.built[key[0] if len(key) == 1 else key].path)

    def flags(self, *key) -> list[str]:
        return list(self.builds[key[0] if len(key) == 1 else key].cflags)


def build_matrix(c_dir: Path, builds: dict, prefix: str) -> Programs:
    """Build every entry of ``builds`` (key -> Build) from ``c_dir``."""
    out = {}
    for key, b in builds.items():
        parts = key if isinstance(key, tuple) else (key,)
        out[key] = build_program([Path(c_dir) / b.source], cflags=list(b.cflags), ldflags=list(b.ldflags) or None,
                                 name="-".join((prefix, *parts)))
    return Programs(out, dict(builds))


def parse_report(text: str) -> dict:
    """The ``key value`` lines a program printed: int, else float, else the text."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isidentifier():
            out[parts[0]] = _number(parts[1])
    return out


def _number(s: str):
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        return s


@dataclass
class Outcome:
    status: int                      # exit status, or -signal
    stdout: str
    stderr: str

    @property
    def report(self) -> dict:
        return parse_report(self.stdout)


def run(path: str | Path, args, timeout: float = 120.0) -> Outcome:
    """Run a built program once in a child process (not timed)."""
    argv = [str(path), *map(str, args)]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, text=True, errors="replace",
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise SnippetFault(f"{Path(argv[0]).name} did not finish in {timeout:g} s",
                           "give it a smaller input") from None
    return Outcome(p.returncode, p.stdout, p.stderr)


def run_ok(path: str | Path, args, timeout: float = 120.0) -> Outcome:
    """A run that must succeed (SnippetFault otherwise)."""
    o = run(path, args, timeout)
    if o.status != 0:
        raise SnippetFault(f"{Path(path).name} {' '.join(map(str, args))} failed with status {o.status}: "
                           f"{o.stderr.strip()[-200:]}", "run it by hand with the same arguments")
    return o


def time_group(items: list, iterations: int, repetitions: int, limits: ProgramLimits) -> tuple[list[dict], dict]:
    """items: (Built, args) each. -> (each program's result, the group's facts with its calibration
    and how many programs it timed)."""
    ts = time_programs(items, iterations=iterations, repetitions=repetitions, limits=limits)
    results = []
    for t in ts:
        res = t.to_dict()
        res.pop("samples", None)
        res["report"] = parse_report(t.output)
        res["reports"] = [parse_report(o) for o in res.pop("outputs", [])]
        results.append(res)
    group = {**group_facts(results), "calibration": results[0]["calibration"], "programs": len(results)}
    return results, group


def program_figures(result: dict) -> dict:
    """A timed program's figures for a records.csv row."""
    pi = result["per_iteration"]
    return {"cycles_per_iteration": pi["median"], "best": result["best"], "relative_spread": pi.get("relative_spread"),
            "stable": result.get("stable"), "ns_per_iteration": (result.get("per_iteration_ns") or {}).get("median")}
