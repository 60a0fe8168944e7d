#!/usr/bin/env python3
"""Benchmark (not a test, measures nothing): how much of each shipped uops.info column the catalogue
covers. For every published form: matched by its own name, by a spelling rule (coverage.py), or by
a loose rule (operand width, one of two encodings); and for the rest, how many are not offered or
not runnable on this CPU, or have no catalogue form, each by reason.

Run: python3 bench/published_coverage.py [ZEN4 ADL-P ...]   (default: this CPU's column, ADL-P, ZEN3)
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.errors import CycleBenchError  # noqa: E402
from cyclebench.instructions import Catalogue  # noqa: E402
from cyclebench.instructions.agreement import targets  # noqa: E402
from cyclebench.instructions.coverage import Index, summary, summary_lines  # noqa: E402
from cyclebench.instructions.published import read_csv  # noqa: E402
from cyclebench.instructions.reference import column, own_column  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="exit codes: 0 done, 2 an unknown column code")
    ap.add_argument("codes", nargs="*", metavar="CODE",
                    help="uops.info column codes (default: this CPU's column, ADL-P, ZEN3)")
    codes = ap.parse_args().codes
    if not codes:
        try:
            codes = [own_column().code]
        except CycleBenchError:      # an unknown CPU has no column of its own
            codes = []
        codes += [c for c in ("ADL-P", "ZEN3") if c not in codes]
    try:
        columns = [column(code) for code in codes]
    except CycleBenchError as e:
        print(f"error: {e.cause}\nhint: {e.hint}", file=sys.stderr)
        sys.exit(e.exit_code)
    cat = Catalogue.load()
    index = Index(cat)
    for col in columns:
        code = col.code
        records = read_csv(str(col.path))
        how = Counter(index.find(name)[1] or "no catalogue form" for name in records)
        print(f"{code}: {len(records)} published forms; matched by " +
              ", ".join(f"{k} {v}" for k, v in how.most_common()))
        for line in summary_lines(summary(targets(records, cat))):
            print("  " + line)


if __name__ == "__main__":
    main()
