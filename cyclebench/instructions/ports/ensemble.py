"""Predictions from one or several models of one CPU: each model's figure, and their mean.

A model inferred from throughput is one draw of its measurements: which forms became blockers,
how ties between resources were broken, which side of a tolerance a fit's fourth decimal fell.
Two models of the same forms, measured one after the other by the same command, explain their
own readings alike and still miss different blocks (``bench/data/zen4/ports.jsonl`` and
``ports-again.jsonl``: each puts about 89% of the random mixes within 10% of their measured
time, not the same 89%).  The mean of several models' figures averages such choices out, as
bagging does for any unstable fit (Breiman, "Bagging predictors", 1996), and the spread between
them says how far the choices move a block's figure.  Measured on Zen 4: docs/ports.md,
"Accuracy".

:class:`Models` is what ``cyclebench predict``, ``cyclebench block --predictor predict`` and the
accuracy bench predict with: each file loaded once (predict.load, or its disk copy), each block
predicted by every model with that file's own probe records, and one :class:`~.predict.Prediction`
whose figure is the mean, its bounds those of the member nearest that mean, and ``members`` every
model's figure.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ...errors import UsageError
from ...machine.metadata import cpu_of, names_this_cpu
from .model import USED, Model
from .load_cache import cached
from .predict import Loaded, Prediction, load, predict
from .run import read

OWN = "own"        # each file's own upper-state factor (upper.stored)


@dataclass
class Models:
    """Loaded results files of ``cyclebench ports``, their names (the paths given), and the machine
    record of the CPU they were measured on (the first that keeps one; None where none does)."""
    loaded: list[Loaded]
    names: list[str]
    machine: dict | None = None

    @classmethod
    def load(cls, paths) -> "Models":
        """The files loaded (each from its disk copy where a run before kept one: load_cache.py);
        files measured on different CPUs (their machine records: vendor, family, model) are
        refused, since a mean of them describes none."""
        paths = [Path(p) for p in paths]
        loaded = [cached(p, load) for p in paths]
        machines = {p: m for p in paths if cpu_of(m := machine(p)) is not None}
        cpus = {p: cpu_of(m, stepping=False) for p, m in machines.items()}
        if len(set(cpus.values())) > 1:
            raise UsageError("the models were measured on different CPUs: "
                             + "; ".join(f"{p}: {' '.join(map(str, c))}" for p, c in cpus.items()),
                             "give several models of one CPU (the same cyclebench ports command run again)")
        return cls(loaded, [str(p) for p in paths], next(iter(machines.values()), None))

    @property
    def first(self) -> Loaded:
        return self.loaded[0]

    def of_this_cpu(self) -> bool | None:
        """Whether the models were measured on this machine's CPU (vendor, family, model); None
        where their files keep no machine record."""
        return names_this_cpu(self.machine)

    def predict(self, block, catalogue=None, latencies=None, latency_source: str = "published",
                upper_factor: float | None | str = OWN) -> Prediction:
        """The block predicted by each model, combined by :func:`combined` (``upper_factor``: the
        figure every model charges, None for nothing, or :data:`OWN`: each file's own)."""
        return combined([one(block, m, catalogue, latencies, latency_source, upper_factor) for m in self.loaded])


def one(block, loaded: Loaded, catalogue=None, latencies=None, latency_source: str = "published",
        upper_factor: float | None | str = OWN, inferred: Model | None = None) -> Prediction:
    """The block predicted by one loaded model, with the probe records its file keeps; with
    ``inferred`` (the file's model as the solve left it, run.load), by that model and without the
    floors its readings give (the accuracy bench's ``--as-inferred``)."""
    p = predict(block, inferred or loaded.model, catalogue, latencies=latencies, latency_source=latency_source,
                floors=None if inferred else loaded.bounds,
                upper_factor=loaded.upper_factor if upper_factor == OWN else upper_factor,
                in_flight=loaded.in_flight, deal=loaded.deals, grain=loaded.grain, in_order=loaded.in_order,
                trips=loaded.trips, nops=loaded.nops, passed=loaded.passed)
    return replace(p, notes=p.notes + slow_note(p.forms, loaded))


def slow_note(forms: list[str], loaded: Loaded) -> list[str]:
    """The note a block gets whose forms hold a unit the inference found held for cycles, not
    pipelined (Loaded.slow: a divider, by what the readings showed, not by name): such a unit's time
    may depend on the operand values, as a divider's does on denormals and on the operands' size."""
    usage, probes = loaded.model.usage, loaded.model.probes
    units = [r for r in loaded.slow if any(usage.get(f, {}).get(r, 0.0) >= USED for f in forms)]
    if not units:
        return []
    held = sorted({f for f in forms for r in units if usage.get(f, {}).get(r, 0.0) >= USED})
    units = ", ".join(r + (f" (probed by {probes[r]})" if r in probes else "") for r in units)
    return [f"data-dependent: {', '.join(held)} hold{'s' if len(held) == 1 else ''} {units}, a unit its readings "
            "show held for cycles, not pipelined, as a divider is: its time may depend on the operand values "
            "(denormals, the operands' size), and the figure is for the values the model was measured with"]


def combined(members: list[Prediction]) -> Prediction:
    """One prediction of several: the mean figure, the bounds and notes of the member nearest it,
    ``members`` each one's figure, and every form some model lacks (then the figure is a lower
    bound, as with one model)."""
    mean = sum(p.cycles for p in members) / len(members)
    near = min(members, key=lambda p: abs(p.cycles - mean))
    unknown = sorted({f for p in members for f in p.unknown}) if len(members) > 1 else near.unknown
    return replace(near, cycles=mean, unknown=unknown, members=[p.cycles for p in members])


def lacking(p: Prediction) -> str:
    """The forms a figure leaves out (their resources count nothing: a lower bound on them), and
    how a model comes to hold them; '' where it leaves none out (the CLI and the block predictor
    say it alike)."""
    missing = sorted(set(p.unknown))
    if not missing:
        return ""
    return (f"{', '.join(missing)} (a model inferred with {'them holds them' if len(missing) > 1 else 'it holds it'}: "
            "cyclebench ports FORM ... --results FILE; forms whose copies cannot be mixed get none, docs/ports.md)")


def spread(p: Prediction) -> float:
    """How far apart the members' figures are, relative to their mean (0 for one model)."""
    return (max(p.members) - min(p.members)) / p.cycles if p.members and p.cycles else 0.0


def machine(path: Path) -> dict | None:
    """The machine record of the CPU a results file was measured on, or None where its header keeps
    none (machine/metadata.py reads it)."""
    m = (read(path)[0] or {}).get("machine")
    return m if isinstance(m, dict) else None


def measured_on(path: Path):
    """The identity (machine/uarch.py) of the CPU a results file was measured on; None where its
    header names none (then this CPU's column is read)."""
    from ...machine.uarch import from_metadata
    m = machine(path)
    return from_metadata(m) if m else None
