#!/usr/bin/env python3
"""Benchmark (not a test): where the runner runs and seconds of the instruction tables go.

Runs the forms of ``bench/instruction_speed.py`` (the same fixed spread over the offered forms) and
counts every runner run (one ``Session.measure``: one runner process) by the chain of calls in the
instruction modules that asked for it, with its seconds.  The counting wraps ``Session.measure`` and
changes no result.

Run: python3 bench/instruction_profile.py [--forms 300] [--cpus 0,1] [--log calls.tsv] [--results R.jsonl]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.instructions import Catalogue  # noqa: E402
from cyclebench.instructions import session as S  # noqa: E402
from cyclebench.instructions.bulk import Selected, run  # noqa: E402

_HERE = os.sep + "instructions" + os.sep


def _caller_chain() -> str:
    """The instruction modules' frames below characterize(), outermost first: module.function:line."""
    frames = [f for f in traceback.extract_stack()[:-2] if _HERE in f.filename]
    names = [f"{Path(f.filename).stem}.{f.name}:{f.lineno}" for f in frames
             if not f.filename.endswith("session.py") and not f.filename.endswith("bulk.py")]
    return " > ".join(names[1:] if names and names[0].startswith("characterize.characterize") and len(names) > 1
                      else names) + (" [" + names[0].split(":")[1] + "]" if names else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--forms", type=int, default=300)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--cpus", default="0,1")
    ap.add_argument("--log", type=Path, help="keep each run's line (chain, seconds, form) here")
    ap.add_argument("--results", type=Path)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    log = args.log or Path(tempfile.mkstemp(suffix=".tsv")[1])
    log.write_text("")
    inner = S.Session.measure

    def counted(self, code, init, *a, **kw):
        t = time.monotonic()
        try:
            return inner(self, code, init, *a, **kw)
        finally:
            line = f"{_caller_chain()}\t{time.monotonic() - t:.4f}\t{counted.form}\n"
            fd = os.open(log, os.O_WRONLY | os.O_APPEND)
            os.write(fd, line.encode())
            os.close(fd)
    counted.form = ""
    S.Session.measure = counted
    import cyclebench.instructions.bulk as B
    one = B._characterize_one

    def tagged(form, session, opts, name):
        counted.form = name
        return one(form, session, opts, name)
    B._characterize_one = tagged

    cat = Catalogue.load()
    offered = cat.offered()
    step = max(1, len(offered) // args.forms)
    sel = [Selected(f.name, f) for f in offered[::step][:args.forms]]
    t0 = time.monotonic()
    docs = run(sel, results=args.results, cpus=[int(c) for c in args.cpus.split(",")],
               measure_kwargs={"n_measurements": args.n})
    dt = time.monotonic() - t0
    runs, secs, forms = defaultdict(int), defaultdict(float), defaultdict(set)
    for line in log.read_text().splitlines():
        chain, s, form = line.split("\t")
        runs[chain] += 1
        secs[chain] += float(s)
        forms[chain].add(form)
    total_runs, total_s = sum(runs.values()), sum(secs.values())
    unstable = sum(1 for d in docs if d.get("stable") is False)
    print(f"{len(docs)} forms in {dt:.1f} s ({60 * len(docs) / dt:.0f} forms/min), {total_runs} runner runs, "
          f"{total_s:.0f} runner-seconds, unstable forms {unstable}; log {log}")
    for chain in sorted(runs, key=secs.get, reverse=True)[:args.top]:
        print(f"{runs[chain]:6d} runs {secs[chain]:7.1f} s {len(forms[chain]):4d} forms  {chain}")


if __name__ == "__main__":
    main()
