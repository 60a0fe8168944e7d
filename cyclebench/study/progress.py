"""The one progress report for long runs (studies), on standard error: a rich bar on a terminal,
plain lines otherwise (a log, CI), so that a run is never silent for long.

    with ProgressBar("memset", enabled=True) as bar:
        bar.stage("preparing: building the kernels")    # a step with no count
        bar.count(total=len(tasks), done=skipped)       # then the counted part
        bar.show("fixed 64 B: nt_old")                  # what runs now
        ...
        bar.advance()
"""
from __future__ import annotations

import sys
import time

LINE_EVERY = 10.0       # seconds between plain lines while counting


class ProgressBar:
    def __init__(self, label: str, total: int | None = None, *, done: int = 0, enabled: bool = True,
                 stream=None):
        self._stream = stream or sys.stderr
        self._label = label
        self._total, self._done = total, done
        self._live = enabled and self._stream.isatty()
        self._lines = enabled and not self._live
        self._last_line = 0.0
        self._progress = None
        if self._live:
            from rich.console import Console
            from rich.markup import escape
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            self._progress = Progress(TextColumn(f"[bold]{escape(label)}[/]"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TimeRemainingColumn(),
                                      TextColumn("{task.description}", markup=False),
                                      console=Console(file=self._stream), transient=False)
            self._task = self._progress.add_task("", total=total, completed=done)

    def __enter__(self) -> "ProgressBar":
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def _line(self, text: str) -> None:
        self._last_line = time.monotonic()
        try:
            print(f"{self._label}: {text}", file=self._stream, flush=True)
        except (OSError, ValueError):      # standard error closed: progress is not worth failing for
            self._lines = False

    def stage(self, text: str) -> None:
        """A step of the run (preparing, analysing, writing outputs)."""
        if self._progress is not None:
            self._progress.update(self._task, description=text)
        elif self._lines:
            self._line(text)

    def note(self, text: str) -> None:
        """Something the user must hear of (a file moved aside), shown whether or not progress is."""
        if self._progress is not None:
            self._progress.console.print(f"note: {text}", markup=False, highlight=False)
        else:
            try:
                print(f"note: {text}", file=self._stream, flush=True)
            except (OSError, ValueError):
                pass

    def count(self, total: int, done: int = 0) -> None:
        """The counted part starts: ``total`` tasks, ``done`` of them already made."""
        self._total, self._done = total, done
        if self._progress is not None:
            self._progress.update(self._task, total=total, completed=done)
        elif self._lines:
            self._line(f"measuring {total - done} of {total} tasks" + (f" ({done} already done)" if done else ""))

    def show(self, description: str) -> None:
        """What runs now; as a plain line at most every LINE_EVERY seconds."""
        if self._progress is not None:
            self._progress.update(self._task, description=description)
        elif self._lines and time.monotonic() - self._last_line >= LINE_EVERY:
            self._line(f"{self._done}/{self._total} {description}")

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._progress is not None:
            self._progress.advance(self._task, n)
