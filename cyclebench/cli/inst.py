"""cyclebench inst: latency and throughput of instruction forms (an instruction table)."""
from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from ..errors import ConfigError, ResultFileError, UnstableMeasurement, UsageError
from ..study.store import check_output_path, same_file
from .options import add_measurement_options, measurement_kwargs, output_format, write_output
from .parser import subparser

BULK_MEASUREMENTS = 20     # repetitions per measurement when no -n is given (see bench/instruction_speed.py)


def add_parser(sub):
    p = subparser(
        sub, "inst", "latency and throughput of instruction forms (instruction tables)",
        "Measure instruction forms: latency per operand pair (uops.info's definition), throughput over\n"
        "independent copies, µops and ports where a PMU exists. Forms are named in uops.info notation\n"
        "('IMUL (R64, R64)'), Intel notation ('vpermd zmm, zmm, zmm') or as a concrete instruction\n"
        "('imul rax, rbx').\n"
        "examples:\n"
        '  cyclebench inst "IMUL (R64, R64)"\n'
        "  cyclebench inst --mnemonic imul\n"
        "  cyclebench inst --extension AVX512F --format markdown -o avx512f.md\n"
        "  cyclebench inst --all --resume results.jsonl\n"
        "  cyclebench inst --mnemonic add --compare --compare-llvm-mca   (this CPU's own uops.info column)\n"
        "  cyclebench inst --mnemonic add --compare uops.csv --arch ZEN3\n"
        "  cyclebench inst --all --compare --resume r.jsonl   (every published form of this CPU's column:\n"
        "      match rates by smallest/largest latency, throughput and extension, and each mismatch's cause)\n"
        "uops.info's tables for 21 microarchitectures ship with cyclebench; the CPU's own column is the\n"
        "default (--arch auto), or the nearest one, labelled 'nearest', where uops.info has none (ADL-P\n"
        "for Sapphire, Emerald and Granite Rapids; ZEN4 for Zen 5). docs/machines.md lists the cores.")
    p.add_argument("forms", nargs="*", metavar="FORM", help="instruction forms to measure")
    s = p.add_argument_group("selection")
    s.add_argument("--mnemonic", action="append", default=[], metavar="M", help="every form of a mnemonic (repeatable)")
    s.add_argument("--extension", action="append", default=[], metavar="EXT",
                   help="every form of a CPUID extension, e.g. AVX512F, BMI2 (repeatable)")
    s.add_argument("--all", action="store_true", help="every form this CPU can run safely")
    s.add_argument("--limit", type=int, metavar="N", help="only the first N selected forms")
    s.add_argument("--sample", type=int, metavar="N",
                   help="a random sample of N of the selected forms (the same N and --seed give the same forms)")
    s.add_argument("--seed", type=int, default=1, help="seed of --sample (default 1)")
    s.add_argument("--list", action="store_true", help="list the selected forms (and why some are skipped), and exit")
    s.add_argument("--latency-only", action="store_true",
                   help="measure latencies only (where a chain reads above a cycle the copies'\n"
                        "throughput is still read, to check it against the issue interval: docs/instructions.md)")
    s.add_argument("--throughput-only", action="store_true", help="measure throughput only")
    r = p.add_argument_group("results file (JSON lines, one form per line, written as each form finishes)")
    rf = r.add_mutually_exclusive_group()
    rf.add_argument("--resume", type=Path, metavar="FILE",
                    help="append to FILE and skip the forms it already holds (created if missing); refused (exit 10) "
                         "when FILE was measured on another CPU or with other measuring options (-n, --unroll, "
                         "--counters ...: its header keeps them)")
    rf.add_argument("--results", type=Path, metavar="FILE", help="write every finished form to a new FILE")
    r.add_argument("--jobs", type=int, metavar="N",
                   help="parallel runners, one per CPU (default: 2 on a machine with 2 or more CPUs; at most one "
                        "per CPU; --cpu N means 1)")
    c = p.add_argument_group("comparison")
    c.add_argument("--compare", nargs="?", const="auto", metavar="FILE|CODE",
                   help="published figures: alone, the shipped uops.info table of --arch (default: this CPU's "
                        "own column); a uops.info code (ZEN3, ADL-P ...); or a file: uops.info CSV "
                        "(instruction,latency,throughput,...) or instructions.xml. With --all, the selection is "
                        "every published form this CPU can run, and the agreement report follows the table")
    c.add_argument("--evidence", nargs="?", const="auto", metavar="FILE|CODE",
                   help="with --all --compare: published figures for the CPU measured here (alone: this CPU's "
                        "own uops.info column; or a code or a CSV file); a mismatch whose figure agrees with it, "
                        "where it differs from the compared table, is classified 'microarchitecture differs'")
    c.add_argument("--why", action="store_true",
                   help="with --compare and named forms: for each figure that disagrees, run the variant experiments "
                        "(breakers, operand values, addresses, same/distinct registers) and say which reproduces "
                        "the published figure")
    c.add_argument("--arch", default="auto",
                   help="uops.info code of the compared column: the architecture in instructions.xml and the "
                        "shipped table --compare alone reads (default auto: this CPU's own column, or the "
                        "nearest, labelled so)")
    c.add_argument("--compare-llvm-mca", action="store_true", help="compare with llvm-mca's scheduling model")
    c.add_argument("--ports", type=Path, metavar="FILE",
                   help="add the resources a model of cyclebench ports (FILE) inferred from throughput, per form; "
                        "with --compare, named by the column's port sets, with the µops they read as")
    c.add_argument("--mcpu", help="llvm-mca -mcpu (default: this CPU's, from the microarchitecture table)")
    c.add_argument("--tolerance", type=float, default=None, metavar="F",
                   help="relative tolerance for a match (default: the agreement report's, 0.05 for latency "
                        "and 0.07 for throughput; 0.05 cycles absolute also match)")
    add_measurement_options(p, code_parts=False)
    for a in p._actions:
        if a.dest == "output":
            a.help = "write the output (in the chosen format) to FILE instead of standard output"
    p.set_defaults(run=run)


