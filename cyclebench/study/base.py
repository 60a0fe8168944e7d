"""The interface a study implements, and the pieces it hands the engine.

A study (one folder under cyclebench/studies/, its ``study.py`` registering a Study subclass) is
five steps, each a method:

``configure(options)``    the shared options (quick, n) and its own -> a config (``to_dict()`` for
                          the metadata block, ``name`` for file names and the summary)
``prepare(config)``       build and check its implementations before anything is timed; returns
                          a Prepared (whatever ``plan`` needs, and facts for the summary)
``plan(config, prep)``    -> Tasks; a task's key names everything that changes its figure, so a
                          resumed run measures exactly what is missing
``analyse(config, records, facts)``  -> an Analysis: tables, figures, findings and which files
                          they go to
``summarise(config, analysis, facts)``  -> its own summary sections; the Machine, Method and
                          Caveats sections come from the run's recorded facts (study/summary.py)

A task's ``run()`` returns the body of its record: ``{"routine", "params", "result", ...}``. A
``result`` that holds a Measurement's ``facts()`` (cyclebench/measurement/measured.py: a snippet's
Result, a routine's Timing, a program's ProgramTiming, or ``group_facts`` of several) counts as a
measurement in the summary's facts.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..errors import UsageError
from ..reports.model import Figure, Table


@dataclass
class Task:
    key: str
    experiment: str
    label: str                        # what the progress bar shows while it runs
    run: Callable[[], dict]


@dataclass
class Prepared:
    state: Any = None                 # the study's own (implementations ...)
    facts: dict = field(default_factory=dict)   # stored in the metadata block, e.g. library versions


@dataclass
class OutputFile:
    """One file of a study's output: a name and the tables or figure that go in it."""
    name: str                         # e.g. "fixed_sizes.txt"; the suffix picks the format
    tables: list[Table] = field(default_factory=list)
    figure: Figure | None = None


@dataclass
class Analysis:
    files: list[OutputFile] = field(default_factory=list)
    console: list[Table] = field(default_factory=list)    # printed after the run, and tables.txt
    summary_tables: list[Table] = field(default_factory=list)   # appended to summary.md
    findings: dict = field(default_factory=dict)           # numbers the summary quotes
    data: dict = field(default_factory=dict)               # the study's own part of results.json


@dataclass
class Section:
    title: str
    lines: list[str]


class Study:
    """Subclass this in cyclebench/studies/<name>/study.py and decorate it with @register."""
    name = ""
    title = ""                        # one line for --list and the summary heading
    description = ""                  # --help text
    schema_version = 1                # of its records in results.jsonl
    experiments: tuple[str, ...] = ()  # what --experiments chooses from (its config's ``experiments``)
    presets: tuple = ()               # (QUICK, FULL) configs: ``configure`` picks one

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        """Its own command-line options (the shared ones are added by the CLI); by default the
        subset option, ``--experiments``. A study with more calls this first."""
        if self.experiments:
            add_experiments_option(parser, self.experiments)

    def configure(self, options: argparse.Namespace):
        """Options into a config: its quick or full preset with -n, --experiments and the study's
        own ``option_changes`` applied."""
        if not self.presets:
            raise NotImplementedError
        quick, full = self.presets
        return preset(options, quick, full, **self.option_changes(options, quick if options.quick else full))

    def option_changes(self, options: argparse.Namespace, base) -> dict:
        """Its own options (``add_options``) as changes to ``base``, the chosen preset: config
        field -> value. None by default."""
        return {}

    def prepare(self, config) -> Prepared:
        return Prepared()

    def plan(self, config, prepared: Prepared) -> list[Task]:
        raise NotImplementedError

    def check_record(self, record: dict) -> str | None:
        """Why a stored record is not one of ours (None when it is): by default the shape the
        engine writes (``record_problem``)."""
        return record_problem(record)

    def analyse(self, config, records: list[dict], facts) -> Analysis:
        raise NotImplementedError

    def machine(self, config, facts) -> list[str]:
        """Its lines of the Machine section (library versions ...)."""
        return []

    def method(self, config, facts) -> list[str]:
        """Its lines of the Method section (how a figure is made)."""
        return []

    def caveats(self, config, facts) -> list[str]:
        """Its lines of the Caveats section."""
        return []

    def summarise(self, config, analysis: Analysis, facts) -> list[Section]:
        return []


def record_problem(rec: dict) -> str | None:
    """Why a stored record is not of the usual shape (None when it is): a key, an experiment,
    params and a result, and a result in every member of a group record (routines.program's
    time_programs groups). Every study's check_record unless it overrides it."""
    if not isinstance(rec.get("key"), str) or not isinstance(rec.get("experiment"), str):
        return "no key or experiment"
    if not isinstance(rec.get("result"), dict) or not isinstance(rec.get("params"), dict):
        return "no result"
    return None if all(isinstance(m.get("result"), dict) for m in rec.get("members", [])) else "a member has no result"


class _Deprecated(argparse.Action):
    """An old spelling of an option: it still works, and says which name to use."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"warning: {option_string} is deprecated; use {self.metavar}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_experiments_option(group, experiments) -> None:
    """The one subset option of every study: ``--experiments LIST``, a comma-separated subset of
    ``experiments`` (its config's ``experiments`` field; ``preset`` applies it). ``--parts`` is its
    deprecated spelling (the bounds study's old name)."""
    group.add_argument("--experiments", metavar="LIST",
                       help=f"comma-separated subset of {','.join(experiments)} (default: all)")
    group.add_argument("--parts", dest="experiments", action=_Deprecated, metavar="--experiments",
                       help=argparse.SUPPRESS)


def comma_list(text: str | None, example: str, names=()) -> tuple[str, ...] | None:
    """A study option's comma-separated list (None when the option was not given); ``example`` is
    the hint's sample value, e.g. "--experiments latency,tlb"; an item that is one of ``names`` in
    another case is spelt as there (one that is none is left for the config to refuse with them)."""
    if text is None:
        return None
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items:
        raise UsageError("an empty list was given", f"e.g. {example}")
    spelt = {n.lower(): n for n in names}
    return tuple(spelt.get(x.lower(), x) for x in items)


def preset(options, quick, full, **changes):
    """A study's config: its quick or full preset, with the shared ``-n`` (its ``reps``), the
    ``--experiments`` subset (names in any case) and the study's own option ``changes`` applied (a frozen dataclass,
    so ``replace``)."""
    n = options.n_measurements
    if n is not None:
        if not 1 <= n <= 100_000:
            raise UsageError(f"{n} repetitions is out of range", "use 1 <= -n <= 100000")
        changes["reps"] = n
    cfg = quick if options.quick else full
    subset = getattr(options, "experiments", None)
    if subset is not None:
        changes["experiments"] = comma_list(subset, "--experiments " + ",".join(cfg.experiments[:2]),
                                            (*full.experiments, *quick.experiments))
    return replace(cfg, **changes) if changes else cfg
