"""Starting the runner on a list of arguments and reading what it printed.

The runner speaks its protocol on a pipe of its own (``--out-fd``), never on standard output: the
measured code may print (a library routine, or a snippet under ``--allow-syscalls``), and nothing
it writes may be read as a reading. Whatever reaches the runner's standard output or error is kept
apart as ``RunnerOutput.stray`` and reported as the snippet's doing. The runner starts in a session
of its own, with no controlling terminal and standard input from /dev/null.
"""
from __future__ import annotations

import errno
import os
import selectors
import subprocess
import tempfile
import time

from ..errors import SnippetTimeout, UsageError
from .build import runner_path
from .protocol import RunnerOutput, parse_output

STRAY_KEPT = 4096           # bytes of stray output kept for the message; the rest is read and dropped
_TIMED_OUT = ("the measured code may loop forever or block; raise --timeout if it is just slow")


def run(args: list[str], timeout: float) -> RunnerOutput:
    """Run the runner; the runner's own timer fires first, this kill is the backstop."""
    t0 = time.monotonic()
    for attempt in (0, 1):
        proto_r, proto_w = os.pipe()
        cmd = [str(runner_path(rebuild=attempt == 1)), "--out-fd", str(proto_w)] + args
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, pass_fds=(proto_w,), start_new_session=True)
        except OSError as e:
            os.close(proto_r)
            os.close(proto_w)
            if attempt == 0 and e.errno in (errno.ENOEXEC, errno.EACCES, errno.ENOENT):
                continue            # a broken cached binary: build it again, once
            raise UsageError(f"cannot start the runner: {e.strerror}", "rebuild it: bash setup.sh") from None
        os.close(proto_w)
        try:
            proto, stray = _collect(proc, proto_r, t0 + timeout + 5)
        finally:
            os.close(proto_r)
            if proc.poll() is None:     # an error or Ctrl-C here: the runner, in its own session, did not get it
                proc.kill()
            proc.wait()
            proc.stdout.close()
        if proto is None:
            raise SnippetTimeout(f"the measured code did not finish within {timeout:g} s (the runner was killed "
                                 f"{timeout + 5:.0f} s after it started)", _TIMED_OUT)
        break
    out = parse_output(proto.decode("utf-8", "replace"))
    out.returncode = proc.returncode
    out.stray = stray.decode("utf-8", "replace")
    out.elapsed = time.monotonic() - t0
    return out


def _collect(proc: subprocess.Popen, proto_fd: int, deadline: float) -> tuple[bytes | None, bytes]:
    """(protocol bytes, the first STRAY_KEPT bytes of stray output) once both streams end; the
    protocol is None when the deadline passed first."""
    proto, stray = bytearray(), bytearray()
    with selectors.DefaultSelector() as sel:
        sel.register(proto_fd, selectors.EVENT_READ, proto)
        sel.register(proc.stdout.fileno(), selectors.EVENT_READ, stray)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return None, bytes(stray)
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                elif key.data is proto or len(stray) < STRAY_KEPT:
                    key.data.extend(chunk)
    return bytes(proto), bytes(stray[:STRAY_KEPT])


def write_temp(data: bytes, suffix: str) -> str:
    """A new temporary file holding ``data`` (a code blob or data area for the runner); the caller
    removes it."""
    fd, path = tempfile.mkstemp(prefix="cyclebench-", suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path
