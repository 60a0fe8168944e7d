#!/usr/bin/env python3
"""Benchmark helper (not a test): which saved random mixes meet denormals.

A random mix may read as a float what an integer instruction of it wrote (`cvtpd2dq xmm1, xmm2;
mulss xmm1, [m]`): small integers are denormal floats, and a multiplier or divider takes longer
over them, a cost of the values that no model of instructions has. Each random mix of the
``--save`` files of bench/ports_accuracy.py is run once more as that bench reads it (the
instruction tables' session, with the mix's init), and the mixes whose run left MXCSR's
denormal or underflow flag set (measurement/evaluate.fp_flags_warning) are written to OUT, one
line each (seed, text), after a head line saying where and when. ``ports_accuracy.py --replay
FILES --values OUT`` then counts them apart. The figure of the run is not kept: only the flag,
which follows from the values and not from the timing.

Run: python3 bench/ports_values.py --out values.jsonl bench/data/zen4/blocks-*.jsonl [--cpu 1]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.append(str(ROOT))

from cyclebench.errors import CycleBenchError  # noqa: E402
from cyclebench.instructions.session import Session  # noqa: E402
from cyclebench.machine.cpu import cpu_info  # noqa: E402
from cyclebench.measurement.evaluate import FP_VALUES  # noqa: E402
from ports_accuracy import RANDOM_SET, saved  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+", help="--save files of bench/ports_accuracy.py")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args()
    for given in args.files:
        if not given.is_file():
            ap.error(f"no file {given} (a --save file of bench/ports_accuracy.py)")
    session = Session(budget=0.5, cpu=args.cpu)
    c = cpu_info()
    runs = met = failed = 0
    with args.out.open("w") as out:
        out.write(json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "cpu": f"{c.model_name} (family {c.family} model {c.model})",
                              "files": [p.name for p in args.files]}) + "\n")
        for path in args.files:
            head, sets = saved(path)
            for d in sets.get(RANDOM_SET, ()):
                runs += 1
                try:
                    m = session.measure(d["block"].split("\n"), d.get("init", []), per=1)
                except CycleBenchError as e:
                    failed += 1
                    print(f"  not run ({e.cause}): {d['text']}")
                    continue
                if any(w.startswith(FP_VALUES) for w in m.warnings):
                    met += 1
                    out.write(json.dumps({"seed": head.get("seed"), "text": d["text"]}) + "\n")
            out.flush()
    print(f"{met} of {runs} random mixes met denormals ({failed} not run); written to {args.out}")


if __name__ == "__main__":
    main()
