"""One run's raw readings as per-copy figures: core cycles through the run's clock strategy
(clocks.py), perf events per group with their multiplexing, TSC ticks and nanoseconds, the
uncertainty and below-resolution bound of each, the linearity check and the stability verdict."""
from __future__ import annotations

from ..counters.backends import HW_CYCLES, Backend
from ..errors import CounterUnavailable
from . import linearity, stability, stats
from .clocks import Clock
from .multiplexing import multiplexing, multiplexing_warning
from .result import EventResult
from .runargs import AUTO_LOOP_TICKS

POOR_TICKS = 5000            # B - A below this many TSC ticks: poor resolution
UNPAIRED_NOTE = 0.2          # repetitions left out for A and B at different speeds: named from this share (interrupts leave out 0-12%)


def evaluate(out, backend: Backend, clock: Clock, unroll, no_normalization, aggregate, ref_ghz=None,
             no_slope=False, ref_contention=None, varies=False) -> dict:
    """One run's readings as per-copy figures: events with uncertainty, stability, flags.

    ``varies``: the code's cost varies by nature from repetition to repetition (measure(varies=True)):
    its A and B cost differently per copy in one repetition as a matter of course (pointer chases
    of the memory study: 2A - B beyond 10% of B - A in 40% of repetitions), so no repetition is
    left out as unpaired (_pair); leaving them out narrowed the range the figure reports."""
    loop = int(out.info["loop"][0])
    tsc_hz = float(out.info["tsc_hz"][0])
    a, b = out.samples["a"], out.samples["b"]
    norm = 1 if no_normalization else unroll * max(loop, 1)
    ticks = [bb[0] - aa[0] for aa, bb in zip(a, b)]
    raw = {"loop": loop, "tsc_hz": tsc_hz, "a": a, "b": b}
    if len(out.info.get("loop_target", ())) == 2:        # the auto loop's target, by the TSC's step
        raw["loop_target"] = {"ticks": int(out.info["loop_target"][0]), "tsc_step": int(out.info["loop_target"][1])}
    conv = clock.convert(out, ticks, norm, tsc_hz)
    raw.update(conv.raw)
    unpaired = None if no_slope or varies else _pair(conv, loop, raw)
    # a run with no pair left has no repetition to pool with other runs' (pool)
    poolable = not unpaired or bool(raw.get("unpaired"))
    reps = None
    if conv.ghz_per_rep:
        # drop the repetitions a burst touched (stability.clean), as the calibration drops
        # its interrupted ones: the run is re-measured only when too few are left
        ghz_kept = [conv.ghz_per_rep[i] for i in conv.kept]
        reps = {"cycles": conv.cycles, "ticks": [ticks[i] / norm for i in conv.kept], "ghz": ghz_kept,
                "contention": conv.contention if len(conv.contention) == len(conv.kept) else None}
        pos = stability.clean(ghz_kept, conv.contention, ref_ghz, ref_contention)
        raw["burst_outliers"] = [conv.kept[j] for j in range(len(conv.kept)) if j not in set(pos)]
        # a slower head of repetitions that were still warming up (stability.warming_up)
        head = stability.warming_up([conv.cycles[j] for j in pos])
        if head:
            raw["warming_up"] = [conv.kept[j] for j in range(pos[head])]
            reps = {k: (v[pos[head]:] if isinstance(v, list) else v) for k, v in reps.items()}
            pos = pos[head:]
        conv.cycles, conv.gross_a, conv.gross_b, conv.kept, conv.contention = (
            [conv.cycles[j] for j in pos], [conv.gross_a[j] for j in pos], [conv.gross_b[j] for j in pos],
            [conv.kept[j] for j in pos], [conv.contention[j] for j in pos if j < len(conv.contention)])
        conv.ghz_per_rep = [conv.ghz_per_rep[i] for i in conv.kept]
        conv.ghz = stats.median(conv.ghz_per_rep)
    cycles, keep, step, quantum, ghz = conv.cycles, conv.kept, conv.step, conv.quantum, conv.ghz
    label = conv.label or "cycles (PMU" + (", rdpmc)" if backend.use_rdpmc else ", read())")
    # the per-repetition core cycles of A and B (one definition of a cycle for every caller)
    raw.update(cycles_a=conv.gross_a, cycles_b=conv.gross_b, kept=keep)

    timing = _time_figures(cycles, [ticks[i] / norm for i in keep], aggregate, label, quantum, step / norm, tsc_hz)
    events = {"cycles": timing["cycles"]}
    groups, warnings = [], []
    for g, group in enumerate(backend.groups):
        samples = out.groups[g] if g < len(out.groups) else {}
        ga, gb = samples.get("a", []), samples.get("b", [])
        if len(ga) != len(a) or len(gb) != len(b):
            raise CounterUnavailable(f"the runner returned no readings for event group {g}",
                                     "this is a bug in cyclebench; re-run with --verbose")
        mux = multiplexing(out.times[g] if g < len(out.times) else {})
        names = [e.name for e in group]
        groups.append({"events": names, **mux})
        if mux["multiplexed"]:
            warnings.append(multiplexing_warning(g, names, mux))
        if g:
            raw.setdefault("groups", []).append({"events": names, "a": ga, "b": gb,
                                                 "times": out.times[g] if g < len(out.times) else {}})
        for i, e in enumerate(group):
            if g == 0 and i == 0 and backend.name == "perf" and e.name == HW_CYCLES.name:
                events["cycles"].multiplexed = mux["multiplexed"]
                events["cycles"].running_fraction = mux["min_running_fraction"]
                continue
            vals = [(bb[1 + i] - aa[1 + i]) / norm for aa, bb in zip(ga, gb)]
            events[e.name] = _event(e.name, "count", vals, aggregate, e.name, 1 / norm, multiplexed=mux["multiplexed"],
                                running_fraction=mux["min_running_fraction"], group=g)
    if backend.groups:
        raw["times"] = out.times[0] if out.times else {}
    fp = fp_flags_warning(out.info)
    if fp:
        warnings.append(fp)
    moves = int(out.info.get("rdpmc_moves", ["0"])[0])
    if moves:
        warnings.append(f"the kernel moved an event to another counter during {moves} runs (rdpmc index changed); "
                        "those readings mix two counters")
    # no_slope: basic mode runs 0 and U copies (no second point to check the slope against), or
    # A and B run different work (paired routine passes)
    lin = None if no_slope else linearity.check(conv.gross_a, conv.gross_b, unroll, loop)
    if lin is not None and not lin.linear:
        warnings.append(linearity.warning(lin, unroll, events["cycles"].value * (norm / unroll / max(loop, 1))))
    events["tsc"], events["ns"] = timing["tsc"], timing["ns"]
    # Nearly free code, or a loop that sets the pace of A and B alike: B - A stays within the
    # resolution (the runner says loop_limited when it stopped growing the loop), so the answer
    # is a bound, not a figure.
    limited = _loop_limited(out.info)
    force = limited is not None and limited < POOR_TICKS
    target = _loop_target(out.info) if force else None
    below = _mark_bound(events, quantum, step / norm, tsc_hz, force, _resolved(ticks, keep, target))
    if not unpaired and raw.get("unpaired") and len(raw["unpaired"]) >= UNPAIRED_NOTE * (len(raw["unpaired"]) + len(keep)):
        warnings.append(linearity.unpaired_reason(len(raw["unpaired"]), len(raw["unpaired"]) + len(keep))
                        + "; they are left out (code that runs at one of two speeds, or whose cost per copy "
                        "changes with the copies, e.g. streaming over more memory in B)")
    if raw.get("warming_up"):
        warnings.append(f"the first {len(raw['warming_up'])} repetitions were still warming up (each slower than "
                        "the settled rest: a predictor or cache learning the input) and are left out")
    con = stats.median(conv.contention) if conv.contention else None
    return {"events": events, "stability": stability.assess(cycles, conv.ghz_per_rep, ref_ghz, con, ref_contention, below,
                                                            asked=len(ticks), unpaired=unpaired),
            "loop": loop, "contention": con, "contention_reference": ref_contention, "loop_limited": limited,
            "tsc_hz": tsc_hz, "ghz": ghz, "step": step, "norm": norm, "raw": raw,
            "cpu": int(out.info.get("cpu", ["-1"])[0]), "diff_ticks": stats.median([ticks[i] for i in keep] or ticks),
            "groups": groups, "warnings": warnings, "linearity": lin, "reps": reps if poolable else None, "quantum": quantum,
            "aggregate": aggregate}


