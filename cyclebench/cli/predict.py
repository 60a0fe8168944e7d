"""cyclebench predict: steady-state cycles per iteration of a straight-line block, from a
resource model inferred by ``cyclebench ports`` (nothing is measured)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..blocks.code import BRANCHES, block as basic_block
from ..errors import UsageError
from .parser import subparser


def add_parser(sub):
    p = subparser(sub, "predict", "predict the cycles per iteration of a block from an inferred resource model",
                  "Give the steady-state cycles per iteration of a straight-line block: a scheduling simulation over\n"
                  "the model cyclebench ports inferred, beside the resource bound (its busiest resource) and the\n"
                  "dependency-chain bound (loop-carried register, flag and memory chains).\n"
                  "example:\n"
                  '  cyclebench predict --model ports.jsonl --latencies uops-zen4.csv "imul rax, rbx; add rcx, rax"')
    p.add_argument("block", metavar="BLOCK", help="the block: GNU as Intel syntax, instructions separated by ';' or newlines")
    p.add_argument("--model", type=Path, required=True, action="append", metavar="FILE",
                   help="results file of cyclebench ports; give it again with another file of the same CPU "
                        "(another run of the same command) to predict with the mean of the models")
    p.add_argument("--latencies", type=Path, metavar="FILE",
                   help="latencies: a uops.info CSV (published) or a cyclebench inst results file (measured); "
                        "without it every latency is assumed 1 cycle")
    p.add_argument("--upper-factor", type=float, metavar="X",
                   help="how many times its resources a legacy-SSE XMM write takes while a ZMM register "
                        "dirties the upper state (default: the figure cyclebench ports measured and keeps "
                        "in the model file; a file without one charges nothing)")
    p.add_argument("--json", action="store_true", help="print the prediction as JSON")
    p.set_defaults(run=run)


UNSURE = 0.10      # models this far apart: on Zen 4 such blocks miss by over 10% 3-8 times as often (docs/ports.md)


def run(args) -> int:
    from ..instructions.ports import upper
    from ..machine.metadata import cpu_text, machine_metadata
    from ..instructions.ports.ensemble import OWN, Models, lacking, spread
    from ..instructions.gas import block_statements
    from ..instructions.ports.naming import assembled
    from ..instructions.ports.predict import decode
    if not args.block.strip():
        raise UsageError("the block is empty", 'give instructions, e.g. "add rax, rbx; imul rcx, rax"')
    from ..instructions.catalogue import Catalogue
    from ..instructions.ports.latency import from_file
    if args.upper_factor is not None and not 1.0 <= args.upper_factor < math.inf:
        raise UsageError(f"--upper-factor {args.upper_factor} is not a factor of 1 or more",
                         "give the measured factor, e.g. 2.0")
    # one basic block, as cyclebench block takes it: a final branch left out, an earlier one refused
    code = basic_block(assembled(args.block))
    # the branch as written: each line is assembled alone, so a label it names resolves nowhere
    dropped = block_statements(args.block)[-1] if code.dropped else None
    models = Models.load(args.model)
    loaded = models.first
    if args.upper_factor is None:
        factor, where = loaded.upper_factor, loaded.upper_source
    else:
        factor, where = args.upper_factor, "given with --upper-factor"
    cat = Catalogue.load()
    lats, label = from_file(args.latencies, cat) if args.latencies else (None, "")
    p = models.predict(code.code, cat, lats, label, OWN if args.upper_factor is None else args.upper_factor)
    here = models.of_this_cpu()
    if args.json:
        print(json.dumps({**p.to_json(), "dropped": dropped,
                          "models": models.names, "upper_factor": factor, "upper_factor_source": where,
                          "model_machine": models.machine, "model_of_this_cpu": here}))
        return 0
    missing = sorted(set(p.unknown))
    print(f"predicted: {p.cycles:.2f} cycles per iteration"
          + (f", at least: {len(missing)} form{'s' if len(missing) > 1 else ''} not in the model (below) "
             f"{'occupy' if len(missing) > 1 else 'occupies'} nothing here" if missing else ""))
    print(f"  model of: {cpu_text(models.machine)}")
    if here is False:
        print(f"  note: the model was measured on another CPU than this one ({cpu_text(machine_metadata())}): the "
              "figure is that CPU's; cyclebench ports here infers this one's")
    if len(p.members) > 1:
        print(f"  the mean of {len(p.members)} models' figures: "
              + ", ".join(f"{c:.2f} ({n})" for c, n in zip(p.members, models.names))
              + f"; they differ by {spread(p):.0%} (the bounds below: the model nearest the mean)")
        if spread(p) > UNSURE:
            print(f"  warning: the models stand more than {UNSURE:.0%} apart on this block: take the figure as "
                  "less certain, or measure it (cyclebench asm)")
    print(f"  simulated:              {p.simulated:.2f}  (a scheduling simulation over the model's resources and the chains' "
          f"latencies; {'above both bounds: chains and resources delay each other' if p.simulation_binds() else 'not above the larger bound'})")
    print(f"  resource bound:         {p.resource_bound:.2f}  (busiest: {p.binding_resource or 'front end'}; "
          f"resources inferred from throughput, checked against the mixes measured)")
    print(f"  dependency-chain bound: {p.chain_bound:.2f}  (latencies: {p.latency_source}"
          + (f"; {p.assumed_latency} assumed 1 cycle" if p.assumed_latency and lats else "") + ")")
    if p.upper_charged:
        print(f"  legacy-SSE writes under a dirty ZMM state: {p.upper_charged} charged {factor:g} times ({where})")
    elif factor is None and any(upper.exposed(decode(code.code))):
        print(f"  legacy-SSE writes under a dirty ZMM state: charged nothing ({where})")
    for note in p.notes:
        print(f"  {note}")
    if code.dropped:
        print(f"  the final {BRANCHES[code.dropped.flow]} '{dropped}' is left out: the figure is the "
              "block's straight-line body, as cyclebench block measures it")
    if missing:
        print(f"  not in the model (the resource bound is a lower bound): {lacking(p)}")
    return 0
