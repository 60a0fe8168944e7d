"""From records to figures: per-iteration cycles by (build, dispatcher, pattern), increments over
the direct call, the misprediction penalty, estimated mispredictions, and the answers to the
issue's questions. Everything here reads records; nothing is measured."""
from __future__ import annotations

from statistics import mean

from .experiments import INDEXED, ONE_TARGET

UNSTABLE_SPREAD = 0.10      # a net figure whose IQR is above 10% of the gross median is flagged


def point(rec: dict) -> dict:
    """A record's figures: the reference's fastest-10% statistic, flagged unstable when the
    measurement was, or when its net spread is wide."""
    r = rec["result"]
    g, n = r["gross"], r["net"]
    stable = bool(r.get("stable", True)) and n["relative_spread"] <= UNSTABLE_SPREAD
    return {"iter": g["fastest10"], "net": n["fastest10"], "stable": stable}


def collect(records: list[dict]) -> dict:
    """{"fixed": {(build, d, target): pt}, "pattern": {(build, d, pattern, k): pt}, "penalty": {...}}"""
    out = {"fixed": {}, "pattern": {}, "penalty": {}}
    for rec in records:
        p = rec["params"]
        pt = point(rec)
        if rec["experiment"] == "fixed":
            out["fixed"][(p["build"], p["dispatcher"], p["target"])] = pt
        elif rec["experiment"] == "pattern":
            out["pattern"][(p["build"], p["dispatcher"], p["pattern"], p["k"])] = pt
        elif rec["experiment"] == "penalty":
            out["penalty"][p["pattern"]] = pt
    return out


def combine(pts: list[dict]) -> dict | None:
    if not pts:
        return None
    return {"iter": mean(p["iter"] for p in pts), "net": mean(p["net"] for p in pts),
            "stable": all(p["stable"] for p in pts), "lo": min(p["iter"] for p in pts),
            "hi": max(p["iter"] for p in pts), "n": len(pts)}


def fixed_of(v: dict, build: str, d: str) -> dict | None:
    """The mean over every fixed target measured for (build, d)."""
    return combine([pt for (b, dd, _), pt in v["fixed"].items() if b == build and dd == d])


def one_target(v: dict, build: str, d: str) -> dict | None:
    return v["fixed"].get((build, d, ONE_TARGET[d]))


def increment(v: dict, build: str, pt: dict | None) -> float | None:
    base = one_target(v, build, "direct")
    return None if pt is None or base is None else pt["iter"] - base["iter"]


def penalty(v: dict) -> dict | None:
    """Misprediction penalty: 2 x (50% random - fixed) of the one-branch dispatcher."""
    f, r = v["penalty"].get("fixed"), v["penalty"].get("random")
    if not f or not r:
        return None
    return {"cycles": 2 * (r["iter"] - f["iter"]), "fixed": f["iter"], "random": r["iter"],
            "stable": f["stable"] and r["stable"]}


def mispredictions(v: dict, build: str, d: str, k: int, pen: dict | None) -> float | None:
    """Estimated mispredictions per call under random targets: (random - fixed) / penalty."""
    r, f = v["pattern"].get((build, d, "random", k)), fixed_of(v, build, d)
    if not r or not f or not pen or pen["cycles"] <= 0:
        return None
    return (r["iter"] - f["iter"]) / pen["cycles"]


def answers(v: dict, builds: list[str]) -> dict:
    """The numbers summary.md quotes."""
    a: dict = {"penalty": penalty(v)}
    for b in ("clang-retpoline", "clang-Os"):
        one, table = fixed_of(v, b, "1"), one_target(v, b, "2")
        if one and table:
            a[f"search_vs_table/{b}"] = {"search1": one["iter"], "table2": table["iter"],
                                          "search_wins": one["iter"] < table["iter"]}
        four, three = fixed_of(v, b, "4"), fixed_of(v, b, "3")
        if one and four:
            a[f"dense_branches/{b}"] = {"search1": one["iter"], "btree4": four["iter"],
                                         "diff": four["iter"] - one["iter"]}
        if four and three:
            a[f"extra_level/{b}"] = {"btree4": four["iter"], "btree3": three["iter"],
                                      "diff": three["iter"] - four["iter"], "lo": three["lo"], "hi": three["hi"]}
        # under random targets: the smallest k at which a tree search is slower than the table
        rows = []
        for k in sorted({k for (bb, _, p, k) in v["pattern"] if bb == b and p == "random"}):
            t = v["pattern"].get((b, "2", "random", k))
            s = [(d, v["pattern"][(b, d, "random", k)]) for d in ("1", "4", "3")
                 if (b, d, "random", k) in v["pattern"]]
            if t and s:
                best = min(s, key=lambda x: x[1]["iter"])
                rows.append({"k": k, "table2": t["iter"], "best_search": best[0], "search": best[1]["iter"],
                             "search_wins": best[1]["iter"] < t["iter"],
                             "stable": t["stable"] and best[1]["stable"]})
        if rows:
            lose = [r["k"] for r in rows if not r["search_wins"]]
            a[f"random_crossover/{b}"] = {"rows": rows, "first_k_search_loses": min(lose) if lose else None}
    base = {d: one_target(v, "clang-Os", d) for d in ("0", "0m", "2")}
    for b in ("clang-cfi-icall", "clang-kcfi", "clang-retpoline", "gcc-thunk", "clang-retthunk"):
        row = {}
        for d, p0 in base.items():
            p = one_target(v, b, d)
            if p and p0:
                row[d] = p["iter"] - p0["iter"]
        if row:
            a[f"over_plain/{b}"] = row
    return a


def pattern_dispatchers(v: dict, build: str) -> list[str]:
    return [d for d in INDEXED if any(k[0] == build and k[1] == d for k in v["pattern"])]
