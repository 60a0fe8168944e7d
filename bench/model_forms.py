#!/usr/bin/env python3
"""The forms of the predictor's model run (docs/ports.md, "Measured on Zen 4"), one a line.

Prints the mixable forms that occur in the basic blocks of the project's C kernels
(``cyclebench/studies/*/c/*.c``, gcc -O2, as bench/ports_accuracy.py cuts and rebases them),
then the forms that, added one at a time, let the most BHive blocks
(``cyclebench/blocks/data/bhive_blocks.csv``) consist of printed forms only (``--bhive-forms``,
default 12).  The run adds its random forms itself (``--sample 24 --seed 1``):

    mapfile -t F < <(python3 bench/model_forms.py)
    cyclebench ports "${F[@]}" --sample 24 --seed 1 --resume ports-zen4.jsonl

Measures nothing.  The set follows the catalogue, gcc and the kernels of the day: the documented
run's 127 forms were 92 + 11 + 24.

Run: python3 bench/model_forms.py [--bhive-forms 12]
"""
from __future__ import annotations

import argparse
import collections
import glob
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from cyclebench.blocks import bulk  # noqa: E402
from cyclebench.errors import CycleBenchError  # noqa: E402
from cyclebench.instructions.catalogue import Catalogue  # noqa: E402
from cyclebench.instructions.ports.blocks import compiled_blocks  # noqa: E402
from cyclebench.instructions.ports.mixes import mixable  # noqa: E402
from cyclebench.instructions.ports.predict import decode, form_of  # noqa: E402

BHIVE = ROOT.parent / "cyclebench" / "blocks" / "data" / "bhive_blocks.csv"


def kernel_forms(cat: Catalogue, ok) -> set[str]:
    out = set()
    for src in sorted(glob.glob(str(ROOT.parent / "cyclebench" / "studies" / "*" / "c" / "*.c"))):
        for b in compiled_blocks(Path(src)):
            try:
                instructions = decode("\n".join(b))
            except CycleBenchError:          # a line GNU as takes otherwise than objdump wrote it
                continue
            out |= {f for f in (form_of(i, cat) for i in instructions) if f and ok(f)}
    return out


def bhive_forms(cat: Catalogue, ok, have: set[str], n: int) -> list[str]:
    """Greedily, the mixable form that completes the most BHive blocks, n times."""
    blocks = []
    for row in bulk.read_csv(BHIVE):
        try:
            forms = {form_of(i, cat) for i in decode(bytes.fromhex(row["hex"]))}
        except CycleBenchError:
            continue
        if None not in forms:
            blocks.append(forms)
    have, added = set(have), []
    for _ in range(n):
        gain = collections.Counter(next(iter(b - have)) for b in blocks if len(b - have) == 1)
        gain = collections.Counter({f: k for f, k in gain.items() if ok(f)})
        if not gain:
            break
        f = gain.most_common(1)[0][0]
        added.append(f)
        have.add(f)
    return added


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog="exit codes: 0 done; 2 bad arguments")
    ap.add_argument("--bhive-forms", type=int, default=12, metavar="N")
    args = ap.parse_args()
    if args.bhive_forms < 0:
        ap.error("--bhive-forms must be at least 0")
    cat = Catalogue.load()
    memo: dict[str, bool] = {}

    def ok(name: str) -> bool:
        if name not in memo:
            f = cat.get(name)
            memo[name] = f is not None and mixable(f) is None
        return memo[name]
    kern = kernel_forms(cat, ok)
    added = bhive_forms(cat, ok, kern, args.bhive_forms)
    print("\n".join(sorted(kern) + added))
    print(f"{len(kern)} kernel forms, {len(added)} BHive forms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
