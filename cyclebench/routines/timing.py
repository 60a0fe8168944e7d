"""Cycles per call of a routine over an input stream, through ``cyclebench.measure``.

Each call's argument registers are loaded from a record of the stream (its call shape, ``shape``);
the pass code, the empty pass it is paired with in one runner process and the L1d eviction are
described in ``passes``. Figures per call: ``gross`` (the routine's pass / N), ``empty`` (the empty
pass / N) and ``net`` (gross - empty).

Statistics follow the reference: the mean of the fastest 10% of repetitions (it drops interrupts and
context switches), plus the median, the minimum and the spread (interquartile range), per call.
``gross`` and ``empty`` are summaries of their own repetitions; ``net.fastest10`` and
``net.minimum`` are gross minus empty of that statistic; ``net.median``, ``net.mean`` and
``net.spread`` come from the paired per-repetition differences (robust: the pairing cancels slow
drifts and per-process effects). The raw per-repetition pass cycles are kept (``samples``). The A
and B readings include the counter reads (about 40 cycles per pass, under 0.05 cycles per call
for 1000 calls); they cancel in ``net``. Core cycles are ``measure()``'s own per-repetition
figures (``raw`` ``cycles_a``/``cycles_b``): with the TSC backend, ticks times that repetition's
calibrated cycles per tick, and a repetition whose calibration is more than ``CALIB_OUTLIER`` (3%)
off the run's median is dropped, its A and B readings together. There is one definition of a
cycle: this module has no calibration of its own.

Correctness first. Every routine is checked before it is timed by its ``checker``
(``routines.checking``; a study brings its own: memset's ``studies.memset.correctness.MemsetDomain``,
dispatch's ``DispatchChecker``), memoized per shared object, symbol and checker. A wrong
routine raises ``RoutineIncorrect`` (exit 11) and is not timed. The stream must lie inside what the
checker covered (for memset: sizes, destination alignments, fill values), else UsageError.

With a hardware PMU, ``events=("branch-misses",)`` (or any perf event) is counted per call the same
way (gross, empty, net). Without one, as on our KVM guests, hardware events are unavailable
(CounterUnavailable, exit 7).
"""
from __future__ import annotations

import os
import threading
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from cyclebench.errors import CycleBenchError, UsageError
from cyclebench.measurement import measured
from cyclebench.measurement.api import measure
from cyclebench.measurement.stats import spread_over, summarize
from cyclebench.routines.build import Routine, empty_routine
from cyclebench.routines.checking import Checker, as_checker, ensure_correct
from cyclebench.routines.options import TimingOptions
from cyclebench.routines.passes import is_fixed, layout_for, pass_code
from cyclebench.routines.streams import Stream


@dataclass
class Timing:
    """Per-call cost of one routine on one stream; figures in core cycles per call."""

    routine: str
    spec: str
    stream: str
    stream_params: dict
    stream_digest: str
    calls: int
    mode: str                     # "fixed" or "replay"
    options: dict
    gross: dict                   # Summary of the routine's pass / N per repetition
    empty: dict                   # Summary of the empty pass / N per repetition
    net: dict                     # see the module docstring
    samples: dict                 # per repetition, cycles per pass: {"pass": [...], "empty": [...]}
    events: dict = field(default_factory=dict)   # extra events: {name: {"gross", "empty", "net"}}
    backend: dict = field(default_factory=dict)
    stable: bool = True
    warnings: list = field(default_factory=list)

    @property
    def cycles(self) -> float:
        """The headline figure: net cycles per call, mean of the fastest 10% (reference statistic)."""
        return self.net["fastest10"]

    def facts(self) -> dict:
        """The Measurement protocol's facts (cyclebench/measurement/measured.py)."""
        opts = {k: v for k, v in self.options.items() if k != "n_measurements"}
        return measured.facts(self.backend, self.options.get("n_measurements"), self.stable, self.warnings,
                              self.events, **opts)

    def to_dict(self) -> dict:
        return asdict(self)


_empty_lock = threading.Lock()


def _empty() -> Routine:
    with _empty_lock:
        return empty_routine()


def _measure_pair(routine: Routine, stream: Stream, opts: TimingOptions, fixed: bool):
    empty = _empty()
    lay = layout_for(stream, opts)
    if routine.symbol == empty.symbol and os.path.realpath(routine.library) != os.path.realpath(empty.library):
        raise UsageError(f"routine symbol {routine.symbol} clashes with the empty routine's",
                         hint="rename the routine")
    symbols = [routine.symbol] if routine.symbol == empty.symbol else [routine.symbol, empty.symbol]
    libraries = list(dict.fromkeys([routine.library, empty.library]))
    init, code = pass_code(routine.symbol, empty.symbol, len(stream), opts, lay, fixed=fixed,
                           shape=stream.shape)
    data = (bytes(lay.data_offset) + stream.records[:1].tobytes()) if fixed else stream.to_bytes()
    return measure(code, init=init, libraries=libraries, symbols=symbols, data=data,
                   r14_size=lay.r14_size, unroll=1, loop=0, n_measurements=opts.n_measurements,
                   warm_up=opts.warm_up, counters=opts.counters, events=",".join(opts.events) or None,
                   budget=opts.budget, timeout=opts.timeout, cpu=opts.cpu, paired=True), lay


