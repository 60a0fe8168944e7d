"""The memset study's analysis: records into table models (plain dicts, also saved in
results.json) and the numbers the summary quotes.

Every figure is **net core cycles per call** (the routine's pass minus the empty-call pass, per
call; the mean of the fastest 10% of repetitions) unless a key says otherwise. "vs glibc" is
(glibc - X) / glibc x 100: positive when X is faster than glibc. "Improvement" of new over old is
the reference's (old - new) / old x 100.
"""
from __future__ import annotations

from collections import defaultdict

from cyclebench.measurement.stats import improvement_percent, median

from . import grid

OLD, NEW, BASE = "nt_old", "new_sse", "libc"
TIE_PCT = 3.0            # differences below this are reported as ties
SMALL_DENOMINATOR = 1.0  # cycles: percentages against a smaller figure are not shown
TIE_CYCLES = 0.5         # ... and absolute differences below this


def of_experiment(records: list[dict], experiment: str):
    """The saved records of one experiment."""
    return (r for r in records if r.get("experiment") == experiment)


class Unresolved(float):
    """A net cost within its own spread of zero (its interquartile range over the repetitions is
    larger than the figure): shown in the tables, never ranked or turned into a percentage. Seen:
    glibc at 1.05 cycles per call, spread 1.45, in a "clear L1" row whose passes took 150 cycles."""


def pct(base, x):
    """(base - x) / base x 100, or None when base is too small to divide by or either figure is
    below the resolution (a net cost under TIE_CYCLES, negative ones included, or Unresolved)."""
    if base is None or x is None or base < SMALL_DENOMINATOR or x < TIE_CYCLES \
            or isinstance(base, Unresolved) or isinstance(x, Unresolved):
        return None
    return improvement_percent(base, x)


def _net(rec, stat="fastest10"):
    net = rec["result"]["net"]
    return Unresolved(net[stat]) if net[stat] < net.get("spread", 0.0) else net[stat]


def order(names, impls):
    first = [n for n in (BASE, OLD, NEW) if n in names]
    rest = [n for n in impls if n in names and n not in first]
    return first + rest + sorted(n for n in names if n not in first and n not in rest)


def fixed_table(records: list[dict], mode: str = "serialized") -> dict:
    by = defaultdict(dict)
    long = []
    for r in of_experiment(records, "fixed"):
        if r["params"].get("mode", "serialized") != mode:
            continue
        size = r["params"]["size"]
        res = r["result"]
        by[size][r["routine"]] = _net(r)
        long.append({"mode": mode, "size": size, "routine": r["routine"], "calls": res["calls"],
                     "net_fastest10": res["net"]["fastest10"], "net_median": res["net"]["median"],
                     "net_minimum": res["net"]["minimum"], "gross_median": res["gross"]["median"],
                     "empty_median": res["empty"]["median"], "spread": res["net"]["spread"],
                     "stable": res["stable"]})
    return {"by_size": dict(sorted(by.items())), "long": long, "mode": mode}


def random_table(records: list[dict], impls: list[str]) -> dict:
    rows = defaultdict(dict)
    gross = defaultdict(dict)
    misses = defaultdict(dict)
    long = []
    for r in of_experiment(records, "random"):
        idx = r["params"]["row"]
        res = r["result"]
        rows[idx][r["routine"]] = _net(r)
        gross[idx][r["routine"]] = res["gross"]["fastest10"]
        if "branch-misses" in res.get("events", {}):
            misses[idx][r["routine"]] = res["events"]["branch-misses"]["net"]["median"]
        long.append({"row": idx, "name": r["params"]["name"], "routine": r["routine"],
                     "net_fastest10": res["net"]["fastest10"], "net_median": res["net"]["median"],
                     "gross_fastest10": res["gross"]["fastest10"], "empty_median": res["empty"]["median"],
                     "spread": res["net"]["spread"], "flush": res["options"]["flush"],
                     "branch_misses_per_call": misses[idx].get(r["routine"]), "stable": res["stable"]})
    names = order({n for v in rows.values() for n in v}, impls)
    others = [n for n in names if n != BASE]
    table = []
    for idx in sorted(rows):
        t = grid.RANDOM_SIZE_TESTS[idx]
        v = rows[idx]
        ours = pct(v.get(OLD), v.get(NEW)) if OLD in v and NEW in v else None
        # the gross figure of a "clear L1" row is mostly the eviction: no call-overhead figure there
        ours_g = pct(gross[idx].get(OLD), gross[idx].get(NEW)) if OLD in v and NEW in v and not t.clear_l1 else None
        entry = {"row": idx, "granularity": t.granularity, "min_size": t.min_size, "max_size": t.max_size,
                 "min_offset": t.min_offset, "max_offset": t.max_offset, "clear_l1": t.clear_l1,
                 "reference_pct": t.reference_improvement_pct, "ours_pct": ours, "ours_gross_pct": ours_g,
                 "cycles": dict(v), "vs_glibc_pct": {n: pct(v.get(BASE), v.get(n)) for n in others if n in v},
                 "branch_misses": dict(misses[idx])}
        table.append(entry)
    return {"rows": table, "names": names, "long": long}


