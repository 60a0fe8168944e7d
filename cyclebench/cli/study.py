"""cyclebench study: run a study (cyclebench/studies/<name>/) and write its results and report."""
from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path

from ..errors import UsageError
from ..study import registry
from ..study.engine import run_study
from .options import whole_number
from .parser import Parser, exit_code_help, subparser


def add_parser(sub):
    p = subparser(sub, "study", "run a study (e.g. memset) and write tables, plots and a summary",
                  "Run a study: every implementation is checked for correctness first, then timed; each\n"
                  "measurement is appended to OUT/results.jsonl as it is made, and the tables (text, CSV),\n"
                  "results.json, plots and summary.md are written next to it at the end.\n"
                  f"studies: {', '.join(registry.names())}\n"
                  "the options of one study: cyclebench study NAME --help\n"
                  "example: cyclebench study memset --quick")
    p.add_argument("--list", action="store_true", help="list the studies and exit")
    p.add_argument("name", nargs="?", metavar="STUDY", help="the study to run")
    p.add_argument("options", nargs=argparse.REMAINDER, metavar="...",
                   help="--quick, --out DIR, --resume, -n N, --no-progress and the study's own options")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.list:
        for name, title in registry.listing():
            print(f"{name:12s} {title}")
        return 0
    if not args.name:
        raise UsageError("no study named", "give one of " + ", ".join(registry.names()) + " (see --list)")
    study = registry.get(args.name)
    opts = study_parser(study).parse_args(args.options)
    t0 = time.monotonic()
    config = study.configure(opts)
    out = opts.out or Path("cyclebench-results") / (f"{study.name}-quick" if opts.quick else study.name)
    res = run_study(study, config, out, resume=opts.resume, progress=not opts.no_progress)
    sys.stdout.write(res.outputs["tables"].read_text())
    print(f"\n{res.measured} measurements made, {res.skipped} already in {res.outputs['results']}; "
          f"wall time {time.monotonic() - t0:.0f} s")
    print(f"summary: {res.outputs['summary']}")
    print("outputs: " + ", ".join(sorted(p.name for k, p in res.outputs.items() if k != "summary")))
    return 0


def study_parser(study) -> argparse.ArgumentParser:
    """The shared options of every study, then the study's own."""
    p = Parser(prog=f"cyclebench study {study.name}", description=textwrap.fill(study.description or study.title, 100, break_on_hyphens=False),
               epilog=exit_code_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = p.add_argument_group("options of every study")
    shared.add_argument("--quick", action="store_true",
                        help="a smaller grid with fewer repetitions, to try the study out")
    shared.add_argument("--out", type=Path, metavar="DIR",
                        help=f"output folder (default: cyclebench-results/{study.name}, or "
                             f"cyclebench-results/{study.name}-quick with --quick)")
    shared.add_argument("--resume", action="store_true",
                        help="keep OUT/results.jsonl and measure only what it lacks (without it, an "
                             "earlier run's file is kept as results.N.jsonl, the first free N)")
    shared.add_argument("-n", "--n-measurements", type=whole_number, metavar="N",
                        help="repetitions per measurement (default: the study's)")
    shared.add_argument("--no-progress", action="store_true",
                        help="no progress report (by default: a bar on a terminal, else a line per stage)")
    study.add_options(p.add_argument_group(f"options of the {study.name} study"))
    return p
