"""cyclebench ports: infer a resource model (ports, pipes, units) from throughput alone."""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from .parser import subparser


def add_parser(sub):
    p = subparser(sub, "ports", "infer which resources instruction forms use, from throughput alone",
                  "Measure forms alone and mixed with blockers (forms chosen by rule as single-resource\n"
                  "probes), and solve for each form's use of abstract resources (docs/ports.md).\n"
                  "Readings are saved as they are made; --resume continues a cut run, and on a finished\n"
                  "one solves its readings again under this cyclebench's rules (measuring only readings\n"
                  "they need that the file lacks). With no FORM or --sample, --resume takes the forms\n"
                  "and seed the file was started with. --solve solves a file's readings again and\n"
                  "measures nothing, so it reads a file from any CPU.\n"
                  "examples:\n"
                  '  cyclebench ports --sample 40 --results ports.jsonl\n'
                  '  cyclebench ports "IMUL (R64, R64)" "VADDPD (YMM, YMM, YMM)" --sample 20 --resume ports.jsonl\n'
                  "  cyclebench ports --resume ports.jsonl            # finish it, or solve it again\n"
                  "  cyclebench ports --solve other-cpu.jsonl         # its readings, this cyclebench's rules\n"
                  "  cyclebench ports --show ports.jsonl")
    p.add_argument("forms", nargs="*", metavar="FORM", help="forms to include (uops.info names)")
    p.add_argument("--sample", type=int, default=0, metavar="N", help="add N mixable forms drawn at random")
    p.add_argument("--published", action="store_true",
                   help="draw --sample only among forms this CPU's published column gives ports for\n"
                        "(to check the inferred port sets against it)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed of --sample and of the blocker order (default 1, or the --resume file's)")
    f = p.add_mutually_exclusive_group(required=True)
    f.add_argument("--results", type=Path, metavar="FILE", help="a new results file")
    f.add_argument("--resume", type=Path, metavar="FILE", help="continue FILE (created if missing)")
    f.add_argument("--solve", type=Path, metavar="FILE",
                   help="solve FILE's readings again, measuring nothing (a file of any CPU)")
    f.add_argument("--show", type=Path, metavar="FILE", help="print the model FILE holds, and exit")
    p.set_defaults(run=run)


