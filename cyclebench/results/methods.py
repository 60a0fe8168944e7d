"""The measuring options a saved result was made with (params.METHOD), for report and compare: one
line per file or run, and what two of them did differently.

An inst results file keeps the options given in its header (a file from before that keeps none);
an asm result keeps all of measure()'s parameters and the backend it used; a study's records keep
-n, the statistic and the backend. ``--counters auto`` is shown with the backend it chose
(params.used), so auto and tsc on a machine without a PMU are one method.
"""
from __future__ import annotations

from ..measurement.params import METHOD, spell, used
from .loaders import Loaded

UNRECORDED = "measuring options not recorded (a result from before they were kept)"
# asm and study results keep the copies and loop they ran, not whether they were given or chosen
CHOSEN = ("unroll", "loop")


def method_of(it: Loaded) -> dict | None:
    """{METHOD key: value, "backend": the backend used or None}; None when the result keeps no options."""
    if it.kind == "inst":
        if not isinstance(it.options, dict):
            return None
        out = {k: it.options[k] for k in METHOD if k in it.options}
        backend = used("counters", it.options, it.docs) if it.options.get("counters") else None
    elif it.kind == "asm":
        p, b = it.results[0].parameters, it.results[0].backend
        out, backend = {k: p[k] for k in METHOD if k in p}, b.get("name")
    else:
        facts = [r["result"] for r in it.study.records
                 if isinstance(r.get("result"), dict) and isinstance(r["result"].get("backend"), dict)]
        if not facts:
            return None
        opts = [f.get("options") or {} for f in facts]
        out = {k: opts[0][k] for k in METHOD if k in opts[0] and all(o.get(k) == opts[0][k] for o in opts)}
        names = {f["backend"].get("name") for f in facts}
        backend = names.pop() if len(names) == 1 else None
    for k in ("user", "kernel"):                  # as --usr/--os spell them (params.method)
        if isinstance(out.get(k), bool):
            out[k] = int(out[k])
    out["backend"] = backend
    out["as_run"] = it.kind != "inst"
    return out


def describe(m: dict | None) -> str:
    """One line: ``measured with -n 20 --avg ... --counters auto (chose tsc)``; an asm or study
    result's copies and loop are those it ran (``(ran unroll 100, loop 245)``), given or chosen."""
    if m is None:
        return UNRECORDED
    ran = [f"{k} {m[k]}" for k in CHOSEN if m.get("as_run") and m.get(k) is not None]
    bits = [spell(METHOD[k], v) for k, v in m.items()
            if k in METHOD and k != "counters" and not (ran and k in CHOSEN)]
    counters, backend = m.get("counters"), m.get("backend")
    if counters == "auto":
        bits.append(f"--counters auto ({f'chose {backend}' if backend else 'the backend it chose is not recorded'})")
    elif counters:
        bits.append(f"--counters {counters}")
    elif backend:
        bits.append(f"backend {backend}")
    return "measured with " + " ".join(b for b in bits if b) + (f" (ran {', '.join(ran)})" if ran else "")


def differences(a: dict | None, b: dict | None) -> list[str]:
    """What two recorded methods did differently, as ``-n 20 vs -n 5`` (empty when either is not
    recorded: nothing can be told). The counters compare as the backend each used; the copies and
    loop an asm or study result ran are not compared (it does not say whether they were chosen)."""
    if a is None or b is None:
        return []
    out = []
    for key, option in METHOD.items():
        if key == "counters" or key not in a or key not in b or (key in CHOSEN and a.get("as_run")):
            continue
        if a[key] != b[key]:
            out.append(f"{_given(option, a[key])} vs {_given(option, b[key])}")
    x, y = _counters(a), _counters(b)
    if x != y:
        out.append(f"counters {x} vs {y}")
    return out


def _counters(m: dict) -> str:
    """The backend a result was timed with, or what was asked for where that is not recorded."""
    return m.get("backend") or m.get("counters") or "unknown"


def _given(option: str, value) -> str:
    return spell(option, value) or f"no {option.replace('{}', 'statistic option')}"
