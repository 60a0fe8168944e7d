"""The measurements the study makes, as record bodies: the chase (latency, TLB, MLP), a bandwidth
kernel on one or two CPUs at once, and the chase on one CPU while the other streams.

Every record keeps a compact result (``compact``): the figure per copy in cycles and ns with its
uncertainty and spread, the backend, the repetitions, the stability verdict and the warnings, so
the tables carry each measurement's stability flag."""
from __future__ import annotations

import math
import threading
import time

from cyclebench.machine import topology
from cyclebench.measurement import clock_history
from cyclebench.measurement.api import measure

from . import chase, kernels, processes
from .chains import Chain



def cpu_pair() -> tuple[int, int] | None:
    """The two CPUs of the two-CPU experiments: distinct physical cores (never SMT siblings), or None
    when this process may use only one core."""
    return topology.core_pair()


def main_cpu() -> int:
    """The CPU single-CPU measurements run on: the first of the pair, else the first allowed CPU."""
    pair = cpu_pair()
    return pair[0] if pair else topology.allowed_cpus()[0]


def _ev(e) -> dict:
    return {"value": e.value, "uncertainty": e.uncertainty, "min": e.min, "median": e.median, "max": e.max,
            "upper_bound": getattr(e, "upper_bound", None)}


def compact(r) -> dict:
    """The record's result; ``variable``: a cost that varies by nature (measure(varies=True)),
    with ``range`` the 10th-90th percentile of its repetitions in cycles."""
    out = {**r.facts(), "cycles": _ev(r.events["cycles"]), "ns": _ev(r.events["ns"])}
    if r.stability.get("variable"):
        out.update(variable=True, range=r.stability.get("range"))
    return out


def best_ns(r) -> float | None:
    """STREAM's "best" for nanoBench differencing: the fastest B run minus the fastest A run (over
    every repetition and attempt), per copy, in TSC time. Taking the minimum of each separately
    keeps a preempted A run from making the difference spuriously small, which the minimum of
    the per-repetition differences would not."""
    a, b = [], []
    hz = None
    for att in r.raw.get("attempts", []):
        a += [x[0] for x in att.get("a", [])]
        b += [x[0] for x in att.get("b", [])]
        hz = att.get("tsc_hz") or hz
    if not a or not b or not hz:
        return None
    per = (min(b) - min(a)) / (r.parameters["unroll"] * max(r.parameters["loop"] or 1, 1))
    return per / hz * 1e9 if per > 0 else None


BEST_PROCESSES = (2, 4)      # at least, at most
BEST_AGREE = 0.03            # the two fastest processes' bests agree within this share
VARYING_PROCESSES = 6        # bests that never agree: processes for their median (processes.py)


def confirmed(run, score, ghz, median: bool = True) -> tuple[list, int | None]:
    """``run()`` repeated, at least BEST_PROCESSES[0] and at most BEST_PROCESSES[1] times, until a
    best (the smallest ``score``, ns a pass; None for none) is confirmed: another run's is within
    BEST_AGREE of it. Past that, while none is, until VARYING_PROCESSES runs were made or (with
    ``median``) their median over processes is settled (processes.between, with ``ghz(x)`` a
    run's calibrated clock). The runs as (score, what run returned) from the fastest, and the position of
    the fastest confirmed best (None: none). A faster best that no other run reproduces is not
    the cost: a run whose A was slowed throughout makes B - A too small (a two-CPU pair read 0.34
    ms a pass where seven other pairs read 2.5-4.9 ms)."""
    runs: list = []
    while True:
        x = run()
        runs.append((score(x) or math.inf, x))
        runs.sort(key=lambda t: t[0])
        k = next((i for i in range(len(runs) - 1)
                  if runs[i + 1][0] < math.inf and runs[i + 1][0] - runs[i][0] <= BEST_AGREE * runs[i][0]), None)
        if len(runs) >= BEST_PROCESSES[0] and k is not None:
            return runs, k
        if len(runs) >= BEST_PROCESSES[1]:
            b = _between(runs, ghz)
            if len(runs) >= VARYING_PROCESSES or (median and b is not None and b.settled):
                return runs, k


def _between(runs, ghz) -> processes.Between | None:
    return processes.between([processes.Process(s, ghz(x)) for s, x in runs if s < math.inf])


def _ghz(r) -> float | None:
    return r.backend.get("calibrated_ghz")


def _best(r, best: float | None, agree: bool) -> dict:
    out = {**compact(r), "best_ns": best, "median_stable": bool(r.stable), "stable": bool(agree)}
    if agree and not r.stable:      # the measurement's warning speaks of its median, not of the best
        out["warnings"] = [("the median is unsettled (bandwidth.csv); the best is confirmed by a second process: "
                            + w) if w.startswith("unstable measurement") else w for w in out["warnings"]]
    return out


