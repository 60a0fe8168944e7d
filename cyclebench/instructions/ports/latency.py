"""Latencies for the predictor's chain bound, from a published column or from cyclebench's own
instruction tables, each labelled with where it came from.

* a uops.info CSV (``.csv``): published latencies;
* a ``cyclebench inst`` results file (any other name): latencies measured here.

A form with a memory operand gets its smallest latency for its data registers (the
register-to-register pair), and, where it was measured, the latency from its address registers
(``addr`` pairs: a load's load-to-use time, which a pointer chase carries from one iteration to
the next) as a second figure; any other form its largest latency.  A measured form also gets
its latency from each register operand it reads (the largest pair starting there, keyed by the
operand's iced index, the flags by ``"flags"``, the memory operand by ``"mem"``, a LEA's base
register by ``"base"`` and its index by ``"index"``) as a third figure: ``cvtsi2ss xmm1, rbx``
passes XMM1 on in 3 cycles and RBX in 8 on Zen 4, and a chain through XMM1 waits 3;
``lea rbx, [r14+rcx*8+0x40]`` passes R14 on in 2 cycles and RCX in 1.
"""
from __future__ import annotations

import re
from pathlib import Path

from ...errors import ConfigError, ResultFileError
from ..catalogue import Catalogue

_OPERAND = re.compile(r"^op(\d+) ")
SPLIT = 0.25       # cycles: flags this much later than a form's registers are charged apart


def _pick(form, lo, hi):
    if form is not None and form.memory_operand is not None and form.memory_operand.kind == "mem":
        return lo
    return hi


def _figure(p: dict) -> float:
    """A pair's latency: its value where exact; where the pair was closed by a connector whose
    own latency is known only within a range (an upper bound, ``lower``..``upper``), the middle
    of the pair's range: the connector's share taken as half its range, as likely too little as
    too much, so that a chain through two such pairs is not charged both connectors' upper
    shares (Zen 4: ``cvtsi2ss xmm1, rbx`` 4..8 and ``movmskpd ebx, xmm1`` 1..5 run 9.1 cycles
    in a loop; their upper bounds add up to 13)."""
    lo, hi = p.get("lower"), p.get("upper")
    if p.get("bound") == "upper" and lo is not None and hi is not None:
        return (lo + hi) / 2
    return p["value"]


_SAME = re.compile(r"^(?:\{\w+\}\s*)*\w+\s+(\w+)\s*,\s*(\w+)\s*$")


def _one_register(p: dict) -> bool:
    """The pair was read on a chain whose form names one register twice (``sub rbx, rbx``)."""
    m = _SAME.match(str(p.get("code") or "").splitlines()[0] if p.get("code") else "")
    return bool(m) and m.group(1) == m.group(2)


def _by_source(form, pairs: list[dict]) -> dict:
    """Operand's iced index (or "flags", or "mem" for the memory operand: a store-and-load round
    trip, as cyclebench inst measures it, or "base" and "index": a LEA's address registers) -> the
    largest latency from it.  Where the flags come more than :data:`SPLIT` later than the
    registers it writes, the key gives the registers' figure and ("flags", key) the flags'
    (dataflow.chain_bound): Golden Cove adds a small immediate in the renamer, ``add r64, imm8``
    0 cycles to its register and 1 to the flags, and a loop counter's chain is not the flags'."""
    out: dict = {}
    flags: dict = {}
    same: set = set()
    for p in pairs:
        start = str(p.get("start", ""))
        key = None
        m = _OPERAND.match(start)
        if start == "flags":
            key = "flags"
        elif start.startswith("mem "):
            key = "mem"
        elif start.startswith("addr op") and form is not None and form.lea_mode:
            key = "base"           # a LEA computes with its address: each register has its own time
        elif start.startswith("index op"):
            key = "index"
        elif m and form is not None and int(m.group(1)) < len(form.operands):
            op = form.operands[int(m.group(1))]
            if op.kind == "reg" and op.iced_index is not None:
                key = op.iced_index
        if key is not None:
            into = flags if p.get("end") == "flags" else out
            into[key] = max(into.get(key, 0.0), _figure(p))
            if into is out and _one_register(p):
                same.add(key)
    for key, v in flags.items():
        # a register figure read on one register for both operands (``sub rbx, rbx``, uops.info's
        # convention: a zero idiom, 0 cycles) says nothing of two registers: the largest stands
        if key in out and key not in same and v > out[key] + SPLIT:
            out[("flags", key)] = v
        else:
            out[key] = max(out.get(key, 0.0), v)
    return out


def from_file(path: Path, catalogue: Catalogue, forms=None) -> tuple[dict, str]:
    """(form name -> cycles, or (cycles, cycles from the address registers), label)."""
    if path.suffix.lower() == ".csv":
        from ..published import read_csv
        from .portsets import published_for
        records, problems = read_csv(str(path), collect=True)
        if not records:                      # an empty or foreign CSV must not quietly mean 1 cycle each
            raise ConfigError(problems[0].cause if problems else f"{path} holds no rows",
                              "give a CSV exported from uops.info's table")
        names = list(forms) if forms is not None else [f.name for f in catalogue.offered()]
        out = {}
        for name, rec in published_for(names, records, catalogue).items():
            v = rec.latency
            if v is not None and v.lo is not None and v.hi is not None:
                out[name] = _pick(catalogue.get(name), v.lo, v.hi)
        return out, f"published ({path.name})"
    from ..bulk import results_store
    header, docs = results_store(path).load()
    if header is None or not docs:           # a mistyped name must not quietly mean 1 cycle each
        why = "holds no instruction forms" if Path(path).exists() else "does not exist"
        raise ResultFileError(f"{path} {why}", "give a results file of cyclebench inst, or a uops.info CSV")
    out = {}
    for d in docs:
        lat = [p for p in d.get("latency") or [] if p.get("value") is not None]
        pairs = [_figure(p) for p in lat if not str(p.get("start", "")).startswith("addr")]
        addr = [p["value"] for p in lat if str(p.get("start", "")).startswith("addr") and p.get("bound") == "exact"]
        pairs = pairs or [_figure(p) for p in lat]          # LEA: its address is its data
        if pairs:
            form = catalogue.get(d["form"])
            v = _pick(form, min(pairs), max(pairs))
            by_source = _by_source(form, lat)
            if by_source:
                out[d["form"]] = (v, max(addr) if addr else v, by_source)
            else:
                out[d["form"]] = (v, max(addr)) if addr else v
    from ...machine.metadata import cpu_text, names_this_cpu
    where = header.get("machine")
    return out, f"measured by cyclebench inst ({path.name})" + (
        f" on another CPU, {cpu_text(where)}" if names_this_cpu(where) is False else "")
