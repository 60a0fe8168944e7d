"""The one JSON-lines results store (``results.jsonl``) of studies and ``cyclebench inst``.

A file is a header line and one record per line::

    {"cyclebench":"results","kind":"inst","schema":1,"meta":{...}}
    {...record...}

Every record is appended with one ``write`` to a descriptor opened with ``O_APPEND`` and synced,
so a killed run loses at most the line it was writing. Reading (``load``):

* a missing or empty file holds nothing;
* a last line without its newline is torn (the run was killed while writing it, or is writing it
  now): it is left out and ``notes`` says so; only ``start(resume=True)``, which appends after it,
  cuts it off the file (a command that only reads never changes its input); the first line counts
  as torn only when it is the start of our own header;
* a foreign file (first line not our header: binary, other JSON, another kind, another schema)
  and a malformed record (not a JSON object, or ``check_record`` says why) raise
  ResultFileError (exit 10) naming the file and line; nothing is changed then;
* reading is bounded: lines longer than MAX_LINE are refused without being held in memory, and
  messages never quote file content.

``start(meta, resume=False)`` refuses an existing non-empty file, ours or not (results are never
overwritten or mixed into; a caller that wants to keep an old file aside moves it first);
``start(meta, resume=True)`` continues our file (or starts a missing/empty one), unless its header
names another CPU than ``meta`` does (two machines' figures would mix), or its ``options`` give
another value than ``meta``'s to one of the store's ``method`` options, those that set what a
figure means (one file would mix two methods; a header without the option resumes as before).
Both check that the path can be written before any measurement: a folder, a device, a FIFO or an
unwritable place raise ResultFileError at once. Files of the format before this header existed are refused with a
hint to start a new results file.

``keep_aside`` moves an earlier run's file out of the way of a new one, to the first free numbered
name (``results.1.jsonl``, ``results.2.jsonl``, ...), never over another file; it refuses a file
that is not a cyclebench results file (``check_aside`` says so before any work).

``check_output_path`` is the shared "can this output file be written" check for ``-o``/``--out``
options, run before measuring.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Callable

from ..errors import ResultFileError
from ..machine.metadata import cpu_of, cpu_text
from ..textfile import quote

MAX_LINE = 16 << 20          # bytes; no record we write comes near it (an inst form is ~2 KB)
_CHUNK = 1 << 20
_MAGIC = b'{"cyclebench":"results"'
NEW_FILE_HINT = "give the file an earlier run of the same command wrote, or start a new results file"


class ResultsStore:
    """One results file: ``load``, ``start``, ``append``, ``close`` (see the module docstring)."""

    def __init__(self, path, kind: str, schema_version: int, *,
                 check_record: Callable[[dict], str | None] | None = None, method: dict[str, str] | None = None,
                 used: Callable[[str, dict, list | None], object] | None = None):
        self.path = Path(path)
        self.kind = kind
        self.schema_version = schema_version
        self.check_record = check_record
        self.method = method or {}          # meta["options"] key -> the option that sets it
        self.used = used                    # (key, options, records or None) -> what the option came to
        self.meta: dict | None = None       # the header's meta once loaded or started
        self.notes: list[str] = []
        self._fd: int | None = None

    # ------------------------------------------------------------------------------ reading

    def load(self, *, cut: bool = False) -> tuple[dict | None, list[dict]]:
        """(header meta, records) of the file; (None, []) when it is missing or empty. ``cut``: cut
        a torn last line off the file (only for a run that appends next)."""
        if not self._stat_regular():
            return None, []
        try:
            with open(self.path, "rb") as f:
                return self._read(f, cut)
        except OSError as e:
            raise ResultFileError(f"cannot read {self.path}: {e.strerror}",
                                  "check the path and permissions") from None

    def _ours(self) -> bool:
        """Whether the file starts with our header line (read no further)."""
        try:
            with open(self.path, "rb") as f:
                return f.read(len(_MAGIC)) == _MAGIC
        except OSError:
            return False

    def _stat_regular(self) -> bool:
        """False if the path does not exist; an error if it is not a regular file."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        except OSError as e:
            raise ResultFileError(f"cannot use {self.path}: {e.strerror}",
                                  "check the path and permissions") from None
        if not stat.S_ISREG(st.st_mode):
            what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise ResultFileError(f"{self.path} is {what}", "give the path of a results file (.jsonl)")
        return True

    def _read(self, f, cut: bool) -> tuple[dict | None, list[dict]]:
        header, records = None, []
        pos, lineno = 0, 0
        while True:
            line = f.readline(MAX_LINE + 1)
            if not line:
                break
            lineno += 1
            torn = not line.endswith(b"\n")
            if torn and len(line) > MAX_LINE:         # over-long: is it the torn last line?
                if header is None:
                    raise self._bad(lineno, "is not a cyclebench results file")
                if not self._skip_to_end(f):
                    raise self._bad(lineno, f"is longer than {MAX_LINE >> 20} MiB")
            if torn and (header is not None or _MAGIC.startswith(line[:len(_MAGIC)])):
                if cut:
                    self._cut(pos, lineno, len(line))
                else:
                    self.notes.append(f"{self.path}: left out the torn last line {lineno} ({len(line)} bytes): "
                                      "a run was killed while writing it, or is writing it now")
                break
            if header is None:
                header = self._header(line, lineno)
                self.meta = header.get("meta")
            else:
                records.append(self._record(line, lineno))
            pos += len(line)
        return (None if header is None else self.meta), records

    def _skip_to_end(self, f) -> bool:
        """Reads on to the end of an over-long line; True if it is the last line, unterminated."""
        while True:
            chunk = f.readline(_CHUNK)
            if not chunk:
                return True
            if chunk.endswith(b"\n"):
                return False

    def _cut(self, pos: int, lineno: int, size: int) -> None:
        try:
            with open(self.path, "r+b") as g:
                g.truncate(pos)
        except OSError as e:
            raise ResultFileError(f"cannot cut the torn last line {lineno} of {self.path}: {e.strerror}",
                                  "make the file writable, or start a new results file") from None
        self.notes.append(f"{self.path}: cut the torn last line {lineno} ({size} bytes): "
                          "a run was killed while writing it; that record is made again")

    def _bad(self, lineno: int, why: str, hint: str = NEW_FILE_HINT) -> ResultFileError:
        return ResultFileError(f"{self.path}:{lineno} {why}", hint)

    def _header(self, line: bytes, lineno: int) -> dict:
        doc = _parse(line)
        if not isinstance(doc, dict) or doc.get("cyclebench") != "results":
            old = isinstance(doc, dict) and str(doc.get("schema", "")).startswith("cyclebench.")
            why = ("was written by an older cyclebench (a results file without a header line)" if old
                   else "is not a cyclebench results file")
            raise self._bad(lineno, why, "start a new results file (another path)" if old else NEW_FILE_HINT)
        if doc.get("kind") != self.kind:
            raise self._bad(lineno, f"holds {_short(doc.get('kind'))} results, not {self.kind} results")
        version = doc.get("schema")
        if not isinstance(version, int) or isinstance(version, bool) or version != self.schema_version:
            newer = isinstance(version, int) and version > self.schema_version
            raise self._bad(lineno, f"has results schema {_short(version)}, this cyclebench writes "
                            f"{self.schema_version}",
                            "upgrade cyclebench" if newer else "start a new results file (another path)")
        if not isinstance(doc.get("meta"), dict):
            raise self._bad(lineno, "has a results header without its meta object")
        return doc

    def _record(self, line: bytes, lineno: int) -> dict:
        rec = _parse(line)
        if not isinstance(rec, dict):
            raise self._bad(lineno, f"is not a record of {self.kind} results (not a JSON object)",
                            "remove the line, or start a new results file")
        why = self.check_record(rec) if self.check_record else None
        if why:
            raise self._bad(lineno, f"is not a record of {self.kind} results: {_short(why, 200)}",
                            "remove the line, or start a new results file")
        return rec

    # ------------------------------------------------------------------------------ writing

    def start(self, meta: dict, *, resume: bool) -> list[dict]:
        """Open the file for appending and return the records it already holds (resume) or []."""
        records: list[dict] = []
        exists = self._stat_regular()
        if exists and resume:
            header, records = self.load(cut=True)
            exists = header is not None
            if exists:
                _same_cpu(self.path, self.meta, meta)
                _same_method(self.path, self.meta, meta, self.method, self.used, records)
        elif exists and os.path.getsize(self.path):
            if not self._ours():
                raise ResultFileError(f"{self.path} already exists and is not a cyclebench results file",
                                      "give a new file: results are never written over another file")
            raise ResultFileError(f"{self.path} already holds results",
                                  "add --resume to continue that run, or give a new file")
        else:
            exists = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                               0o644)
        except OSError as e:
            raise ResultFileError(f"cannot write {self.path}: {e.strerror}",
                                  "check the path and permissions") from None
        if not exists:
            self.meta = meta
            self._write({"cyclebench": "results", "kind": self.kind, "schema": self.schema_version,
                         "meta": meta})
        return records

    def append(self, record: dict) -> None:
        """One line per record, written at once and synced."""
        if self._fd is None:
            raise RuntimeError("ResultsStore.append before start")
        # never write what reading the file back would refuse: a resumed run would stop there
        why = self.check_record(record) if self.check_record else None
        if why:
            raise RuntimeError(f"a record {self.path} would refuse on reading: {why}")
        self._write(record)

    def _write(self, doc: dict) -> None:
        data = (json.dumps(doc, separators=(",", ":"), default=_json_default) + "\n").encode()
        if len(data) > MAX_LINE:
            raise ResultFileError(f"a record for {self.path} is longer than {MAX_LINE >> 20} MiB",
                                  "this is a bug: please report it")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError as e:
            raise ResultFileError(f"cannot write {self.path}: {e.strerror}",
                                  "check the free space and permissions; add --resume to continue later") from None

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _same_cpu(path: Path, old: dict | None, new: dict) -> None:
    """A run resumed on another CPU would mix two machines' figures under the first one's name."""
    a, b = (m.get("machine") if isinstance(m, dict) else None for m in (old, new))
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return                           # a header or a caller without the machine: nothing to compare
    was = cpu_of(a)
    if was is not None and was != cpu_of(b):
        raise ResultFileError(f"{path} was started on another CPU ({_cpu_text(a)}; this one: {_cpu_text(b)})",
                              "give this machine its own results file; cyclebench report puts several side by side")


