"""cyclebench study: run a reproduced study (today: memset) and write its results and report."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from .options import positive_int
from .parser import subparser

STUDIES = ("memset",)


def add_parser(sub):
    p = subparser(sub, "study", "run a reproduced study (memset) and write tables, plots and a summary",
                  "Run a study: every implementation is checked for correctness first, then timed; each\n"
                  "measurement is appended to OUT/results.jsonl as it is made, and the tables (text, CSV),\n"
                  "results.json, PNG plots and summary.md are written next to it at the end.\n"
                  "example: cyclebench study memset --quick")
    p.add_argument("name", choices=STUDIES, metavar="STUDY", help="the study: memset")
    p.add_argument("--quick", action="store_true",
                   help="a subset of sizes, rows and thresholds with fewer repetitions (about 2 minutes)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="output directory (default: cyclebench-results/memset or .../memset-quick)")
    p.add_argument("--resume", action="store_true",
                   help="keep OUT/results.jsonl and measure only what it lacks (without it, an old file "
                        "is moved to results.prev.jsonl)")
    p.add_argument("--kernels", metavar="LIST",
                   help="comma-separated kernels to include (default: every one this CPU supports)")
    p.add_argument("--routine", action="append", default=[], metavar="NAME=LIB.so:SYMBOL",
                   help="add your own memset (void *fn(void *, int, size_t)); repeatable")
    p.add_argument("--experiments", metavar="LIST",
                   help="comma-separated subset of fixed,random,stores,threshold (default: all)")
    p.add_argument("-n", "--n-measurements", type=positive_int, metavar="N",
                   help="repetitions per measurement (default 15 with --quick, else 30)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def _list(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise UsageError("an empty list was given", hint="e.g. --kernels libc,nt_old,new_sse")
    return items


def run(args) -> int:
    import time
    from dataclasses import replace

    from ..studies.memset import study
    t0 = time.monotonic()
    cfg = study.QUICK if args.quick else study.FULL
    extra = []
    for item in args.routine:
        name, sep, spec = item.partition("=")
        if not sep or not name or ":" not in spec:
            raise UsageError(f"--routine {item!r} is not NAME=LIB.so:SYMBOL",
                             hint="e.g. --routine mine=./libmymemset.so:my_memset (or mine=libc:memset)")
        extra.append((name, spec))
    changes = {}
    if args.kernels is not None:
        changes["kernels"] = _list(args.kernels)
    if extra:
        changes["extra"] = tuple(extra)
    if args.experiments is not None:
        changes["experiments"] = _list(args.experiments)
    if args.n_measurements:
        changes["reps"] = args.n_measurements
    if changes:
        cfg = replace(cfg, **changes)
    out = args.out or Path("cyclebench-results") / ("memset-quick" if args.quick else "memset")
    res = study.run_study(cfg, out, resume=args.resume, progress=not args.no_progress)
    tables = res.outputs.get("tables")
    if tables and tables.exists():
        sys.stdout.write(tables.read_text())
    wall = time.monotonic() - t0
    print(f"\n{res.measured} measurements made, {res.skipped} already in {res.out / study.RESULTS}; "
          f"wall time {wall:.0f} s")
    print(f"summary: {res.outputs['summary']}")
    print("outputs: " + ", ".join(sorted(p.name for k, p in res.outputs.items() if k not in ("summary",))))
    return 0
