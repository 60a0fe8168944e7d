"""Sequences (`cyclebench seq`): cycles per copy and IPC of a short instruction sequence.

The instruction count comes from the PMU's retired-instructions counter where one is usable.
Without a PMU it is the static count of one decoded copy. That count is exact for straight-line
code. With a branch inside, a taken branch skips instructions the static count includes. The IPC
is then only an upper bound, and the row says so.
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from ..counters.backends import FIXED_COUNTERS, probe
from ..counters.resolve import event_specs
from ..errors import CycleBenchError, UsageError
from ..measurement.api import measure
from ..snippet import assemble, parse_part


@dataclass
class Decoded:
    count: int
    branches: list[str]          # the statements of one copy that can change the flow of control


def decode(code: str) -> Decoded:
    """One copy of ``code``: assembled with GNU as, decoded with iced-x86."""
    part = parse_part("code", code)
    if part.empty:
        raise UsageError("an empty sequence", 'give statements, e.g. "mov rbx, [rsi]"')
    head = [".intel_syntax noprefix", ".text"]
    # line numbers are 1-based: the user's statements follow the two header lines
    origin = {len(head) + i: (part.name, src) for i, src in enumerate(part.sources(), 1)}
    obj = assemble(head + part.lines(), origin)
    n, branches = 0, []
    fmt = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    for ins in iced_x86.Decoder(64, obj.blob):
        if ins.code == iced_x86.Code.INVALID:
            raise UsageError(f"cannot decode the assembled sequence '{code}'", "check the statements")
        n += 1
        if ins.flow_control != iced_x86.FlowControl.NEXT:
            branches.append(fmt.format_mnemonic(ins))
    return Decoded(n, branches)


def retired_instructions_counter():
    """The PMU's retired-instructions event if this machine can count it, else None."""
    ev = next(e for e in FIXED_COUNTERS if e.name == "instructions")
    try:
        (res,) = probe((ev,))
    except CycleBenchError:         # the probe itself failed: the static count still works
        return None
    return ev if res.ok else None


def measure_sequence(code: str, init: str | None = None, *, counted=None, **kwargs) -> dict:
    """Measure ``code`` as unrolled copies. ``counted``: the retired-instructions event to read
    (see retired_instructions_counter()), or None for the static count."""
    static = decode(code)
    events = event_specs(kwargs.pop("events", None))
    if counted is not None and not any(e.name == "instructions" for e in events):
        events.append(counted)
    r = measure(code, init=init, events=events or None, **kwargs)
    ev = r.events["cycles"]
    if "instructions" in r.events:
        n, source, bound = r.events["instructions"].value, "counted", "exact"
    else:
        n, source = static.count, "static"
        bound = "upper" if static.branches else "exact"
    warnings = list(r.warnings)
    if source == "static" and static.branches:
        warnings.append(f"'{code}': IPC is an upper bound: the count of {static.count} instructions is "
                        f"static, and a taken {'/'.join(dict.fromkeys(static.branches))} skips some of them "
                        "(no PMU to count retired instructions)")
    return {"sequence": code, "instructions": n, "instructions_source": source, "static_instructions":
            static.count, "branches": static.branches, "cycles": ev.value, "uncertainty": ev.uncertainty,
            "ipc": n / ev.value if ev.value > 0 else float("inf"), "ipc_bound": bound, "stable": r.stable,
            "warnings": warnings, "samples": list(ev.samples), "result": r.to_dict()}
