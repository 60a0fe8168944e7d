"""Any saved cyclebench result read back into one shape, ``Loaded``:

* ``asm``: a ``cyclebench asm --json`` document (or a list of them), read by ``Result.from_dict``;
* ``inst``: a ``cyclebench inst --format json`` table (``cyclebench.inst.table``) or an ``inst``
  results file (JSON lines through study/store.py, each line checked by ``bulk.check_doc``);
* ``study``: a study's output folder (study/reload.py: records, config, facts, analysis again).

Anything else (a folder with no results, foreign JSON, a binary file) is a ResultFileError
(exit 10) naming the path, with a hint.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ResultFileError
from ..machine.uarch import core_name
from ..instructions.bulk import check_doc, results_store
from ..instructions.characterize import SCHEMA as INST_SCHEMA
from ..measurement.result import SCHEMA as ASM_SCHEMA, Result
from ..study.reload import StudyFolder, is_study_folder, load_study_folder, study_name
from ..textfile import read_text

MAX_JSON = 512 << 20          # an --all inst table is ~30 MB; refuse devices and runaway files
HINT = "give asm/inst JSON, an inst results file (.jsonl) or a study's output folder"


@dataclass
class Loaded:
    kind: str                             # "asm" | "inst" | "study"
    path: Path
    machine: dict = field(default_factory=dict)
    results: list = field(default_factory=list)       # asm: measurement Results
    docs: list[dict] = field(default_factory=list)    # inst: form documents
    study: StudyFolder | None = None
    notes: list[str] = field(default_factory=list)
    options: dict | None = None                       # inst: the measuring options its header keeps

    @property
    def label(self) -> str:
        return f"{self.study.study.name} study" if self.study else f"{self.kind} results"

    @property
    def name(self) -> str:
        """What compare and the page call it: the study's name, or asm/inst."""
        return self.study.study.name if self.study else self.kind


def load(path) -> Loaded:
    """One input path, whatever it holds (see the module docstring)."""
    p = Path(path)
    if p.is_dir():
        if is_study_folder(p):
            folder = load_study_folder(p)
            return Loaded("study", p, dict(folder.meta.get("machine") or {}), study=folder)
        raise ResultFileError(f"{p} is a folder with no results in it (no results.jsonl)",
                              "give a study's output folder (cyclebench study ... --out DIR) or a result file")
    if not p.exists():
        raise ResultFileError(f"{p} does not exist", HINT)
    head = b""
    if p.is_file():                         # a FIFO is read once, as JSON, below: opening it here could block
        try:
            with open(p, "rb") as f:
                head = f.read(64)
        except OSError as e:
            raise ResultFileError(f"cannot read {p}: {e.strerror}", HINT) from None
    if head.lstrip().startswith(b'{"cyclebench":"results"'):
        if is_study_folder(p.parent) and study_name(p.parent) != "inst":
            return load(p.parent)           # a study's results.jsonl: the study, from its folder
        return _load_jsonl(p)
    text = read_text(p, "result file", limit=MAX_JSON, error=ResultFileError, hint=HINT)
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise ResultFileError(f"{p} is not JSON", HINT) from None
    return _load_json(p, doc)


def load_all(paths) -> list[Loaded]:
    return [load(p) for p in paths]


def _load_jsonl(p: Path) -> Loaded:
    store = results_store(p)
    meta, docs = store.load()        # a study's results.jsonl given as a file: "holds X results, not inst"
    if not docs:
        raise ResultFileError(f"{p} holds no instruction forms", "give a file cyclebench inst --results wrote")
    options = (meta or {}).get("options")
    return Loaded("inst", p, dict((meta or {}).get("machine") or {}), docs=docs, notes=list(store.notes),
                  options=options if isinstance(options, dict) else None)


def _load_json(p: Path, doc) -> Loaded:
    items = doc if isinstance(doc, list) and doc else [doc]
    if all(isinstance(d, dict) and d.get("schema") == ASM_SCHEMA for d in items):
        try:
            results = [Result.from_dict(d) for d in items]
        except ResultFileError as e:          # its message names no file: compare reads two
            raise ResultFileError(f"{p}: {e.cause}", e.hint) from None
        return Loaded("asm", p, dict(results[0].machine), results=results)
    if isinstance(doc, dict) and doc.get("schema") == INST_SCHEMA + ".table":
        docs = doc.get("forms")
        if not isinstance(docs, list) or not docs:
            raise ResultFileError(f"{p} holds no instruction forms", HINT)
        for i, d in enumerate(docs):
            why = check_doc(d) if isinstance(d, dict) else "not an object"
            if why:
                raise ResultFileError(f"{p}: form {i + 1} is not an inst document: {why[:120]}", HINT)
        return Loaded("inst", p, dict(doc.get("machine") or {}), docs=docs)
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if isinstance(schema, str) and schema.startswith("cyclebench.") and schema.endswith("-study"):
        raise ResultFileError(f"{p} is a study's summary (results.json)", f"give its folder: {p.parent}")
    raise ResultFileError(f"{p} is not a cyclebench result (no known schema field)", HINT)


def machine_key(machine: dict) -> tuple:
    """What tells two CPUs apart in a table: vendor, family/model/stepping, microcode."""
    return tuple(machine.get(k) for k in ("cpu_vendor", "cpu_family", "cpu_model", "cpu_stepping", "microcode"))


def machine_label(machine: dict, fallback: str = "unknown machine") -> str:
    """One line for a CPU column: model name, family/model, microcode (uops.info's column head)."""
    if not machine.get("cpu_vendor"):
        return fallback
    fam = machine.get("cpu_family")
    fm = f"family {fam:#x} model {machine.get('cpu_model'):#x}" if isinstance(fam, int) else "family ?"
    return (f"{core_name(machine)}: {machine.get('cpu_model_name') or machine.get('cpu_vendor')} "
            f"({fm}, µcode {machine.get('microcode')})")