def trace_table(records: list[dict], fixed: dict) -> dict:
    per = {}
    long = []
    for r in of_experiment(records, "trace"):
        agg = {}
        for t in r["result"]["traces"]:
            a = agg.setdefault(t["size"], {"stores": [], "branches": [], "taken": [], "rep_bytes": [],
                                           "widest": [], "align0": None})
            a["stores"].append(t["stores"])
            a["branches"].append(t["branches"])
            a["taken"].append(t["taken"])
            a["rep_bytes"].append(t["rep_bytes"])
            a["widest"].append(t.get("widest_store", 0))
            if t["align"] == 0:
                a["align0"] = t
        out = {}
        for size, a in sorted(agg.items()):
            cyc = fixed["by_size"].get(size, {}).get(r["routine"])
            s0 = a["align0"]["stores"] if a["align0"] else None
            uses_rep = max(a["rep_bytes"]) > 0
            spc = (s0 / cyc) if (s0 is not None and cyc and cyc >= 1.0 and not uses_rep) else None
            out[size] = {"stores": (min(a["stores"]), max(a["stores"])),
                         "branches": (min(a["branches"]), max(a["branches"])),
                         "taken": (min(a["taken"]), max(a["taken"])),
                         "rep_bytes": (min(a["rep_bytes"]), max(a["rep_bytes"])),
                         "widest_store": max(a["widest"]), "stores_align0": s0,
                         "fixed_cycles": cyc, "stores_per_cycle": spc}
            long.append({"routine": r["routine"], "size": size, "stores_min": min(a["stores"]),
                         "stores_max": max(a["stores"]), "branches_min": min(a["branches"]),
                         "branches_max": max(a["branches"]), "taken_min": min(a["taken"]),
                         "taken_max": max(a["taken"]), "rep_bytes_max": max(a["rep_bytes"]),
                         "widest_store": max(a["widest"]), "fixed_net_cycles": cyc,
                         "stores_per_cycle": spc})
        per[r["routine"]] = out
    return {"by_routine": per, "long": long}


def learn_table(records: list[dict]) -> dict:
    v = defaultdict(dict)
    for r in of_experiment(records, "learn"):
        p = r["params"]
        v[(p["row"], r["routine"])][p["calls"]] = _net(r)
    rows = []
    for (idx, name), d in sorted(v.items()):
        if len(d) < 2:
            continue
        short, long_ = min(d), max(d)
        t = grid.RANDOM_SIZE_TESTS[idx]
        rows.append({"row": idx, "sizes": f"{t.min_size}..{t.max_size}" + (f" /{t.granularity}" if t.granularity > 1 else ""),
                     "routine": name, "short_calls": short, "long_calls": long_,
                     "trained": d[short], "untrained": d[long_], "penalty": d[long_] - d[short]})
    return {"rows": rows}


def threshold_table(records: list[dict], glibc_threshold: int | None) -> dict:
    v = defaultdict(dict)
    for r in of_experiment(records, "threshold"):
        p = r["params"]
        v[(p["kernel"], p["label"])][p["threshold"]] = _net(r)
    cols = []
    for (kernel, label), d in sorted(v.items()):
        best_t = min(d, key=d.get)
        cols.append({"kernel": kernel, "stream": label, "cycles": dict(sorted(d.items())), "best": best_t,
                     "best_cycles": d[best_t], "at_800": d.get(grid.REFERENCE_STOSB_THRESHOLD),
                     "at_glibc": d.get(glibc_threshold) if glibc_threshold else None})
    return {"columns": cols, "reference": grid.REFERENCE_STOSB_THRESHOLD, "glibc": glibc_threshold}



