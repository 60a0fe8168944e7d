"""Old run vs new run, figure by figure, with a verdict on noise (Google Benchmark's compare.py and
pyperf's compare_to conventions).

For every figure both runs hold (same key, figures.py): old and new value, the signed relative
delta (new - old) / |old|, and a two-sided Mann-Whitney U test on the raw per-repetition samples.
A change is called when p < alpha AND |delta| is larger than the runs' own noise (the larger
relative spread, interquartile range over median, of the two sample sets): a significant but tiny
shift inside the noise is "no significant change". Lower is better (cycles), so "slower" is a
regression. With too few repetitions even a complete separation cannot reach alpha (the smallest
two-sided p of the exact test is 2 / C(n1 + n2, n1)): the verdict is then "too few repetitions".
Each run's measuring options are a line under the table (methods.py); runs measured with different
options are compared all the same (setting two methods side by side is one use of compare), with a
warning naming what differs.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field


from ..errors import UsageError
from ..machine.metadata import cpu_of
from ..measurement.stats import mann_whitney_p, min_p_value, relative_spread
from ..reports.model import Column, Report, Table
from .figures import Measured, measured
from .loaders import Loaded
from .methods import describe, differences, method_of

SLOWER, FASTER, SAME, FEW, NO_SAMPLES = ("slower", "faster", "no significant change",
                                        "too few repetitions to tell", "no raw samples")


@dataclass
class Change:
    key: str
    label: str
    old: float | None
    new: float | None
    delta: float | None               # signed relative change
    p_value: float | None
    noise: float | None               # the larger relative spread of the two runs
    n_old: int
    n_new: int
    verdict: str
    flags: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    kind: str
    old: str
    new: str
    alpha: float
    changes: list[Change]
    only_old: list[str]
    only_new: list[str]
    warnings: list[str]
    methods: tuple[str, str] = ("", "")      # each run's measuring options, one line each

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.verdict == SLOWER]

    def summary(self) -> str:
        count = {v: sum(c.verdict == v for c in self.changes) for v in (SLOWER, FASTER, SAME, FEW, NO_SAMPLES)}
        if not self.changes:
            return "no figure is in both runs"
        if count[SLOWER] == count[FASTER] == 0 and count[SAME] == len(self.changes):
            return f"no significant change in {len(self.changes)} figures (alpha {self.alpha})"
        return (f"{len(self.changes)} figures: {count[SLOWER]} slower, {count[FASTER]} faster, "
                f"{count[SAME]} no significant change, {count[FEW]} too few repetitions to tell, "
                f"{count[NO_SAMPLES]} without raw samples (alpha {self.alpha})")


def _noise(samples: list[float]) -> float | None:
    """A run's noise: its relative spread, when it has one that can serve as a threshold."""
    if len(samples) < 2:
        return None
    rel = relative_spread(samples)
    return rel if math.isfinite(rel) else None


def verdict(old: list[float], new: list[float], delta: float | None, alpha: float) -> tuple[str, float | None, float | None]:
    """(verdict, p, noise) for two sets of raw samples and the figures' relative delta."""
    if not old or not new:
        return NO_SAMPLES, None, None
    noise = max((x for x in (_noise(old), _noise(new)) if x is not None), default=None)
    if min_p_value(len(old), len(new)) >= alpha:
        return FEW, None, noise
    p = mann_whitney_p(old, new)
    if delta is None or p >= alpha or abs(delta) <= (noise or 0.0):
        return SAME, p, noise
    return (SLOWER if delta > 0 else FASTER), p, noise


