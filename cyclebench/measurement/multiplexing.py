"""perf_event groups that were off the PMU while enabled: flagged from time_enabled and
time_running, never scaled."""
from __future__ import annotations


def multiplexing(times: dict) -> dict:
    """From one group's (time_enabled, time_running) per measured run: was it ever off the PMU
    while enabled? Values are never scaled; they are flagged."""
    pairs = [p for kind in ("a", "b") for p in times.get(kind, [])]
    fractions = [run / en for en, run in pairs if en > 0]
    low = min(fractions) if fractions else 1.0
    return {"multiplexed": any(run < en for en, run in pairs), "min_running_fraction": low,
            "runs_multiplexed": sum(1 for en, run in pairs if run < en), "runs": len(pairs)}


def multiplexing_warning(g: int, names: list[str], mux: dict) -> str:
    return (f"event group {g} ({', '.join(names)}) was multiplexed or not scheduled in "
            f"{mux['runs_multiplexed']} of {mux['runs']} runs: counted during as little as "
            f"{mux['min_running_fraction']:.0%} of the time it was enabled. Its values are NOT scaled "
            "and undercount; use fewer events per group or stop other PMU users")
