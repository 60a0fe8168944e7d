"""cyclebench block: a real basic block's cycles per iteration, memory and all (docs/block.md)."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ..errors import CycleBenchError, UsageError
from ..study.store import check_output_path, same_file
from .options import at_least, whole_number
from .parser import subparser


def add_parser(sub):
    p = subparser(
        sub, "block", "measure a basic block from a compiled program, memory and all",
        "Run a basic block as the measured code, unrolled in its own loop, with every page it touches\n"
        "mapped onto one shared page (as BHive does, without a PMU). General registers and memory start\n"
        "at 0x12345640 (docs/block.md). A final branch is dropped; a branch before the end, a system\n"
        "call or a fault is reported with its reason.\n"
        "examples:\n"
        "  cyclebench block 488b4308488904cb4883c008\n"
        "  cyclebench block --objdump block.txt --compare-llvm-mca\n"
        "  cyclebench block --elf ./prog --symbol main --offset 4 --length 12\n"
        "  cyclebench block --file blocks.csv --results r.jsonl --resume --compare-llvm-mca")
    p.add_argument("hex", nargs="?", metavar="HEX", help="the block's bytes as hex")
    s = p.add_argument_group("where the block comes from (one of HEX, --objdump, --elf, --file)")
    s.add_argument("--objdump", type=Path, metavar="FILE", help="an objdump -d listing of the block")
    s.add_argument("--elf", type=Path, metavar="BINARY", help="an ELF binary or object file (with --symbol)")
    s.add_argument("--symbol", metavar="NAME", help="the function in --elf; without --offset/--length its first block")
    s.add_argument("--offset", type=whole_number, metavar="A", help="byte offset of the block in --symbol")
    s.add_argument("--length", type=whole_number, metavar="N", help="the block's length in bytes")
    s.add_argument("--file", type=Path, metavar="CSV", help="many blocks: a CSV with columns hex[,application,weight]")
    s.add_argument("--limit", type=at_least(1), metavar="N", help="with --file: the first N blocks")
    s.add_argument("--sample", type=at_least(1), metavar="N", help="with --file: N blocks chosen with --seed")
    s.add_argument("--seed", type=int, default=1, help="seed of --sample (default 1)")
    r = p.add_argument_group("results (with --file)")
    r.add_argument("--results", type=Path, metavar="FILE",
                   help="JSON-lines file every finished block is appended to as it finishes")
    r.add_argument("--resume", action="store_true", help="continue --results FILE, skipping the blocks it holds")
    r.add_argument("--jobs", type=at_least(1), metavar="N", help="parallel runners, one per CPU (default up to 2)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    c = p.add_argument_group("comparison")
    c.add_argument("--compare-llvm-mca", action="store_true",
                   help="llvm-mca-16's prediction beside the measurement, and its error table")
    c.add_argument("--predictor", action="append", default=[], metavar="NAME",
                   help="a predictor by name: llvm-mca, or predict (cyclebench predict's resource model, "
                        "with --ports-model); repeatable")
    c.add_argument("--ports-model", metavar="FILE", action="append",
                   help="with --predictor predict: the results file of cyclebench ports (again with another "
                        "file of the same CPU: the mean of the models)")
    c.add_argument("--latencies", metavar="FILE",
                   help="with --predictor predict: latencies (uops.info CSV or inst results; default 1 cycle each)")
    c.add_argument("--mcpu", metavar="CPU", help="llvm-mca -mcpu (default: LLVM's own detection of this CPU)")
    m = p.add_argument_group("measuring")
    m.add_argument("-n", "--n-measurements", type=whole_number, default=10, metavar="N",
                   help="repetitions per block (default 10)")
    m.add_argument("--max-pages", type=at_least(1), default=16384, metavar="N",
                   help="pages the block may touch before it is reported (default 16384)")
    m.add_argument("--cpu", type=whole_number, metavar="N", help="pin to CPU N (one runner)")
    m.add_argument("--timeout", type=float, default=10.0, metavar="S", help="per run (default 10 s)")
    p.add_argument("--json", action="store_true", help="print the result document(s) as JSON")
    p.set_defaults(run=run)


def _source(args) -> bytes | None:
    given = [n for n, v in (("HEX", args.hex), ("--objdump", args.objdump), ("--elf", args.elf),
                            ("--file", args.file)) if v is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of HEX, --objdump, --elf or --file" + (f" (got {', '.join(given)})" if given else ""),
                         "e.g. cyclebench block 4801d8")
    if (args.symbol or args.offset is not None or args.length is not None) and args.elf is None:
        raise UsageError("--symbol, --offset and --length go with --elf", "e.g. --elf ./prog --symbol main")
    if (args.results or args.resume or args.limit or args.sample) and args.file is None:
        raise UsageError("--results, --resume, --limit and --sample go with --file", "e.g. --file blocks.csv --results r.jsonl")
    if args.resume and not args.results:
        raise UsageError("--resume needs --results FILE", "e.g. --file blocks.csv --results r.jsonl --resume")
    from ..blocks import code, extract
    if args.hex is not None:
        return code.parse_hex(args.hex)
    if args.objdump is not None:
        return extract.from_objdump(args.objdump)
    if args.elf is not None:
        if not args.symbol:
            raise UsageError("--elf needs --symbol NAME", "e.g. --elf ./prog --symbol main")
        return extract.from_elf(args.elf, args.symbol, args.offset, args.length)
    return None


def _predictors(args):
    from ..blocks.predictors import make
    names = list(dict.fromkeys((["llvm-mca"] if args.compare_llvm_mca else []) + args.predictor))
    options = {"llvm-mca": {"mcpu": args.mcpu}, "predict": {"model": args.ports_model, "latencies": args.latencies}}
    return [make(n, **options.get(n, {})) for n in names]


def _kwargs(args) -> dict:
    from ..measurement.params import check
    # measure()'s own checks, once before any block: a bad value would otherwise fail every block
    check(n_measurements=args.n_measurements, timeout=args.timeout, cpu=args.cpu, map_pages=args.max_pages)
    return {"n_measurements": args.n_measurements, "max_pages": args.max_pages, "timeout": args.timeout}


def run(args) -> int:
    code = _source(args)
    kw = _kwargs(args)
    predictors = _predictors(args)           # before measuring: a missing llvm-mca fails at once
    if code is not None:
        return _single(code, args, kw, predictors)
    return _bulk(args, kw, predictors)


def _single(code: bytes, args, kw, predictors) -> int:
    from ..blocks.measure import measure_block
    from ..blocks.predictors import predict_all
    from ..blocks.report import single_text
    doc = measure_block(code, cpu=args.cpu, **kw)
    if doc["status"] != "ok":
        _fail(doc)
    doc["predictions"] = {p.name: predict_all(p, [doc]).get(doc["hex"]) for p in predictors}
    print(json.dumps(doc, indent=1) if args.json else single_text(doc))
    return 0


def _fail(doc: dict):
    from .. import errors
    cls = next((c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, CycleBenchError)
                and c.exit_code == doc.get("exit_code")), UsageError)
    raise cls(f"the block was not measured: {doc['reason']}",
              doc.get("hint") or "see docs/block.md for which blocks can be measured")


def _bulk(args, kw, predictors) -> int:
    from ..blocks import bulk
    from ..blocks.accuracy import error_table, format_table
    from ..blocks.predictors import predict_all
    from ..blocks.report import bulk_summary
    from ..study.progress import ProgressBar
    rows = bulk.read_csv(args.file)
    if args.sample and args.sample < len(rows):
        import random
        rows = random.Random(args.seed).sample(rows, args.sample)
    if args.limit:
        rows = rows[:args.limit]
    if args.results:
        check_output_path(args.results, "--results")
        if same_file(args.results, args.file):
            raise UsageError("--results would overwrite the blocks file", "give another results file")
    cpus = [args.cpu] if args.cpu is not None else bulk.default_cpus()
    if args.jobs:
        cpus = cpus[:args.jobs]
    t0 = time.monotonic()
    measured = 0
    with ProgressBar("blocks", total=len(rows), enabled=sys.stderr.isatty() and not args.no_progress) as bar:
        def progress(doc, done, total):
            nonlocal measured
            measured += 1
            bar.show(f"{doc['hex'][:24]} {doc['status']}")
            bar.advance()
        docs = bulk.run(rows, results=args.results, resume=args.resume, cpus=cpus, measure_kwargs=kw,
                        progress=progress, notice=lambda t: print(f"note: {t}", file=sys.stderr))
    elapsed = time.monotonic() - t0
    tables = []
    for p in predictors:
        pred = predict_all(p, docs)
        for d in docs:
            if d["hex"] in pred:
                d.setdefault("predictions", {})[p.name] = pred[d["hex"]]
        tables.append(format_table(error_table(docs, pred), p.name))
    if args.json:
        print(json.dumps(docs, indent=1))
    else:
        print(bulk_summary(docs, measured, elapsed))
        for t in tables:
            print()
            print(t)
    return 0
