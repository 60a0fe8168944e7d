"""Errors a user can cause, each with a one-line cause, a hint and a documented exit code.

The CLI prints ``error: <cause>`` and ``hint: <hint>`` and exits with ``exit_code``; nothing else
(no traceback) reaches the user. Keep EXIT_CODES in sync with the ``--help`` epilog, which is
generated from it.
"""
from __future__ import annotations

EXIT_CODES = {
    0: "success (a result flagged unstable still exits 0 unless --require-stable)",
    1: "internal error in cyclebench (a bug: please report it)",
    2: "bad command line or parameters (absurd or conflicting values)",
    3: "assembler error, or code that cannot be loaded (relocations, unknown symbols)",
    4: "instruction not supported by this CPU (SIGILL or missing CPUID feature)",
    5: "the measured code faulted (SIGSEGV, SIGBUS, SIGFPE, other signals)",
    6: "the measured code did not finish within the timeout",
    7: "counter backend or event unavailable (no PMU, perf_event_paranoid, unknown event)",
    8: "measurement unstable and --require-stable was given",
    9: "bad config or input file (counter config, comparison data, size distribution)",
    10: "result file error (cannot write; a --resume file corrupt, from another CPU or measured with other "
        "options; a --solve file that lacks a reading; an input that is no cyclebench result)",
    11: "a routine failed its correctness check and was not timed",
    12: "compare --fail-on-regression: a figure got significantly slower",
    13: "the TSC clock calibration failed its self-check (set CYCLEBENCH_CLOCK_MHZ, or use a PMU)",
    130: "interrupted (Ctrl-C); results saved so far are kept",
    143: "terminated (SIGTERM); results saved so far are kept and temporary files removed",
}


class CycleBenchError(Exception):
    """Base class: a user-facing error with a cause, a hint and an exit code."""

    exit_code = 1

    def __init__(self, cause: str, hint: str | None = None, **details):
        super().__init__(cause)
        self.cause = cause
        self.hint = hint
        self.details = details

    def __str__(self) -> str:
        return self.cause


class UsageError(CycleBenchError):
    exit_code = 2


class AssemblyError(CycleBenchError):
    exit_code = 3


class UnsupportedInstruction(CycleBenchError):
    exit_code = 4


class SnippetFault(CycleBenchError):
    exit_code = 5


class SnippetTimeout(CycleBenchError):
    exit_code = 6


class CounterUnavailable(CycleBenchError):
    exit_code = 7


class UnstableMeasurement(CycleBenchError):
    exit_code = 8


class ConfigError(CycleBenchError):
    exit_code = 9


class ResultFileError(CycleBenchError):
    exit_code = 10


class RoutineIncorrect(CycleBenchError):
    exit_code = 11


class CalibrationFailed(CycleBenchError):
    """The TSC calibration disagreed with its own check (measurement/clocks.py): no figure."""
    exit_code = 13


class Regression(CycleBenchError):
    exit_code = 12
