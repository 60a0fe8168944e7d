"""One reporter interface for every output format (text, JSON, Markdown, CSV)."""
from __future__ import annotations

import csv
import io
import json

from ..errors import UsageError


def _fmt(v: float, u: float) -> str:
    """Value with as many decimals as its uncertainty supports (at least 2, at most 4)."""
    if u != u or u <= 0:
        return f"{v:.2f}"
    digits = 2 if u >= 0.01 else 3 if u >= 0.001 else 4
    return f"{v:.{digits}f} ± {u:.{digits}f}"


class Reporter:
    name = ""

    def render(self, results: list) -> str:
        raise NotImplementedError

    @staticmethod
    def rows(result) -> list[dict]:
        """One row per event, shared by the tabular formats."""
        return [{"event": e.name, "label": e.label, "value": e.value, "uncertainty": e.uncertainty,
                 "unit": e.unit, "aggregate": e.aggregate, "min": e.min, "median": e.median, "max": e.max}
                for e in result.events.values()]


class TextReporter(Reporter):
    """nanoBench-like: one line per event; the backend and stability below."""
    name = "text"

    def __init__(self, verbose: bool = False):
        self.verbose = verbose

    def render(self, results: list) -> str:
        out = []
        for r in results:
            if len(results) > 1:
                out.append(f"== {r.parameters.get('code')}")
            for e in r.events.values():
                if e.aggregate == "range":
                    out.append(f"{e.label}: {e.min:.4f} - {e.max:.4f}{_mux(e)}")
                else:
                    out.append(f"{e.label}: {_fmt(e.value, e.uncertainty)}{_mux(e)}")
            p = r.parameters
            loop = f"loop {p['loop']}{' (auto)' if p.get('loop_auto') else ''}" if p.get("use_loop") else "no loop"
            out.append(f"# backend {r.backend['name']}: {r.backend['reason']}")
            out.append(f"# unroll {p['unroll']}, {loop}, {p['n_measurements']} measurements, "
                       f"aggregate {p['aggregate']}, {'stable' if r.stable else 'UNSTABLE'}"
                       f" (spread {r.stability['spread']:.2%})"
                       + ("" if (r.stability.get("linearity") or {}).get("linear", True)
                          else ", NOT LINEAR in the copies (see the warning)"))
            if self.verbose:
                out += _raw_lines(r)
        return "\n".join(out) + "\n"


def _mux(e) -> str:
    """A multiplexed perf event is flagged on its line, never scaled."""
    if not getattr(e, "multiplexed", False):
        return ""
    return f"  [MULTIPLEXED: counted {e.running_fraction:.0%} of the time at worst; not scaled]"


def _raw_lines(r) -> list[str]:
    out = []
    groups = r.backend.get("groups") or []
    for n, att in enumerate(r.raw.get("attempts", [])):
        names = f" ({', '.join(groups[0]['events'])})" if groups else ""
        out.append(f"# attempt {n + 1}: loop {att['loop']}, TSC {att['tsc_hz'] / 1e9:.4f} GHz; "
                   f"per repetition: calib A/B ticks, A/B readings (tsc, events{names}...)")
        for i, (a, b) in enumerate(zip(att["a"], att["b"])):
            cal = f"{att['ca'][i][0]} {att['cb'][i][0]}  " if "ca" in att else ""
            out.append(f"#  rep {i:3d}: {cal}A {' '.join(map(str, a))}  B {' '.join(map(str, b))}")
        for g, grp in enumerate(att.get("groups", []), start=1):
            out.append(f"# attempt {n + 1}, event group {g} ({', '.join(grp['events'])}): A/B readings (tsc, events...)")
            for i, (a, b) in enumerate(zip(grp["a"], grp["b"])):
                out.append(f"#  rep {i:3d}: A {' '.join(map(str, a))}  B {' '.join(map(str, b))}")
    return out


class JsonReporter(Reporter):
    name = "json"

    def render(self, results: list) -> str:
        docs = [r.to_dict() for r in results]
        return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2) + "\n"


class MarkdownReporter(Reporter):
    name = "markdown"

    def render(self, results: list) -> str:
        out = ["| code | event | value | ± | unit | stable |", "| --- | --- | ---: | ---: | --- | --- |"]
        for r in results:
            for row in self.rows(r):
                code = str(r.parameters.get("code")).replace("|", "\\|")
                out.append(f"| `{code}` | {row['label']} | {row['value']:.4f} | {row['uncertainty']:.4f} | "
                           f"{row['unit']} | {'yes' if r.stable else 'no'} |")
        return "\n".join(out) + "\n"


class CsvReporter(Reporter):
    name = "csv"

    def render(self, results: list) -> str:
        buf = io.StringIO()
        fields = ["code", "event", "label", "value", "uncertainty", "unit", "aggregate", "min", "median", "max", "stable"]
        w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in results:
            for row in self.rows(r):
                w.writerow({"code": r.parameters.get("code"), "stable": r.stable, **row})
        return buf.getvalue()


FORMATS = {c.name: c for c in (TextReporter, JsonReporter, MarkdownReporter, CsvReporter)}


def get_reporter(name: str, **kwargs) -> Reporter:
    if name not in FORMATS:
        raise UsageError(f"unknown output format '{name}'", "use one of " + ", ".join(FORMATS))
    return FORMATS[name](**kwargs) if name == "text" else FORMATS[name]()