def _same_method(path: Path, old: dict | None, new: dict, method: dict[str, str], used=None,
                 records: list | None = None) -> None:
    """A run resumed with another value of an option that sets what a figure means would put
    figures of two methods in one file under the first one's header. Two values that came to the
    same thing (``used``: --counters auto where it chose the backend the other names) are one method."""
    a, b = (m.get("options") if isinstance(m, dict) else None for m in (old, new))
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return                           # a header from before the options were recorded
    for key, option in method.items():
        if key in a and a[key] != b.get(key):
            was = used(key, a, records) if used else None
            if was is not None and was == used(key, b, None):
                continue
            raise ResultFileError(f"{path} was measured {_with(option, a[key])}, this run {_with(option, b.get(key))}",
                                  "resume with the options the file was started with, or give a new results file")


def _with(option: str, value) -> str:
    """``with -n 20``, ``with --median`` (an option spelt ``--{}``), ``without --basic-mode``."""
    from ..measurement.params import spell
    given = spell(option, value)
    return f"with {given}" if given else f"without {option.replace('{}', 'its option')}"


def _cpu_text(m: dict) -> str:
    return quote(cpu_text(m), 100)


def _parse(line: bytes):
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def _short(value, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)[:limit + 1]
    return text if len(text) <= limit else text[:limit] + "…"


