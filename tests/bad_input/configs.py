"""Counter config files (issue 8, item 1), through `asm --config`, `nanobench -config` and a config
path given to `--events`: devices, FIFOs, huge, binary and badly encoded files end in exit 9 at
once, and a bad file's text is echoed short and escaped. Nothing here runs a measurement."""
from __future__ import annotations

import os

from . import ApiCase, Case

SMALL = "small text file"


def _sparse(name: str, size: int):
    def make(tmp: str):
        with open(os.path.join(tmp, name), "wb") as f:
            f.truncate(size)          # NUL bytes, without writing them
    return make


def _fifo(tmp: str):
    os.mkfifo(os.path.join(tmp, "fifo.txt"))


def _both(id: str, path: str, error: str, hint: str = SMALL, **kw) -> list[Case]:
    """The same config through `asm --config` and `nanobench -config`."""
    return [Case(f"config-{id}", ["asm", "--config", path, "nop"], 9, error, hint, **kw),
            Case(f"nanobench-config-{id}", ["nanobench", "-asm", "nop", "-config", path], 9, error,
                 hint, **kw)]


def _parse_config(text: str, vendor=None):
    from cyclebench.counters.nanobench_config import parse_config
    return parse_config(text, "api.cfg", vendor=vendor)


BAD_LINES = "".join(f"zz.{i} EVENT_{i}\n" for i in range(1000)).encode()

CASES = [
    *_both("dev-zero", "/dev/zero", r"/dev/zero is a device or socket, not a file"),
    *_both("50mb-of-nul", "{tmp}/nul.txt", r"nul\.txt is larger than 1 MiB",
           setup=_sparse("nul.txt", 50 << 20)),
    *_both("nul-bytes", "{tmp}/nul.txt", r"nul\.txt is not a text file \(byte 0x00 on line 1",
           setup=_sparse("nul.txt", 1000)),
    *_both("binary", "{tmp}/b.txt", r"b\.txt is not a text file \(byte 0x89 on line 1",
           files={"b.txt": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4}, intact=("b.txt",)),
    *_both("latin-1", "{tmp}/l.txt", r"l\.txt is not a text file \(byte 0xe9 on line 2",
           files={"l.txt": b"# caf\xc3\xa9 is fine\n# caf\xe9 is not UTF-8\n0E.01 X\n"}),
    *_both("fifo-without-writer", "{tmp}/fifo.txt", r"fifo\.txt has no event lines", "Name",
           setup=_fifo),
    *_both("directory", "{tmp}", r"is a directory"),
    *_both("missing", "{tmp}/none.txt", r"cannot read the counter config .*none\.txt: No such file"),
    *_both("only-comments", "{tmp}/c.txt", r"c\.txt has no event lines", "Name",
           files={"c.txt": b"# nothing here\n\n"}),
    *_both("1000-bad-lines", "{tmp}/m.txt", r"1000 bad lines in counter config", "EvtSel",
           files={"m.txt": BAD_LINES}, intact=("m.txt",)),
    *_both("one-huge-line", "{tmp}/h.txt",
           r"line 1: event select 'zzzz.*\.\.\.' is not hexadecimal: 'z+\.\.\.'$", "EvtSel",
           files={"h.txt": b"z" * 200_000 + b".01 X\n"}),
    *_both("control-characters", "{tmp}/e.txt", r"'\\x1b\[2J\.01 X'$", "EvtSel",
           files={"e.txt": b"\x1b[2J.01 X\n"}),
    *_both("huge-number", "{tmp}/n.txt", r"CMSK=9{20}\.\.\. is not a number", "write decimal",
           files={"n.txt": b"0E.01.CMSK=" + b"9" * 10_000 + b" X\n"}),
    Case("events-config-path-binary", ["asm", "--events", "{tmp}/b.txt", "nop"], 9,
         r"b\.txt is not a text file", SMALL, files={"b.txt": b"\xff\xfe\x00\x01"}),
    Case("events-name-too-long-for-a-path", ["asm", "--events", "a" * 5000, "nop"], 7,
         r"unknown event 'a{20}"),
    ApiCase("api-parse-config-bad-vendor", lambda: _parse_config("0E.01 X", vendor="arm"), 9,
            r"vendor 'arm' is not one of intel, amd"),
    ApiCase("api-parse-config-nul-line", lambda: _parse_config("\0" * 100_000), 9,
            r"^api\.cfg, line 1: no unit mask.*'(\\x00){20}\.\.\.'$"),
]
