"""cyclebench nanobench: a drop-in front end that takes nanoBench's options verbatim.

Options are nanoBench's single-dash names (``-asm``, ``-unroll_count`` ...); as in nanoBench
(getopt_long_only), an option may be abbreviated to any unique prefix (``-l`` = ``-loop_count``),
a value may follow as the next argument or after ``=``, and ``--name`` works too. An ambiguous or
unknown option exits 2 with a hint.

Defaults are nanoBench's (unroll 1000, no loop, 10 measurements, warm-up 5) with one exception:
with the TSC backend (no hardware PMU), when neither -unroll_count nor -loop_count is given, the
counts are chosen as ``cyclebench asm`` does (unroll from the code size, a loop sized at run time
so that B - A spans 10,000-40,000 TSC ticks, by the TSC's step): nanoBench's 1000 copies without a
loop span only a few hundred ticks of a TSC that ticks in steps of dozens, far too coarse. That
loop uses R15, which nanoBench reserves only when -loop_count > 0; so if the code or late-init code
mentions R15, the nanoBench defaults are kept and a warning says the resolution is poor.
-loop_count given alone keeps unroll 1000; -unroll_count given alone gets the automatic loop (same
R15 rule).

Output is nanoBench's: one ``NAME: value`` line per event with two decimals (an integer with
-no_normalization; ``NAME: [min;max]`` with -range). Core cycles are always measured: from the PMU
they print as ``CORE_CYCLES`` (``Core cycles``, with ``Instructions retired`` and ``Reference
cycles``, under -fixed_counters, as nanoBench names its fixed counters); without a PMU they print
as ``CORE_CYCLES (TSC-calibrated)`` and one note on stderr says that only TSC-calibrated cycles
are available. Config-file events print under their config names.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import CycleBenchError, UsageError
from ..snippet.parse import MAX_RAW
from ..textfile import read_bytes
from .parser import exit_code_help

VALUE_OPTIONS = {
    "asm": "code to benchmark (Intel syntax)",
    "asm_init": "code run at the beginning of every benchmark run",
    "asm_late_init": "code run immediately before the benchmarked code",
    "asm_one_time_init": "code run once before the first run",
    "code": "file of raw machine code to benchmark",
    "code_init": "file of raw machine code: init",
    "code_late_init": "file of raw machine code: late init",
    "code_one_time_init": "file of raw machine code: one-time init",
    "config": "performance counter config file (nanoBench format)",
    "n_measurements": "repetitions [default 10]",
    "unroll_count": "copies of the code [default 1000; see below for the TSC backend]",
    "loop_count": "iterations of a loop around the copies; R15 is the counter [default 0]",
    "warm_up_count": "runs before the first recorded one [default 5]",
    "initial_warm_up_count": "runs before everything else [default 0]",
    "alignment_offset": "offset from 64-byte alignment of the code [default 0]",
    "cpu": "pin to this CPU [default: the current one]",
    "usr": "1: count user mode [default 1]",
    "os": "1: count kernel mode [default 0]",
}
FLAG_OPTIONS = {
    "fixed_counters": "also read the fixed counters (instructions, core and reference cycles)",
    "avg": "mean of the 20th-80th percentiles [default]",
    "median": "median",
    "min": "minimum",
    "max": "maximum",
    "range": "minimum and maximum",
    "basic_mode": "difference 0 and n copies instead of n and 2n",
    "no_mem": "counter readings in registers R8-R13, no memory accesses; enables pause/resume magic bytes",
    "no_normalization": "do not divide by the number of copies",
    "remove_empty_events": "leave out events that did not occur",
    "df": "drain the front end (lfence and long NOP runs)",
    "verbose": "print every raw reading",
    "help": "this help",
}
NOT_SUPPORTED = {
    "debug": "-debug (a breakpoint before the end reading, run under gdb) is not supported",
    "msr_config": "-msr_config needs nanoBench's kernel module (RDMSR counters); cyclebench runs in user space",
}
OPTIONS = {**VALUE_OPTIONS, **FLAG_OPTIONS}
NANOBENCH_DEFAULTS = {"unroll_count": 1000, "loop_count": 0, "n_measurements": 10, "warm_up_count": 5,
                      "initial_warm_up_count": 0, "alignment_offset": 0, "usr": 1, "os": 0}
FIXED_NAMES = {"instructions": "Instructions retired", "ref-cycles": "Reference cycles"}
TSC_NOTE = "note: only core cycles calibrated from the TSC are available here, printed as CORE_CYCLES (TSC-calibrated): {reason}"
# measure()'s warnings name cyclebench's options; here the user typed nanoBench's.
_OPTION_NAMES = (("--unroll", "-unroll_count"), ("--loop", "-loop_count"), ("--no-mem", "-no_mem"),
                 ("--os 0", "-os 0"), ("--events", "-config"))


@dataclass
class Parsed:
    values: dict
    flags: set


def resolve_name(given: str) -> str:
    """nanoBench option name for ``given`` (without dashes): exact, else a unique prefix."""
    name = given.lower()
    if name in OPTIONS:
        return name
    if name in NOT_SUPPORTED:
        raise UsageError(NOT_SUPPORTED[name], "leave it out")
    if name in ("h", "-help"):
        return "help"
    matches = sorted(o for o in OPTIONS if o.startswith(name))
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UsageError(f"option '-{given}' is ambiguous: it abbreviates " + ", ".join(f"-{m}" for m in matches),
                         "type more of the name, e.g. " + f"-{matches[0]}")
    raise UsageError(f"unknown option '-{given}'",
                     "nanoBench's options are " + " ".join(f"-{o}" for o in OPTIONS) + " (see cyclebench nanobench -help)")


def parse(argv: list[str]) -> Parsed:
    values, flags = {}, set()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-") or arg in ("-", "--"):
            raise UsageError(f"unexpected argument '{arg}': nanoBench takes the code with -asm",
                             'e.g. cyclebench nanobench -asm "ADD RAX, RBX; ADD RBX, RAX"')
        body = arg.lstrip("-")
        key, eq, inline = body.partition("=")
        name = resolve_name(key)
        if name in VALUE_OPTIONS:
            if eq:
                value = inline
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                raise UsageError(f"option -{name} needs a value", f"-{name}: {VALUE_OPTIONS[name]}")
            if name in values:
                raise UsageError(f"option -{name} is given twice", "give it once")
            if (name == "config" or name.startswith("code")) and not value.strip():
                raise UsageError(f"option -{name} has an empty path", f"-{name}: {VALUE_OPTIONS[name]}")
            values[name] = value
        else:
            if eq:
                raise UsageError(f"option -{name} takes no value", f"write -{name} alone")
            flags.add(name)
        i += 1
    return Parsed(values, flags)


def _int(parsed: Parsed, name: str) -> int | None:
    text = parsed.values.get(name)
    if text is None:
        return None
    try:
        value = int(text, 0)
    except ValueError:
        raise UsageError(f"-{name} needs a whole number, not '{text}'", f"-{name}: {VALUE_OPTIONS[name]}") from None
    if value < 0:
        raise UsageError(f"-{name} must not be negative ({value})", f"-{name}: {VALUE_OPTIONS[name]}")
    return value


def help_text() -> str:
    width = max(len(o) for o in OPTIONS) + 2
    lines = ["usage: cyclebench nanobench -asm CODE [nanoBench options]", "",
             "nanoBench's command line, run by cyclebench (no root, no kernel module). Options may be",
             "abbreviated to a unique prefix (-l = -loop_count); values follow as the next argument or after '='.",
             "", "options with a value:"]
    lines += [f"  -{o:<{width}}{h}" for o, h in VALUE_OPTIONS.items()]
    lines += ["", "flags:"]
    lines += [f"  -{o:<{width}}{h}" for o, h in FLAG_OPTIONS.items()]
    lines += ["", (__doc__ or "").split("\n\n", 2)[2].strip(), "", exit_code_help()]
    return "\n".join(lines) + "\n"


def _code_part(parsed: Parsed, asm: str, code: str):
    text, path = parsed.values.get(asm), parsed.values.get(code)
    if text is not None and path is not None:
        raise UsageError(f"-{asm} and -{code} cannot be used together", "give one of them")
    return Path(path) if path is not None else text


_R15 = re.compile(r"\br15[dwb]?\b", re.IGNORECASE)


def _mentions_r15(part) -> bool:
    if part is None:
        return False
    if isinstance(part, Path):
        import iced_x86
        try:      # capped: -code /dev/zero must not read forever
            code = read_bytes(part, "code file", limit=MAX_RAW, error=UsageError, hint="")
        except CycleBenchError:
            return False                    # measure() reports the unreadable file
        factory = iced_x86.InstructionInfoFactory()
        return any(iced_x86.RegisterExt.full_register(u.register) == iced_x86.Register.R15
                   for ins in iced_x86.Decoder(64, code) for u in factory.info(ins).used_registers())
    return bool(_R15.search(part))


def _pmu_usable() -> tuple[bool, str]:
    from ..counters.backends import HW_CYCLES, explain_failure, probe
    (res,) = probe((HW_CYCLES,))
    return (True, "") if res.ok else (False, explain_failure(HW_CYCLES, res)[0])


def build_kwargs(parsed: Parsed, pmu: bool) -> tuple[dict, list[str]]:
    """measure() keyword arguments for nanoBench's options, and notes about the choices made."""
    notes = []
    parts = {"code": _code_part(parsed, "asm", "code"), "init": _code_part(parsed, "asm_init", "code_init"),
             "late_init": _code_part(parsed, "asm_late_init", "code_late_init"),
             "one_time_init": _code_part(parsed, "asm_one_time_init", "code_one_time_init")}
    if parts["code"] is None:
        raise UsageError("no code to benchmark", 'give -asm "..." or -code FILE')
    unroll, loop = _int(parsed, "unroll_count"), _int(parsed, "loop_count")
    if unroll == 0:
        raise UsageError("-unroll_count must be at least 1", "e.g. -unroll_count 100")
    if pmu or loop is not None:
        unroll = NANOBENCH_DEFAULTS["unroll_count"] if unroll is None else unroll
        loop = NANOBENCH_DEFAULTS["loop_count"] if loop is None else loop
    elif _mentions_r15(parts["code"]) or _mentions_r15(parts["late_init"]):
        unroll = NANOBENCH_DEFAULTS["unroll_count"] if unroll is None else unroll
        loop = 0
        notes.append("the code uses R15, so no loop is added (R15 is the loop counter): with the TSC backend the "
                     "resolution of nanoBench's default counts is poor; give -loop_count and keep R15 free")
    # else: TSC backend, loop not given: cyclebench chooses (unroll None = from code size if also unset)
    aggregate = [a for a in ("avg", "median", "min", "max", "range") if a in parsed.flags]
    if len(aggregate) > 1:
        raise UsageError("-" + " and -".join(aggregate) + " are exclusive", "give one aggregate function")
    usr, os_ = _int(parsed, "usr"), _int(parsed, "os")
    for name, v in (("usr", usr), ("os", os_)):
        if v is not None and v not in (0, 1):
            raise UsageError(f"-{name} takes 0 or 1, not {v}", f"-{name}: {VALUE_OPTIONS[name]}")
    events = None
    if "config" in parsed.values:
        from ..counters.nanobench_config import load_config
        events = load_config(parsed.values["config"])
    n = _int(parsed, "n_measurements")
    kwargs = dict(
        unroll=unroll, loop=loop,
        n_measurements=NANOBENCH_DEFAULTS["n_measurements"] if n is None else n,
        warm_up=_nonnull(_int(parsed, "warm_up_count"), NANOBENCH_DEFAULTS["warm_up_count"]),
        initial_warm_up=_nonnull(_int(parsed, "initial_warm_up_count"), 0),
        alignment_offset=_nonnull(_int(parsed, "alignment_offset"), 0),
        aggregate=aggregate[0] if aggregate else "avg",
        basic_mode="basic_mode" in parsed.flags, no_normalization="no_normalization" in parsed.flags,
        drain_frontend="df" in parsed.flags, cpu=_int(parsed, "cpu"),
        user=bool(_nonnull(usr, 1)), kernel=bool(_nonnull(os_, 0)),
        fixed_counters="fixed_counters" in parsed.flags, no_mem="no_mem" in parsed.flags,
        remove_empty_events="remove_empty_events" in parsed.flags, events=events)
    return {**parts, **kwargs}, notes


