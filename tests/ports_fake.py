"""A fabricated CPU for the resource-model tests: forms as µops on port sets, and the exact
steady-state time of any mix (the most loaded union of ports), so inference can be checked.

Like a real core it has a divider (port D, busy for several cycles per divide or square root)
that its published ports column does not name, and 512-bit forms that pass their 256-bit pipes
twice while the column counts one µop (its measured throughput is then twice the computed one)."""
from __future__ import annotations

import functools
import itertools

from cyclebench.instructions.published import Published, Value

PORTS = ["A0", "A1", "A2", "A3", "F0", "F1", "F2", "F3", "L0", "L1", "D"]
UNNAMED = {"D"}                      # ports the published column does not name
UOPS = {
    "add": [("A0", "A1", "A2", "A3")],
    "imul": [("A1",)],
    "shl": [("A1", "A2")],
    "fadd (XMM)": [("F2", "F3")],
    "fmul (XMM)": [("F0", "F1")],
    "pand (XMM)": [("F0", "F1", "F2", "F3")],
    "shuf (XMM)": [("F1", "F2")],
    "load": [("L0", "L1")],
    "addload": [("A0", "A1", "A2", "A3"), ("L0", "L1")],
    "fmaload": [("F0", "F1"), ("L0", "L1")],
    "cvt (XMM)": [("F0", "F1"), ("F2", "F3")],
    "div": [("A1",)] * 3,
    "fdiv (XMM)": [("F0", "F1")] + [("D",)] * 4,
    "fsqrt (XMM)": [("F0", "F1")] + [("D",)] * 6,
    "vaddz (ZMM)": [("F2", "F3")] * 2,
}
# many forms of the widest classes, as a real catalogue has (dozens of integer ALU forms, a few
# vector logic forms sharing all four FP pipes): a method that takes blockers by turns and stops
# at a count leaves the vector logic class out, as a draw of Zen 4's forms once did
ALU = ("sub", "xor", "cmp", "test", "mov", "or", "and", "neg", "inc", "dec", "adc0", "sbb0")
UOPS.update({f: [("A0", "A1", "A2", "A3")] for f in ALU})
UOPS.update({f"{f} (XMM)": [("F0", "F1", "F2", "F3")] for f in ("por", "pxor", "andps")})
PUMPED = {"ZMM": 2}
WIDTH = 6


def cycles(counts: dict[str, int]) -> float:
    return _cycles(tuple(sorted(counts.items())))


@functools.lru_cache(maxsize=None)
def _cycles(counts: tuple[tuple[str, int], ...]) -> float:
    return mix_cycles(UOPS, dict(counts))


def mix_cycles(uops: dict[str, list[tuple[str, ...]]], counts: dict[str, int]) -> float:
    """The front end's time or the most loaded set of ports, whichever is longer, on a CPU whose
    forms are ``uops``. The most loaded set is a union of µops' port sets: any other set holds no
    more µops than the union of the sets of those it holds, over at least as many ports."""
    best = sum(counts.values()) / WIDTH
    sets = sorted({frozenset(u) for f in counts for u in uops[f]}, key=sorted)
    unions = {frozenset().union(*q) for k in range(1, len(sets) + 1) for q in itertools.combinations(sets, k)}
    for s in unions:
        load = sum(n * sum(1 for u in uops[f] if set(u) <= s) for f, n in counts.items())
        best = max(best, load / len(s))
    return best


def ports_text(form: str) -> str:
    """uops.info's notation for a form (ports named like AMD's pipes): the divider unnamed, a
    pumped µop counted once."""
    out: dict[str, int] = {}
    for u in UOPS[form]:
        if set(u) & UNNAMED:
            continue
        name = u[0][0] + "".join(p[1:] for p in u)
        out[name] = out.get(name, 0) + 1
    k = next((n for w, n in PUMPED.items() if w in form), 1)
    return "+".join(f"{n // k}*{p}" for p, n in out.items())


def published() -> dict[str, Published]:
    """The fabricated CPU's published table: ports, measured and computed throughput."""
    out = {}
    for f in UOPS:
        text = ports_text(f)
        terms = [(int(t.split("*")[0]), t.split("*")[1]) for t in text.split("+") if t]
        computed = max((n / (len(p) - 1) for n, p in terms), default=0.0)
        t = cycles({f: 1})
        out[f] = Published(f, "fake", throughput=Value(t, t), throughput_computed=Value(computed, computed),
                           ports_text=text)
    return out


def model_file(path, usage: dict, **report):
    """A results file that holds only a model: ``usage`` (form -> resource -> share) over the
    resources it names, front-end width 6, ``report`` added to its report; the probes' tests add
    their records to it."""
    from cyclebench.instructions.ports.model import Model
    from cyclebench.instructions.ports.run import store
    st = store(path)
    st.start({"forms": []}, resume=False)
    resources = sorted({r for u in usage.values() for r in u})
    st.append({"type": "model", "model": Model(resources, usage, 6).to_json(),
               "report": {"blockers": {}, "measurements_per_form": 1, "readings": 0, **report}})
    st.close()
    return path


def timed(by_code: dict[tuple, float]):
    """A stand-in measuring session for a CPU probe: each block (its lines as a tuple) reads the
    time given for it."""
    from types import SimpleNamespace
    return SimpleNamespace(measure=lambda code, init: SimpleNamespace(value=by_code[tuple(code)]))


def empty_results(path, forms=()):
    """A ``cyclebench ports`` results file of ``forms`` with no reading and no probe yet; returns ``path``."""
    from cyclebench.instructions.ports.run import store
    st = store(path)
    st.start({"forms": list(forms)}, resume=False)
    st.close()
    return path
