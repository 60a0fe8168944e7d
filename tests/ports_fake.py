"""A fabricated CPU for the resource-model tests: forms as µops on port sets, and the exact
steady-state time of any mix (the most loaded union of ports), so inference can be checked."""
from __future__ import annotations

import itertools

PORTS = ["A0", "A1", "A2", "A3", "F0", "F1", "F2", "F3", "L0", "L1"]
UOPS = {
    "add": [("A0", "A1", "A2", "A3")],
    "imul": [("A1",)],
    "shl": [("A1", "A2")],
    "fadd": [("F2", "F3")],
    "fmul": [("F0", "F1")],
    "pand": [("F0", "F1", "F2", "F3")],
    "shuf": [("F1", "F2")],
    "load": [("L0", "L1")],
    "addload": [("A0", "A1", "A2", "A3"), ("L0", "L1")],
    "fmaload": [("F0", "F1"), ("L0", "L1")],
    "cvt": [("F0", "F1"), ("F2", "F3")],
    "div": [("A1",)] * 3,
}
WIDTH = 6


def cycles(counts: dict[str, int]) -> float:
    best = sum(counts.values()) / WIDTH
    used = sorted({p for f in counts for u in UOPS[f] for p in u})
    for k in range(1, len(used) + 1):
        for q in itertools.combinations(used, k):
            s = set(q)
            load = sum(n * sum(1 for u in UOPS[f] if set(u) <= s) for f, n in counts.items())
            best = max(best, load / k)
    return best


def ports_text(form: str) -> str:
    """uops.info's notation for a form (ports named like AMD's pipes)."""
    out: dict[str, int] = {}
    for u in UOPS[form]:
        name = u[0][0] + "".join(p[1:] for p in u)
        out[name] = out.get(name, 0) + 1
    return "+".join(f"{n}*{p}" for p, n in out.items())
