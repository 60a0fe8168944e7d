"""Every measured figure of a Loaded input, as one shape with its provenance: the exact command
and code that produced it, its raw per-repetition samples and its warnings.

``key`` names the same figure in two runs (compare.py matches on it): an asm snippet and event, an
instruction form and operand pair, a study record's key. ``flags`` are the short warnings the page
and compare show: unstable, not linear, below resolution, upper bound, data-dependent, bound.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field

from .loaders import Loaded


@dataclass
class Measured:
    key: str
    label: str
    value: float | None
    unit: str = "cycles"
    samples: list[float] = field(default_factory=list)
    uncertainty: float | None = None
    command: str = ""
    code: str = ""
    flags: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def about(self) -> dict:
        """What the page shows beside the figure."""
        return {"command": self.command, "code": self.code, "flags": self.flags, "warnings": self.warnings}


def measured(item: Loaded) -> list[Measured]:
    return {"asm": _asm, "inst": _inst, "study": _study}[item.kind](item)


# ------------------------------------------------------------------------------------------- asm

_ASM_OPTIONS = (("init", "--init"), ("late_init", "--late-init"), ("one_time_init", "--one-time-init"),
                ("unroll", "--unroll"), ("loop", "--loop"), ("n_measurements", "-n"),
                ("alignment_offset", "--alignment-offset"), ("cpu", "--cpu"))
_ASM_SWITCHES = (("basic_mode", "--basic-mode"), ("no_normalization", "--no-normalization"),
                 ("drain_frontend", "--df"), ("no_mem", "--no-mem"), ("allow_syscalls", "--allow-syscalls"))


def asm_command(p: dict) -> str:
    """The ``cyclebench asm`` line that repeats this run's configuration (counts as they were used)."""
    words = ["cyclebench", "asm"]
    for key, opt in _ASM_OPTIONS:
        v = p.get(key)
        if v not in (None, "", 0) and not (key == "loop" and not p.get("use_loop")):
            words += [opt, str(v)]
    words += [opt for key, opt in _ASM_SWITCHES if p.get(key)]
    if p.get("aggregate") and p["aggregate"] != "avg":
        words.append(f"--{p['aggregate']}")
    if p.get("counters") not in (None, "auto"):
        words += ["--counters", p["counters"]]
    if p.get("events"):
        words += ["--events", ",".join(p["events"])]
    words.append(str(p.get("code") or ""))
    return shlex.join(words)


def _asm(item: Loaded) -> list[Measured]:
    out = []
    for r in item.results:
        p, st = r.parameters, r.stability
        code = "\n".join(f"{k}: {p[k]}" for k in ("one_time_init", "init", "late_init") if p.get(k))
        code = (code + "\n" if code else "") + f"code: {p.get('code')}"
        flags = ([] if r.stable else ["unstable"])
        if not (st.get("linearity") or {}).get("linear", True):
            flags.append("not linear")
        if st.get("below_resolution"):
            flags.append("below resolution")
        for e in r.events.values():
            f = flags + (["upper bound"] if e.upper_bound is not None else [])
            if e.multiplexed:
                f.append("multiplexed")
            out.append(Measured(f"{p.get('code')} [{e.name}]", f"{p.get('code')}: {e.label}",
                                e.upper_bound if e.upper_bound is not None else e.value, e.unit,
                                [x for x in e.samples if x == x], e.uncertainty, asm_command(p), code, f,
                                list(r.warnings)))
    return out


# ------------------------------------------------------------------------------------------ inst

def _inst(item: Loaded) -> list[Measured]:
    out = []
    for d in item.docs:
        if d.get("status") != "ok":
            continue
        cmd = shlex.join(["cyclebench", "inst", d["form"]])
        common = [n for n in d.get("notes") or [] if n.startswith("data-dependent")]
        for p in d.get("latency") or []:
            if p.get("value") is None:
                continue
            name = f"{p['start'].split(' (')[0]}→{p['end'].split(' (')[0]}"
            out.append(_inst_figure(f"{d['form']} latency {name}", f"{d['form']}: latency {name}", p, cmd,
                                    common))
        tp = d.get("throughput")
        if tp and tp.get("value") is not None:
            out.append(_inst_figure(f"{d['form']} throughput", f"{d['form']}: throughput", tp, cmd, common))
    return out


def _inst_figure(key: str, label: str, v: dict, cmd: str, common: list[str]) -> Measured:
    flags = [] if v.get("stable", True) else ["unstable"]
    if v.get("linear") is False:
        flags.append("not linear")
    if v.get("bound") in ("upper", "lower"):
        flags.append(f"{v['bound']} bound")
    if common:
        flags.append("data-dependent")
    code = "\n".join(x for x in (f"init: {v['init']}" if v.get("init") else "", v.get("code") or "") if x)
    warnings = list(v.get("warnings") or []) + ([v["note"]] if v.get("note") else []) + common
    return Measured(key, label, v["value"], "cycles", [x for x in v.get("samples") or [] if x is not None],
                    v.get("uncertainty"), cmd, code, flags, warnings)


# ----------------------------------------------------------------------------------------- study

def _study(item: Loaded) -> list[Measured]:
    folder = item.study
    out = []
    for rec in folder.records:
        res = rec.get("result")
        if not isinstance(res, dict) or not isinstance(res.get("backend"), dict):
            continue                          # an info record, not a measurement
        value, samples, bound = _study_value(res)
        if value is None:
            continue
        flags = [] if res.get("stable", True) else ["unstable"]
        warnings = list(res.get("warnings") or [])
        if bound is not None or any("less than the resolution" in w for w in warnings):
            flags.append("below resolution")
        if any("not linear" in w.lower() for w in warnings):
            flags.append("not linear")
        what = {k: rec[k] for k in ("routine", "spec", "params") if k in rec}
        code = json.dumps({**what, "options": res.get("options")}, indent=1, default=str)
        out.append(Measured(rec["key"], _study_label(rec), value, "cycles", samples, None,
                            folder.command, code, flags, warnings))
    return out


def _study_value(res: dict) -> tuple[float | None, list[float], float | None]:
    """(figure, per-repetition samples, upper bound) of a study measurement: a routine timing's net
    cycles per call (each repetition's pass minus its paired empty pass, over the calls), or a
    measure() figure's cycles."""
    net, raw = res.get("net"), res.get("samples")
    if isinstance(net, dict) and isinstance(raw, dict) and res.get("calls"):
        n = res["calls"]
        samples = [(a - b) / n for a, b in zip(raw.get("pass") or [], raw.get("empty") or [])]
        return net.get("median"), samples, None
    cyc = res.get("cycles")
    if isinstance(cyc, dict):
        return (cyc.get("upper_bound") or cyc.get("value")), list(cyc.get("samples") or []), cyc.get("upper_bound")
    return None, [], None


def _study_label(rec: dict) -> str:
    params = rec.get("params") or {}
    bits = [rec.get("experiment") or "", rec.get("routine") or ""]
    bits += [f"{k}={v}" for k, v in params.items() if not isinstance(v, (dict, list))]
    return " ".join(b for b in bits if b)
