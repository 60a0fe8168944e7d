"""cyclebench report: saved results (asm/inst JSON, inst JSONL, study folders) as one HTML page."""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..study.store import check_output_path
from .parser import subparser


def add_parser(sub):
    p = subparser(sub, "report", "one self-contained HTML page from saved results",
                  "Read any mix of cyclebench results and write one HTML page that needs no network:\n"
                  "the machine block, sortable and filterable tables, the plots as SVG, and for every\n"
                  "figure the command and code that made it and its warnings; under each table, the measuring\n"
                  "options of each file (-n, the statistic, --counters and the backend auto chose ...).\n"
                  "inst results from several machines become one table with a column per CPU; two files\n"
                  "of one machine share its column, unless their headers record different measuring\n"
                  "options: that is refused (exit 10). Machines measured differently are kept apart, with\n"
                  "a warning.\n"
                  "examples:\n"
                  "  cyclebench report cyclebench-results/memset-quick -o report.html\n"
                  "  cyclebench report node1.jsonl node2.jsonl --compare uops.csv -o fleet.html")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="asm/inst JSON files, inst results files (.jsonl), study output folders")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="the HTML file to write")
    p.add_argument("--compare", type=Path, metavar="FILE",
                   help="published figures as extra columns of the instruction table: uops.info CSV or "
                        "instructions.xml (with --arch)")
    p.add_argument("--arch", metavar="ARCH", help="the architecture in instructions.xml, e.g. ZEN4")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"-o {args.output} does not end in .html", "e.g. -o report.html")
    check_output_path(args.output, "-o")
    from ..reports import get_reporter
    from ..results.loaders import load_all
    from ..results.page import build_page
    items = load_all(args.paths)
    published, label = None, "published"
    if args.compare:
        from ..instructions import published as pub
        published = pub.read(str(args.compare), args.arch)
        label = f"uops.info ({args.arch})" if args.arch else "published"
    path = get_reporter("html").write(build_page(items, published, label), args.output)
    print(f"wrote {path}")
    return 0
