"""summary.md: a heading, the Machine and Method sections from the run's facts, the study's own
findings, the Caveats (facts first, then the study's), and its tables in Markdown."""
from __future__ import annotations

from dataclasses import replace

from ..machine.uarch import core_name
from ..reports.registry import get_reporter
from .base import Analysis, Section, Study
from .facts import RunFacts

MAX_WARNINGS = 3     # the most common measurement warnings quoted under Caveats


def machine_lines(f: RunFacts) -> list[str]:
    m = f.machine
    if not m:
        return ["- Not recorded."]
    where = "a virtual machine (hypervisor flag set)" if m.get("hypervisor") else "bare metal"
    smt = {"1": "SMT on", "0": "SMT off"}.get(str(m.get("smt_active")), "SMT unknown")
    out = [f"- {core_name(m)}: {m.get('cpu_model_name')} (vendor {m.get('cpu_vendor')}, family {m.get('cpu_family')}, "
           f"model {m.get('cpu_model')}, microcode {m.get('microcode')}), {where}, "
           f"{m.get('cpus_online')} CPUs online, {smt}.",
           f"- {m.get('kernel')}; frequency governor {m.get('governor') or 'not exposed'}, turbo "
           f"{m.get('turbo') or 'not exposed'}; perf_event_paranoid {m.get('perf_event_paranoid')}; "
           f"{m.get('tool')} {m.get('tool_version')} on Python {m.get('python')}."]
    return out


def backend_text(f: RunFacts) -> str:
    """How cycles were counted, from the backends the measurements actually used."""
    if not f.backends:
        return "no timed measurement in this run"
    parts = []
    for name, n in sorted(f.backends.items(), key=lambda kv: -kv[1]):
        if name == "tsc":
            ghz = ""
            if f.calibrated_ghz:
                lo, hi = f.calibrated_ghz
                ghz = f", calibrated at {lo:.2f}-{hi:.2f} GHz" if hi - lo >= 0.005 else f", calibrated at {lo:.2f} GHz"
            parts.append(f"TSC-calibrated core cycles (no cycle counter was read{ghz}) for {n}")
        elif name == "perf":
            parts.append(f"core cycles counted by the hardware PMU (perf_event) for {n}")
        else:
            parts.append(f"backend {name} for {n}")
    return "; ".join(parts) + f" of {f.measurements} measurements"


def method_lines(f: RunFacts) -> list[str]:
    out = [f"- Counters: {backend_text(f)}."]
    if f.backend_reasons:
        out.append("- Why that backend: " + "; ".join(f.backend_reasons) + ".")
    out.append("- Extra events counted: " + (", ".join(f"`{e}`" for e in f.events) if f.events
                                              else "none") + ".")
    if f.repetitions:
        reps = ", ".join(map(str, f.repetitions))
        out.append(f"- Repetitions per measurement: {reps}; {f.measurements} measurements "
                   f"({f.records} records) in this {f.config} run.")
    return out


def caveat_lines(f: RunFacts) -> list[str]:
    out = []
    if f.tsc:
        out.append("- Cycles are TSC-calibrated, not counted: each repetition converts TSC ticks with "
                   "its own calibration chain, so a change of clock during a repetition shows as noise.")
    if f.machine.get("hypervisor"):
        out.append("- A virtual machine: other tenants share the host, and bursts of their work slow "
                   "throughput-bound code more than the calibration chain.")
    if f.measurements:
        out.append(f"- {f.unstable} of {f.measurements} measurements were flagged unstable.")
    if f.variable:
        out.append(f"- {f.variable} of {f.measurements} measurements are a variable cost: their repetitions vary by "
                   "more than 2% in three or more processes with clean host gauges; each is quoted as their median, "
                   "known to within 5% at 95%, and the range they cover.")
    for text, n in f.warnings[:MAX_WARNINGS]:
        out.append(f"  - {n}x: {text}")
    return out


def build_summary(study: Study, config, analysis: Analysis, facts: RunFacts) -> str:
    L = [f"# {study.title}: findings ({facts.config} run)", ""]
    sections = [Section("Machine", machine_lines(facts) + study.machine(config, facts)),
                Section("Method", method_lines(facts) + study.method(config, facts))]
    sections += study.summarise(config, analysis, facts)
    sections.append(Section("Caveats", caveat_lines(facts) + study.caveats(config, facts)))
    for s in sections:
        L += [f"## {s.title}", ""] + s.lines + [""]
    md = get_reporter("markdown")
    for t in analysis.summary_tables:
        L += [f"## Table: {t.title}", "", md.render([_untitled(t)])]
    return "\n".join(L).rstrip("\n") + "\n"


def _untitled(t):
    return replace(t, title="", notes=[])      # summary.md gives the title its own heading