def _selection(args, published=None):
    """(catalogue, selected forms, agreement targets or None)."""
    from ..instructions.bulk import Selected, select
    from ..instructions.catalogue import Catalogue
    cat = Catalogue.load()
    tgts = None
    if published is not None and args.all:      # every published form that runs here
        from ..instructions.agreement import targets
        tgts = targets(published, cat)
        sel = [Selected(t.form.name, t.form) for t in tgts if t.status == "runnable"]
        sel = list({s.name: s for s in sel}.values())
        extra = select(cat, args.forms, args.mnemonic, args.extension) if (
            args.forms or args.mnemonic or args.extension) else []
        sel += [s for s in extra if s.name not in {x.name for x in sel}]
    else:
        sel = select(cat, args.forms, args.mnemonic, args.extension, args.all)
    for opt in ("limit", "sample"):
        if getattr(args, opt) is not None and getattr(args, opt) < 1:
            raise UsageError(f"--{opt} must be at least 1", f"e.g. --{opt} 50")
    if args.sample is not None and args.sample < len(sel):
        import random
        sel = random.Random(args.seed).sample(sel, args.sample)
    if args.limit is not None:
        sel = sel[:args.limit]
    return cat, sel, tgts


def run(args) -> int:
    if args.latency_only and args.throughput_only:
        raise UsageError("--latency-only and --throughput-only exclude each other", "give one of them")
    if args.why and (not args.compare or args.all):
        raise UsageError("--why needs --compare FILE and named forms (not --all)",
                         'e.g. cyclebench inst "AND (AL, I8)" --compare uops.csv --why')
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1", "e.g. --jobs 2")
    if args.tolerance is not None and not 0 <= args.tolerance <= 1:
        raise UsageError(f"--tolerance {args.tolerance} is not a relative tolerance from 0 to 1",
                         "e.g. --tolerance 0.05")
    _forms_after_optional_values(args)
    # before measuring: the files, their labels and the llvm-mca CPU
    published, args.compare_label = _read_published(args.compare, args) if args.compare else (None, "")
    evidence, args.evidence_label = _read_published(args.evidence, args, own=True) if args.evidence \
        else (None, "")
    if args.compare_llvm_mca and not args.mcpu:
        args.mcpu = _own_mcpu()
    elif args.compare_llvm_mca:
        from ..instructions.llvm_mca import check_mcpu
        check_mcpu(args.mcpu)
    cat, sel, tgts = _selection(args, published)
    if args.list:
        for s in sel:
            reason = s.form.reason if s.form else s.why
            print(s.name + (f"    # skipped: {reason}" if reason else ""))
        return 0
    results = args.resume or args.results
    _check_outputs(args.output, results)
    ported = _ported(args.ports) if args.ports else None       # before measuring
    kwargs = measurement_kwargs(args)
    if kwargs.get("n_measurements") is None:
        kwargs["n_measurements"] = BULK_MEASUREMENTS
    from ..measurement.params import check
    check(**kwargs)        # measure()'s own checks, once: a bad value would fail every form, exit 0
    from ..instructions.bulk import default_cpus, run as run_forms
    cpus = [args.cpu] if args.cpu is not None else default_cpus()
    if args.jobs is not None:
        cpus = cpus[:args.jobs]          # one runner per CPU: never two measuring on one CPU
    t0 = time.monotonic()
    with _Progress(len(sel)) as progress:
        docs = run_forms(sel, results=results, resume=args.resume is not None, cpus=cpus,
                         measure_kwargs=kwargs, latency=not args.throughput_only,
                         throughput=not args.latency_only, progress=progress.update,
                         notice=lambda text: print(f"note: {text}", file=sys.stderr))
    elapsed = time.monotonic() - t0
    measured = progress.measured
    comparisons, summary = {}, []
    if args.compare:
        from ..instructions.compare import compare_published
        comparisons["published"] = compare_published(docs, published, args.compare_label, args.tolerance, cat)
        summary.append(comparisons["published"]["text"])
    if ported is not None:
        summary += _with_resources(docs, *ported, published, args.compare_label, cat)
    if args.compare_llvm_mca:
        from ..instructions.compare import compare_llvm_mca
        comparisons["mca"] = compare_llvm_mca(docs, cat, args.mcpu, args.tolerance)
        summary.append(comparisons["mca"]["text"])
    agreed = _agreement(tgts, docs, args, evidence) if tgts is not None else None
    why = _why(cat, docs, published, kwargs, cpus[0] if cpus else None) if args.why else None
    if why is not None:
        summary += [line for r in why for line in r["verdict"]]
    if agreed is not None:
        from ..instructions.agreement import summary_lines
        from ..instructions.coverage import summary_lines as coverage_lines
        summary += summary_lines(agreed) + coverage_lines(agreed["coverage"])
    workers = min(len(cpus), max(measured, 1))
    counts = Counter(d["status"] for d in docs)
    rate = 60.0 * measured / elapsed if measured and elapsed > 0 else None
    summary.append(f"{len(docs)} forms: {counts.get('ok', 0)} measured, {counts.get('skipped', 0)} skipped, "
                   f"{counts.get('failed', 0)} failed" +
                   (f"; {measured} characterised in {elapsed:.1f} s ({rate:.0f} forms/minute on "
                    f"{workers} CPU{'s' if workers > 1 else ''})" if rate else ""))
    _emit(args, docs, comparisons, agreed, why, summary, {"elapsed_s": round(elapsed, 3), "forms_per_minute": rate,
                                              "cpus": cpus, "n_measurements": kwargs["n_measurements"]})
    if args.require_stable and any(d.get("stable") is False for d in docs):
        raise UnstableMeasurement("some forms stayed unstable", "re-run them on a quieter machine")
    return 0


