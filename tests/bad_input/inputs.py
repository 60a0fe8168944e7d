"""Files the commands that only read take (predict --model, ports --show, report, compare, the
published tables of --compare), empty paths and options out of range: each ends in its error at
once, never a hang (the FIFO and device rows run in a process of their own, so a hang fails them
by timeout), and a file that is only read is left byte-identical (a torn last line is left out,
not cut off). Nothing here measures."""
from __future__ import annotations

import json
import os
from pathlib import Path

from . import Case

ASM = (Path(__file__).resolve().parents[1] / "data" / "reports" / "asm-imul-1.json").read_bytes()
PORTS = b'{"cyclebench":"results","kind":"ports","schema":1,"meta":{"forms":[],"seed":1}}\n'
BLOCKS = b"hex,application\n4801d8,a\n4801c3,a\n"


def _fifo(name: str):
    def make(tmp: str) -> None:
        os.mkfifo(os.path.join(tmp, name))
    return make


def _absent(name: str):
    def check(tmp: str) -> None:
        assert not os.path.exists(os.path.join(tmp, name)), f"{name} was made"
    return check


def _newer(doc: bytes) -> bytes:
    d = json.loads(doc)
    return json.dumps({**d, "schema_version": 99}).encode()


CASES = [
    # a torn last line (a run killed, or writing now) is left out by a command that only reads
    Case("predict-model-torn-record", ["predict", "--model", "{tmp}/m.jsonl", "add rax, rbx"], 10,
         r"m\.jsonl holds readings but no model", "--resume", files={"m.jsonl": PORTS + b'{"type":"alone","fo'},
         intact=("m.jsonl",)),
    Case("ports-show-torn-header", ["ports", "--show", "{tmp}/m.jsonl"], 10, r"m\.jsonl holds no resource model",
         "cyclebench ports", files={"m.jsonl": PORTS[:30]}, intact=("m.jsonl",)),
    # a model record this cyclebench cannot read (another version's, or edited by hand)
    *(Case(f"{cmd[0]}-model-record-unreadable", [*cmd, "{tmp}/m.jsonl"] + (["nop"] if cmd[0] == "predict" else []), 10,
           r"m\.jsonl:2 is not a record of ports results: a model without its resources and usages",
           files={"m.jsonl": PORTS + b'{"type":"model","model":{"resources":5},"report":{}}\n'}, intact=("m.jsonl",))
      for cmd in (["predict", "--model"], ["ports", "--show"])),
    Case("predict-model-missing", ["predict", "--model", "{tmp}/none.jsonl", "nop"], 10,
         r"none\.jsonl does not exist", "cyclebench ports"),
    # a FIFO or a device is read once or refused, never waited on
    Case("report-fifo", ["report", "{tmp}/fifo", "-o", "{tmp}/r.html"], 10, r"fifo is not JSON", "asm/inst JSON",
         setup=_fifo("fifo"), subprocess=True, timeout=30),
    Case("compare-fifo", ["compare", "{tmp}/a.json", "{tmp}/fifo"], 10, r"fifo is not JSON", "asm/inst JSON",
         files={"a.json": ASM}, setup=_fifo("fifo"), subprocess=True, timeout=30),
    Case("report-compare-dev-zero", ["report", "{tmp}/a.json", "--compare", "/dev/zero", "-o", "{tmp}/r.html"], 9,
         r"/dev/zero is a device", "uops.info", files={"a.json": ASM}, subprocess=True, timeout=30),
    Case("report-compare-xml-fifo", ["report", "{tmp}/a.json", "--compare", "{tmp}/u.xml", "--arch", "ZEN4",
                                     "-o", "{tmp}/r.html"], 9, r"u\.xml is not a regular file", "instructions.xml",
         files={"a.json": ASM}, setup=_fifo("u.xml"), subprocess=True, timeout=30),
    Case("inst-compare-empty", ["inst", "HLT", "--compare", "{tmp}/u.csv"], 9, r"u\.csv: no header row", "uops.info",
         files={"u.csv": b""}),
    Case("inst-compare-dev-zero", ["inst", "HLT", "--compare", "/dev/zero"], 9, r"/dev/zero is a device", "uops.info",
         subprocess=True, timeout=30),
    # an output FIFO nothing reads would hold the run's last write for ever
    Case("output-fifo-without-reader", ["inst", "HLT", "-o", "{tmp}/t.md"], 10, r"t\.md is a FIFO that no process reads",
         "start its reader", setup=_fifo("t.md"), subprocess=True, timeout=30),
    # compare reads two files: the error names the one at fault
    Case("compare-newer-asm-result", ["compare", "{tmp}/a.json", "{tmp}/b.json"], 10,
         r"b\.json: result schema version 99 is newer", "upgrade", files={"a.json": ASM, "b.json": _newer(ASM)}),
    # a path's control characters are escaped: the message stays one line, the terminal untouched
    Case("output-path-control-characters", ["report", "{tmp}/a.json", "-o", "{tmp}/\x1b[2Jx\ny/r.html"], 10,
         r"\\x1b\[2Jx\\ny does not exist$", "create the folder", files={"a.json": ASM}),
    # an empty path (an unset shell variable) is not the current folder
    Case("report-empty-path", ["report", "", "-o", "{tmp}/r.html"], 2, r"argument PATH: an empty path", "report --help"),
    Case("predict-empty-model", ["predict", "--model", "", "nop"], 2, r"argument --model: an empty path"),
    Case("nanobench-empty-config", ["nanobench", "-asm", "nop", "-config", ""], 2, r"option -config has an empty path",
         "counter config"),
    # (--experiments nope: were the path taken, the study would stop there rather than run)
    Case("study-empty-out", ["study", "memset", "--out", " ", "--experiments", "nope"], 2,
         r"argument --out: an empty path", r"cyclebench study memset --help"),
    Case("unknown-option-names-its-command", ["inst", "HLT", "--no-progress"], 2,
         r"unrecognized arguments: --no-progress", r"'cyclebench inst --help'"),
    # block --file: a value every block would fail with is refused before the first, and no file is made
    *(Case(f"block-file-{what}", ["block", "--file", "{tmp}/b.csv", *args, "--results", "{tmp}/r.jsonl"], 2, error,
           files={"b.csv": BLOCKS}, after=_absent("r.jsonl"))
      for what, args, error in (("timeout-nan", ["--timeout", "nan"], r"timeout nan s is out of range"),
                                ("cpu-missing", ["--cpu", "4096"], r"CPU 4096 does not exist"),
                                ("limit-zero", ["--limit", "0"], r"argument --limit: 0 is below 1"),
                                ("sample-negative", ["--sample", "-1"], r"argument --sample: -1 is below 1"),
                                ("jobs-zero", ["--jobs", "0"], r"argument --jobs: 0 is below 1"),
                                ("max-pages-over", ["--max-pages", "70000"], r"page cap 70000 is out of range"))),
    *(Case(f"{cmd}-mcpu-unknown", [cmd, arg, "--compare-llvm-mca", "--mcpu", "nope"], 2,
           r"llvm-mca does not know the CPU 'nope'", "-mcpu=help") for cmd, arg in (("block", "4801d8"), ("inst", "HLT"))),
    Case("block-offset-not-a-number", ["block", "4801d8", "--offset", "abc"], 2,
         r"argument --offset: 'abc' is not a whole number"),
    # pasted typography is no operand: GNU as took 'mov rax, “1”' as a load from a symbol
    Case("inst-non-ascii-instruction", ["inst", "mov rax, \u201c1\u201d", "--list"], 3,
         r"non-ASCII character '\u201c' \(U\+201C\) in the instruction", "plain ASCII"),
    # numbers out of range
    Case("inst-tolerance-nan", ["inst", "HLT", "--tolerance", "nan"], 2, r"--tolerance nan is not a relative tolerance",
         r"0\.05"),
]
