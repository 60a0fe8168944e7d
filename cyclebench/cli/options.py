"""Measurement options shared by every subcommand that runs snippets (asm, seq, ...)."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ResultFileError, UsageError
from ..study.store import check_output_path


def whole_number(text: str) -> int:
    """An argparse type: a whole number, decimal or with int()'s 0x/0o/0b prefix, of any size and
    sign; the option's range is checked where it is used (measure()'s checks, params.py, name the
    range), before anything is measured."""
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None


def at_least(lo: int):
    """An argparse type: a whole number (as whole_number reads it) of at least ``lo``."""
    def whole(text: str) -> int:
        n = whole_number(text)
        if n < lo:
            raise argparse.ArgumentTypeError(f"{n} is below {lo}")
        return n
    return whole


def byte_size(text: str) -> int:
    """A size in bytes, with an optional K, M or G suffix (powers of 1024): 64M, 4G, 1048576."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    try:
        return int(t[:-1] if scale > 1 else t, 0) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (bytes, or with K/M/G, e.g. 64M)") from None


def zero_one(text: str) -> int:
    if text not in ("0", "1"):
        raise argparse.ArgumentTypeError(f"'{text}' is not 0 or 1")
    return int(text)


def add_measurement_options(p: argparse.ArgumentParser, code_parts: bool = True):
    g = p.add_argument_group("code parts (assembly: Intel syntax, ';' or newline separated; files: raw machine code)")
    if code_parts:
        g.add_argument("--init", metavar="ASM", help="run before every run, not counted")
        g.add_argument("--late-init", metavar="ASM", help="run right before the measured code (counted once per run, cancels)")
        g.add_argument("--one-time-init", metavar="ASM", help="run once before the first run")
        g.add_argument("--code-file", type=Path, metavar="FILE", help="raw machine code to measure instead of CODE")
        g.add_argument("--init-file", type=Path, metavar="FILE")
        g.add_argument("--late-init-file", type=Path, metavar="FILE")
        g.add_argument("--one-time-init-file", type=Path, metavar="FILE")
    m = p.add_argument_group("counts (nanoBench's model; omit to choose automatically)")
    m.add_argument("--unroll", type=whole_number, metavar="N", help="copies of the code per run (config A: N, B: 2N)")
    m.add_argument("--loop", type=whole_number, metavar="N",
                   help="iterations of a loop around the copies; 0 = no loop. R15 is the loop counter: "
                        "code must not change it while a loop is used. Default: chosen so that B-A spans enough TSC ticks")
    m.add_argument("-n", "--n-measurements", type=whole_number, metavar="N", help="repetitions (default 50 with TSC, 10 with a PMU)")
    m.add_argument("--warm-up", type=whole_number, default=5, metavar="N", help="runs before the first recorded one (default 5)")
    m.add_argument("--initial-warm-up", type=whole_number, default=0, metavar="N", help="runs before everything else (default 0)")
    m.add_argument("--alignment-offset", type=whole_number, default=0, metavar="N", help="code starts at 64-byte alignment + N")
    a = p.add_argument_group("aggregation and mode")
    agg = a.add_mutually_exclusive_group()
    for name, what in (("avg", "mean of the 20th-80th percentiles (default)"), ("median", "median"),
                       ("min", "minimum"), ("max", "maximum"), ("range", "minimum and maximum")):
        agg.add_argument(f"--{name}", dest="aggregate", action="store_const", const=name, help=what)
    p.set_defaults(aggregate="avg")
    a.add_argument("--basic-mode", action="store_true", help="difference 0 and N copies instead of N and 2N")
    a.add_argument("--no-normalization", action="store_true", help="report per run, not per copy")
    a.add_argument("--df", "--drain-frontend", dest="drain_frontend", action="store_true",
                   help="lfence and long NOP runs around the code to drain the front end")
    c = p.add_argument_group("counters and running")
    c.add_argument("--counters", choices=("auto", "tsc", "perf"), default="auto",
                   help="backend: perf (hardware PMU), tsc (TSC-calibrated core cycles); auto picks perf when it works "
                        "(results keep the backend it picked: an inst --resume takes auto and the backend it "
                        "picked as one method)")
    c.add_argument("--events", metavar="LIST",
                   help="extra perf events, comma separated: perf names (page-faults, task-clock, instructions) "
                        "or libpfm4 names (RETIRED_OPS); see --list-events")
    c.add_argument("--config", type=Path, metavar="FILE",
                   help="nanoBench counter config file ('EvtSel.UMASK[.opts] Name' per line); a bare name "
                        "such as cfg_Zen4.txt is looked up among the shipped configs")
    c.add_argument("--usr", type=zero_one, default=1, metavar="0|1", help="count user mode (default 1; nanoBench's -usr)")
    c.add_argument("--os", type=zero_one, default=0, metavar="0|1",
                   help="count kernel mode (default 0; nanoBench's -os; needs perf_event_paranoid <= 1 or root)")
    c.add_argument("--fixed-counters", action="store_true",
                   help="also count instructions and ref-cycles (Intel's fixed counters; needs a PMU)")
    c.add_argument("--group-size", type=whole_number, metavar="N",
                   help="at most N events per perf_event group; more groups are measured one after the other "
                        "(default: the PMU's programmable counters; software events need none)")
    c.add_argument("--remove-empty-events", action="store_true", help="leave out events that did not occur")
    c.add_argument("--no-mem", action="store_true",
                   help="keep counter readings in registers (R8: TSC, R9-R13: rdpmc) instead of memory; the code "
                        "must not write them, and RAX, RCX, RDX are changed. Enables the pause/resume magic bytes")
    c.add_argument("--clock-mhz", type=float, metavar="MHZ",
                   help="convert TSC ticks to cycles at this core clock instead of calibrating it (as the "
                        "environment variable CYCLEBENCH_CLOCK_MHZ does); for a core whose clock is pinned")
    c.add_argument("--cpu", type=whole_number, metavar="N", help="pin the runner to CPU N (default: the current one)")
    c.add_argument("--timeout", type=float, default=10.0, metavar="S", help="kill the measured code after S seconds (default 10)")
    c.add_argument("--budget", type=float, default=2.0, metavar="S",
                   help="time allowed for automatic re-runs when the host is noisy (default 2)")
    c.add_argument("--require-stable", action="store_true", help="exit 8 if the result is still unstable")
    s = p.add_argument_group("memory and sandbox (see docs/safety.md)")
    s.add_argument("--r14-size", type=byte_size, metavar="SIZE",
                   help="size of the area R14 points into the middle of (default 1M; nanoBench's r14_size)")
    s.add_argument("--max-memory", type=byte_size, metavar="SIZE",
                   help="address-space cap of the measuring process, areas included (default 4G)")
    s.add_argument("--allow-syscalls", action="store_true",
                   help="let the code make any system call except process creation, exec, signals to other "
                        "processes, ptrace, sockets, file-system changes and machine-wide settings "
                        "(default: only side-effect-free calls such as getpid)")
    o = p.add_argument_group("output")
    o.add_argument("--json", action="store_true", help="print one versioned JSON document")
    o.add_argument("--format", choices=("text", "json", "markdown", "csv"), default=None, help="output format")
    o.add_argument("-o", "--output", type=Path, metavar="FILE", help="also write the JSON result to FILE")
    o.add_argument("--verbose", action="store_true", help="print every raw reading")


