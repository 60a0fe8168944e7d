"""Characterise many forms: selection, parallel workers pinned to CPUs, a resumable results file.

* :func:`select` turns names / mnemonics / extensions / "all" into an ordered list of
  :class:`Selected` (the form, or why there is none);
* :func:`run` measures them with one worker process per CPU (the worker, its assembler runs and its
  runner all pinned to that CPU, so no worker's preparation preempts the other's measurement; load
  on the other vCPU made no measurable difference on our machines, MEASURING.md), appends every
  finished form to the results file at once (one JSON document per line, flushed), skips forms
  already in that file when resuming, and records a form that fails with its reason.

Forms that are not offered (dangerous, or not supported by this CPU) are recorded as ``skipped``
with their reason without running anything.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..errors import ResultFileError, UsageError
from .catalogue import Catalogue
from .characterize import Session, characterize, skipped_doc
from .forms import Form
from .notation import by_extension, by_mnemonic, resolve


@dataclass
class Selected:
    name: str
    form: Form | None
    why: str | None = None        # set when there is no form to run


def select(catalogue: Catalogue, names: Iterable[str] = (), mnemonics: Iterable[str] = (),
           extensions: Iterable[str] = (), all_forms: bool = False) -> list[Selected]:
    """The forms asked for, in order, without duplicates.  ``all_forms``: every form this CPU
    can run (offered forms only; skipped ones are not listed)."""
    out: list[Selected] = []
    seen: set[str] = set()

    def add(forms):
        for f in forms:
            if f.name not in seen:
                seen.add(f.name)
                out.append(Selected(f.name, f))

    for n in names:
        add(resolve(n, catalogue))
    for m in mnemonics:
        add(f for f in by_mnemonic(m, catalogue) if f.encoding != "MVEX")
    for e in extensions:
        add(by_extension(e, catalogue))
    if all_forms:
        add(catalogue.offered())
    if not out:
        raise UsageError("no instruction forms selected",
                         "name forms, or use --mnemonic, --extension or --all")
    return out


def read_results(path: Path) -> dict[str, dict]:
    """Finished forms in a results file: {name: document}.  A truncated last line (the process was
    killed while writing it) is ignored; any other bad line is an error."""
    done: dict[str, dict] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return done
    except OSError as e:
        raise ResultFileError(f"cannot read {path}: {e.strerror}", "check the path and permissions") from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            name = doc["form"]
        except (ValueError, KeyError, TypeError):
            if i == len(lines):
                continue
            raise ResultFileError(f"{path}:{i}: not a cyclebench instruction result",
                                  "give the JSONL file an earlier --resume run wrote, or a new path") from None
        done[name] = doc
    return done


class ResultsFile:
    """Appends one document per line and flushes at once (Ctrl-C loses nothing finished)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.f = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.exists() and path.stat().st_size:
                    with open(path, "rb") as g:       # finish a truncated last line
                        g.seek(-1, os.SEEK_END)
                        missing_newline = g.read(1) != b"\n"
                else:
                    missing_newline = False
                self.f = open(path, "a", encoding="utf-8")
                if missing_newline:
                    self.f.write("\n")
            except OSError as e:
                raise ResultFileError(f"cannot write {path}: {e.strerror}", "check the path and permissions") from None

    def write(self, doc: dict) -> None:
        if self.f:
            self.f.write(json.dumps(doc, separators=(",", ":")) + "\n")
            self.f.flush()

    def close(self):
        if self.f:
            self.f.close()


# ------------------------------------------------------------------------------------ workers

_SESSION: Session | None = None
_CATALOGUE: Catalogue | None = None
_OPTS: dict = {}


def _worker_init(cpu_queue, kwargs, opts):
    global _SESSION, _CATALOGUE, _OPTS
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C
    cpu = cpu_queue.get()
    try:    # keep this worker's own work (Python, the assembler) off the other runner's CPU
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        pass
    _SESSION = Session(cpu=cpu, **kwargs)
    _CATALOGUE = Catalogue.load()
    _OPTS = opts


def _work(name: str) -> dict:
    return _characterize_one(_CATALOGUE.get(name), _SESSION, _OPTS, name)


def _characterize_one(form, session, opts, name) -> dict:
    try:
        return characterize(form, session, **opts)
    except Exception as e:  # one form's bug must not end a long run: record it and go on
        import traceback
        tb = traceback.extract_tb(e.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        doc = skipped_doc(form, name, f"internal error: {type(e).__name__}: {e}{where}", status="failed")
        return doc


def default_cpus() -> list[int]:
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        cpus = list(range(os.cpu_count() or 1))
    return cpus[:2] if len(cpus) >= 2 else cpus


def run(selected: list[Selected], results: Path | None = None, resume: bool = False,
        cpus: list[int] | None = None, measure_kwargs: dict | None = None,
        latency: bool = True, throughput: bool = True,
        progress: Callable[[dict, int, int], None] | None = None) -> list[dict]:
    """Measure ``selected`` and return one document per form, in selection order.

    ``results``: JSONL file every finished form is appended to; with ``resume`` forms already in it
    are not measured again (their stored documents are returned).  ``cpus``: one worker per CPU
    (default: up to two).  ``progress(doc, done, total)`` is called after every form."""
    measure_kwargs = dict(measure_kwargs or {})
    measure_kwargs.pop("cpu", None)
    opts = {"latency": latency, "throughput": throughput}
    done: dict[str, dict] = {}
    if results is not None and resume:
        done = read_results(results)
    elif results is not None and results.exists() and results.stat().st_size:
        raise ResultFileError(f"{results} already holds results",
                              "add --resume to continue that run, or give a new file")
    out: dict[str, dict] = {s.name: done[s.name] for s in selected if s.name in done}
    todo = [s for s in selected if s.name not in done]
    total, count = len(selected), len(out)
    sink = ResultsFile(results)

    def finish(doc):
        nonlocal count
        count += 1
        out[doc["form"]] = doc
        sink.write(doc)
        if progress:
            progress(doc, count, total)

    try:
        runnable = []
        for s in todo:
            if s.form is None:
                finish(skipped_doc(None, s.name, s.why or "no such form"))
            elif not s.form.offered:
                finish(skipped_doc(s.form, s.name, s.form.reason or "not offered"))
            else:
                runnable.append(s)
        cpus = cpus or default_cpus()
        if len(cpus) <= 1 or len(runnable) <= 1:
            session = Session(cpu=cpus[0] if cpus else None, **measure_kwargs)
            for s in runnable:
                finish(_characterize_one(s.form, session, opts, s.name))
        else:
            Catalogue.load()                  # built once, shared with the forked workers
            ctx = mp.get_context("fork")
            q = ctx.Queue()
            for c in cpus:
                q.put(c)
            pool = ctx.Pool(len(cpus), initializer=_worker_init, initargs=(q, measure_kwargs, opts))
            try:
                for doc in pool.imap_unordered(_work, [s.name for s in runnable], chunksize=1):
                    finish(doc)
                pool.close()
            except BaseException:
                pool.terminate()
                raise
            finally:
                pool.join()
    finally:
        sink.close()
    return [out[s.name] for s in selected if s.name in out]


def rate(docs: list[dict], seconds: float) -> float:
    """Forms characterised per minute."""
    return 60.0 * len(docs) / seconds if seconds > 0 else 0.0


def now() -> float:
    return time.monotonic()