def _unconfirmed(runs, ghz) -> tuple[str, processes.Between | None]:
    """The warning for bests that did not agree, and their median over processes when settled."""
    seen = [s for s, _ in runs if s < math.inf]
    b = _between(runs, ghz)
    return (f"best not reproduced: the fastest runs of {len(runs)} processes differ by more than {BEST_AGREE:.0%} ("
            + ", ".join(f"{v:.4g}" for v in seen) + " ns a pass)"), (b if b is not None and b.settled else None)


def best_of_processes(run) -> dict:
    """STREAM's best, confirmed by a second process: ``run()`` (one ``measure`` call, one runner
    process) is repeated until a best is confirmed (``confirmed``: another process's within
    BEST_AGREE of it), at most BEST_PROCESSES[1] times. A process can be slow throughout, for a cause no gauge of ours sees
    (bench/bandwidth_processes.py: an L1 triad read 198.0-199.7 cycles a pass in nine processes
    and 263.8 in a tenth, each stable on its own), so one process's tight spread does not make
    its best the cost; noise only adds time, so the faster agreeing pair is kept.
    The result is the fastest confirmed process's (else the fastest's), with ``stable`` saying whether its best was confirmed
    (``median_stable``: the measurement's own verdict on its median), ``process_best_ns`` every
    process's best, and a warning when none agreed. Bests that never agree vary between
    processes (page placement): then the median of the processes' bests is stated with its 95%
    interval (processes.py), ``between`` and stable when that is settled."""
    runs, k = confirmed(run, best_ns, _ghz)
    agree = k is not None
    best, r = runs[k or 0]
    out = {**_best(r, best if best < math.inf else None, agree),
           "process_best_ns": [b if b < math.inf else None for b, _ in runs]}
    if not agree:
        warning, b = _unconfirmed(runs, _ghz)
        out["warnings"] = [*out["warnings"], warning]
        if b is not None:
            out.update(best_ns=b.median, stable=True, between=b.to_dict(),
                       warnings=[*out["warnings"], processes.statement(b, "ns a pass")])
    return out


def chase_record(chain: Chain, page: str, cfg, params: dict, cpu: int | None = None) -> dict:
    """One chase: a ``measure`` that re-runs through noise for ``cfg.chase_budget`` seconds (chase.run);
    when none of its processes was stable, the figure varies between processes (processes.py):
    more processes, three a call, until their median is settled, ``cfg.settle_seconds`` more
    have passed or ``cfg.max_processes`` were measured."""
    cpu = main_cpu() if cpu is None else cpu
    t0 = time.monotonic()

    def once(budget: float = 0.0, probe: bool = False):
        return chase.run(chain, page, cpu=cpu, n_measurements=cfg.reps, budget=budget, min_loads=cfg.min_loads,
                         max_loads=cfg.max_loads, probe=probe)
    r, huge_kb = once(cfg.budget if cfg.chase_budget is None else cfg.chase_budget, probe=True)
    result = compact(r)
    if not r.stable:
        ref = clock_history.reference(clock_history.machine_key(cpu))
        procs = processes.settle(processes.of_result(r), lambda: processes.of_result(once()[0]), cfg.settle_seconds,
                                 cfg.max_processes, ref)
        result = varying(result, procs, ref)
    extra = {"huge_kb": huge_kb, "span": chain.span} if page == "2m" else {"span": chain.span}
    return {"params": {**params, **extra, "loads_per_copy": chain.segments}, "result": result,
            "seconds": time.monotonic() - t0}


def varying(result: dict, procs: list, ref: float | None) -> dict:
    """A compact result restated over processes (processes.py): the median of the quiet processes'
    own figures with the larger reach of its 95% interval, in cycles and ns; ``stable`` when that
    is settled."""
    figs = {}
    for unit, vals in (("cycles", procs), ("ns", [processes.Process(p.value / p.ghz, p.ghz) for p in procs
                                                   if p.ghz])):
        b = processes.between(vals, ref)
        if b is None:
            return result
        figs[unit] = b
    c = figs["cycles"]
    warnings = [w for w in result["warnings"] if not w.startswith(("unstable measurement", "a variable cost"))]
    warnings.append(processes.statement(c, "cycles"))
    if not c.settled:
        reach = f"known only to +-{c.half / c.median:.0%}" if c.ci else "without an interval"
        warnings.append(f"unstable measurement (the median over processes is {reach}, not within "
                        f"{processes.MAX_BETWEEN:.0%}, after {c.seen} processes): treat it with care")
    return {**result, "stable": c.settled, "variable": False, "range": [c.lo, c.hi], "between": c.to_dict(),
            "warnings": warnings,
            **{u: {"value": b.median, "uncertainty": b.half if b.ci else None, "min": b.lo, "median": b.median,
                   "max": b.hi, "upper_bound": None} for u, b in figs.items()}}


def kernel_args(k: kernels.Kernel, size: int, passes: int, reps: int, cpu: int,
                budget: float = 0.0) -> tuple[str, dict]:
    r14 = kernels.r14_size(size)
    return kernels.body(k, size), dict(
        init=kernels.init(size, r14), one_time_init=kernels.one_time_init(k, size, r14), unroll=1, loop=passes,
        r14_size=r14, max_memory=r14 + (1 << 30), n_measurements=reps, warm_up=1, aggregate="median", budget=budget,
        cpu=cpu, timeout=120.0)