def _json_default(o):
    if hasattr(o, "tolist"):             # numpy scalars and arrays, without importing numpy
        return o.tolist()
    return str(o)


# ---------------------------------------------------------------------------- earlier runs' files

def check_aside(path) -> bool:
    """True if ``path`` holds an earlier run that ``keep_aside`` would move; a ResultFileError if
    it holds something else (nothing a user made is moved or deleted without asking)."""
    p = Path(path)
    try:
        if not p.is_file() or not p.stat().st_size:
            if p.exists() and not p.is_file():
                raise ResultFileError(f"{p} is not a regular file", "give another --out folder")
            return False
        with open(p, "rb") as f:
            head = f.read(len(_MAGIC))
    except OSError as e:
        raise ResultFileError(f"cannot read {p}: {e.strerror}", "check the path and permissions") from None
    if head != _MAGIC:
        raise ResultFileError(f"{p} is not a cyclebench results file, and a new run would have to move it aside",
                              "move or rename it yourself, or give another --out folder")
    return True


def keep_aside(path) -> Path | None:
    """Move an earlier run's ``path`` (see check_aside) to the first free numbered name beside it;
    returns that name, or None when there was nothing to keep."""
    p = Path(path)
    if not check_aside(p):
        return None
    stem, suffix = p.name.split(".", 1) if "." in p.name else (p.name, "")
    for n in range(1, 100_000):
        kept = p.with_name(f"{stem}.{n}.{suffix}" if suffix else f"{stem}.{n}")
        try:
            os.link(p, kept)            # fails if the name is taken: nothing is ever overwritten
        except FileExistsError:
            continue
        except OSError as e:
            raise ResultFileError(f"cannot keep {p} as {kept.name}: {e.strerror}",
                                  "move it yourself, or give another --out folder") from None
        os.unlink(p)
        return kept
    raise ResultFileError(f"{p.parent} holds too many earlier results files", "clean the folder up, or give another --out")