def pool(attempts: list[dict], ref_ghz: float | None, ref_contention: float | None, min_reps: int,
         variable_ok: bool = False) -> dict | None:
    """The clean repetitions of several runs as one result, or None when fewer than ``min_reps``
    are clean. Each repetition carries its own calibration and gauges, so repetitions from runs
    of the same code compare directly (per copy); a burst that spoils most of every run still
    leaves quiet repetitions, which together settle the figure without another run.

    ``variable_ok`` (a cost that varies by nature, stability.assess): the figure's uncertainty is
    then at least the 95% half-width of the centre of the runs' own medians, with Student's t for
    so few of them (stats.few_uncertainty), so that a cost that differs from process to process
    (page placement) is not stated tighter than the processes agree: two processes that disagree
    by d give 6.4 d, three with a standard deviation s give 2.5 s."""
    runs = [a for a in attempts if a.get("reps") and a["reps"]["contention"] is not None]
    if len(runs) < 2:
        return None
    cycles = [c for a in runs for c in a["reps"]["cycles"]]
    ticks = [t for a in runs for t in a["reps"]["ticks"]]
    ghz = [g for a in runs for g in a["reps"]["ghz"]]
    contention = [c for a in runs for c in a["reps"]["contention"]]
    run_of = [i for i, a in enumerate(runs) for _ in a["reps"]["cycles"]]
    pos = stability.clean(ghz, contention, ref_ghz, ref_contention, fallback=False)
    if len(pos) < min_reps:
        return None
    base = max(runs, key=lambda a: len(a["reps"]["cycles"]))
    agg, q = base["aggregate"], base["quantum"]
    cyc = [cycles[j] for j in pos]
    step_t = base["step"] / base["norm"]
    events = {**base["events"], **_time_figures(cyc, [ticks[j] for j in pos], agg, base["events"]["cycles"].label,
                                                q, step_t, base["tsc_hz"])}
    below = _mark_bound(events, q, step_t, base["tsc_hz"], resolved=_resolved([ticks[j] * base["norm"] for j in pos]))
    medians = [stats.median(v) for v in ([cycles[j] for j in pos if run_of[j] == i] for i in range(len(runs))) if v]
    unc = events["cycles"].uncertainty
    if variable_ok and len(medians) > 1:
        unc = max(unc, stats.few_uncertainty(medians, q))
        for name, e in events.items():       # the same widening, in each unit of the figure
            if name in ("cycles", "tsc", "ns") and events["cycles"].value:
                e.uncertainty = max(e.uncertainty, unc * e.value / events["cycles"].value)
    g = [ghz[j] for j in pos]
    con = stats.median([contention[j] for j in pos])
    return {**base, "events": events, "ghz": stats.median(g), "contention": con,
            "stability": stability.assess(cyc, g, ref_ghz, con, ref_contention, below, variable_ok=variable_ok,
                                          runs=len(medians), uncertainty=unc),
            "pooled": {"runs": len(runs), "repetitions": len(pos)}}


