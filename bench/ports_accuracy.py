#!/usr/bin/env python3
"""Benchmark (not a test): the resource model inferred from throughput (``cyclebench ports``),
against the published ports column and as a throughput predictor beside llvm-mca-16.

Prints
* port-set agreement with the published ports column, on every studied form that has one
  (portsets.compare: µops per mapped port set);
* predicted-vs-measured error of whole blocks: the share within 10% and the mean absolute
  percentage error, for random mixes of the modelled forms and for basic blocks of the project's
  own C kernels (gcc -O2, objdump; memory operands rebased onto the harness's data area), with
  llvm-mca-16 (-mcpu, default znver4) on the same blocks.

Each block is measured with the instruction tables' session (cycles per iteration of the block,
harmless vector values) and predicted with the model; latencies for the chain bound come from
the published CSV.  Measuring takes the test suite's lock; run it on a quiet machine.

The published data is ``bench/data/uops-info-zen4-studied.csv``: the rows of uops.info's Zen 4
table (uops.info, instructions.csv of the ZEN4 column) for the forms studied here.

Run: python3 bench/ports_accuracy.py --model ports.jsonl [--random 40] [--compiled 60] [--seed 1]
"""
from __future__ import annotations

import argparse
import glob
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from cyclebench.errors import CycleBenchError  # noqa: E402
from cyclebench.instructions.catalogue import Catalogue  # noqa: E402
from cyclebench.instructions.instantiate import instantiate  # noqa: E402
from cyclebench.instructions.llvm_mca import run as mca_run  # noqa: E402
from cyclebench.instructions.operands import POOLS  # noqa: E402
from cyclebench.instructions.ports.blocks import compiled_blocks  # noqa: E402
from cyclebench.instructions.ports.portsets import compare, published_for, resource_ports  # noqa: E402
from cyclebench.instructions.ports.latency import from_file  # noqa: E402
from cyclebench.instructions.ports.predict import predict  # noqa: E402
from cyclebench.instructions.ports.run import load  # noqa: E402
from cyclebench.instructions.published import read_csv  # noqa: E402
from cyclebench.instructions.session import Session  # noqa: E402

PUBLISHED = ROOT / "data" / "uops-info-zen4-studied.csv"


def random_blocks(cat, forms, n, rng):
    """n blocks of 4-10 instances of modelled forms, registers picked at random (so some chain);
    each memory operand its own 64-byte slot (the predictor follows no memory dependency, and a
    narrow store under a wide load of one address stalls store forwarding)."""
    gprs = list(POOLS["GPR64"])
    out = []
    for _ in range(n):
        lines, init = [], []
        for i, f in enumerate(rng.choices(forms, k=rng.randint(4, 10))):
            inst = instantiate(cat.get(f), avoid=rng.sample(gprs, rng.randint(0, 8)), displacement=64 * (i + 1))
            lines.append(inst.text)
            init += [s for s in inst.init if s not in init]     # mask registers all ones, divisors
        out.append((lines, init))
    return out


def errors(pairs):
    e = [abs(p - m) / m for p, m in pairs if p is not None and m]
    if not e:
        return "no blocks"
    return (f"{sum(x <= 0.10 for x in e) / len(e):5.1%} within 10%, MAPE {100 * statistics.mean(e):5.1f}%, "
            f"median {100 * statistics.median(e):4.1f}% ({len(e)} blocks)")


def evaluate(name, blocks, model, cat, lats, session, mcpu):
    ours, mca, rows = [], [], []
    for lines, init in blocks:
        text = "\n".join(lines)
        try:
            p = predict(text, model, cat, lats)
        except CycleBenchError:
            continue
        if p.unknown:
            continue
        try:
            m = session.measure(lines, init, per=1).value
        except CycleBenchError as e:
            print(f"  not measured ({e.cause}): {'; '.join(lines)}")
            continue
        try:
            clean = "\n".join(ln.replace("{load} ", "").replace("{store} ", "").replace("{evex} ", "") for ln in lines)
            q = mca_run(clean, mcpu, iterations=200).cycles_per_iteration
        except CycleBenchError:
            q = None
        ours.append((p.cycles, m))
        mca.append((q, m))
        rows.append((m, p.cycles, p.resource_bound, p.chain_bound, q, "; ".join(lines)))
    print(f"{name}:")
    print(f"  cyclebench model: {errors(ours)}")
    print(f"  llvm-mca-16:      {errors(mca)}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--random", type=int, default=40)
    ap.add_argument("--compiled", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mcpu", default="znver4")
    ap.add_argument("--latencies", type=Path, help="a cyclebench inst results file (measured latencies)")
    ap.add_argument("--rows", action="store_true", help="print every block")
    args = ap.parse_args()
    model, report = load(args.model)
    cat = Catalogue.load()
    forms = sorted(model.usage)
    pub = published_for(forms, read_csv(str(PUBLISHED), collect=True)[0], cat)
    ports = {n: p.ports_text for n, p in pub.items()}
    lats, label = from_file(args.latencies or PUBLISHED, cat, forms)
    print(f"latencies of the chain bound: {label}, {len(lats)} of {len(forms)} forms (others: 1 cycle)")
    print(f"model: {len(forms)} forms, {len(model.resources)} resources + front end (width {model.width}), "
          f"{report['measurements_per_form']} measurements per form, {report['readings']} readings")
    mapped = resource_ports(report["blockers"], ports, report["alone"])
    comps = [c for c in (compare(f, model, mapped, ports.get(f, "")) for f in forms) if c]
    agree = sum(c["agree"] for c in comps)
    print(f"port sets: {len(mapped)} of {len(model.resources)} resources mapped to published port sets "
          f"({', '.join(''.join(sorted(q)) for q, _ in mapped.values())})")
    if comps:
        print(f"  agreement with the published ports column: {agree}/{len(comps)} = {agree / len(comps):.1%} "
              f"of the studied forms that have one")
    for c in comps:
        if not c["agree"]:
            print(f"  differs: {c['form']}: published {c['published']} -> {c['expected']}, inferred {c['inferred']}")
    unpublished = [f for f in forms if not ports.get(f)]
    print(f"  resources for {len(unpublished)} forms with no published ports (e.g. Zen's integer pipes)")
    rng = random.Random(args.seed)
    session = Session(budget=0.5)
    rb = random_blocks(cat, forms, args.random, rng)
    cb = []
    seen = set()
    for src in sorted(glob.glob(str(ROOT.parent / "cyclebench" / "studies" / "*" / "c" / "*.c"))):
        for b in compiled_blocks(Path(src)):
            if "; ".join(b) not in seen:
                seen.add("; ".join(b))
                cb.append(b)
    cb = [(b, []) for b in rng.sample(cb, min(args.compiled, len(cb)))]
    r1 = evaluate("random mixes of modelled forms", rb, model, cat, lats, session, args.mcpu)
    r2 = evaluate("basic blocks of the project's C kernels (gcc -O2)", cb, model, cat, lats, session, args.mcpu)
    if args.rows:
        for m, p, res, ch, q, text in r1 + r2:
            print(f"  measured {m:6.2f} predicted {p:6.2f} (resources {res:.2f}, chains {ch:.2f}) "
                  f"llvm-mca {q if q is None else round(q, 2)}: {text}")


if __name__ == "__main__":
    main()