def segments(items: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Runs of equal labels over ascending sizes: [(first size, last size, label)]."""
    out = []
    for size, lab in items:
        if out and out[-1][2] == lab:
            out[-1] = (out[-1][0], size, lab)
        else:
            out.append((size, size, lab))
    return out




def summarize_findings(fixed, rnd, tr, lt, thr) -> dict:
    """The numbers the written summary quotes (also saved in results.json)."""
    s: dict = {}
    # new vs old on random sizes
    pairs = [e for e in rnd["rows"] if e["ours_pct"] is not None]
    if pairs:
        small = [e for e in pairs if e["max_size"] <= 1024]
        s["new_vs_old"] = {
            "rows": len(pairs), "new_faster_rows": sum(e["ours_pct"] > 0 for e in pairs),
            "ours_median_pct": median([e["ours_pct"] for e in pairs]),
            "ours_min_pct": min(e["ours_pct"] for e in pairs), "ours_max_pct": max(e["ours_pct"] for e in pairs),
            "reference_median_pct": median([e["reference_pct"] for e in pairs]),
            "small_rows": len(small),
            "small_ours_median_pct": median([e["ours_pct"] for e in small]) if small else None,
            "small_reference_median_pct": median([e["reference_pct"] for e in small]) if small else None,
            "small_new_faster_rows": sum(e["ours_pct"] > 0 for e in small),
            "ours_gross_median_pct": median([e["ours_gross_pct"] for e in pairs if e["ours_gross_pct"] is not None]),
        }
        hl = next((e for e in pairs if e["row"] == grid.RANDOM_SIZE_TESTS.index(grid.HIGHLIGHTED_TEST)), None)
        if hl:
            s["highlighted"] = {"ours_pct": hl["ours_pct"], "reference_pct": hl["reference_pct"],
                                "old": hl["cycles"].get(OLD), "new": hl["cycles"].get(NEW)}
    # glibc vs the best here, random rows
    rr = []
    for e in rnd["rows"]:
        c = e["cycles"]
        cand = {n: v for n, v in c.items() if n != BASE}
        if BASE in c and cand:
            best = min(cand, key=cand.get)
            rr.append({"row": e["row"], "label": row_label(e), "best": best, "best_cycles": cand[best],
                       "glibc": c[BASE], "pct": pct(c[BASE], cand[best]),
                       "rank_glibc": sorted(c.values()).index(c[BASE]) + 1, "n": len(c)})
    if rr:
        s["random_vs_glibc"] = rr
    # glibc vs the best here, fixed sizes
    fx = []
    for size, v in fixed["by_size"].items():
        cand = {n: x for n, x in v.items() if n != BASE}
        if BASE in v and cand:
            best = min(cand, key=cand.get)
            diff = v[BASE] - cand[best]
            p = pct(v[BASE], cand[best])
            lab = "tie" if abs(diff) < TIE_CYCLES or (p is not None and abs(p) < TIE_PCT) \
                else ("win" if diff > 0 else "loss")
            fx.append({"size": size, "best": best, "best_cycles": cand[best], "glibc": v[BASE],
                       "diff_cycles": diff, "pct": p, "verdict": lab})
    if fx:
        s["fixed_vs_glibc"] = fx
        s["fixed_segments"] = [{"from": a, "to": b, "verdict": lab} for a, b, lab in
                               segments([(f["size"], f["verdict"]) for f in fx])]
    # new vs old at fixed sizes, in the reference's size bands
    bands = []
    for lo, hi, label in ((1, 255, "under 256 B"), (256, 800, "256..800 B"), (801, 1 << 40, "above 800 B")):
        d = [(size, v[OLD], v[NEW]) for size, v in fixed["by_size"].items()
             if lo <= size <= hi and OLD in v and NEW in v]
        if d:
            bands.append({"band": label, "sizes": len(d),
                          "new_faster": sum(o - n >= TIE_CYCLES and pct(o, n) is not None and pct(o, n) >= TIE_PCT
                                            for _, o, n in d),
                          "old_faster": sum(n - o >= TIE_CYCLES and pct(n, o) is not None and pct(n, o) >= TIE_PCT
                                            for _, o, n in d),
                          "median_pct": median([pct(o, n) for _, o, n in d])})
    if bands:
        s["fixed_new_vs_old"] = bands
    # stores: old/new against the reference's table
    if tr["by_routine"]:
        cmp = []
        for size, (ref_old, ref_new) in grid.REFERENCE_STORE_COUNTS.items():
            o = tr["by_routine"].get(OLD, {}).get(size)
            n = tr["by_routine"].get(NEW, {}).get(size)
            if o and n:
                cmp.append({"size": size, "old": o["stores"], "new": n["stores"], "ref_old": ref_old,
                            "ref_new": ref_new})
        s["stores_vs_reference"] = cmp
    if lt["rows"]:
        s["learn"] = lt["rows"]
    if thr["columns"]:
        s["threshold"] = [{"kernel": c["kernel"], "stream": c["stream"], "best": c["best"],
                           "best_cycles": c["best_cycles"], "at_800": c["at_800"], "at_glibc": c["at_glibc"]}
                          for c in thr["columns"]]
    # branch misses per call (counted only with a hardware PMU): the median over random-size rows
    misses = defaultdict(list)
    for e in rnd["rows"]:
        for n, v in e["branch_misses"].items():
            misses[n].append(v)
    if misses:
        s["branch_misses"] = {n: {"rows": len(v), "median_per_call": median(v)} for n, v in misses.items()}
    return s


def row_label(e) -> str:
    g = f" /{e['granularity']}" if e["granularity"] > 1 else ""
    off = f", offsets 0..{e['max_offset']}" if e["max_offset"] else ""
    return f"{e['min_size']}..{e['max_size']} B{g}{off}{', clear L1' if e['clear_l1'] else ''}"

