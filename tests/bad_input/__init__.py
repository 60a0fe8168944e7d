"""The bad-input table: every case a new user tried that must end in one `error:` line, one `hint:`
line and a documented exit code, with no traceback, no hang and no file lost.

Each module here holds a list ``CASES`` for one area (snippets, config files, result files, the
API, the sandbox...); ``tests/test_bad_input.py`` runs them all. A case runs the CLI in-process
unless it sets ``subprocess=True`` (for what needs a fresh process: signals, HOME, the cache).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Case:
    id: str
    argv: list                            # after "cyclebench"; "{tmp}" becomes the case's own folder; an
                                          # item may be a function of (tmp, tty path) -> str
    exit_code: int
    error: str                            # regex, searched in the text after "error: "
    hint: str = ""                        # regex, searched in the text after "hint: "
    files: dict[str, bytes] = field(default_factory=dict)   # made in {tmp} before the run
    intact: tuple[str, ...] = ()          # of those files, the ones that must be byte-identical after
    env: dict[str, str] = field(default_factory=dict)       # extra environment ("{tmp}" replaced)
    subprocess: bool = False              # run `python3 -m cyclebench` in a new process
    timeout: float = 60.0                 # subprocess only: a hang fails the case
    setup: Callable[[str], None] | None = None              # called with {tmp} before the run
    measured: bool = False                # the case reads a fact from a timing (re-run on failure)
    # a subprocess whose controlling terminal and standard input are a fresh pty ("{tty}" in argv
    # becomes its path); the case fails if any byte was pushed into that terminal's input
    tty: bool = False
    after: Callable[[str], None] | None = None              # called with {tmp} after the run: asserts
    # a subprocess sent this signal once a file matching ``signal_when`` (a glob in {tmp}) exists;
    # it must end with the signal's exit code and leave no cyclebench-* temporary file in {tmp}
    # (its TMPDIR); no error line is expected then
    signal: int = 0
    signal_when: str = "cyclebench-*"


@dataclass
class ApiCase:
    """A Python API call that must raise cyclebench's own error type with this exit code."""
    id: str
    call: Callable[[], object]
    exit_code: int
    error: str = ""                       # regex, searched in str(exception)