def measurement_kwargs(args) -> dict:
    """The measure() keywords from the shared options; an -o file that cannot be written is refused
    here, before anything is measured."""
    if getattr(args, "output", None):
        check_output_path(args.output, "-o")
    return dict(unroll=args.unroll, loop=args.loop, n_measurements=args.n_measurements,
                warm_up=args.warm_up, initial_warm_up=args.initial_warm_up,
                alignment_offset=args.alignment_offset, aggregate=args.aggregate,
                basic_mode=args.basic_mode, no_normalization=args.no_normalization,
                drain_frontend=args.drain_frontend, counters=args.counters, events=event_list(args),
                cpu=args.cpu, timeout=args.timeout, budget=args.budget,
                user=bool(args.usr), kernel=bool(args.os), fixed_counters=args.fixed_counters,
                group_size=args.group_size, no_mem=args.no_mem, remove_empty_events=args.remove_empty_events,
                r14_size=args.r14_size, max_memory=args.max_memory, allow_syscalls=args.allow_syscalls,
                clock_mhz=args.clock_mhz)


def event_list(args):
    """--events names and --config lines, resolved to EventSpecs (None when neither is given)."""
    names, config = getattr(args, "events", None), getattr(args, "config", None)
    if not names and config is None:
        return None
    from ..counters.nanobench_config import load_config
    from ..counters.resolve import resolve_events
    specs = resolve_events(names) if names else []
    if config is not None:
        specs += load_config(config)
    seen = set()
    for s in specs:
        if s.name in seen:
            raise UsageError(f"event '{s.name}' is given twice (--events and --config)", "list each event once")
        seen.add(s.name)
    return specs


def code_parts(args) -> dict:
    """The four code parts from text options or raw-code files; both for one part is an error."""
    out = {}
    for part, text_opt, file_opt in (("code", "code", "code_file"), ("init", "init", "init_file"),
                                     ("late_init", "late_init", "late_init_file"),
                                     ("one_time_init", "one_time_init", "one_time_init_file")):
        text, path = getattr(args, text_opt, None), getattr(args, file_opt, None)
        if text is not None and path is not None:
            which = "the code to measure" if part == "code" else f"the {part.replace('_', '-')} code"
            raise UsageError(f"both assembly and --{file_opt.replace('_', '-')} given for {which}",
                             "give one of them")
        out[part] = path if path is not None else text
    return out


def output_format(args) -> str:
    return "json" if getattr(args, "json", False) else (getattr(args, "format", None) or "text")


def write_output(path: Path, text: str) -> None:
    """Write a result file; a failure is a result-file error (exit 10), never a traceback."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ResultFileError(f"cannot write {path}: {e.strerror}", "check the path and permissions") from None