def _agreement(tgts, docs, args, evidence) -> dict:
    """The agreement report over the measured forms (the rest of the published forms are counted
    as not measured, or as not runnable here)."""
    from ..instructions.agreement import agreement, this_machine
    from ..instructions.coverage import summary
    out = agreement(tgts, {d["form"]: d for d in docs}, args.compare_label, this_machine(), evidence=evidence,
                    evidence_label=args.evidence_label)
    out["coverage"] = summary(tgts)     # why the published forms not measured here are not
    return out


def _why(cat, docs, published, kwargs, cpu) -> dict:
    """The variant experiments for every measured form with a published record."""
    from ..instructions.agreement import targets
    from ..instructions.session import Session
    from ..instructions.why import explain, verdict
    records = {t.form.name: t.published for t in targets(published, cat) if t.form is not None}
    session = Session(**{**kwargs, "cpu": cpu})
    results = []
    for d in docs:
        rec = records.get(d["form"])
        if d.get("status") != "ok" or rec is None:
            continue
        r = explain(session, cat.get(d["form"]), d, rec)
        r["verdict"] = verdict(r)
        results.append(r)
    return results


def _check_outputs(output: Path | None, results: Path | None) -> None:
    """Refuse, before measuring, an -o file that cannot be written or that is the results file."""
    if output is None:
        return
    if results is not None and same_file(output, results):
        raise UsageError(f"-o {output} is the results file",
                         "give -o another file: the table would overwrite the results")
    check_output_path(output, "-o")


def _ported(path: Path):
    """(model, report) of the cyclebench ports results file ``path``, read before measuring."""
    from ..instructions.ports.ensemble import machine
    from ..instructions.ports.run import load
    from ..machine.metadata import cpu_text, names_this_cpu
    model, report = load(path)
    if names_this_cpu(where := machine(path)) is False:
        print(f"note: the --ports model was measured on {cpu_text(where)}, not this CPU: its column "
              "is that CPU's (cyclebench ports here infers this one's)", file=sys.stderr)
    return model, report


