#!/usr/bin/env python3
"""Benchmark (not a test): agreement of cyclebench's instruction tables and of llvm-mca-16 with
uops.info's published figures, on the same forms.

Reads an ``inst`` results file (``cyclebench inst --all --compare REF --resume R.jsonl``; with
``--sample N`` this script measures a random sample of the published forms into it first, resuming
what is already there, and compares that sample only, so that one file serves several seeds) and prints, for cyclebench and for llvm-mca (``-mcpu``, default this CPU's),
the match rate by smallest latency, largest latency and measured throughput, with the same
tolerances and the same forms (instructions/agreement.py).  llvm-mca gives one latency per form
(its slowest definition), compared as both the smallest and the largest.

The published table is by default the detected CPU's own uops.info column, shipped in
cyclebench/instructions/data/uops-info/ (or the nearest one, labelled "nearest", where uops.info has
none); ``--reference CODE|FILE`` names another, and the output says which was compared with what.

With ``--why`` each latency mismatch the causes leave "unexplained" gets the ``inst --why``
variant experiment that reproduces the published figure as its cause, where one does, or else
"uops.info's own chain reads ours here" where its chains, run here, read our figure; each
throughput mismatch left unexplained or off the published port figure gets what uops.info's own
throughput experiment reads here (instructions/published_throughput.py).  It measures, so run it
under the tests' lock.

Run: python3 bench/instruction_accuracy.py --results R.jsonl [--sample 400 --seed 1] [--no-mca] [--why]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from cyclebench.instructions import Catalogue, published  # noqa: E402
from cyclebench.instructions.agreement import FIGURES, agreement, targets, this_machine  # noqa: E402
from cyclebench.instructions.bulk import Selected, results_store, run  # noqa: E402
from cyclebench.instructions.causes import cause  # noqa: E402
from cyclebench.instructions.reference import AUTO, resolve_source  # noqa: E402


def mca_docs(tgts, docs, mcpu):
    """llvm-mca's figures as form documents, for the forms cyclebench measured (same forms)."""
    from cyclebench.instructions.llvm_mca import LlvmMcaFailed, predict
    out = {}
    for t in tgts:
        d = docs.get(t.form.name) if t.form is not None else None
        if d is None or d.get("status") != "ok":
            continue
        try:
            p = predict(t.form, mcpu=mcpu, iterations=100)
        except LlvmMcaFailed as e:
            out[t.form.name] = {"form": t.form.name, "status": "failed", "reason": str(e)}
            continue
        lat = [] if p.latency is None else [{"start": "?", "end": "?", "value": float(p.latency),
                                             "bound": "exact"}]
        out[t.form.name] = {"form": t.form.name, "status": "ok", "latency": lat, "notes": [],
                            "throughput": {"value": p.rthroughput, "bound": "exact"}}
    return out


def _with_experiments(n: int):
    """causes.cause, then for a latency figure it leaves unexplained the --why experiment that
    reproduces the published figure (instructions/why.py), and for a throughput it leaves
    unexplained or gives from the published pair alone (its port figure) uops.info's own
    throughput experiment run here, on one measuring session."""
    from cyclebench.instructions.causes import PORT_FIGURE_CAUSE
    from cyclebench.instructions.session import Session
    from cyclebench.instructions.why import experiment_cause, throughput_cause
    session, cache = Session(n_measurements=n), {}

    def cause_fn(doc, rec, form, figure):
        why = cause(doc, rec, form, figure)
        if figure == "throughput":
            if why == "unexplained" or why.startswith(PORT_FIGURE_CAUSE):
                return throughput_cause(session, form, doc, rec, why)
            return why
        if why != "unexplained":
            return why
        return experiment_cause(session, form, doc, rec, figure, cache) or why
    return cause_fn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, required=True, help="inst results file (JSON lines)")
    ap.add_argument("--reference", default=AUTO,
                    help="uops.info code or CSV (default auto: this CPU's own shipped column, or the nearest)")
    ap.add_argument("--evidence", help="published figures for the CPU measured here (a uops.info code or CSV): "
                    "classifies 'microarchitecture differs' mismatches")
    ap.add_argument("--sample", type=int, help="measure a random sample of N published forms into --results first")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--whole-file", action="store_true",
                    help="with --sample: compare every form in --results, not only the sample")
    ap.add_argument("-n", type=int, default=20, help="repetitions per measurement (as cyclebench inst)")
    ap.add_argument("--mcpu", help="llvm-mca -mcpu (default: this CPU's, from the microarchitecture table)")
    ap.add_argument("--no-mca", action="store_true")
    ap.add_argument("--json", type=Path, help="write both agreement documents here")
    ap.add_argument("--why", action="store_true",
                    help="run inst --why's variant experiments on each latency mismatch left unexplained "
                    "and give the variant that reproduces the published figure as its cause (measures)")
    args = ap.parse_args()

    reference, ref_label = resolve_source(args.reference, None)
    records = published.read_csv(str(reference))
    if not args.mcpu and not args.no_mca:
        from cyclebench.instructions.llvm_mca import own_mcpu
        args.mcpu = own_mcpu()
    cat = Catalogue.load()
    tgts = targets(records, cat)
    picked = None
    if args.sample:
        import random
        runnable = list({t.form.name: t.form for t in tgts if t.status == "runnable"}.items())
        pick = random.Random(args.seed).sample(runnable, min(args.sample, len(runnable)))
        run([Selected(n, f) for n, f in pick], results=args.results, resume=True,
            measure_kwargs={"n_measurements": args.n})
        picked = {n for n, _f in pick}
    _header, stored = results_store(args.results).load()
    # with --sample, only the sampled forms are compared: one results file can serve many seeds
    docs = {d["form"]: d for d in stored if picked is None or args.whole_file or d["form"] in picked}
    measured_on = this_machine()
    ev_path, ev_label = resolve_source(args.evidence, None) if args.evidence else (None, "")
    evidence = published.read_csv(str(ev_path)) if ev_path else None
    ours = agreement(tgts, docs, ref_label, measured_on, evidence=evidence, evidence_label=ev_label,
                     cause_fn=_with_experiments(args.n) if args.why else cause)
    rows = [("cyclebench", ours)]
    if not args.no_mca:
        mca = mca_docs(tgts, docs, args.mcpu)
        rows.append((f"llvm-mca-16 -mcpu={args.mcpu}", agreement(tgts, mca, ref_label, f"llvm-mca {args.mcpu}")))
    print(f"{ref_label} ({reference.name}, published) vs {measured_on} measured here; "
          f"{ours['counts'].get('compared', 0)} forms measured from {args.results} "
          f"({len(docs)} documents compared" + (f", sample seed {args.seed}" if picked else "") + ")")
    print(f"{'':32s}" + "".join(f"{f:>24s}" for f in FIGURES))
    for label, a in rows:
        print(f"{label:32s}" + "".join(f"{a['figures'][f]['rate']:>24s}" for f in FIGURES))
    print("cyclebench mismatch causes: " + "; ".join(f"{k}: {v}" for k, v in ours["causes"].items()))
    print("cyclebench by extension (smallest latency / largest latency / throughput):")
    for ext, v in ours["by_extension"].items():
        print(f"  {ext:12s} " + " / ".join(v[f]["rate"] for f in FIGURES))
    if args.json:
        args.json.write_text(json.dumps({label: a for label, a in rows}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
