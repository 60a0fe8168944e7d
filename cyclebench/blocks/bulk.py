"""Many blocks: a CSV of blocks (hex, application, weight) measured by one worker per CPU (the
worker and its runner pinned to that CPU, as ``inst --all`` does), every finished block appended
to a resumable results file (cyclebench/study/store.py, kind "block"), blocks already in it
skipped on resume. A block that cannot be measured is recorded with its reason. Blocks a noise
burst left unstable are measured again after the others (up to RETRIES passes)."""
from __future__ import annotations

import csv
import io
import traceback
from pathlib import Path
from typing import Callable

from ..errors import ConfigError, UsageError
from ..instructions.bulk import default_cpus, pin_worker, pinned_pool
from ..machine.metadata import machine_metadata
from ..measurement import params
from ..study.store import BulkRun, ResultsStore, bulk_doc_problem
from ..textfile import quote, read_text
from .code import parse_hex
from .measure import SCHEMA, SCHEMA_VERSION, base_doc, measure_block

MAX_CSV = 64 << 20
RETRIES = 2          # passes that measure again the blocks a noise burst left unstable
STATUSES = ("ok", "refused", "failed")


def read_csv(path: str | Path) -> list[dict]:
    """Rows {hex, application, weight} of a blocks CSV (a 'hex' column is required; the others are
    optional); a duplicate block keeps its first row."""
    text = read_text(path, "blocks file", limit=MAX_CSV, error=ConfigError,
                     hint="give a CSV with a 'hex' column (and optionally 'application', 'weight')")
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))      # a spreadsheet's byte-order mark
    if reader.fieldnames:                                                   # ' Hex ' is the hex column too
        reader.fieldnames = [(name or "").strip().lower() for name in reader.fieldnames]
    if not reader.fieldnames or "hex" not in reader.fieldnames:
        raise ConfigError(f"{quote(str(path))} has no 'hex' column in its header line",
                          "the first line names the columns, e.g. hex,application,weight")
    rows, seen = [], set()
    for n, row in enumerate(reader, 2):
        try:
            code = parse_hex(row.get("hex") or "")
            weight = float(row["weight"]) if row.get("weight") not in (None, "") else None
        except (ValueError, UsageError) as e:   # parse_hex's UsageError, float's ValueError
            raise ConfigError(f"{quote(str(path))} line {n}: {getattr(e, 'cause', e)}",
                              "every row holds one block's bytes as hex") from None
        if code.hex() in seen:
            continue
        seen.add(code.hex())
        rows.append({"hex": code.hex(), "application": row.get("application") or None, "weight": weight})
    if not rows:
        raise ConfigError(f"{quote(str(path))} holds no blocks", "add rows below the header line")
    return rows


def check_doc(doc: dict) -> str | None:
    why = bulk_doc_problem(doc, SCHEMA, SCHEMA_VERSION, "hex", STATUSES)
    if why:
        return why
    if doc["status"] == "ok" and not (doc.get("cycles") is None or isinstance(doc["cycles"], (int, float))):
        return "'cycles' is not a number"
    return None


# the options of the header's that set what a figure means: the repetitions the statistic is taken
# over (the loop and aggregate are fixed; --max-pages and --timeout decide only whether a block runs)
METHOD = {k: params.METHOD[k] for k in ("n_measurements",)}


def results_store(path: Path) -> ResultsStore:
    return ResultsStore(path, "block", SCHEMA_VERSION, check_record=check_doc, method=METHOD)


_CPU: int | None = None
_KW: dict = {}


def _worker_init(cpu_queue, kw):
    global _CPU, _KW
    _CPU = pin_worker(cpu_queue)
    _KW = kw


def _one(row: dict, cpu=None, kw=None) -> dict:
    extra = {"application": row.get("application"), "weight": row.get("weight")}
    try:
        return measure_block(bytes.fromhex(row["hex"]), cpu=cpu, **(kw or {}), **extra)
    except Exception as e:   # one block's bug must not end a long run: record it and go on
        tb = traceback.extract_tb(e.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        return base_doc(bytes.fromhex(row["hex"]), **extra, status="failed",
                        reason=f"internal error: {type(e).__name__}: {e}{where}", exit_code=1)


def _work(row: dict) -> dict:
    return _one(row, _CPU, _KW)


def _measure(rows: list[dict], cpus: list[int], kw: dict, finish: Callable[[dict], None]) -> None:
    if len(cpus) <= 1 or len(rows) <= 1:
        for r in rows:
            finish(_one(r, cpus[0] if cpus else None, kw))
        return
    pinned_pool(rows, cpus, _worker_init, (kw,), _work, finish)


def run(rows: list[dict], results: Path | None = None, resume: bool = False, cpus: list[int] | None = None,
        measure_kwargs: dict | None = None, progress: Callable[[dict, int, int], None] | None = None,
        notice: Callable[[str], None] | None = None) -> list[dict]:
    """Measure ``rows``; one document per block in row order (stored ones when resuming)."""
    kw = dict(measure_kwargs or {})
    sink = results_store(results) if results is not None else None
    run_ = BulkRun(sink, {"machine": machine_metadata(), "options": kw}, [r["hex"] for r in rows], "hex",
                   resume=resume, notice=notice, progress=progress)
    out, finish = run_.out, run_.finish
    pending = set(run_.todo)
    todo = [r for r in rows if r["hex"] in pending]

    def retry(doc):
        # a later pass: the block's new document replaces the old one (the store keeps both
        # lines; reading it back, the last one counts), unless the burst is still on
        if doc.get("stable") or not out[doc["hex"]].get("stable"):
            doc["retried"] = True
            out[doc["hex"]] = doc
            if sink is not None:
                sink.append(doc)

    try:
        cpus = cpus or default_cpus()
        _measure(todo, cpus, kw, finish)
        # Noise bursts on the host last seconds: blocks they left unstable get measured again at the end.
        for _ in range(RETRIES):
            again = [r for r in rows if out.get(r["hex"], {}).get("status") == "ok"
                     and not out[r["hex"]].get("stable")]
            if not again:
                break
            _measure(again, cpus, kw, retry)
    finally:
        if sink is not None:
            sink.close()
    return [out[r["hex"]] for r in rows if r["hex"] in out]