def readings(result) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Per-repetition core cycles of the A and B readings of a measure() result, and of its extra
    events, for the repetitions measure() kept (its ``raw`` contract, see ``measure``)."""
    raw = result.raw["attempts"][result.raw.get("chosen", -1)]
    kept = raw["kept"]
    first = 1 if "ca" in raw else 2          # TSC rows: [tsc, events...]; PMU rows: [tsc, cycles, events...]
    a, b = [raw["a"][i] for i in kept], [raw["b"][i] for i in kept]
    names = list(result.parameters.get("events", []))
    events = {nm: (np.array([r[first + i] for r in a], dtype=float),
                   np.array([r[first + i] for r in b], dtype=float)) for i, nm in enumerate(names)}
    return np.asarray(raw["cycles_a"], dtype=float), np.asarray(raw["cycles_b"], dtype=float), events


def _net(gross_pc: np.ndarray, empty_pc: np.ndarray, gross: dict, empty: dict) -> dict:
    diff = summarize(gross_pc - empty_pc).as_dict()
    out = {"fastest10": gross["fastest10"] - empty["fastest10"],
           "minimum": gross["minimum"] - empty["minimum"],
           "median": diff["median"], "mean": diff["mean"], "q1": diff["q1"], "q3": diff["q3"],
           "spread": diff["spread"]}
    out["relative_spread"] = spread_over(out["spread"], gross["median"])   # net spread over gross median
    return out


def _surely_negative(diff: np.ndarray, margin: float) -> bool:
    """Are the repetitions below -margin far more often than chance (one-sided sign test)?"""
    from scipy.stats import binomtest      # scipy is slow to import; only a suspect result needs it
    below = int(np.sum(diff < -margin))
    return below > 0.75 * len(diff) and binomtest(below, len(diff), 0.5, alternative="greater").pvalue < 1e-3


def time_routine(routine: Routine, stream: Stream, options: TimingOptions | None = None, *,
                 checker: "Checker | Callable[[Routine], object] | None" = None) -> Timing:
    """Net core cycles per call of ``routine`` over ``stream`` (see the module docstring).

    ``checker`` (``routines.checking``): checks the routine first and refuses a stream outside what
    it checked; a plain function that raises for a wrong routine is accepted too.
    """
    opts = options or TimingOptions()
    if checker is None:
        raise UsageError(f"no correctness checker for the {stream.shape.name} routine {routine.name}",
                         hint="pass checker=: a routines.checking.Checker (memset's: "
                              "studies.memset.correctness.MemsetDomain()), or a function that raises "
                              "for a wrong routine")
    checker = as_checker(checker)
    checker.admits(stream, routine)
    ensure_correct(routine, checker)
    fixed = is_fixed(stream) and not opts.replay
    runs = [_measure_pair(routine, stream, opts, fixed) for _ in range(opts.processes)]
    result, lay = runs[0]
    parts = [readings(r) for r, _ in runs]
    ca = np.concatenate([p[0] for p in parts])
    cb = np.concatenate([p[1] for p in parts])
    events = {nm: (np.concatenate([p[2][nm][0] for p in parts]), np.concatenate([p[2][nm][1] for p in parts]))
              for nm in parts[0][2]}
    n = len(stream)
    g_pc, e_pc = cb / n, ca / n
    gross, empty = summarize(g_pc).as_dict(), summarize(e_pc).as_dict()
    net = _net(g_pc, e_pc, gross, empty)
    # A broken pairing makes (nearly) every repetition negative; one burst in an A pass makes one
    # repetition negative, and with few repetitions that one can move the median on its own. So
    # it is a bug only when a sign test says so: two of two negative repetitions happen by chance.
    margin = 0.25 * max(empty["median"], 1.0)
    if net["median"] < -margin and _surely_negative(g_pc - e_pc, margin):
        raise CycleBenchError(
            f"{routine.name} came out {-net['median']:.1f} cycles per call *faster* than the empty "
            "routine: the A/B pairing of the empty and the real pass is broken (did the runner's "
            "order of runs change?)", hint="this is a bug in cyclebench: please report it")
    ev = {}
    for name, (ea, eb) in events.items():
        g, e = summarize(eb / n).as_dict(), summarize(ea / n).as_dict()
        ev[name] = {"gross": g, "empty": e, "net": _net(eb / n, ea / n, g, e)}
    opt_key = opts.key()
    if lay.evict_lines:
        opt_key["evict_loads_per_eviction"] = lay.evict_loads
    return Timing(routine=routine.name, spec=routine.spec, stream=stream.name,
                  stream_params=_jsonable(stream.params), stream_digest=stream.digest(), calls=n,
                  mode="fixed" if fixed else "replay", options=opt_key, gross=gross, empty=empty,
                  net=net, samples={"pass": cb.tolist(), "empty": ca.tolist()}, events=ev,
                  backend=dict(result.backend), stable=all(r.stable for r, _ in runs),
                  warnings=list(dict.fromkeys(w for r, _ in runs for w in r.warnings)))


def _jsonable(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.floating):
            v = float(v)
        out[k] = v
    return out
