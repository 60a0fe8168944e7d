"""cyclebench asm: measure a snippet (nanoBench's model)."""
from __future__ import annotations

import sys

from ..errors import UnstableMeasurement
from ..measurement.linearity import unstable_advice
from .options import add_measurement_options, code_parts, measurement_kwargs, output_format, write_output
from .parser import subparser


def add_parser(sub):
    p = subparser(sub, "asm", "measure an assembly snippet in core cycles",
                  "Measure the cost per copy of an x86-64 snippet (GNU as Intel syntax).\n"
                  "Initial state: R14, RDI, RSI, RBP and RSP point to the middle of 1 MB areas; other GPRs are 0;\n"
                  "every XMM register holds two doubles 1.0 (0x3FF0000000000000), bits above 127 are 0 and the\n"
                  "upper state is clean; k1-k7 are all ones; MM0-MM7 hold 1.0 with the x87 stack empty\n"
                  "(fninit); MXCSR is 0x1F80. No lane reads as a denormal or a NaN. Set others in --init.\n"
                  "Extensions: '|n' is an n-byte NOP, 'n*|code|' repeats code n times.\n"
                  'example: cyclebench asm --init "mov rax, r14; sub rax, 8; mov [rax], rax" "mov rax, [rax]"')
    p.add_argument("code", nargs="?", metavar="CODE", help="the snippet to measure")
    add_measurement_options(p)
    p.add_argument("--emit-asm", action="store_true", help="print the generated code that would be measured, and exit")
    p.add_argument("--list-events", action="store_true",
                   help="list the event sources and events, which of them work here, and exit")
    p.add_argument("--all-pmus", action="store_true", help="with --list-events: also list the PMUs libpfm4 knows for other CPUs")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.list_events:
        from .events import print_events
        return print_events(all_pmus=args.all_pmus)
    parts = code_parts(args)
    kwargs = measurement_kwargs(args)
    if args.emit_asm:
        from ..measurement.api import prepare
        prepared = prepare(parts.pop("code"), **parts, **kwargs)
        sys.stdout.write("\n".join(prepared.lines) + "\n")
        return 0
    from ..measurement.api import measure
    result = measure(parts.pop("code"), **parts, **kwargs)
    emit(result, args)
    return finish(result, args)


def emit(result, args):
    """Print a result in the requested format and save it when asked (shared by subcommands)."""
    fmt = output_format(args)
    if fmt == "text":       # the text format's own rendering, without loading the report model
        from ..reports.measurement_text import results_text
        sys.stdout.write(results_text([result], args.verbose))
    else:
        from ..reports import get_reporter
        sys.stdout.write(get_reporter(fmt, verbose=args.verbose).render([result]))
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.output:
        write_output(args.output, result.to_json() + "\n")


def finish(result, args) -> int:
    if args.require_stable and not result.stable:
        raise UnstableMeasurement("the measurement stayed unstable: " + "; ".join(result.stability["reasons"]),
                                  unstable_advice(result.stability["reasons"]) + ", or raise --budget")
    return 0