def compare(old: Loaded, new: Loaded, alpha: float = 0.05) -> Comparison:
    """The two runs figure by figure; UsageError when they are not the same kind of result."""
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha {alpha} is not between 0 and 1", "e.g. --alpha 0.05")
    if old.name != new.name:
        raise UsageError(f"cannot compare {old.label} ({old.path}) with {new.label} ({new.path})",
                         "compare two asm runs, two inst runs, or two runs of the same study")
    a = {m.key: m for m in measured(old)}
    b = {m.key: m for m in measured(new)}
    changes = [_change(a[k], b[k], alpha) for k in a if k in b]
    warnings = []
    few = sum(c.verdict == FEW for c in changes)
    if few:
        n = min(min(c.n_old, c.n_new) for c in changes if c.verdict == FEW)
        warnings.append(f"{few} figure(s) have too few repetitions to tell at alpha {alpha} (as few as {n}): "
                        "re-run both with more repetitions (-n)")
    bare = sum(c.verdict == NO_SAMPLES for c in changes)
    if bare:
        warnings.append(f"{bare} figure(s) have no raw samples in the results (only summaries were kept): "
                        "old and new are shown without a test")
    if old.machine and new.machine and cpu_of(old.machine) != cpu_of(new.machine):
        warnings.append("the runs were made on different CPUs: a change may be the machine's")
    ma, mb = method_of(old), method_of(new)
    diff = differences(ma, mb)
    if diff:
        warnings.append(f"the runs were measured with different options ({'; '.join(diff)}): a change may be "
                        "the method's")
    return Comparison(old.name, str(old.path), str(new.path), alpha, changes,
                      [k for k in a if k not in b], [k for k in b if k not in a], warnings, (describe(ma), describe(mb)))


def _change(a: Measured, b: Measured, alpha: float) -> Change:
    delta = (b.value - a.value) / abs(a.value) if a.value and b.value is not None else None
    v, p, noise = verdict(a.samples, b.samples, delta, alpha)
    flags = sorted(set(a.flags) | set(b.flags))
    return Change(a.key, a.label, a.value, b.value, delta, p, noise, len(a.samples), len(b.samples), v, flags)


# ------------------------------------------------------------------------------------- reporting

def as_report(c: Comparison) -> Report:
    """The comparison as a Report: one table (text, Markdown) and its JSON document."""
    cols = [Column("figure", code=True), Column("old", align="right", digits=3),
            Column("new", align="right", digits=3), Column("delta", "Δ", "right"),
            Column("p", "p (U test)", "right"), Column("noise", "noise", "right"),
            Column("n", "reps old/new", "right"), Column("verdict"), Column("flags")]
    rows = [{"figure": ch.label, "old": ch.old, "new": ch.new,
             "delta": f"{ch.delta:+.2%}" if ch.delta is not None else None,
             "p": f"{ch.p_value:.3g}" if ch.p_value is not None else None,
             "noise": f"{ch.noise:.2%}" if ch.noise is not None else None,
             "n": f"{ch.n_old}/{ch.n_new}", "verdict": ch.verdict.upper() if ch.verdict in (SLOWER, FASTER) else ch.verdict,
             "flags": ", ".join(ch.flags), "_data": asdict(ch)} for ch in c.changes]
    notes = [c.summary(), f"Δ = (new - old) / |old|; a change needs p < {c.alpha} (two-sided Mann-Whitney U "
             "on the raw samples) and |Δ| above the noise (the larger IQR/median of the two runs)",
             f"old: {c.methods[0]}", f"new: {c.methods[1]}"]
    notes += [f"warning: {w}" for w in c.warnings]
    if c.only_old or c.only_new:
        notes.append(f"{len(c.only_old)} figure(s) only in the old run, {len(c.only_new)} only in the new one")
    table = Table(f"{c.kind}: {c.old} → {c.new}", cols, rows, notes)
    return Report(tables=[table], schema="cyclebench.compare", meta={"old": c.old, "new": c.new, "kind": c.kind},
                  findings={"summary": c.summary(), "alpha": c.alpha, "regressions": len(c.regressions),
                            "warnings": c.warnings, "only_old": c.only_old, "only_new": c.only_new,
                            "methods": {"old": c.methods[0], "new": c.methods[1]}})