def run(args) -> int:
    from ..instructions.ports import run as ports_run
    from ..instructions.ports import (address, apart, dealing, domains, fields, flag_order, fresh, inflight, kept_flags,
                                      load_banks, load_order, mul_loads, narrow_stores, nop_pairs, store_grain,
                                      store_load, transition, upper, upper_loop, upper_pool)
    from ..instructions.ports.infer import SUPER
    from ..instructions.ports.portsets import describe
    if args.show:
        model, report = ports_run.load(args.show)
    elif args.solve:
        if args.forms or args.sample or args.published or args.seed is not None:
            raise UsageError("--solve takes the forms and seed the file was started with",
                             "leave out FORM, --sample, --published and --seed")
        model, report = ports_run.solve(args.solve, log=lambda m: print(f"note: {m}", file=sys.stderr))
    else:
        if args.sample < 0:
            raise UsageError("--sample must be at least 0", "e.g. --sample 40")
        from ..instructions.catalogue import Catalogue
        cat = Catalogue.load()
        begun = ports_run.started(args.resume) if args.resume else None
        seed = args.seed if args.seed is not None else begun["seed"] if begun else 1
        names = args.forms
        if not args.forms and not args.sample:
            if not begun:
                raise UsageError("no forms to study", "name forms, or give --sample N (or --resume a started file)")
            names = begun["forms"]
            ports_run.offered(args.resume, names, cat, "start a new results file")
        among = ports_run.with_ports(cat) if args.published else None
        forms = ports_run.sample(cat, args.sample, seed, names, among)
        model, report = ports_run.infer(forms, args.resume or args.results, resume=args.resume is not None,
                                        seed=seed, catalogue=cat,
                                        log=lambda m: print(f"note: {m}", file=sys.stderr))
        for kind in ports_run.PROBES:          # each measured once: a resumed run reads it back
            ports_run.record(args.resume or args.results, kind, log=lambda m: print(f"note: {m}", file=sys.stderr))
    path = args.show or args.solve or args.resume or args.results
    blockers = report.get("blockers") or {}
    print(f"resources inferred from throughput: {len(model.resources)} (+ front end, width "
          f"{model.width}); {report.get('measurements_per_form', 'an unrecorded number of')} measurements per form; "
          f"{report.get('readings', 'unrecorded')} readings"
          + (f" and {report['streams']} streams" if report.get("streams") else "")
          + ("" if args.show else f" ({report.get('measured_now', 0)} measured now)"))
    if report.get("unstable"):
        print(f"warning: {report['unstable']} of the {report.get('readings')} readings were flagged unstable (the "
              "faster of the two runs of each mix; a noise burst, a busy SMT sibling on the host): the model may be "
              "off where they weigh; measure again on a quieter machine", file=sys.stderr)
    if args.show or args.solve:
        from ..instructions.ports.ensemble import machine
        from ..machine.metadata import cpu_text
        print(f"  measured on {cpu_text(machine(path))}")
    for line in _port_sets(path, model, report, listed=bool(args.show)):
        print(f"  {line}")
    for r in report.get("width_unconfirmed") or ():
        mix = " + ".join(f"{n} {f}" for f, n in r["counts"].items())
        print(f"  note: {mix} ran {sum(r['counts'].values()) / r['cycles']:.2f} instructions a cycle, faster "
              f"than the front end's {model.width}, and no second mix confirms it: set aside")
    if report.get("penalties"):
        print(f"  note: {report['penalties']} mixes ran more than {SUPER:.1f}x their two forms one after the other: a "
              "cost of their meeting, no shared resource; the solves set them aside, the predictor keeps them as floors")
    units = set(report.get("slow_units") or ())
    for r, b in blockers.items():
        print(f"  {r}: " + (f"a unit no blocker probes, held by {b}" if r in units else f"the bottleneck of {b}"))
    if model.lines:
        print(f"  stores to distinct cache lines: {', '.join(f'{f} {t:.2f}' for f, t in sorted(model.lines.items()))} "
              "cycles each")
    print("probe records (each measured once on the model's CPU by its own blocks; what the predictor reads from it, "
          "and the figures measured):")
    factor, where = upper.stored(path)
    print("  legacy-SSE writes under a dirty ZMM state take their resources "
          + (f"{factor:.2f} times ({where})" if factor else f"as they are, no more ({where})"))
    waiting, where = inflight.stored(path)
    print("  instructions waiting to start in flight, the simulation's limit: "
          + (f"{waiting} ({where})" if waiting else f"none ({where})"))
    loop, where = upper_loop.stored(path)
    print("  legacy-SSE beside ZMM writes in the loop: "
          + (f"at least {loop.legacy:.2f} cycles a legacy write and {loop.wide:.2f} a ZMM write ({where})"
             if loop else f"no floor ({where})"))
    pooled, where = upper_pool.stored(path)
    print("  the block's other vector work " + ("adds to that floor (it shares the vector pipes)" if pooled
                                               else "is not added to that floor") + f" ({where})")
    dealt, where = dealing.stored(path)
    print("  vector µops " + ("dealt to pipe pairs in turn" if dealt else "take the pipe of a pair with the fewest waiting")
          + f" ({where})")
    span, where = store_grain.stored(path)
    print(f"  two stores a cycle within {span} bytes ({where})")
    whole, where = load_order.stored(path)
    print("  a 512-bit load " + ("has its cycle of the load path to itself" if whole else "shares the load path")
          + f" ({where})")
    print(f"  loads of one 8-byte bank: {load_banks.stored(path)[1]}")
    print(f"  a store's data to a later load: {store_load.stored(path)[1]}")
    cost, where = address.stored(path)
    print(f"  addressing modes: {cost.describe() if cost else 'no cost past a base'} ({where})")
    pair, lates, where = flag_order.stored(path)
    print("  a compare to the flags right after a flag writer: "
          + (f"at least {pair:.2f} cycles" if pair else "no floor")
          + "".join(f"; a chained writer beside a transfer to the {k} {v:.2f} cycles later" for k, v in lates.items())
          + f" ({where})")
    pipes, where = mul_loads.stored(path)
    print("  a one-pipe load-op form and plain GPR loads " + (f"share {pipes} load pipes" if pipes else "do not meet")
          + f" ({where})")
    print(f"  merging forms with their merge input written afresh: "
          f"{fresh.stored(path, model)[1]}")
    print(f"  immediates and displacements a dispatch group carries: "
          f"{fields.stored(path, model.width)[1]}")
    print(f"  the resources the upper-state rule kept apart: "
          f"{apart.stored(path)[1]}")
    print(f"  a NOP beside the instruction before it: {nop_pairs.stored(path)[1]}")
    print(f"  the flags the ISA leaves undefined: {kept_flags.stored(path)[1]}")
    print(f"  vector domains: {domains.stored(path)[1]}")
    print(f"  a legacy-SSE write after a 256-bit write: {transition.stored(path)[1]}")
    print(f"  narrow stores: {narrow_stores.stored(path)[1]}")
    _bounds(path)
    print(f"{'form':<40} {'alone':>6}  resources, cycles per instance (inferred from throughput)")
    for form in sorted(model.usage):
        t = model.alone.get(form)
        print(f"{form:<40} {'-' if t is None else f'{t:.2f}':>6}  {describe(form, model, blockers, {})}")
    return 0


def _port_sets(path: Path, model, report, listed: bool) -> list[str]:
    """The model's port sets beside the published column of the CPU it was measured on (measuring
    nothing; portsets.against), with the forms that differ where ``listed``, or why there is none
    to compare with."""
    from ..errors import CycleBenchError
    from ..instructions.catalogue import Catalogue
    from ..instructions.ports.ensemble import measured_on
    from ..instructions.ports.portsets import against, read_as
    from ..instructions.published import read_csv
    from ..instructions.reference import own_column
    try:
        column = own_column(measured_on(path))
    except CycleBenchError as e:
        return [f"port sets: none compared ({e.cause})"]
    seen = against(model, report, read_csv(str(column.path), collect=True)[0], Catalogue.load())
    if not seen.comparisons:
        return [f"port sets: none of the forms has ports in {column.label}"]
    return [seen.text(column.label) + f"; {len(seen.unpublished)} forms have none there"] + [
        f"  differs: {c['form']}: read as {read_as(c)}, published {c['published']}"
        for c in seen.comparisons if listed and not c["agree"]]


def _bounds(path: Path) -> None:
    """The bounds the predictor takes from the file beside the resources (predict.load: the
    measured mixes as floors and the probes' floors), one line each, and the usages it mends."""
    from ..instructions.ports.predict import load
    loaded = load(path)
    print("the predictor's bounds beside the resources (cyclebench predict takes them from this file):")
    for b in loaded.bounds:
        print(f"  {type(b).__module__.rsplit('.', 1)[-1]}.{type(b).__name__}: {b.describe()}")
    print(f"  and {len(loaded.notes)} usages of the model below mended against the file's own readings (repair.py)")