def _event(name: str, unit: str, values: list[float], aggregate: str, label: str, quantum: float = 0.0,
           **extra) -> EventResult:
    return EventResult(name, unit, stats.aggregate(values, aggregate), stats.uncertainty(values, quantum, aggregate),
                       aggregate, label, min(values), stats.median(values), max(values), values, **extra)


def _time_figures(cycles: list[float], ticks: list[float], aggregate: str, label: str, quantum: float,
                  tick_quantum: float, tsc_hz: float) -> dict[str, EventResult]:
    """Cycles, TSC ticks and nanoseconds per copy (``ticks`` already per copy)."""
    ns = 1e9 / tsc_hz
    return {"cycles": _event("cycles", "cycles", cycles, aggregate, label, quantum),
            "tsc": _event("tsc", "ticks", ticks, aggregate, "TSC ticks", tick_quantum),
            "ns": _event("ns", "ns", [t * ns for t in ticks], aggregate, "nanoseconds", tick_quantum * ns)}


def _pair(conv, loop: int, raw: dict) -> str | None:
    """Leave out of ``conv`` the repetitions whose A and B ran at different speeds per copy
    (linearity.paired; listed in ``raw["unpaired"]``), unless fewer than two agree. When fewer
    than MIN_CLEAN_SHARE agree, return the reason the run is unstable: B - A of the others is no
    cost (Zen 4 guest: A at 2.0 cycles a copy and B at 1.0 read 0.02, tight and stable)."""
    pos = linearity.paired(conv.gross_a, conv.gross_b, loop)
    left = len(conv.kept) - len(pos)
    if not left:
        return None
    reason = None
    if len(pos) < max(2, stability.MIN_CLEAN_SHARE * len(conv.kept)):
        reason = linearity.unpaired_reason(left, len(conv.kept))
        if len(pos) < 2:
            return reason
    raw["unpaired"] = [k for j, k in enumerate(conv.kept) if j not in set(pos)]
    whole = len(conv.contention) == len(conv.kept)
    conv.cycles, conv.gross_a, conv.gross_b, conv.kept = (
        [conv.cycles[j] for j in pos], [conv.gross_a[j] for j in pos], [conv.gross_b[j] for j in pos],
        [conv.kept[j] for j in pos])
    if whole:
        conv.contention = [conv.contention[j] for j in pos]
    return reason


