"""The runner's line protocol (cb_runner.c prints it on a private pipe, see process.py): one record
per line, parsed into a ``RunnerOutput``; a line that does not parse is a bug and fails loudly."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import CycleBenchError

@dataclass
class RunnerOutput:
    """What one runner process printed: info lines, memory areas, samples, probe answers, its error."""
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
    stray: str = ""          # what reached the runner's standard output or error: the measured code's doing
    elapsed: float = 0.0     # wall-clock seconds from start to exit


PROTOCOL = 2      # RUNNER_PROTOCOL in cb_runner.c


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
