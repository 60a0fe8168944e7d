"""Results and output files of `cyclebench inst` (issue 8, items 9 and 10): every case fails
before anything is measured (HLT is a skipped form: its table is made without measuring), and a
file that is refused is left byte-identical."""
from __future__ import annotations

import json

from . import Case

FORM = "ADD_01 (R64, R64)"
HEADER = b'{"cyclebench":"results","kind":"inst","schema":1,"meta":{}}\n'
DOC = {"schema": "cyclebench.inst", "schema_version": 1, "form": FORM, "status": "skipped",
       "reason": "test", "extensions": [], "latency": [], "latency_max": None, "throughput": None,
       "notes": []}


def _line(**changes) -> bytes:
    return json.dumps({**DOC, **changes}).encode() + b"\n"


def _resume(id: str, content: bytes, error: str, hint: str = "", exit_code: int = 10) -> Case:
    return Case(id, ["inst", FORM, "--resume", "{tmp}/r.jsonl"], exit_code, error, hint,
                files={"r.jsonl": content}, intact=("r.jsonl",))


CASES = [
    # item 9: --resume files that are not ours, or damaged
    _resume("resume-binary", b"\x89PNG\r\n\x1a\n\x00\xff\xfe" * 50, r"r\.jsonl:1 is not a cyclebench results file"),
    _resume("resume-foreign-json", b'{"form": "ADD_01 (R64, R64)"}\n', "is not a cyclebench results file",
            "start a new results file"),
    _resume("resume-foreign-unterminated", b'{"hello": 1}', "is not a cyclebench results file"),
    _resume("resume-old-format", _line(), "older cyclebench", "start a new results file"),
    _resume("resume-other-kind", HEADER.replace(b'"inst"', b'"memset"'), "holds memset results"),
    _resume("resume-newer-schema", HEADER.replace(b'"schema":1', b'"schema":7'), "schema 7", "upgrade"),
    _resume("resume-record-without-schema", HEADER + b'{"form": "ADD_01 (R64, R64)"}\n' + _line(),
            r":2 is not a record of inst results: not a cyclebench\.inst version 1", "remove the line"),
    _resume("resume-form-not-a-string", HEADER + _line(form=["x"]), r":2 .*'form' is not a string"),
    _resume("resume-bad-status", HEADER + _line(status=5), r"'status' is not one of"),
    _resume("resume-bad-latency", HEADER + _line(latency=[{"value": "1"}]), r"latency\[0\]\.value"),
    _resume("resume-not-an-object", HEADER + b"[1, 2]\n" + _line(), r":2 is not a record of inst results"),
    _resume("resume-bad-utf8", HEADER + b"\xff\xfe\n" + _line(), r":2 is not a record of inst results"),
    Case("resume-folder", ["inst", FORM, "--resume", "{tmp}"], 10, "is a folder"),
    _resume("resume-another-cpu", HEADER.replace(b'"meta":{}', b'"meta":{"machine":{"cpu_vendor":"GenuineIntel",'
                                                 b'"cpu_family":99,"cpu_model":1,"cpu_stepping":0}}') + _line(),
            r"started on another CPU \(GenuineIntel, family 99 model 1 stepping 0; this one: ", "its own results file"),
    # item 10: output paths checked before measuring
    Case("results-dev-full", ["inst", FORM, "--results", "/dev/full"], 10, "/dev/full is not a regular file"),
    Case("results-existing", ["inst", FORM, "--results", "{tmp}/r.jsonl"], 10, "already holds results",
         "--resume", files={"r.jsonl": HEADER + _line()}, intact=("r.jsonl",)),
    Case("output-is-the-resume-file", ["inst", FORM, "--resume", "{tmp}/r.jsonl", "-o", "{tmp}/./r.jsonl"],
         2, "is the results file", "another file", files={"r.jsonl": HEADER + _line()}, intact=("r.jsonl",)),
    Case("output-is-the-results-file-not-yet-made", ["inst", FORM, "--results", "{tmp}/n.jsonl",
                                                     "-o", "{tmp}/n.jsonl"], 2, "is the results file"),
    Case("output-is-a-folder", ["inst", FORM, "-o", "{tmp}"], 10, "is a folder"),
    Case("output-folder-missing", ["inst", FORM, "-o", "{tmp}/no/t.md"], 10, "does not exist"),
    Case("output-under-a-file", ["inst", FORM, "-o", "{tmp}/f/t.md"], 10, r"/f is a file, not a folder",
         files={"f": b"a file"}, intact=("f",)),
    # a full disk is found only by writing: the table goes to standard output instead
    Case("output-dev-full", ["inst", "HLT", "-o", "/dev/full"], 10, "cannot write /dev/full",
         "printed on standard output"),
    # asm and seq check -o before measuring too (the measurement would otherwise be wasted)
    Case("asm-output-folder-missing", ["asm", "-o", "{tmp}/no/r.json", "add rax, rbx"], 10, "does not exist"),
    Case("seq-output-is-a-folder", ["seq", "-o", "{tmp}", "add rax, rbx"], 10, "is a folder"),
]
