"""Starting the runner on a list of arguments and reading what it printed."""
from __future__ import annotations

import errno
import os
import subprocess
import tempfile

from ..errors import SnippetTimeout, UsageError
from .build import runner_path
from .protocol import RunnerOutput, parse_output


def run(args: list[str], timeout: float) -> RunnerOutput:
    """Run the runner; the runner's own timer fires first, this kill is the backstop."""
    for attempt in (0, 1):
        cmd = [str(runner_path(rebuild=attempt == 1))] + args
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout + 5,
                                  stdin=subprocess.DEVNULL)
            break
        except subprocess.TimeoutExpired:
            raise SnippetTimeout(f"the runner did not finish within {timeout + 5:.0f} s and was killed",
                                 "the measured code may loop forever or block; raise --timeout if it is just slow") from None
        except OSError as e:
            if attempt == 0 and e.errno in (errno.ENOEXEC, errno.EACCES, errno.ENOENT):
                continue            # a broken cached binary: build it again, once
            raise UsageError(f"cannot start the runner: {e.strerror}", "rebuild it: bash setup.sh") from None
    out = parse_output(proc.stdout)
    out.returncode = proc.returncode
    out.stderr = proc.stderr
    return out


def write_temp(data: bytes, suffix: str) -> str:
    """A new temporary file holding ``data`` (a code blob or data area for the runner); the caller
    removes it."""
    fd, path = tempfile.mkstemp(prefix="cyclebench-", suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path
