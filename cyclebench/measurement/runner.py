"""Building and invoking the C runner, and reading its line protocol (see runner/cb_runner.c)."""
from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..cache import cache_dir
from ..errors import CycleBenchError, SnippetTimeout, UsageError

RUNNER_SRC = Path(__file__).resolve().parents[2] / "runner" / "cb_runner.c"
CFLAGS = ("-O2", "-std=gnu11")          # as runner/Makefile
LIBS = ("-ldl", "-lseccomp", "-lm")


def _usable(exe: Path) -> bool:
    """A cached runner can be empty or garbage (a crash mid-copy, a full disk): check its ELF magic."""
    try:
        with open(exe, "rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(exe, os.X_OK)
    except OSError:
        return False


def runner_path(rebuild: bool = False) -> Path:
    """The runner binary for the current source, built on first use (keyed by source hash); a
    cached binary that is not a usable executable is built again."""
    if not RUNNER_SRC.exists():
        raise CycleBenchError(f"runner source not found at {RUNNER_SRC}",
                              "install cyclebench from its source tree: bash setup.sh")
    src = RUNNER_SRC.read_bytes()
    digest = hashlib.sha256(src).hexdigest()[:16]
    exe = cache_dir() / f"cb-runner-{digest}"
    if not rebuild and _usable(exe):
        return exe
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        raise CycleBenchError("no C compiler found to build the runner",
                              "install gcc (bash setup.sh does it)")
    tmp = exe.with_suffix(f".tmp{os.getpid()}")
    proc = subprocess.run([cc, *CFLAGS, "-o", str(tmp), str(RUNNER_SRC), *LIBS],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise CycleBenchError("building the runner failed: " + (proc.stderr.strip().splitlines() or ["?"])[0],
                              "install the build dependencies (gcc, libseccomp-dev): bash setup.sh")
    os.replace(tmp, exe)
    return exe


@dataclass
class RunnerOutput:
    info: dict[str, list[str]] = field(default_factory=dict)
    areas: dict[int, tuple[int, int]] = field(default_factory=dict)
    samples: dict[str, list[list[int]]] = field(default_factory=dict)   # kind -> per rep [tsc, ev...] (group 0)
    groups: list[dict[str, list[list[int]]]] = field(default_factory=list)   # the same, per event group
    times: list[dict[str, list[tuple[int, int]]]] = field(default_factory=list)  # per group: kind -> (enabled, running)
    probes: list[tuple[int, bool, str]] = field(default_factory=list)
    error: dict[str, str] | None = None
    error_kind: str | None = None
    returncode: int = 0
    done: bool = False
    protocol: int | None = None
    stderr: str = ""


PROTOCOL = 2      # RUNNER_PROTOCOL in runner/cb_runner.c


class RunnerProtocolError(CycleBenchError):
    """The runner printed something this side does not understand: a bug (exit 1), never data."""


def _parse_line(out: RunnerOutput, parts: list[str], group: int) -> int:
    """Apply one protocol line; returns the current event group. Raises ValueError/IndexError if malformed."""
    tag, n = parts[0], len(parts)
    if tag == "sample" and n >= 4:
        out.groups[group].setdefault(parts[2], []).append([int(x) for x in parts[3:]])
    elif tag == "times" and n == 5:
        out.times[group].setdefault(parts[2], []).append((int(parts[3]), int(parts[4])))
    elif tag == "group" and n == 2:
        group = int(parts[1])
        if not 0 <= group < 64:
            raise ValueError("group out of range")
        while len(out.groups) <= group:
            out.groups.append({})
            out.times.append({})
    elif tag == "info" and parts[1:2] == ["area"] and n == 5:
        out.areas[int(parts[2])] = (int(parts[3], 16), int(parts[4], 16))
    elif tag == "info" and n >= 3 and parts[1] != "area":
        out.info[parts[1]] = parts[2:]
    elif tag == "probe" and n >= 3 and parts[2] in ("ok", "fail"):
        out.probes.append((int(parts[1]), parts[2] == "ok", " ".join(parts[3:])))
    elif tag == "protocol" and n == 2:
        out.protocol = int(parts[1])
    elif tag == "layout" and n == 3:
        out.info[f"layout.{parts[1]}"] = [parts[2]]
    elif tag == "done" and n == 1:
        out.done = True
    else:
        raise ValueError("unknown line")
    return group


def parse_output(text: str) -> RunnerOutput:
    """Read the runner's line protocol. A line that does not parse is a bug and fails loudly,
    except a line cut short by the fault that ended the run (an error line follows it)."""
    out = RunnerOutput()
    out.groups.append(out.samples)
    out.times.append({})
    group, bad = 0, None
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "error" and len(parts) >= 2:
            out.error_kind = parts[1]
            out.error = {k: v for k, eq, v in (p.partition("=") for p in parts[2:]) if eq}
            out.error["message"] = " ".join(parts[2:])
            continue
        try:
            group = _parse_line(out, parts, group)
        except (ValueError, IndexError):
            bad = bad or (number, line)
    if out.error_kind is None and (bad or (out.done and out.protocol != PROTOCOL)):
        where = f"line {bad[0]}: {bad[1][:80]!r}" if bad else f"protocol {out.protocol}, expected {PROTOCOL}"
        raise RunnerProtocolError(f"the runner's output does not follow its protocol ({where})",
                                  "this is a bug in cyclebench (or a stale runner): bash setup.sh, then report it")
    return out


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
    fd, path = tempfile.mkstemp(prefix="cyclebench-", suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path
