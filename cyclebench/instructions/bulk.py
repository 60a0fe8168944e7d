"""Characterise many forms: selection, parallel workers pinned to CPUs, a resumable results file.

* :func:`select` turns names / mnemonics / extensions / "all" into an ordered list of
  :class:`Selected` (the form, or why there is none);
* :func:`run` measures them with one worker process per CPU (the worker, its assembler runs and its
  runner all pinned to that CPU, so no worker's preparation preempts the other's measurement; load
  on the other vCPU made no measurable difference on 2-vCPU KVM guests), appends every
  finished form to the results file at once (one JSON document per line, flushed), skips forms
  already in that file when resuming, and records a form that fails with its reason; a form whose
  figures stayed unstable is measured once more at the end (:data:`SETTLE_ROUNDS`), and a
  throughput off the port grid once more on each CPU alone, the fastest kept (:func:`_on_every_cpu`),
  and the latencies' issue-bound labels read again against it.

Forms that are not offered (dangerous, or not supported by this CPU) are recorded as ``skipped``
with their reason without running anything.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..errors import UsageError
from ..machine.metadata import machine_metadata
from ..measurement.params import METHOD, method, used
from ..study.store import BulkRun, ResultsStore, bulk_doc_problem
from .catalogue import Catalogue
from .characterize import SCHEMA, SCHEMA_VERSION, Session, characterize, skipped_doc
from .comparing import unsettled
from .forms import Form
from .notation import by_extension, by_mnemonic, resolve
from .fastest import FEW_GAIN, on_port_grid
from .issue_fill import follow_throughput
from .values import latency_view


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


_STATUSES = ("ok", "skipped", "failed")
_NUM = (int, float)


def _value_error(v, where: str) -> str | None:
    """Why a latency/throughput entry is not what the table reads, or None."""
    if v is None:
        return None
    if not isinstance(v, dict):
        return f"{where} is not an object"
    if v.get("value") is not None and (not isinstance(v["value"], _NUM) or isinstance(v["value"], bool)):
        return f"{where}.value is not a number"
    for key in ("bound", "note", "error"):
        if not isinstance(v.get(key), (str, type(None))):
            return f"{where}.{key} is not a string"
    return None


def check_doc(doc: dict) -> str | None:
    """None if ``doc`` is a form document of this schema with the fields the tables read, else why
    not (the results file's check_record)."""
    why = bulk_doc_problem(doc, SCHEMA, SCHEMA_VERSION, "form", _STATUSES)
    if why:
        return why
    for key in ("extensions", "notes", "latency"):
        if not isinstance(doc.get(key, []), list):
            return f"'{key}' is not a list"
    if not all(isinstance(x, str) for x in doc.get("extensions", []) + doc.get("notes", [])):
        return "'extensions' and 'notes' must hold strings"
    for key in ("latency_max", "throughput"):
        why = _value_error(doc.get(key), key)
        if why:
            return why
    for i, p in enumerate(doc.get("latency", [])):
        why = _value_error(p, f"latency[{i}]") if p is not None else f"latency[{i}] is null"
        if why or not (isinstance(p.get("start"), str) and isinstance(p.get("end"), str)):
            return why or f"latency[{i}] lacks its start and end operands"
    if doc.get("uops") is not None and not isinstance(doc["uops"], _NUM):
        return "'uops' is not a number"
    return None


def results_store(path: Path) -> ResultsStore:
    """The JSON-lines results file of ``cyclebench inst`` (cyclebench/study/store.py); a resume
    with other measuring options (params.METHOD) than its header keeps is refused, unless they came to
    the same (--counters auto where it chose the backend the other names: each document keeps its own)."""
    return ResultsStore(path, "inst", SCHEMA_VERSION, check_record=check_doc, method=METHOD, used=used)


# ------------------------------------------------------------------------------------ workers

_SESSION: Session | None = None
_CATALOGUE: Catalogue | None = None
_OPTS: dict = {}


def pin_worker(cpu_queue) -> int:
    """In a forked worker: take a CPU from the queue and pin to it; Ctrl-C is the parent's."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C
    # the pool ends its workers with SIGTERM: unwind, so that temporary files go with them
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cpu = cpu_queue.get()
    try:    # keep this worker's own work (Python, the assembler) off the other runner's CPU
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError):
        pass
    return cpu


def pinned_pool(items: list, cpus: list[int], initializer, initargs: tuple, work, finish) -> None:
    """``work(item)`` in one forked worker per CPU (``initializer(cpu_queue, *initargs)`` runs in
    each and pins it: ``pin_worker``); ``finish(result)`` in the parent as each one ends."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    for c in cpus:
        q.put(c)
    pool = ctx.Pool(len(cpus), initializer=initializer, initargs=(q, *initargs))
    try:
        for doc in pool.imap_unordered(work, items, chunksize=1):
            finish(doc)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def _worker_init(cpu_queue, kwargs, opts):
    global _SESSION, _CATALOGUE, _OPTS
    cpu = pin_worker(cpu_queue)
    _SESSION = Session(cpu=cpu, **kwargs)
    _CATALOGUE = Catalogue.load()
    _OPTS = opts


def _work(name: str) -> dict:
    return _characterize_one(_CATALOGUE.get(name), _SESSION, _OPTS, name)


def _characterize_one(form, session, opts, name) -> dict:
    try:
        return characterize(form, session, **opts)
    except Exception as e:  # one form's bug must not end a long run: record it and go on
        tb = traceback.extract_tb(e.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        doc = skipped_doc(form, name, f"internal error: {type(e).__name__}: {e}{where}", status="failed")
        return doc


def default_cpus() -> list[int]:
    """Up to two CPUs on distinct physical cores (two SMT siblings would slow each other)."""
    from ..machine.topology import distinct_cores
    return distinct_cores()[:2]


def run(selected: list[Selected], results: Path | None = None, resume: bool = False,
        cpus: list[int] | None = None, measure_kwargs: dict | None = None,
        latency: bool = True, throughput: bool = True,
        progress: Callable[[dict, int, int], None] | None = None,
        notice: Callable[[str], None] | None = None) -> list[dict]:
    """Measure ``selected`` and return one document per form, in selection order.

    ``results``: JSONL file (a ResultsStore) every finished form is appended to; with ``resume``
    forms already in it are not measured again (their stored documents are returned); it is opened,
    and checked, before anything is measured.  ``cpus``: one worker per CPU (default: up to two).
    ``progress(doc, done, total)`` is called after every form; ``notice(text)`` with what reading
    the results file noted (a torn last line cut)."""
    measure_kwargs = dict(measure_kwargs or {})
    measure_kwargs.pop("cpu", None)
    opts = {"latency": latency, "throughput": throughput}
    sink = results_store(results) if results is not None else None
    # the machine in the header: several machines' files merge into one table (results/machines.py)
    run_ = BulkRun(sink, {**opts, "machine": machine_metadata(), "options": method(measure_kwargs)},
                   [s.name for s in selected], "form",
                   resume=resume, notice=notice, progress=progress)
    out, finish = run_.out, run_.finish
    pending = set(run_.todo)
    todo = [s for s in selected if s.name in pending]

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
        _measure(runnable, cpus, measure_kwargs, opts, finish)
        # a form whose figures stayed unstable is a measurement still to make: measured again (the
        # host's bursts pass), the document with fewer unsettled figures kept (appended: the
        # results file keeps the last document of a form)
        def keep(doc: dict) -> None:
            if unsettled_figures(doc) < unsettled_figures(out[doc["form"]]):
                out[doc["form"]] = doc
                if sink is not None:
                    sink.append(doc)

        for _ in range(SETTLE_ROUNDS):
            again = [s for s in selected if s.form is not None and s.form.offered and s.name in out
                     and unsettled_figures(out[s.name])]
            if not again:
                break
            _measure(again, cpus, measure_kwargs, opts, keep)
        if throughput and len(cpus) > 1:
            # the forms this run measured (a resumed file's earlier forms had their turn)
            _on_every_cpu([s for s in runnable if s.name in out and off_grid(out[s.name])], cpus,
                          measure_kwargs, out, sink)
    finally:
        if sink is not None:
            sink.close()
    return [out[s.name] for s in selected if s.name in out]


SETTLE_ROUNDS = 1      # measurements again of a form left unsettled


def off_grid(doc: dict) -> bool:
    """A measured throughput that execution ports alone cannot set (fastest.on_port_grid)."""
    tp = doc.get("throughput") or {} if doc.get("status") == "ok" else {}
    return tp.get("value") is not None and tp.get("stable") is not False and not on_port_grid(tp["value"])


def _on_every_cpu(selected: list[Selected], cpus: list[int], measure_kwargs: dict, out: dict, sink) -> None:
    """The throughput of each of ``selected`` measured again on each CPU in turn, alone (one
    process, the other CPU idle), and the fastest settled reading kept, each CPU's listed in
    ``by_cpu``.  The steady state some copies settle in can hold for every process of a form on
    one CPU for a while: on a Zen 4 KVM guest, 16 copies of ``kmovq k, r64`` read 1.31 cycles each
    in 3 of 8 processes on vCPU 0 and 1.80 in all 8 on vCPU 1 (alternating), and in another run
    1.80 in all 4 processes of the form's own measurement, 1.80 again on vCPU 0 after it and 1.39
    in all 4 on vCPU 1 (uops.info 1.30): a reading apart in time and on each CPU catches the
    faster state where the form's processes, one after the other on one CPU, did not."""
    for cpu in cpus:
        def faster(doc: dict, cpu: int = cpu) -> None:
            old = out.get(doc["form"])
            new, tp = (doc.get("throughput") or {}), dict((old or {}).get("throughput") or {})
            if old is None or new.get("value") is None or new.get("stable") is False:
                return
            tp["by_cpu"] = {**tp.get("by_cpu", {}), str(cpu): new["value"]}
            if new["value"] < tp["value"] * (1 - FEW_GAIN):
                tp = {**new, "by_cpu": tp["by_cpu"]}
            kept = {**old, "throughput": tp, "latency": [dict(p) for p in old.get("latency") or []]}
            # the latencies were marked against the throughput they were measured with
            follow_throughput(kept, latency_view(kept)["throughput"])
            out[doc["form"]] = kept
            if sink is not None:
                sink.append(out[doc["form"]])
        _measure(selected, [cpu], measure_kwargs, {"latency": False, "throughput": True}, faster)


def unsettled_figures(doc: dict) -> int:
    """How many of the document's figures (smallest latency, throughput) stayed unstable
    (comparing.unsettled: the pairs the largest latency is taken over are the smallest's)."""
    if doc.get("status") != "ok":
        return 0
    return sum(bool(unsettled(doc, f)) for f in ("latency_min", "throughput"))


def _measure(selected: list[Selected], cpus: list[int], measure_kwargs: dict, opts: dict, finish) -> None:
    """Each of ``selected`` characterised, ``finish(doc)`` as it ends: in this process on one CPU,
    else one pinned worker per CPU."""
    if len(cpus) <= 1 or len(selected) <= 1:
        session = Session(cpu=cpus[0] if cpus else None, **measure_kwargs)
        for s in selected:
            finish(_characterize_one(s.form, session, opts, s.name))
    else:
        Catalogue.load()                  # built once, shared with the forked workers
        pinned_pool([s.name for s in selected], cpus, _worker_init, (measure_kwargs, opts), _work, finish)


def rate(docs: list[dict], seconds: float) -> float:
    """Forms characterised per minute."""
    return 60.0 * len(docs) / seconds if seconds > 0 else 0.0


def now() -> float:
    return time.monotonic()