def _resolved(ticks: list[float], keep: list[int] | None = None, target: float | None = None) -> bool:
    """B - A spans at least POOR_TICKS, either way, in the median repetition: the clock resolves
    the code, so a figure within its uncertainty of zero is noise (the spread check judges it),
    not a bound. Sizes, not signed values: an interrupt in one repetition's A makes its B - A
    large and negative, and two repetitions of 1-cycle code (+3.7e5 and -4e5 ticks) once
    averaged near zero, stable "below the resolution", where the spread should send it back.

    ``target``: the runner stopped growing the loop with B - A below the resolution. Its
    repetitions, each 1000 times the runner's target long, then resolve the code only when they
    span that target: interrupts in so long a run add thousands of ticks, a
    change of speed between the runner's trial and the run (code that runs at two speeds, A at one
    and B at the other: linearity.paired) far more."""
    vals = [ticks[i] for i in keep] if keep is not None else ticks
    return bool(vals) and stats.median([abs(v) for v in vals]) >= (target or POOR_TICKS)


def _mark_bound(events: dict, quantum: float, tick_quantum: float, tsc_hz: float, force: bool = False,
                resolved: bool = False) -> bool:
    """Whether the cycles figure is below the resolution; if so, each time figure gets its bound."""
    if resolved or stats.upper_bound(events["cycles"].value, events["cycles"].uncertainty, quantum, force) is None:
        return False
    for name, q in (("cycles", quantum), ("tsc", tick_quantum), ("ns", tick_quantum * 1e9 / tsc_hz)):
        events[name].upper_bound = stats.upper_bound(events[name].value, events[name].uncertainty, q, True)
    return True



# MXCSR bits (Intel SDM vol. 1, 10.2.3; the same on AMD): sticky exception flags, DAZ, FTZ; the x87
# status word holds the same two flags at the same places (8.1.3) and has neither mode
DENORMAL_FLAG, UNDERFLOW_FLAG, DAZ, FTZ = 0x2, 0x10, 0x40, 0x8000
FP_VALUES = "the code's floating-point work"      # how the warning begins (bench/ports_accuracy.py counts them)


