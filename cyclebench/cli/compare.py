"""cyclebench compare: two runs of the same kind, figure by figure, with a noise-aware verdict."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import Regression, UsageError
from .parser import subparser


def add_parser(sub):
    p = subparser(sub, "compare", "compare two runs (asm, inst or a study): old vs new with a U test",
                  "Compare two results of the same kind (two asm JSON files, two inst results, or two\n"
                  "output folders of one study) figure by figure: old, new, the signed relative change\n"
                  "(new - old) / |old|, and a two-sided Mann-Whitney U test on the raw samples. A change is\n"
                  "called when p < --alpha and it is larger than the runs' own noise. Each run's measuring\n"
                  "options are a line under the table; runs measured with different options are compared\n"
                  "all the same, with a warning that names what differs.\n"
                  "example: cyclebench compare before.json after.json --fail-on-regression")
    p.add_argument("old", type=Path, metavar="OLD")
    p.add_argument("new", type=Path, metavar="NEW")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A", help="significance level (default 0.05)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="output format")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 12 when a figure got significantly slower (for CI)")
    p.set_defaults(run=run)


def run(args) -> int:
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha {args.alpha} is not between 0 and 1", "e.g. --alpha 0.05")
    from ..reports import get_reporter
    from ..results.compare import as_report, compare
    from ..results.loaders import load
    c = compare(load(args.old), load(args.new), args.alpha)
    sys.stdout.write(get_reporter(args.format).render(as_report(c)))
    if args.format != "text":
        for w in c.warnings:
            print(f"warning: {w}", file=sys.stderr)
    if args.fail_on_regression and c.regressions:
        worst = max(c.regressions, key=lambda ch: ch.delta)
        raise Regression(f"{len(c.regressions)} figure(s) got significantly slower (worst: {worst.label} "
                         f"{worst.delta:+.1%})", "see the table above; --alpha sets the significance level")
    return 0
