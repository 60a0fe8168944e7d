"""Code size per dispatcher and build, from the built objects: bytes in total, bytes used, bytes
executed per path, thunk and table bytes.

* **Total**: the dispatcher symbol's size (``nm -S``); the pointer table ``cb_table`` likewise.
* **Executed per path**: each dispatcher is single-stepped (``routines.trace.trace_calls``, the
  trap flag, no timing) once per valid index, and the lengths of the instructions it really runs
  are summed, split by where they lie: in the dispatcher's own symbol, in a thunk (retpoline,
  return thunk), in a CFI jump-table entry (cfi-icall's ``cb_tN`` in front of ``cb_tN.cfi``), or
  in the target itself (not counted: every dispatcher runs one). Each traced call must return the
  index's target value, so a path is only reported when it is the right one.
* **Used**: the dispatcher's bytes covered by the union of all valid paths (Ertl's "62 of 68
  bytes are used"); the rest is the out-of-range path and padding.
* **Table**: the bytes of ``cb_table`` (8 per target); a jump table a compiler made for the switch
  is unnamed ``.rodata``: an indirect jump in the switch's disassembly is reported, its size not.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from statistics import mean

from cyclebench.errors import CycleBenchError, RoutineIncorrect
from cyclebench.reports.model import Column, Table
from cyclebench.routines.trace import trace_calls

from .builds import functions, objdump
from .checking import X, expected
from .sources import DISPATCHERS, RANGE, symbol

THUNK_PREFIXES = ("__llvm_retpoline_", "__x86_indirect_thunk", "__x86_return_thunk", "__llvm_lvi_thunk")
TARGET = re.compile(r"^cb_t(\d+)(\.cfi)?$")
INDIRECT = re.compile(r"^(notrack\s+)?(call|jmp)\s+(QWORD PTR \[|r[a-z0-9]+$)")
PARTS = ("dispatcher", "thunk", "jumptable", "target", "other")
# Ertl's figures (AMD64, clang 11 -Os -mretpoline), published
ERTL = {"1": "68 total, 62 used", "2": "27 + 21 (thunk) + 8 per target"}


def symbols(path: Path) -> list[tuple[str, int, int]]:
    """(name, address, size) of the code and data symbols defined in ``path`` (``nm -S``); an
    unsized one (GCC's thunks) reaches to the next symbol. CFI type markers are left out."""
    exe = shutil.which("nm")
    if exe is None:
        raise CycleBenchError("nm is not installed", hint="apt-get install binutils")
    out = subprocess.run([exe, "-S", "-n", "--defined-only", str(path)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) in (3, 4) and parts[-2].lower() in "tdrb" and not parts[-1].startswith("__typeid_"):
            rows.append((parts[-1], int(parts[0], 16), int(parts[1], 16) if len(parts) == 4 else None))
    starts = sorted({a for _, a, _ in rows})
    syms = []
    for name, addr, size in rows:
        if size is None:
            later = [a for a in starts if a > addr]
            size = later[0] - addr if later else 0
        syms.append((name, addr, size))
    return syms


def _part(address: int, syms: list[tuple[str, int, int]], names: set[str], own: str) -> str:
    """Where an executed address lies; the innermost (latest-starting) symbol containing it wins
    (cfi-icall gives every jump-table entry the whole table's size)."""
    inside = [s for s in syms if s[1] <= address < s[1] + s[2]]
    if not inside:
        return "other"
    name = max(inside, key=lambda s: s[1])[0]
    if name == own:
        return "dispatcher"
    if name.startswith(THUNK_PREFIXES):
        return "thunk"
    m = TARGET.match(name)
    if m:
        return "jumptable" if not m.group(2) and f"{name}.cfi" in names else "target"
    return "other"


def measure(built) -> dict:
    """The code-size facts of one built build (builds.BuiltBuild), JSON-ready."""
    syms = symbols(built.path)
    names = {s[0] for s in syms}
    where = {s[0]: (s[1], s[2]) for s in syms}
    out = {"symbols": {n: where[n][1] for n in (*map(symbol, DISPATCHERS), "cb_table") if n in where},
           "thunks": {n: sz for n, _, sz in syms if n.startswith(THUNK_PREFIXES)}, "paths": {}}
    code = functions(objdump(built.path))
    for d in DISPATCHERS:
        own = symbol(d)
        entry, size = where[own]
        traces = trace_calls(built.routines[d], range(RANGE[d]), X)
        want = expected(d)
        per = {p: [] for p in PARTS}
        used = set()
        for t in traces:
            if t.returned != want[t.arg]:
                raise RoutineIncorrect(f"{own}({t.arg}, {X}) returned {t.returned} under the tracer, not "
                                       f"{want[t.arg]}", hint="see sources.py and the disassembly")
            got = dict.fromkeys(PARTS, 0)
            for off, length in t.path:
                part = _part(entry + off, syms, names, own)
                got[part] += length
                if part == "dispatcher":
                    used.update(range(off, off + length))
            for p in PARTS:
                per[p].append(got[p])
        out["paths"][d] = {**per, "used": len(used), "total": size,
                           "indirect": any(INDIRECT.match(i) for i in code.get(own, []))}
    return out


def stats(values: list[int]) -> dict | None:
    return {"min": min(values), "mean": mean(values), "max": max(values)} if values else None


def _range(values: list[int]) -> str:
    s = stats(values)
    if s is None:
        return "-"
    return str(s["min"]) if s["min"] == s["max"] else f"{s['min']}-{s['max']} (mean {s['mean']:.1f})"


def _table(s: dict, d: str, p: dict) -> str:
    if d in ("0m", "2"):
        return f"{s['symbols'].get('cb_table', '-')} (8 read)"
    return "jump table" if d == "switch" and p["indirect"] else ""


def detail_table(sizes: dict, builds: list[str]) -> Table:
    """Ertl's builds in detail: per dispatcher, total / used / executed bytes and what runs outside."""
    cols = [Column("b", "build"), Column("d", "dispatcher"), Column("total", "total", "right"),
            Column("used", "used", "right"), Column("exec", "executed per path: min-max (mean)", "right"),
            Column("thunk", "+ thunk executed", "right"), Column("jt", "+ CFI jump table", "right"),
            Column("table", "table", "right"), Column("ertl", "Ertl (published)")]
    rows = []
    for b in builds:
        s = sizes.get(b, {})
        for d, p in s.get("paths", {}).items():
            if d == "branch":
                continue
            rows.append({"b": b, "d": d, "total": str(p["total"]), "used": str(p["used"]),
                         "exec": _range(p["dispatcher"]), "thunk": _range(p["thunk"]),
                         "jt": _range(p["jumptable"]),
                         "table": _table(s, d, p),
                         "ertl": ERTL.get(d, "") if b == "clang-retpoline" else ""})
    return Table("Code size in bytes per dispatcher, from the built objects (Ertl's two builds)",
                 cols, rows, NOTES)


def _cell(d: str, p: dict) -> str:
    out = f"{mean(p['dispatcher']):.0f}/{p['total']}"
    out += f" +{max(p['thunk'])}t" if max(p["thunk"]) else ""
    out += f" +{max(p['jumptable'])}j" if max(p["jumptable"]) else ""
    return out + (" JT" if d == "switch" and p["indirect"] else "")


def summary_table(sizes: dict, builds: list[str]) -> Table:
    """Every build: mean bytes executed in the dispatcher / bytes in total."""
    cols = [Column("d", "dispatcher")] + [Column(b, b, "right") for b in builds]
    rows = []
    for d in DISPATCHERS:
        row = {"d": d}
        for b in builds:
            p = sizes.get(b, {}).get("paths", {}).get(d)
            row[b] = "-" if p is None else _cell(d, p)
        rows.append(row)
    rows.append({"d": "pointer table (cb_table)", **{b: str(sizes.get(b, {}).get("symbols", {}).get("cb_table", "-"))
                                                      for b in builds}})
    rows.append({"d": "thunks (bytes, shared)", **{b: str(sum(sizes.get(b, {}).get("thunks", {}).values()))
                                                   for b in builds}})
    return Table("Code size by build: bytes executed in the dispatcher (mean over indices) / bytes in total",
                 cols, rows, ["+Nt: at most N more bytes executed in thunks per call; +Nj: in a CFI jump-table "
                              "entry; JT: the switch jumps through a jump table.", *NOTES])


NOTES = [
    "total: the dispatcher symbol's size (nm -S). executed: the bytes of the instructions one call "
    "runs inside the dispatcher, single-stepped (trap flag) once per valid index with the result "
    "checked; min-max and mean over the indices (direct and 0 ignore the index). used: the bytes "
    "of the union of those paths; the rest is the out-of-range path and padding (Ertl: 62 of 68).",
    "thunk / CFI jump table: bytes executed outside the dispatcher on the way to the target "
    "(retpoline thunk, cfi-icall's jump-table entry); the target's own bytes are not counted.",
    "table: cb_table's bytes (73 targets x 8); one 8-byte entry is read per call. A switch's jump "
    "table (an indirect jmp in its code) is unnamed .rodata, not counted. Our 3 pads each leaf to a "
    "64-byte line, so its total includes never-executed padding. GCC's thunks have no symbol size: "
    "theirs reach to the next symbol, alignment padding included.",
    "Ertl (published): clang 11 -Os -mretpoline on AMD64, 7 targets for 1, 8 for his table.",
]