def _nonnull(v, default):
    return default if v is None else v


def event_label(name: str, result) -> str:
    if name == "cycles":
        if result.backend["name"] != "perf":
            return "CORE_CYCLES (TSC-calibrated)"
        return "Core cycles" if result.parameters.get("fixed_counters") else "CORE_CYCLES"
    if result.parameters.get("fixed_counters") and name in FIXED_NAMES:
        return FIXED_NAMES[name]
    return name


def render(result) -> str:
    """nanoBench's result lines: ``NAME: 2.00`` per event (cycles first; TSC and ns are not events)."""
    lines = []
    normalized = not result.parameters.get("no_normalization")
    for name, e in result.events.items():
        if name in ("tsc", "ns"):
            continue
        label = event_label(name, result)
        if name == "cycles" and label == "CORE_CYCLES" and "CORE_CYCLES" in result.events:
            label = "Core cycles"           # a config line is named CORE_CYCLES (nanoBench's own configs)
        if e.aggregate == "range":
            text = f"[{e.min:.2f};{e.max:.2f}]" if normalized else f"[{e.min:.0f};{e.max:.0f}]"
        else:
            text = f"{e.value:.2f}" if normalized else f"{e.value:.0f}"
        if e.multiplexed:
            text += f"  (multiplexed: counted {e.running_fraction:.0%} of the time at worst, not scaled)"
        lines.append(f"{label}: {text}")
    return "\n".join(lines) + "\n"


