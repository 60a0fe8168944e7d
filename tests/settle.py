"""Measured facts that wait for a settled host, or say why they could not be checked.

A figure flagged unstable may be off by a burst of other work on the host, so a test cannot hold
it to the fact. It must not pass unchecked either: ``settled`` measures again (up to ``tries``
times) until every figure the test checks is labelled stable, and when the host never settles it
skips the test with the figures and the reasons (shown in the suite's summary by ``-rs``)."""
from __future__ import annotations

import os
from typing import Callable, TypeVar

import pytest

T = TypeVar("T")


def unsettled(label: str, entry: dict) -> list[str]:
    """``[label (its warnings)]`` when the measured entry is not labelled stable, else []."""
    if entry.get("stable"):
        return []
    why = "; ".join(entry.get("warnings") or []) or "flagged unstable"
    return [f"{label} ({why[:200]})"]


def settled(run: Callable[[], tuple[T, list[str]]], tries: int = 3) -> T:
    """``run()`` -> (what it measured, the labels of figures that did not settle). Returns the
    first run whose figures all settled; skips the test after ``tries`` runs that did not."""
    left: list[str] = []
    for _ in range(tries):
        value, left = run()
        if not left:
            return value
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]   # the summary names the test
    pytest.skip(f"{test}: host too noisy: {', '.join(left)} still unstable after {tries} measurements")


def settled_cycles(*runs: Callable[[], object], tries: int = 3) -> list[float]:
    """The cycles of each of ``runs`` (each returns a measurement Result), measured again together
    until every one is labelled stable: a fact compared across measurements holds only where
    none was read during a burst. Skips the test when the host never settles."""
    def once() -> tuple[list[float], list[str]]:
        results = [run() for run in runs]
        return [r.value() for r in results], [
            x for i, r in enumerate(results)
            for x in unsettled(f"measurement {i + 1}", {"stable": r.stable, "warnings": r.warnings})]
    return settled(once, tries)