def fp_flags_warning(info: dict) -> str | None:
    """The warning for a run whose floating-point work (SSE/AVX or x87) read denormal operands, or
    made results too small for a normal float, as the MXCSR and x87 status word the last run left
    say (the harness starts each run with the flags clear): both take a slower path on many cores,
    so the figure may be of the data as well as of the instructions. The flags are sticky: they
    cannot tell every copy from the first few (``vcvtpd2ps xmm1, xmm1`` reads its floats as
    doubles, which shrink to zero in a few steps; its chain reads 3.00 cycles on Zen 4). DAZ reads
    denormal operands as zero and FTZ flushes such results, so neither costs then (x87 has neither).
    A runner that does not report the flags gives no warning."""
    try:
        status = int(info["fp_status"][0], 16)
    except (KeyError, IndexError, ValueError):
        return None
    mxcsr, x87 = status & 0xFFFFFFFF, status >> 32 & 0xFFFF
    what = []
    for flag, free, did in ((DENORMAL_FLAG, DAZ, "read denormal operands (the denormal flag"),
                            (UNDERFLOW_FLAG, FTZ, "made results too small for a normal float (the underflow flag")):
        places = [n for n, on in (("MXCSR", mxcsr & flag and not mxcsr & free), ("the x87 status word", x87 & flag))
                  if on]
        if places:
            what.append(f"{did} of {' and '.join(places)})")
    if not what:
        return None
    return (f"{FP_VALUES} {' and '.join(what)} at least once in a run: a slower path on many cores (an "
            "assist of about a hundred cycles on Intel's; on Zen 4 a denormal makes mulss 1.2 and divss 4.6 "
            "cycles slower on a chain), so where it happens in every copy the figure includes a cost of the "
            "values (a chain whose values shrink to zero meets them only in its first copies); to time the "
            "common path, give normal values in --init, or set DAZ and FTZ there (ldmxcsr of 0x9FC0; SSE "
            "and AVX only)")


def _loop_limited(info: dict) -> float | None:
    """B - A ticks of the runner's last loop probe when it stopped growing the loop (a long run
    whose B - A stayed below the target), else None."""
    if "loop_limited" not in info:
        return None
    try:
        return float(info["loop_limited"][0])
    except (IndexError, ValueError):
        return 0.0


def _loop_target(info: dict) -> float:
    """The B - A the runner was growing the loop towards (its "loop_target" line)."""
    try:
        return float(info["loop_target"][0])
    except (KeyError, IndexError, ValueError):
        return float(AUTO_LOOP_TICKS)


def _calibration_modes(found, cycles: list[float], ghz: list[float]) -> bool:
    """The two levels are the calibration's: the repetitions of each read their own clock, apart
    by the levels' ratio, while the code ran alike in time (a busy sibling slowing some runs'
    calibration chains; on a Golden Cove guest 1.84 and 2.00 for a 2-cycle chain at 3.69 and
    3.99 GHz). Code that runs at two speeds reads them whatever the clock."""
    fast, slow = found[0], found[1]

    def at(level):
        return [g for c, g in zip(cycles, ghz) if abs(c - level) <= level * stability.MAX_REL_SPREAD]
    g_fast, g_slow = at(fast), at(slow)
    if not g_fast or not g_slow:
        return False
    ratio = stats.median(g_slow) / stats.median(g_fast)
    return abs(ratio - slow / fast) <= (slow / fast - 1) / 3


def modes(attempts: list[dict]) -> dict | None:
    """The two levels the quiet repetitions of all runs read (stability.two_modes), or None.
    Each run's burst-touched repetitions are left out by its own gauges; a pooled result is the
    runs again, not a run."""
    quiet, clock = [], []
    for a in attempts:
        r = a.get("reps")
        if not r or a.get("pooled"):
            continue
        pos = stability.clean(r["ghz"], r["contention"] or [], None, None, fallback=False)
        keep = [j for j in pos if j < len(r["cycles"]) and j < len(r["ghz"])]
        quiet += [r["cycles"][j] for j in keep]
        clock += [r["ghz"][j] for j in keep]
    found = stability.two_modes(quiet)
    if found is None or _calibration_modes(found, quiet, clock):
        return None
    fast, slow, share = found
    return {"cycles": [fast, slow], "fast_share": share, "repetitions": len(quiet)}