def add_parser(sub):
    p = sub.add_parser("nanobench", help="nanoBench's command line (-asm, -config, -unroll_count ...)",
                       description="nanoBench's command line; run 'cyclebench nanobench -help' for its options.",
                       prefix_chars="+", add_help=False)
    p.add_argument("nanobench_args", nargs="*", metavar="OPTION")
    p.set_defaults(run=run)


def run(args) -> int:
    argv = list(args.nanobench_args)
    parsed = parse(argv)
    if "help" in parsed.flags or not argv:
        sys.stdout.write(help_text())
        return 0
    pmu, reason = _pmu_usable()
    kwargs, notes = build_kwargs(parsed, pmu)
    if not pmu:
        print(TSC_NOTE.format(reason=reason), file=sys.stderr)
    code = kwargs.pop("code")
    from ..measurement.api import measure
    result = measure(code, **kwargs)
    sys.stdout.write(render(result))
    if "verbose" in parsed.flags:
        from ..reports.measurement_text import raw_lines
        p = result.parameters
        sys.stdout.write(f"# unroll {p['unroll']}, loop {p['loop'] if p['use_loop'] else 0}, "
                         f"{p['n_measurements']} measurements, backend {result.backend['name']}\n")
        sys.stdout.write("\n".join(raw_lines(result)) + "\n")
    for w in notes + result.warnings:
        for ours, theirs in _OPTION_NAMES:
            w = w.replace(ours, theirs)
        print(f"warning: {w}", file=sys.stderr)
    return 0
