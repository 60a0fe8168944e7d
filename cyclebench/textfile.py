"""Reading a small file the user names, and quoting user text in messages, without surprises.

``read_bytes`` / ``read_text`` never read more than ``limit`` bytes (a device such as /dev/zero,
or a 50 MB file, is refused rather than read forever), never block on opening a FIFO, and turn
every OS error, a binary file or bad UTF-8 into the caller's own ``CycleBenchError`` subclass.
``quote`` shortens and escapes text for an error line. Anything that reads a user-given input file
(counter configs, raw code files, comparison data, resume files...) should come through here.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import CycleBenchError

MiB = 1 << 20


def quote(text: str, limit: int = 80) -> str:
    """``text`` for a one-line message: printable ASCII kept, the rest escaped, at most ~limit chars."""
    out = []
    size = 0
    for ch in text:
        piece = ch if " " <= ch <= "~" else ascii(ch)[1:-1]
        if size + len(piece) > limit:
            out.append("...")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)


def read_bytes(path: str | Path, what: str, *, limit: int, error: type[CycleBenchError],
               hint: str) -> bytes:
    """At most ``limit`` bytes of a regular file or pipe; anything else raises ``error(..., hint)``."""
    name = quote(str(path), 200)
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to must not hang (reads below block again).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError) as err:
        cause = getattr(err, "strerror", None) or str(err)
        raise error(f"cannot read the {what} {name}: {cause}", hint) from None
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            kind = "a directory" if stat.S_ISDIR(mode) else "a device or socket, not a file"
            raise error(f"the {what} {name} is {kind}", hint)
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(limit + 1 - size, MiB))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as err:
        raise error(f"cannot read the {what} {name}: {err.strerror or err}", hint) from None
    finally:
        os.close(fd)
    if size > limit:
        raise error(f"the {what} {name} is larger than {_size(limit)}", hint)
    return b"".join(chunks)


def read_text(path: str | Path, what: str, *, limit: int = MiB,
              error: type[CycleBenchError], hint: str) -> str:
    """A small UTF-8 text file (see ``read_bytes``); NUL bytes or bad UTF-8 mean a binary file."""
    data = read_bytes(path, what, limit=limit, error=error, hint=hint)
    try:
        text, bad = data.decode("utf-8"), len(data)
    except UnicodeDecodeError as err:
        text, bad = None, err.start
    nul = data.find(b"\0", 0, bad)
    if nul < 0 and text is not None:
        return text
    bad = nul if nul >= 0 else bad
    line = data.count(b"\n", 0, bad) + 1
    raise error(f"the {what} {quote(str(path), 200)} is not a text file (byte 0x{data[bad]:02x} "
                f"on line {line}: binary data, or not UTF-8)", hint)


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"