# ---------------------------------------------------------------------------------- output paths

def check_output_path(path, option: str = "-o") -> None:
    """Refuse, before anything is measured, an output file that cannot be written: a folder, a
    missing or unwritable folder, an unwritable file, a FIFO no process reads. Creates nothing. (A
    full device is only found out by writing; callers print what they could not write.)"""
    p = Path(path)
    if p.is_dir():
        raise ResultFileError(f"{option} {p} is a folder", f"give {option} a file name")
    if p.exists():
        ok, where = os.access(p, os.W_OK), p
    else:
        parent = p.parent if str(p.parent) else Path(".")
        if parent.exists() and not parent.is_dir():
            raise ResultFileError(f"{option} {p}: {parent} is a file, not a folder",
                                  "give a path inside a folder")
        if not parent.is_dir():
            raise ResultFileError(f"{option} {p}: the folder {parent} does not exist",
                                  "create the folder first, or give another path")
        ok, where = os.access(parent, os.W_OK | os.X_OK), parent
    if not ok:
        raise ResultFileError(f"{option} {p}: {where} is not writable", "give a path you can write to")
    if p.exists() and stat.S_ISFIFO(p.stat().st_mode):
        _check_reader(p, option)


_READERS: list[int] = []      # a writing end held open for the run: see _check_reader


def _check_reader(p: Path, option: str) -> None:
    """A FIFO no process reads would hold the run's last write for ever. Opened without waiting, it
    says whether a reader is there; that end stays open until the process ends, so the reader
    does not see the end of its input before the output is written."""
    try:
        _READERS.append(os.open(p, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError as e:
        if e.errno != errno.ENXIO:
            raise ResultFileError(f"cannot write {p}: {e.strerror}", "check the path and permissions") from None
        raise ResultFileError(f"{option} {p} is a FIFO that no process reads",
                              "start its reader first, or give a file") from None


def same_file(a, b) -> bool:
    """True if two paths name one file (after resolving links, or the same inode)."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return Path(a).resolve() == Path(b).resolve()


def bulk_doc_problem(doc: dict, schema: str, version: int, key: str, statuses: tuple[str, ...]) -> str | None:
    """Why ``doc`` is not one of a bulk run's documents (None when it is): ``schema`` at
    ``version``, its ``key`` a string and its ``status`` one of ``statuses``. The start of the
    ``check_record`` of inst's and block's stores; each checks its own fields after it."""
    if doc.get("schema") != schema or doc.get("schema_version") != version:
        return f"not a {schema} version {version} document"
    if not isinstance(doc.get(key), str):
        return f"'{key}' is not a string"
    if doc.get("status") not in statuses:
        return f"'status' is not one of {', '.join(statuses)}"
    return None


class BulkRun:
    """The bookkeeping of a bulk run over items keyed by ``key`` (inst --all, block --file):
    the documents already in the results store when resuming, each new one appended as it is
    finished, and progress reported as (document, done, total)."""

    def __init__(self, store: ResultsStore | None, meta: dict, keys: list[str], key: str, *,
                 resume: bool = False, notice=None, progress=None):
        done: dict[str, dict] = {}
        if store is not None:
            done = {d[key]: d for d in store.start(meta, resume=resume)}
            for note in store.notes if notice else ():
                notice(note)
        self.store, self.key, self.progress = store, key, progress
        self.out = {k: done[k] for k in keys if k in done}
        self.todo = [k for k in keys if k not in done]
        self.total, self.count = len(keys), len(self.out)

    def finish(self, doc: dict) -> None:
        self.count += 1
        self.out[doc[self.key]] = doc
        if self.store is not None:
            self.store.append(doc)
        if self.progress:
            self.progress(doc, self.count, self.total)
