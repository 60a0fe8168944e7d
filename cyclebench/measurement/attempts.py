"""The attempt loop: run the prepared measurement in the runner, evaluate each run, and re-run
while the host is noisy (until a stable run, MAX_ATTEMPTS, or the time budget); then choose the
run the figures come from. The clock and contention history (clock_history.py) is read before
and written after stable runs of a calibrated clock."""
from __future__ import annotations

from time import monotonic as _now

from ..errors import CounterUnavailable, CycleBenchError
from .. import runner
from . import clock_history, stability
from .clocks import CalibrationInterrupted, CalibrationSuspect
from .evaluate import evaluate, pool
from .failures import raise_for

MAX_ATTEMPTS = 40            # re-runs stop earlier when the budget (default 2 s) is spent
CALIB_RETRIES = 3            # runs whose calibration was interrupted or failed its check, before giving up...
# ...once they span this many seconds: a burst on the host lasts seconds and can spoil every run of
# a short measurement within it (a test's 5-repetition runs failed the check 3 times in a row as
# the add chain ran 20% slow), while a core the calibration cannot serve fails for good
CALIB_SPAN = 2.0


MAX_REPS_GROWTH = 4          # a run still warming up at its end is re-run with up to 4x the repetitions


def run(p, args: list[str], *, cpu, timeout, budget, allow_syscalls, no_normalization, aggregate,
        no_slope, varies: bool = False) -> list[dict]:
    """Evaluated runs of the prepared measurement ``p`` (api.Prepared), last one last.

    A run whose repetitions were still getting faster at its end (stability.still_falling) is
    re-run with twice the repetitions (up to MAX_REPS_GROWTH times the asked number), so that
    its settled part (stability.warming_up) is long enough. ``varies``: the cost varies by
    nature (evaluate.pool, stability.assess)."""
    args = list(args)
    attempts: list[dict] = []
    deadline = _now() + budget
    clock = p.clock
    key = clock_history.machine_key(cpu)
    ref = clock_history.reference(key) if clock.calibrated else None
    ref_con = clock_history.reference(key, "contention") if clock.calibrated else None
    failed, first_failed = 0, 0.0
    while True:
        out = runner.run(args, timeout)
        try:
            raise_for(out, p.obj, list(p.parts.values()), timeout, allow_syscalls)
        except CycleBenchError as e:
            e.details.setdefault("runner_info", out.info)     # the mapped pages (blocks/measure.py)
            raise
        mapped = {k: v for k, v in out.info.items() if k.startswith("map")}
        if "--tsc-hz" not in args and out.info.get("tsc_hz"):
            clock_history.record_tsc_hz(float(out.info["tsc_hz"][0]))    # later runners need not measure it
        try:
            attempts.append(evaluate(out, p.backend, clock, p.spec.unroll, no_normalization, aggregate, ref,
                                     no_slope=no_slope, ref_contention=ref_con, varies=varies))
            attempts[-1]["raw"]["runner_info"] = mapped
        except (CalibrationInterrupted, CalibrationSuspect) as e:
            # a burst can spoil one run's calibration, whatever the budget; a TSC that fails
            # every time is unusable, and a check that fails every time is a core the
            # calibration cannot serve
            failed += 1
            if failed == 1:
                first_failed = _now()
            if failed >= CALIB_RETRIES and _now() - first_failed >= CALIB_SPAN:
                if isinstance(e, CalibrationSuspect):
                    raise e.final from None
                raise CounterUnavailable(f"{e.cause} in {failed} runs in a row", e.hint) from None
            continue
        failed = 0          # "in a row": a good run between two spoiled ones starts the count again
        last = attempts[-1]
        if not last["stability"].stable and last.get("reps") and stability.still_falling(last["reps"]["cycles"]):
            _grow_reps(args, p.n_measurements * MAX_REPS_GROWTH)
        if not last["stability"].stable and clock.calibrated and not no_slope:
            # the quiet repetitions of the runs so far, together (evaluate.pool)
            pooled = pool(attempts, ref, ref_con, max(2, p.n_measurements // 2), variable_ok=varies)
            if pooled is not None and pooled["stability"].stable:
                pooled.setdefault("raw", {})["runner_info"] = mapped
                attempts.append(pooled)
                last = pooled
        if clock.calibrated and last["stability"].stable:
            clock_history.record(key, last["ghz"])
            if last["contention"]:
                clock_history.record(key, last["contention"], "contention")
        elif clock.calibrated and last["stability"].only_low_clock and clock_history.note_low_clock(key, last["ghz"]):
            ref = clock_history.reference(key)      # the host's clock has moved: the next run is judged by it
        # a variable cost needs MIN_VARIABLE_RUNS processes whatever the budget: one process
        # cannot tell a cost that varies by nature from a placement of its own (stability.assess)
        more = varies and len(attempts) < stability.MIN_VARIABLE_RUNS
        if last["stability"].stable or len(attempts) >= MAX_ATTEMPTS or (_now() > deadline and not more):
            return attempts


def best(attempts: list[dict], calibrated: bool) -> dict:
    """The stable attempt if there is one; else the least disturbed: with a calibrated clock the
    one with the fastest clock (bursts slow it), otherwise the one with the least spread."""
    def spread(a):
        s = a["stability"].spread
        return float("inf") if s is None else s
    return min(attempts, key=lambda a: (not a["stability"].stable, -a["ghz"] if calibrated else spread(a)))


def _grow_reps(args: list[str], cap: int) -> None:
    """Twice the runner's ``--reps``, at most ``cap``."""
    i = args.index("--reps") + 1
    args[i] = str(min(2 * int(args[i]), max(cap, int(args[i]))))
