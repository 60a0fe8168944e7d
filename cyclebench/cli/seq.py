"""cyclebench seq: IPC and cycles per copy of short instruction sequences, side by side."""
from __future__ import annotations

import json
import sys

from ..errors import UnstableMeasurement
from .options import add_measurement_options, measurement_kwargs, output_format, write_output
from .parser import subparser


def add_parser(sub):
    p = subparser(
        sub, "seq", "IPC and cycles per copy of short instruction sequences",
        "Measure each sequence as unrolled independent copies (the copies must not depend on each other)\n"
        "and report cycles per copy and instructions per cycle. Instructions are counted by the PMU where\n"
        "one is usable; otherwise by decoding one copy with iced-x86, and then the IPC of a sequence with\n"
        "a branch is an upper bound (a taken branch skips instructions). Give several sequences to\n"
        "compare them side by side. RSI, RDI, R14, RBP\n"
        "and RSP point into 1 MB areas; numeric labels (1:, jae 1f) work in every copy.\n"
        "examples:\n"
        '  cyclebench seq "cmp rax, rdx; jae 1f; mov rbx, [rsi]; 1:"\n'
        '  cyclebench seq "mov rbx, [rsi]" "cmp rsi, rdx; jb 1f; mov rbx, [rsi]; 1:"')
    p.add_argument("sequences", nargs="+", metavar="SEQ", help="a sequence (statements separated by ';')")
    p.add_argument("--init", metavar="ASM", help="init code for every sequence (run before every run, not counted)")
    add_measurement_options(p, code_parts=False)
    for a in p._actions:
        if a.dest == "output":
            a.help = "write the output (in the chosen format) to FILE instead of standard output"
    p.set_defaults(run=run)


def run(args) -> int:
    from ..instructions.sequence import measure_sequence, retired_instructions_counter
    kwargs = measurement_kwargs(args)
    counted = retired_instructions_counter()
    rows = [measure_sequence(s, args.init, counted=counted, **kwargs) for s in args.sequences]
    from ..reports.tables import get_table_reporter, sequence_table
    fmt = output_format(args)
    table = sequence_table(rows)
    if fmt == "json":
        text = json.dumps({"schema": "cyclebench.seq", "schema_version": 1, "notes": table.notes,
                           "sequences": rows}, indent=2, ensure_ascii=False) + "\n"
    else:
        text = get_table_reporter(fmt).render([table])
    if args.output:
        write_output(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    if args.require_stable and not all(r["stable"] for r in rows):
        raise UnstableMeasurement("a sequence stayed unstable", "re-run on a quieter machine, or raise --budget")
    return 0
