"""The one progress bar (rich, on standard error) for long runs: studies and ``cyclebench inst``.

    with ProgressBar("memset", total=len(tasks), done=skipped, enabled=True) as bar:
        bar.show("fixed 64 B: nt_old")     # what runs now
        ...
        bar.advance()
"""
from __future__ import annotations


class ProgressBar:
    def __init__(self, label: str, total: int, *, done: int = 0, enabled: bool = True):
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)
        self._progress = Progress(TextColumn(f"[bold]{escape(label)}[/]"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TimeRemainingColumn(),
                                  TextColumn("{task.description}", markup=False),
                                  console=Console(stderr=True), disable=not enabled, transient=False)
        self._task = self._progress.add_task("", total=total, completed=done)

    def __enter__(self) -> "ProgressBar":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)

    def show(self, description: str) -> None:
        self._progress.update(self._task, description=description)

    def advance(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)