def _timed(fn, out: dict, key: str, start: threading.Barrier | None = None):
    try:
        if start is not None:
            start.wait()
        t0 = time.monotonic()
        r = fn()
        out[key] = (r, t0, time.monotonic())
    except BaseException as e:          # reported by the caller
        out[key] = e


def kernel_record(k: kernels.Kernel, size: int, passes: int, reps: int, cpus: int, params: dict,
                  budget: float = 0.0) -> dict:
    """One measurement (cpus=1, best_of_processes), or two at once on two distinct physical cores
    (cpus=2, one run each, so that they overlap; the pair's best confirmed by a second pair as
    best_of_processes confirms one, up to VARYING_PROCESSES pairs; a pair's best is a poorer
    statistic, its runs overlap only in part, so no median over pairs is stated). ``budget``:
    re-runs of a one-CPU measurement through a burst."""
    if cpus == 1:
        code, kw = kernel_args(k, size, passes, reps, main_cpu(), budget)
        return {"params": params, "result": best_of_processes(lambda: measure(code, **kw))}
    runs, at = confirmed(lambda: _pair_once(k, size, passes, reps), _pair_ns, lambda x: _ghz(x[0]), median=False)
    agree = at is not None
    _, (r0, r1, overlap) = runs[at or 0]
    res, other = _best(r0, best_ns(r0), agree), _best(r1, best_ns(r1), agree)
    res["process_best_ns"] = [s if s < math.inf else None for s, _ in runs]
    if not agree:
        warning, _ = _unconfirmed(runs, lambda x: _ghz(x[0]))
        res["warnings"] = [*res["warnings"], warning.replace("processes", "pairs of processes")
                           .replace("ns a pass", "ns a pass of both together")]
    return {"params": params, "result": res, "other": other, "overlap": overlap}


def _pair_ns(pair) -> float | None:
    """ns a pass of the two runs together (1 / the sum of their passes per ns)."""
    b0, b1 = best_ns(pair[0]), best_ns(pair[1])
    return 1 / (1 / b0 + 1 / b1) if b0 and b1 else None


def _pair_once(k: kernels.Kernel, size: int, passes: int, reps: int):
    """Two measurements at once on two distinct physical cores: (main's, other's, overlap)."""
    out: dict = {}
    CPU_MAIN, CPU_OTHER = _pair()
    barrier = threading.Barrier(2)
    threads = []
    for cpu in (CPU_MAIN, CPU_OTHER):
        code, kw = kernel_args(k, size, passes, reps, cpu)
        threads.append(threading.Thread(target=_timed, args=(lambda c=code, w=kw: measure(c, **w), out, cpu, barrier)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cpu in (CPU_MAIN, CPU_OTHER):
        if isinstance(out[cpu], BaseException):
            raise out[cpu]
    (r0, a0, b0), (r1, a1, b1) = out[CPU_MAIN], out[CPU_OTHER]
    return r0, r1, max(0.0, min(b0, b1) - max(a0, a1)) / max(b0 - a0, b1 - a1, 1e-9)


def loaded_record(chain: Chain, page: str, stream: kernels.Kernel, size: int, passes: int, cfg,
                  params: dict) -> dict:
    """The chase on one core while another core runs the stream kernel back to back until the chase
    ends."""
    CPU_MAIN, CPU_OTHER = _pair()
    stop = threading.Event()
    streams: list = []
    busy = [0.0]

    def streamer():
        code, kw = kernel_args(stream, size, passes, 3, CPU_OTHER)
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                streams.append(measure(code, **kw))
            except Exception as e:      # noqa: BLE001 - recorded, the chase figure is then unloaded
                streams.append(e)
                return
            busy[0] += time.monotonic() - t0

    th = threading.Thread(target=streamer, daemon=True)
    th.start()
    time.sleep(0.5)                     # the first stream is under way
    t0 = time.monotonic()
    try:
        rec = chase_record(chain, page, cfg, params, cpu=CPU_MAIN)
    finally:
        stop.set()
        th.join()
    span = time.monotonic() - t0
    good = [s for s in streams if not isinstance(s, Exception)]
    rec["stream"] = {"kernel": stream.name, "array_bytes": size, "runs": len(good),
                     "errors": [str(s) for s in streams if isinstance(s, Exception)],
                     "bytes_per_cycle": [stream.stream_bytes(size) / s.value("cycles") for s in good],
                     "busy_fraction": min(1.0, busy[0] / max(span + 0.5, 1e-9))}
    return rec


def _pair() -> tuple[int, int]:
    pair = cpu_pair()
    if pair is None:        # the plan leaves these experiments out then (experiments.py)
        raise RuntimeError("two-CPU experiment planned without two distinct physical cores")
    return pair