def _with_resources(docs, model, report, published, label, cat) -> list[str]:
    """Each form's resources in the --ports model (inferred from throughput, never counters), named
    by the published port sets where --compare gives a column, with the µops they read as beside
    the column's ports; returns the port-set agreement line for the summary (none without a column)."""
    from ..instructions.ports.portsets import against, describe, read_as
    seen = against(model, report, published, cat, [d["form"] for d in docs]) if published is not None else None
    mapped = seen.mapped if seen else {}
    compared = {c["form"]: c for c in seen.comparisons} if seen else {}
    for d in docs:
        d["inferred_resources"] = (describe(d["form"], model, report.get("blockers") or {}, mapped)
                                   if d["form"] in model.usage else None)
        if (c := compared.get(d["form"])) is not None:
            d["inferred_ports"] = {"read_as": read_as(c), "published": c["published"], "agree": c["agree"]}
    return [seen.text(label)] if seen and seen.comparisons else []


def _forms_after_optional_values(args) -> None:
    """``--compare "IMUL (R64, R64)"``: argparse gives the form to the optional value; a value that
    is a form name (``NAME (OPERANDS)``), not a file or a uops.info code, goes back to the forms."""
    for opt in ("compare", "evidence"):
        value = getattr(args, opt)
        if value and value.rstrip().endswith(")") and "(" in value and not Path(value).exists():
            args.forms.insert(0, value)
            setattr(args, opt, "auto")


def _read_published(value: str, args, own: bool = False):
    """(records, label) of --compare or --evidence (``own``: ``auto`` is this CPU's column, not
    --arch's); see instructions/reference.py."""
    from ..instructions import published, reference
    arch = (lambda: reference.own_column()) if own else (lambda: reference.resolve_arch(args.arch))
    if value.lower() == reference.AUTO:
        col = arch()
        path, label = col.path, col.label
    else:
        path, label = reference.resolve_source(value, None)
    if str(path).lower().endswith(".xml"):
        code = arch().code
        return published.read_xml(str(path), code), f"uops.info {code} ({path.name})"
    records, problems = published.read_csv(str(path), collect=True)
    if not records:                        # nothing to compare with: an empty or foreign file
        raise ConfigError(problems[0].cause if problems else f"{path} holds no rows",
                          "give a CSV exported from uops.info's table")
    for p in problems:
        print(f"warning: {p.cause}", file=sys.stderr)
    return records, label


def _own_mcpu() -> str:
    from ..instructions.llvm_mca import own_mcpu
    return own_mcpu()


def _emit(args, docs, comparisons, agreed, why, summary, run_info):
    from ..instructions.characterize import SCHEMA, SCHEMA_VERSION
    from ..reports.tables import get_table_reporter, instruction_table
    fmt = output_format(args)
    if fmt == "json":
        from ..machine.metadata import machine_metadata
        doc = {"schema": SCHEMA + ".table", "schema_version": SCHEMA_VERSION, "machine": machine_metadata(),
               "run": run_info, "summary": summary,
               "comparison": {k: v for k, v in comparisons.items()}, "forms": docs}
        if agreed is not None:
            doc["agreement"] = agreed
        if why is not None:
            doc["why"] = why
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    else:
        from ..machine.uarch import this_machine
        tables = [instruction_table(docs, comparisons, summary,
                                    title=f"instruction forms measured on {this_machine().name}")]
        if agreed is not None:
            from ..reports.tables import agreement_tables
            tables += agreement_tables(agreed)
        text = get_table_reporter(fmt).render(tables)
    if args.output:
        try:
            write_output(args.output, text)
        except ResultFileError as e:        # found out only by writing (a full disk): keep the table
            sys.stdout.write(text)
            raise ResultFileError(e.cause, "the table was printed on standard output instead") from None
        print(summary[-1])
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)


class _Progress:
    """A rich progress bar with ETA on standard error (only when it is a terminal)."""

    def __init__(self, total: int):
        self.total = total
        self.measured = 0
        self.bar = None
        self.task = None

    def __enter__(self):
        if sys.stderr.isatty() and self.total > 1:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                TextColumn("{task.fields[last]}"),
                                console=Console(stderr=True), transient=False)
            self.bar.__enter__()
            self.task = self.bar.add_task("forms", total=self.total, last="")
        return self

    def update(self, doc, done, total):
        if doc.get("status") != "skipped" and doc.get("elapsed_s", 0) > 0:
            self.measured += 1
        if self.bar is not None:
            self.bar.update(self.task, completed=done, last=f"{doc['form'][:40]} ({doc['status']})")

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False
