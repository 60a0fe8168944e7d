"""cyclebench seq: IPC and cycles per copy of short instruction sequences, side by side."""
from __future__ import annotations

import sys

from ..errors import UnstableMeasurement, UsageError
from .options import add_measurement_options, measurement_kwargs, output_format, write_output
from .parser import subparser


def add_parser(sub):
    p = subparser(
        sub, "seq", "IPC and cycles per copy of short instruction sequences",
        "Measure each sequence as unrolled independent copies (the copies must not depend on each other)\n"
        "and report cycles per copy and instructions per cycle; instructions are counted by decoding one\n"
        "copy with iced-x86. Give several sequences to compare them side by side. RSI, RDI, R14, RBP\n"
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


def count_instructions(code: str) -> int:
    """Instructions in one copy of ``code``: assembled with GNU as, decoded with iced-x86."""
    import iced_x86
    from ..snippet import assemble, parse_part
    part = parse_part("code", code)
    if part.empty:
        raise UsageError("an empty sequence", 'give statements, e.g. "mov rbx, [rsi]"')
    obj = assemble([".intel_syntax noprefix", ".text"] + part.lines())
    n = 0
    for ins in iced_x86.Decoder(64, obj.blob):
        if ins.code == iced_x86.Code.INVALID:
            raise UsageError(f"cannot decode the assembled sequence '{code}'", "check the statements")
        n += 1
    return n


def measure_sequence(code: str, init: str | None = None, **kwargs) -> dict:
    from ..measurement.api import measure
    n = count_instructions(code)
    r = measure(code, init=init, **kwargs)
    ev = r.events["cycles"]
    return {"sequence": code, "instructions": n, "cycles": ev.value, "uncertainty": ev.uncertainty,
            "ipc": n / ev.value if ev.value > 0 else float("inf"), "stable": r.stable,
            "warnings": list(r.warnings), "samples": list(ev.samples), "result": r.to_dict()}


def run(args) -> int:
    kwargs = measurement_kwargs(args)
    rows = [measure_sequence(s, args.init, **kwargs) for s in args.sequences]
    from ..reports.tables import get_table_reporter, sequence_table
    fmt = output_format(args)
    table = sequence_table(rows)
    if fmt == "json":
        import json
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
