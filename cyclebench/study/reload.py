"""A study's output folder read back: its records, its config rebuilt from the metadata block, its
facts, and its analysis made again from the records (the same tables and figures the run wrote).

``cyclebench report`` and ``cyclebench compare`` use this; nothing is measured. The config is the
study's own (quick or full, by the recorded name) with every field the run recorded put back, so a
run made with ``--kernels`` or ``-n`` is analysed as it was made.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import CycleBenchError, ResultFileError
from . import registry
from .base import Analysis, Study
from .engine import RESULTS, results_store
from .facts import RunFacts, run_facts


@dataclass
class StudyFolder:
    path: Path
    study: Study
    config: object
    meta: dict                      # the results file's header meta (study, config, machine, prepared)
    records: list[dict]
    facts: RunFacts
    analysis: Analysis

    @property
    def command(self) -> str:
        """The command that makes this folder again (its options are in the config shown beside)."""
        quick = " --quick" if getattr(self.config, "name", "") == "quick" else ""
        return f"cyclebench study {self.study.name}{quick} --out {self.path}"


def is_study_folder(path: Path) -> bool:
    try:
        return path.is_dir() and (path / RESULTS).is_file()
    except OSError as e:                 # a folder that cannot be searched
        raise ResultFileError(f"cannot read {path}: {e.strerror}", "check the path and permissions") from None


def study_name(path: Path) -> str:
    """The study a folder's results file holds (its header's kind), without reading the records."""
    try:
        with open(path / RESULTS, "rb") as f:
            head = json.loads(f.readline(1 << 20).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        head = None
    if not isinstance(head, dict) or head.get("cyclebench") != "results" or not isinstance(head.get("kind"), str):
        raise ResultFileError(f"{path / RESULTS} is not a cyclebench results file",
                              "give a folder written by cyclebench study")
    return head["kind"]


def load_study_folder(path) -> StudyFolder:
    """Records, config, facts and analysis of a study folder (ResultFileError when it is none)."""
    path = Path(path)
    if not is_study_folder(path):
        raise ResultFileError(f"{path} holds no study results ({RESULTS} is missing)",
                              "give a folder written by cyclebench study, or a result file")
    name = study_name(path)
    if name == "inst":
        raise ResultFileError(f"{path / RESULTS} holds inst results, not a study's",
                              f"give the file itself: {path / RESULTS}")
    try:
        study = registry.get(name)
    except CycleBenchError:
        raise ResultFileError(f"{path} holds results of an unknown study {name[:40]!r}",
                              "use the cyclebench version that wrote it") from None
    meta, records = results_store(study, path / RESULTS).load()
    if not records:
        raise ResultFileError(f"{path / RESULTS} holds no records", "run the study (again) into that folder")
    meta = meta or {}
    config = rebuild_config(study, meta.get("config") or "", _parameters(path))
    facts = run_facts(study.name, meta.get("config") or "", meta, records)
    return StudyFolder(path, study, config, meta, records, facts, study.analyse(config, records, facts))


def _parameters(path: Path) -> dict:
    """The config the run recorded in results.json (empty when that file is missing)."""
    try:
        doc = json.loads((path / "results.json").read_text())
        return dict((doc.get("metadata") or {}).get("parameters") or {})
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def rebuild_config(study: Study, name: str, recorded: dict):
    """The study's config for ``name`` ("quick" or the default) with the recorded fields put back."""
    p = argparse.ArgumentParser(add_help=False)
    study.add_options(p)
    options = p.parse_args([])
    options.quick, options.n_measurements = name == "quick", None
    options.out, options.resume, options.no_progress = None, True, True
    base = study.configure(options)
    if not dataclasses.is_dataclass(base) or not recorded:
        return base
    now = base.to_dict() if hasattr(base, "to_dict") else dataclasses.asdict(base)
    changes = {}
    for f in dataclasses.fields(base):
        if f.name in recorded and recorded[f.name] != now.get(f.name):
            changes[f.name] = _like(getattr(base, f.name), recorded[f.name])
    return dataclasses.replace(base, **changes) if changes else base


def _like(template, value):
    """JSON ``value`` in the shape of ``template``: lists as tuples, dicts as the template's items'
    dataclass (the config's own types, which JSON flattened)."""
    if isinstance(value, list) and isinstance(template, (tuple, list)):
        item = template[0] if template else None
        return tuple(_like(item, v) for v in value)
    if isinstance(value, dict) and dataclasses.is_dataclass(template):
        return type(template)(**value)
    return value
