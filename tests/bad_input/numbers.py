"""Whole-number options (cli/options.whole_number, at_least) at their edges: below their range,
far above it and not numbers.  Each is one `error:` line with the range or the number's form in
the hint, exit 2, before anything is measured; ``inst`` checks measure()'s values once, before
the first form (each form used to fail alone and the command to exit 0)."""
from __future__ import annotations

from . import Case

HUGE = "1" + "0" * 30
BLOCK = "4801d8"
OBJ = "int f(int x) { return x * 3 + 1; }\n"

# option, a value below its range (0 where 0 is no count), and the error that names it
MEASURING = [
    ("--unroll", "0", r"unroll count 0 is out of range"),
    ("--unroll", "-1", r"unroll count -1 is out of range"),
    ("--unroll", HUGE, rf"unroll count {HUGE} is out of range"),
    ("--loop", "-1", r"loop count -1 is out of range"),
    ("--loop", HUGE, rf"loop count {HUGE} is out of range"),
    ("-n", "0", r"0 measurements is out of range"),
    ("-n", "-1", r"-1 measurements is out of range"),
    ("-n", HUGE, r"measurements is out of range"),
    ("--warm-up", "-1", r"warm-up counts must be between 0 and 100000"),
    ("--initial-warm-up", HUGE, r"warm-up counts must be between 0 and 100000"),
    ("--alignment-offset", "-1", r"alignment offset -1 is out of range"),
    ("--alignment-offset", "64", r"alignment offset 64 is out of range"),
    ("--group-size", "0", r"group size 0 is out of range"),
    ("--group-size", "-1", r"group size -1 is out of range"),
    ("--cpu", "-1", r"CPU -1 does not exist"),
    ("--cpu", HUGE, rf"CPU {HUGE} does not exist"),
]
NOT_NUMBERS = ["ten", "1.5", "", "0x", "1e3"]


def _id(option: str, value: str) -> str:
    v = "huge" if value == HUGE else value.replace("-", "minus") or "empty"
    return f"{option.strip('-')}-{v}"


CASES = [
    *(Case(f"asm-{_id(o, v)}", ["asm", o, v, "nop"], 2, error) for o, v, error in MEASURING),
    *(Case(f"inst-{_id(o, v)}", ["inst", "HLT", o, v], 2, error) for o, v, error in MEASURING),
    *(Case(f"asm-unroll-not-a-number-{_id('', v)}", ["asm", f"--unroll={v}", "nop"], 2,
           rf"argument --unroll: '{v}' is not a whole number",
           r"cyclebench asm --help") for v in NOT_NUMBERS),
    Case("inst-cpu-not-a-number", ["inst", "HLT", "--cpu", "first"], 2,
         r"argument --cpu: 'first' is not a whole number", r"cyclebench inst --help"),
    *(Case(f"block-{_id(o, v)}", ["block", BLOCK, o, v], 2, error)
      for o, v, error in (("-n", "0", r"0 measurements is out of range"),
                          ("-n", "-1", r"-1 measurements is out of range"),
                          ("-n", HUGE, r"measurements is out of range"))),
    Case("block-cpu-not-a-number", ["block", BLOCK, "--cpu", "first"], 2,     # read as every other --cpu
         r"argument --cpu: 'first' is not a whole number"),
    Case("block-cpu-missing", ["block", BLOCK, "--cpu", HUGE], 2, rf"CPU {HUGE} does not exist"),
    Case("block-n-not-a-number", ["block", BLOCK, "-n", "many"], 2, r"argument -n/--n-measurements: 'many'"),
    *(Case(f"study-{_id(o, v)}", ["study", "memset", o, v], 2, error)
      for o, v, error in (("-n", "0", r"0 repetitions is out of range"),
                          ("-n", "-1", r"-1 repetitions is out of range"),
                          ("-n", HUGE, r"repetitions is out of range"))),
    Case("study-n-not-a-number", ["study", "memset", "-n", "x"], 2, r"argument -n/--n-measurements: 'x'"),
]
