#!/usr/bin/env python3
"""Benchmark (not a test): the resource model inferred from throughput (``cyclebench ports``),
against the published ports column and as a throughput predictor beside llvm-mca-16.

Prints
* port-set agreement with the published ports column (this CPU's uops.info column, or --arch),
  on every studied form that has one (portsets.compare: µops per mapped port set, a pumped
  register width counted by the column's own rule);
* predicted-vs-measured error of whole blocks: the share within 10% and the mean absolute
  percentage error, for random mixes of the modelled forms, for basic blocks of the project's
  own C kernels (gcc -O2, objdump; memory operands rebased onto the harness's data area) and for
  BHive blocks (cyclebench/blocks/data) whose every instruction is a modelled form, with
  llvm-mca-16 (-mcpu, default znver4) on the same blocks;
* where the model misses by more than 10%: which bound set its figure (the front end, a
  resource, a form's own throughput alone, the dependency chains), over or under.

Random and compiled blocks are measured with the instruction tables' session (cycles per
iteration of the block, harmless vector values), BHive blocks with ``cyclebench block``'s
measurement (bulk.run, its start state and memory mapping).  Latencies for the chain bound come
from the published column or --latencies (a cyclebench inst results file).  Measuring takes the
test suite's lock; run it on a quiet machine.

Run: python3 bench/ports_accuracy.py --model ports.jsonl [--random 40] [--compiled 60] [--bhive 60] [--seed 1]
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
from cyclebench.instructions.llvm_mca import run as mca_run  # noqa: E402
from cyclebench.instructions.ports.blocks import compiled_blocks, random_blocks  # noqa: E402
from cyclebench.instructions.ports.portsets import compare, published_for, pumping, resource_ports  # noqa: E402
from cyclebench.instructions.ports.latency import from_file  # noqa: E402
from cyclebench.instructions.ports.predict import predict  # noqa: E402
from cyclebench.instructions.ports.run import load  # noqa: E402
from cyclebench.instructions.published import read_csv  # noqa: E402
from cyclebench.instructions.reference import resolve_arch  # noqa: E402
from cyclebench.instructions.session import Session  # noqa: E402

BHIVE = ROOT.parent / "cyclebench" / "blocks" / "data" / "bhive_blocks.csv"


def errors(pairs):
    e = [abs(p - m) / m for p, m in pairs if p is not None and m]
    if not e:
        return "no blocks"
    return (f"{sum(x <= 0.10 for x in e) / len(e):5.1%} within 10%, MAPE {100 * statistics.mean(e):5.1f}%, "
            f"median {100 * statistics.median(e):4.1f}% ({len(e)} blocks)")


def bound(p):
    """Which bound set a prediction: the chains, the front end, a form alone, or a resource."""
    if p.chain_bound >= p.resource_bound:
        return "dependency chains"
    b = p.binding_resource or ""
    return "front end" if b == "front end" else "a form alone" if b.endswith(" alone") else "a resource"


def causes(rows):
    """Blocks the model misses by more than 10%, by the bound that set the figure."""
    out = {}
    for m, p, _, _, _, _, kind in rows:
        if abs(p - m) / m > 0.10:
            k = f"{kind}, {'over' if p > m else 'under'}"
            out[k] = out.get(k, 0) + 1
    return ", ".join(f"{k}: {n}" for k, n in sorted(out.items(), key=lambda x: -x[1])) or "none"


def record(ours, mca, rows, p, m, q, text):
    ours.append((p.cycles, m))
    mca.append((q, m))
    rows.append((m, p.cycles, p.resource_bound, p.chain_bound, q, text, bound(p)))


def report(name, ours, mca, rows):
    print(f"{name}:")
    print(f"  cyclebench model: {errors(ours)}")
    print(f"  llvm-mca-16:      {errors(mca)}")
    print(f"  model misses over 10%, by the bound that set the figure: {causes(rows)}")


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
        record(ours, mca, rows, p, m, q, "; ".join(lines))
    report(name, ours, mca, rows)
    return rows


def bhive(model, cat, lats, n, rng, mcpu):
    """BHive blocks whose every instruction is a modelled form, measured by cyclebench block."""
    from cyclebench.blocks import bulk
    from cyclebench.blocks.code import block
    from cyclebench.blocks.measure import clean
    from cyclebench.blocks.predictors import LlvmMca, PredictionFailed
    picked = []
    for row in bulk.read_csv(BHIVE):
        try:
            code = block(bytes.fromhex(row["hex"])).code
            p = predict(code, model, cat, lats)
        except CycleBenchError:
            continue
        if not p.unknown:
            picked.append((row, code, p))
    print(f"BHive: {len(picked)} of its blocks use only modelled forms; measuring {min(n, len(picked))}")
    picked = rng.sample(picked, min(n, len(picked)))
    docs = bulk.run([r for r, _, _ in picked], cpus=[0, 1])
    by_hex = {d["hex"]: d for d in docs}
    mca_pred = LlvmMca(mcpu)
    ours, mca, rows = [], [], []
    for row, code, p in picked:
        d = by_hex.get(row["hex"])
        if d is None or not clean(d):
            continue
        try:
            q = mca_pred.predict(code)
        except PredictionFailed:
            q = None
        record(ours, mca, rows, p, d["cycles"], q, d.get("text") or row["hex"])
    report("BHive blocks of modelled forms (cyclebench block's measurement)", ours, mca, rows)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--random", type=int, default=40)
    ap.add_argument("--compiled", type=int, default=60)
    ap.add_argument("--bhive", type=int, default=60)
    ap.add_argument("--arch", default="auto", help="the published column: auto (this CPU's) or a uops.info code")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mcpu", default="znver4")
    ap.add_argument("--latencies", type=Path, help="a cyclebench inst results file (measured latencies)")
    ap.add_argument("--rows", action="store_true", help="print every block")
    args = ap.parse_args()
    model, report = load(args.model)
    cat = Catalogue.load()
    forms = sorted(model.usage)
    column = resolve_arch(args.arch)
    records = read_csv(str(column.path), collect=True)[0]
    pub = published_for(forms, records, cat)
    ports = {n: p.ports_text for n, p in pub.items()}
    pumps = pumping(records)
    lats, label = from_file(args.latencies or column.path, cat, forms)
    print(f"published column: {column.label}; a µop of a register width passes its pipe: "
          f"{', '.join(f'{w} {k}x' for w, k in sorted(pumps.items()))}")
    print(f"latencies of the chain bound: {label}, {len(set(lats) & set(forms))} of the model's {len(forms)} "
          f"forms, {len(lats)} in all (others: 1 cycle)")
    print(f"model: {len(forms)} forms, {len(model.resources)} resources + front end (width {model.width}), "
          f"{report['measurements_per_form']} measurements per form, {report['readings']} readings")
    mapped = resource_ports(report["blockers"], ports, report["alone"], pumps, report.get("classes"))
    units = set(report.get("slow_units") or ())
    probed = report["probed"]
    comps = [c for c in (compare(f, model, mapped, ports.get(f, ""), pumps, units, probed.get(f)) for f in forms) if c]
    agree = sum(c["agree"] for c in comps)
    print(f"port sets: {len(mapped)} of {len(model.resources)} resources mapped to published port sets "
          f"({', '.join(''.join(sorted(q)) for q, _ in mapped.values())})")
    if comps:
        print(f"  agreement with the published ports column: {agree}/{len(comps)} = {agree / len(comps):.1%} "
              f"of the studied forms that have one")
    for c in comps:
        if not c["agree"]:
            print(f"  differs: {c['form']}: published {c['published']} -> {c['expected']}, inferred {c['inferred']}"
                  + (" (port part of a unit's form: sets compared)" if c.get("unit") else ""))
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
    r3 = bhive(model, cat, lats, args.bhive, rng, args.mcpu) if args.bhive else []
    if args.rows:
        for m, p, res, ch, q, text, _ in r1 + r2 + r3:
            print(f"  measured {m:6.2f} predicted {p:6.2f} (resources {res:.2f}, chains {ch:.2f}) "
                  f"llvm-mca {q if q is None else round(q, 2)}: {text}")


if __name__ == "__main__":
    main()
