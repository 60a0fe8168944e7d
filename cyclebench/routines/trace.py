"""What one call of a routine executes, by single-stepping (the native tracer, ``native/trace.c``).

The tracer runs in a child process: it calls the routine with the trap flag set and records every
instruction address until the routine returns, then the bytes at each address. ``run_tracer``
runs it and reads its cases; ``decode`` classifies one instruction with iced-x86 (length, whether
it stores and how wide, a repeated string store's element, a conditional branch). The tracer calls
a routine either memset-like, ``fn(buffer + alignment, fill, size)`` on a page-aligned buffer
(studies/memset/trace.py counts its stores and branches), or as a function of two integers
(``--call``): ``trace_calls(routine, args, second)`` gives each call's return value and the
(offset, length) of every instruction it executed, in order, so a caller can count the bytes a
path executes (the dispatch study).

Only routines that passed their correctness check should be traced (a crash takes the tracer
down, with a clear error, not cyclebench). Tracing costs a signal per instruction (about 2 us), so
keep calls short (a rep stosb traps once per iteration).
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from cyclebench.errors import CycleBenchError
from cyclebench.routines.build import Routine, build_executable

TRACER_SOURCE = Path(__file__).with_name("native") / "trace.c"
_WRITES = None


def tracer_path() -> Path:
    return build_executable([TRACER_SOURCE], cflags=["-O2", "-Wall"], ldflags=["-ldl"],
                            name="cb-trace").path


_STRING_ELEMENT = {"stosb": 1, "stosw": 2, "stosd": 4, "stosq": 8,
                   "movsb": 1, "movsw": 2, "movsd": 4, "movsq": 8}


@dataclass(frozen=True)
class Insn:
    length: int
    store: bool
    rep_store_bytes: int     # element size of a rep-prefixed string store, else 0
    cond_branch: bool
    text: str
    store_bytes: int = 0


def decode(code_hex: str, address: int) -> Insn:
    import iced_x86 as I
    global _WRITES
    if _WRITES is None:
        _WRITES = {I.OpAccess.WRITE, I.OpAccess.READ_WRITE, I.OpAccess.COND_WRITE,
                   I.OpAccess.READ_COND_WRITE}
    ins = next(iter(I.Decoder(64, bytes.fromhex(code_hex), ip=address)))
    info = I.InstructionInfoFactory().info(ins)
    store = any(m.access in _WRITES for m in info.used_memory())
    rep = 0
    if store and (ins.has_rep_prefix or ins.has_repe_prefix) and ins.is_string_instruction:
        rep = _STRING_ELEMENT.get(str(ins).split()[-1], 1)
    width = I.MemorySizeExt.size(ins.memory_size) if store else 0
    return Insn(ins.len, store, rep, ins.flow_control == I.FlowControl.CONDITIONAL_BRANCH, str(ins),
                 width)


def run_tracer(routine: Routine, args: list[str], timeout: float) -> tuple[list[dict], dict]:
    """Run the tracer on ``routine`` with ``args``: (its cases, its code table and entry)."""
    cmd = [str(tracer_path()), "--lib", routine.library, "--symbol", routine.symbol, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CycleBenchError(f"tracing {routine.name} took more than {timeout:g} s",
                              hint="trace fewer or smaller sizes") from None
    cases, code, status = [], None, None
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        doc = json.loads(line)
        if "case" in doc:
            cases.append(doc["case"])
        elif "code" in doc:
            code = doc
        elif "status" in doc:
            status = doc
    if not status or status.get("status") != "ok" or code is None:
        if proc.returncode < 0:
            import signal
            detail = (f"the routine crashed with {signal.Signals(-proc.returncode).name} "
                      f"(traced cases completed: {len(cases)})")
        else:
            detail = (status or {}).get("detail") or proc.stderr.strip()[:200] or f"exit {proc.returncode}"
        raise CycleBenchError(f"tracing {routine.name} failed: {detail}",
                              hint="only trace routines that passed their correctness check")
    return cases, code


@dataclass(frozen=True)
class CallPath:
    """One traced call of a function of two integers: what it returned and the instructions it
    executed, in order, as (offset from the routine's entry, length in bytes); a repeated
    string instruction appears once."""
    arg: int
    returned: int
    path: tuple[tuple[int, int], ...]


def trace_calls(routine: Routine, args: Iterable[int], second: int = 0, *,
                timeout: float = 60.0) -> list[CallPath]:
    """One CallPath per value v of ``args``: the call ``routine(v, second)`` single-stepped
    (both non-negative; ``second`` is passed as a 32-bit int, zero-extended)."""
    args = [int(a) for a in args]
    cases, code = run_tracer(routine, ["--call", "--sizes", ",".join(map(str, args)),
                                        "--fill", str(int(second))], timeout)
    entry = int(code["entry"], 16)
    table = [(int(addr, 16) - entry, decode(hexbytes, int(addr, 16)).length)
             for addr, hexbytes in code["code"]]
    return [CallPath(c["arg"], c["ret"], tuple(table[i] for i, _ in c["seq"])) for c in cases]


def entry_symbol(routine: Routine) -> str:
    """The dynamic symbol at the routine's resolved entry (for glibc: which IFUNC variant runs;
    empty when the variant has no dynamic symbol)."""
    cmd = [str(tracer_path()), "--lib", routine.library, "--symbol", routine.symbol, "--sizes", "0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    for line in proc.stdout.splitlines():
        if line.startswith('{"code"'):
            return json.loads(line).get("entry_symbol", "")
    return ""
