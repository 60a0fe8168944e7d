"""The memset study's outputs: text tables, CSV, one JSON document, PNG plots and summary.md.

Every figure is **net core cycles per call** (the routine's pass minus the empty-call pass, per
call; the mean of the fastest 10% of repetitions) unless a column says otherwise. "vs glibc" is
(glibc - X) / glibc x 100: positive when X is faster than glibc. "Improvement" of new over old is
the reference's (old - new) / old x 100.
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from pathlib import Path

from cyclebench.routines.stats import improvement_percent

from . import grid

OLD, NEW, BASE = "nt_old", "new_sse", "libc"
TIE_PCT = 3.0            # differences below this are reported as ties
SMALL_DENOMINATOR = 1.0  # cycles: percentages against a smaller figure are not shown
TIE_CYCLES = 0.5         # ... and absolute differences below this


# ---------------------------------------------------------------------------------------------
# formatting helpers


def of_experiment(records: list[dict], experiment: str):
    """The saved records of one experiment."""
    return (r for r in records if r.get("experiment") == experiment)

def _f(v, digits=1) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def _pct(base, x):
    """(base - x) / base x 100, or None when base is too small to divide by."""
    if base is None or x is None or base < SMALL_DENOMINATOR:
        return None
    return improvement_percent(base, x)


def text_table(headers: list[str], rows: list[list], title: str | None = None, note: str | None = None) -> str:
    cells = [[str(h) for h in headers]] + [["-" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = []
    if title:
        out += [title, "=" * len(title)]
    for k, r in enumerate(cells):
        out.append("  ".join(c.rjust(w) if k and _numeric(c) else c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    if note:
        out += ["", note]
    return "\n".join(out) + "\n"


def markdown_table(headers: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---:" if i else "---" for i in range(len(headers))) + " |"]
    for r in rows:
        out.append("| " + " | ".join("-" if c is None else str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


def _numeric(s: str) -> bool:
    try:
        float(s.replace("%", "").replace("+", ""))
        return True
    except ValueError:
        return False


def _csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        path.write_text("")
        return
    fields = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue())


# ---------------------------------------------------------------------------------------------
# tables from records

def _net(rec, stat="fastest10"):
    return rec["result"]["net"][stat]


def _order(names, impls):
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
    names = _order({n for v in rows.values() for n in v}, impls)
    others = [n for n in names if n != BASE]
    table = []
    for idx in sorted(rows):
        t = grid.RANDOM_SIZE_TESTS[idx]
        v = rows[idx]
        ours = _pct(v.get(OLD), v.get(NEW)) if OLD in v and NEW in v else None
        # the gross figure of a "clear L1" row is mostly the eviction: no call-overhead figure there
        ours_g = _pct(gross[idx].get(OLD), gross[idx].get(NEW)) if OLD in v and NEW in v and not t.clear_l1 else None
        entry = {"row": idx, "granularity": t.granularity, "min_size": t.min_size, "max_size": t.max_size,
                 "min_offset": t.min_offset, "max_offset": t.max_offset, "clear_l1": t.clear_l1,
                 "reference_pct": t.reference_improvement_pct, "ours_pct": ours, "ours_gross_pct": ours_g,
                 "cycles": dict(v), "vs_glibc_pct": {n: _pct(v.get(BASE), v.get(n)) for n in others if n in v},
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


# ---------------------------------------------------------------------------------------------
# plots

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_fixed(fixed: dict, impls: list[str], path: Path, title: str) -> None:
    """Two panels, log-x: up to 1 KiB with a linear y (the byte loop clipped off the top), and
    1 B to 1 MiB log-log."""
    plt = _plt()
    by = fixed["by_size"]
    names = _order({n for v in by.values() for n in v}, impls)
    colors = plt.get_cmap("tab20").colors
    fig, axes = plt.subplots(1, 2, figsize=(15, 6))
    small = [v[n] for s, v in by.items() for n in v if s <= 1024 and n != "byte_loop"] or [0.0, 1.0]
    small_min, small_max = min(min(small), 0.0), max(small)
    for ax, hi, logy in ((axes[0], 1024, False), (axes[1], 1 << 30, True)):
        for k, n in enumerate(names):
            pts = [(s, v[n]) for s, v in by.items() if n in v and s <= hi and (v[n] > 0 or not logy)]
            if not pts:
                continue
            xs, ys = zip(*pts)
            main = n in (BASE, OLD, NEW)
            ax.plot(xs, ys, "-" if main else "--", marker=".", markersize=3, linewidth=1.6 if main else 1,
                    color=colors[(2 * k) % 20 if k < 10 else (2 * k + 1) % 20], label=n)
        ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        else:
            pad = 0.05 * (small_max - small_min or 1.0)
            ax.set_ylim(bottom=small_min - pad, top=small_max + 3 * pad)
        ax.set_xlabel("size (bytes, log scale)")
        ax.set_ylabel("net cycles per call (fastest 10%)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_title("1 B .. 1 KiB, linear y (byte_loop runs off the top)")
    axes[1].set_title("1 B .. 1 MiB, log y")
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_threshold(thr: dict, path: Path, title: str) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 5))
    for c in thr["columns"]:
        xs, ys = zip(*sorted(c["cycles"].items()))
        ax.plot(xs, ys, marker="o", label=f"{c['kernel']}, {c['stream']}")
    ax.axvline(thr["reference"], color="gray", linestyle=":", label=f"reference ({thr['reference']} B)")
    if thr.get("glibc"):
        ax.axvline(thr["glibc"], color="black", linestyle="--", label=f"glibc x86_rep_stosb_threshold ({thr['glibc']} B)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("rep stosb threshold (bytes)")
    ax.set_ylabel("net cycles per call (fastest 10%)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# text renderings

MODE_TEXT = {"serialized": "serialized: an lfence after every call, each call timed in isolation",
             "back-to-back": "back to back: calls overlap, what a loop of calls pays"}


def render_fixed(fixed: dict, impls: list[str]) -> tuple[str, list[str], list[list]]:
    by = fixed["by_size"]
    names = _order({n for v in by.values() for n in v}, impls)
    ours = [n for n in names if n != BASE]
    headers = ["size"] + names + ["best here", "vs glibc"]
    rows = []
    for size, v in by.items():
        cand = {n: v[n] for n in ours if n in v}
        best = min(cand, key=cand.get) if cand else None
        pct = _pct(v.get(BASE), cand.get(best)) if best else None
        rows.append([size] + [_f(v.get(n), 2) for n in names] + [best, None if pct is None else f"{pct:+.0f}%"])
    txt = text_table(headers, rows, f"Fixed sizes, {MODE_TEXT[fixed['mode']]}: net cycles per call "
                     "(trained predictors, fastest 10%)",
                     "best here: the fastest implementation other than glibc; vs glibc: how much faster it is "
                     "(negative: slower); '-' where glibc costs under 1 cycle net.")
    return txt, headers, rows


def render_random(rnd: dict) -> tuple[str, list[str], list[list]]:
    others = [n for n in rnd["names"] if n != BASE]
    headers = ["gran", "min", "max", "min off", "max off", "clear L1", "ref new/old %", "ours new/old %",
               "ours incl. call %", f"{OLD} cyc", f"{NEW} cyc", f"{BASE} cyc"] + [f"{n} vs glibc %" for n in others]
    rows = []
    for e in rnd["rows"]:
        c = e["cycles"]
        rows.append([e["granularity"], e["min_size"], e["max_size"], e["min_offset"], e["max_offset"],
                     "yes" if e["clear_l1"] else "no", _f(e["reference_pct"], 2), _f(e["ours_pct"]),
                     _f(e["ours_gross_pct"]), _f(c.get(OLD)), _f(c.get(NEW)), _f(c.get(BASE))]
                    + [_f(e["vs_glibc_pct"].get(n)) for n in others])
    txt = text_table(headers, rows, "Random sizes: improvement of the new design (new_sse) over the old (nt_old)",
                     "ref: the reference's published %; ours: from net cycles (routine only); incl. call: from the "
                     "pass cost including the call overhead (the empty pass; not for clear-L1 rows, whose pass is "
                     "mostly the eviction). X vs glibc: (glibc - X) / glibc, positive = X faster. '-' where a "
                     "figure is missing or the denominator is under 1 cycle.")
    return txt, headers, rows


def render_stores(tr: dict, impls: list[str]) -> tuple[str, list[str], list[list]]:
    names = _order(set(tr["by_routine"]), impls)
    headers = ["routine", "size", "stores", "ref stores", "cond. branches", "taken", "rep stosb bytes",
               "widest store", "net cycles", "stores/cycle"]
    rows = []
    for n in names:
        for size, a in tr["by_routine"][n].items():
            ref = grid.REFERENCE_STORE_COUNTS.get(size)
            refcol = None
            if ref and n in (OLD, NEW):
                lo, hi = ref[0] if n == OLD else ref[1]
                refcol = f"{lo}" if lo == hi else f"{lo}-{hi}"

            def rng(t):
                return f"{t[0]}" if t[0] == t[1] else f"{t[0]}-{t[1]}"
            rows.append([n, size, rng(a["stores"]), refcol, rng(a["branches"]), rng(a["taken"]),
                         rng(a["rep_bytes"]) if a["rep_bytes"][1] else "0", a["widest_store"],
                         _f(a["fixed_cycles"], 2), _f(a["stores_per_cycle"], 2)])
    txt = text_table(headers, rows, "Stores and conditional branches per call (exact, by single-stepping; "
                     "min-max over dst alignments)",
                     "stores: executed instructions that write memory (rep stosb counts once; its bytes are "
                     "the next column). stores/cycle: stores at dst alignment 0 / net cycles at that fixed "
                     "size; not derivable when rep stosb does the work or the call costs under 1 cycle net.\n"
                     "Branch MISpredictions per call cannot be counted here: that needs a hardware PMU, "
                     "and this machine has none.")
    return txt, headers, rows


def render_learn(lt: dict) -> tuple[str, list[str], list[list]]:
    headers = ["sizes", "routine", "replay of N calls", "trained", "replay of M calls", "untrained", "penalty"]
    rows = [[r["sizes"], r["routine"], r["short_calls"], _f(r["trained"]), r["long_calls"], _f(r["untrained"]),
             _f(r["penalty"])] for r in lt["rows"]]
    txt = text_table(headers, rows, "Unpredictable sizes: the same size distribution, replayed from a short array "
                     "(the predictors learn it) and from a long one (they cannot)",
                     "penalty: net cycles per call lost when the sizes cannot be predicted; an upper bound on "
                     "the cost of branch mispredictions, not a count of them.")
    return txt, headers, rows


def render_threshold(thr: dict) -> tuple[str, list[str], list[list]]:
    cols = thr["columns"]
    headers = ["threshold"] + [f"{c['kernel']}: {c['stream']}" for c in cols]
    ts = sorted({t for c in cols for t in c["cycles"]})
    rows = []
    for t in ts:
        mark = " (reference)" if t == thr["reference"] else ""
        mark += " (glibc)" if t == thr.get("glibc") else ""
        rows.append([f"{t}{mark}"] + [_f(c["cycles"].get(t), 2) + (" *" if c["best"] == t else "") for c in cols])
    txt = text_table(headers, rows, "rep stosb cut-over: net cycles per call per threshold (* = best)",
                     f"The reference uses {thr['reference']} B; glibc's x86_rep_stosb_threshold here is "
                     f"{thr.get('glibc')} B (glibc's own memset, not these kernels).")
    return txt, headers, rows


# ---------------------------------------------------------------------------------------------
# the summary

def _segments(items: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Runs of equal labels over ascending sizes: [(first size, last size, label)]."""
    out = []
    for size, lab in items:
        if out and out[-1][2] == lab:
            out[-1] = (out[-1][0], size, lab)
        else:
            out.append((size, size, lab))
    return out



def _extremes(wins: list, losses: list, where) -> list[str]:
    """The biggest win and the biggest loss against glibc, one summary line each."""
    out = []
    for kind, rows, pick in (("win", wins, max), ("loss", losses, min)):
        if rows:
            r = pick(rows, key=lambda x: x["pct"])
            out.append(f"  - Biggest {kind}: {where(r)}: `{r['best']}` {r['best_cycles']:.1f} vs glibc "
                       f"{r['glibc']:.1f} cycles ({r['pct']:+.0f}%).")
    return out

def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def summarize_findings(fixed, rnd, tr, lt, thr, info, impls) -> dict:
    """The numbers the written summary quotes (also saved in results.json)."""
    s: dict = {}
    # new vs old on random sizes
    pairs = [e for e in rnd["rows"] if e["ours_pct"] is not None]
    if pairs:
        small = [e for e in pairs if e["max_size"] <= 1024]
        s["new_vs_old"] = {
            "rows": len(pairs), "new_faster_rows": sum(e["ours_pct"] > 0 for e in pairs),
            "ours_median_pct": _median([e["ours_pct"] for e in pairs]),
            "ours_min_pct": min(e["ours_pct"] for e in pairs), "ours_max_pct": max(e["ours_pct"] for e in pairs),
            "reference_median_pct": _median([e["reference_pct"] for e in pairs]),
            "small_rows": len(small),
            "small_ours_median_pct": _median([e["ours_pct"] for e in small]) if small else None,
            "small_reference_median_pct": _median([e["reference_pct"] for e in small]) if small else None,
            "small_new_faster_rows": sum(e["ours_pct"] > 0 for e in small),
            "ours_gross_median_pct": _median([e["ours_gross_pct"] for e in pairs if e["ours_gross_pct"] is not None]),
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
            rr.append({"row": e["row"], "label": _row_label(e), "best": best, "best_cycles": cand[best],
                       "glibc": c[BASE], "pct": _pct(c[BASE], cand[best]),
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
            pct = _pct(v[BASE], cand[best])
            lab = "tie" if abs(diff) < TIE_CYCLES or (pct is not None and abs(pct) < TIE_PCT) \
                else ("win" if diff > 0 else "loss")
            fx.append({"size": size, "best": best, "best_cycles": cand[best], "glibc": v[BASE],
                       "diff_cycles": diff, "pct": pct, "verdict": lab})
    if fx:
        s["fixed_vs_glibc"] = fx
        s["fixed_segments"] = [{"from": a, "to": b, "verdict": lab} for a, b, lab in
                               _segments([(f["size"], f["verdict"]) for f in fx])]
    # new vs old at fixed sizes, in the reference's size bands
    bands = []
    for lo, hi, label in ((1, 255, "under 256 B"), (256, 800, "256..800 B"), (801, 1 << 40, "above 800 B")):
        d = [(size, v[OLD], v[NEW]) for size, v in fixed["by_size"].items()
             if lo <= size <= hi and OLD in v and NEW in v]
        if d:
            bands.append({"band": label, "sizes": len(d),
                          "new_faster": sum(o - n >= TIE_CYCLES and _pct(o, n) is not None and _pct(o, n) >= TIE_PCT
                                            for _, o, n in d),
                          "old_faster": sum(n - o >= TIE_CYCLES and _pct(n, o) is not None and _pct(n, o) >= TIE_PCT
                                            for _, o, n in d),
                          "median_pct": _median([_pct(o, n) for _, o, n in d])})
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
    return s


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def _row_label(e) -> str:
    g = f" /{e['granularity']}" if e["granularity"] > 1 else ""
    off = f", offsets 0..{e['max_offset']}" if e["max_offset"] else ""
    return f"{e['min_size']}..{e['max_size']} B{g}{off}{', clear L1' if e['clear_l1'] else ''}"


def write_summary(path: Path, s: dict, info: dict, machine: dict, cfg, tables_md: dict) -> None:
    g = info.get("glibc", {})
    L = [f"# memset study: findings ({cfg.name} run)", ""]
    L.append(f"Machine: {machine.get('cpu_model_name')} (family {machine.get('cpu_family')}, model "
             f"{machine.get('cpu_model')}), {'KVM guest' if machine.get('hypervisor') else 'bare metal'}, "
             f"{machine.get('cpus_online')} CPUs, kernel {machine.get('kernel')}; {g.get('version')}. "
             f"Counter backend: TSC-calibrated core cycles ({info.get('pmu') or 'no PMU'}).")
    L.append("")
    L.append("Method: every routine passed its correctness check first. Each figure is net core cycles per "
             "call: a pass of calls through an indirect call minus the same pass calling an empty function "
             "(measured in the same runner process, repetition by repetition), the mean of the fastest 10% "
             f"of {cfg.reps} repetitions, as in the reference. Fixed-size figures are *serialized* (an lfence "
             "after every call, in both passes), so each call is timed in isolation like the reference's "
             "single-call timings. Random-size, threshold and predictor figures run calls *back to back*, the "
             "reference's loop over one array: what a loop of calls pays, mispredictions included. "
             f"Random-size tests replay {cfg.random_calls:,} seeded argument sets (the reference's count); "
             "\"clear L1\" rows evict the destination's L1d sets before every call, in both passes.")
    L.append("")
    nv = s.get("new_vs_old")
    L.append("## Does the reference's main finding hold? (new design vs old, random sizes)")
    L.append("")
    if nv:
        verdict = ("holds" if nv["ours_median_pct"] > TIE_PCT and nv["new_faster_rows"] >= 0.75 * nv["rows"]
                   else "holds only partly" if nv["ours_median_pct"] > 0 else "does not hold")
        L.append(f"- It **{verdict}** on this CPU. The new design (`new_sse`) is faster than the old (`nt_old`) in "
                 f"{nv['new_faster_rows']} of {nv['rows']} random-size rows; median improvement "
                 f"**{nv['ours_median_pct']:+.1f}%** (range {nv['ours_min_pct']:+.1f}% to {nv['ours_max_pct']:+.1f}%) "
                 f"against the reference's median {nv['reference_median_pct']:.1f}% on the same rows.")
        if nv["small_rows"]:
            L.append(f"- Small sizes (max size <= 1 KiB, {nv['small_rows']} rows): new faster in "
                     f"{nv['small_new_faster_rows']}, median **{nv['small_ours_median_pct']:+.1f}%** vs the "
                     f"reference's {nv['small_reference_median_pct']:.1f}%.")
        if nv.get("ours_gross_median_pct") is not None:
            L.append(f"- Counting the call overhead too (the reference timed whole calls), the median is "
                     f"{nv['ours_gross_median_pct']:+.1f}%.")
        hl = s.get("highlighted")
        if hl:
            L.append(f"- The reference's highlighted test (256..512 B, granularity 16): old {hl['old']:.1f}, new "
                     f"{hl['new']:.1f} cycles, **{hl['ours_pct']:+.1f}%** (reference {hl['reference_pct']:.2f}%).")
    else:
        L.append("- Not measured in this run (the random experiment or one of nt_old/new_sse was left out).")
    if s.get("fixed_new_vs_old"):
        parts = [f"{b['band']}: new faster at {b['new_faster']}, old faster at {b['old_faster']} of {b['sizes']} "
                 f"sizes (median {b['median_pct']:+.0f}%)" for b in s["fixed_new_vs_old"] if b["median_pct"] is not None]
        L.append("- Fixed sizes with trained predictors (serialized calls; the reference found new ahead under "
                 "256 B, the two comparable or old ahead from 256 to about 800 B, and rep stosb ahead above): "
                 + "; ".join(parts) + ".")
    L.append("")
    L.append("## Where glibc stands")
    L.append("")
    rr = s.get("random_vs_glibc")
    if rr:
        wins = [r for r in rr if r["pct"] is not None and r["pct"] >= TIE_PCT]
        losses = [r for r in rr if r["pct"] is not None and r["pct"] <= -TIE_PCT]
        first = sum(r["rank_glibc"] == 1 for r in rr)
        L.append(f"- Random sizes: glibc's memset is the fastest implementation in {first} of {len(rr)} rows. The "
                 f"best implementation here beats it by {TIE_PCT:.0f}% or more in {len(wins)} rows and loses by "
                 f"{TIE_PCT:.0f}% or more in {len(losses)}.")
        L += _extremes(wins, losses, lambda r: r["label"])
    fx = s.get("fixed_vs_glibc")
    if fx:
        segs = s["fixed_segments"]
        desc = "; ".join((_size(a["from"]) if a["from"] == a["to"] else f"{_size(a['from'])}..{_size(a['to'])}")
                         + f": {a['verdict']}" for a in segs)
        L.append(f"- Fixed sizes (serialized calls, trained predictors), the best implementation here vs glibc "
                 f"by size (a win or loss is {TIE_PCT:.0f}% and {TIE_CYCLES} cycles or more, else a tie): {desc}.")
        wins = [f for f in fx if f["verdict"] == "win" and f["pct"] is not None]
        losses = [f for f in fx if f["verdict"] == "loss" and f["pct"] is not None]
        L += _extremes(wins, losses, lambda f: _size(f["size"]))
    if not rr and not fx:
        L.append("- Not measured in this run.")
    L.append("")
    L.append("## Stores and branches")
    L.append("")
    cmp = s.get("stores_vs_reference")
    if cmp:
        same_new = sum(c["new"][0] >= c["ref_new"][0] and c["new"][1] <= c["ref_new"][1] for c in cmp)
        same_old = sum(c["old"][0] >= c["ref_old"][0] and c["old"][1] <= c["ref_old"][1] for c in cmp)
        L.append(f"- Executed stores per call (exact, by single-stepping every dst alignment) fall inside the "
                 f"reference's min-max for the new design at {same_new} of {len(cmp)} sizes and for the old at "
                 f"{same_old} of {len(cmp)} (table in `stores.txt`).")
    L.append("- **Branch mispredictions per call need a hardware PMU; this machine has none** "
             f"({info.get('pmu') or 'no PMU'}). Conditional branches executed and taken are exact (`stores.txt`).")
    if s.get("learn"):
        parts = [f"`{r['routine']}` {r['sizes']}: {r['penalty']:+.1f}" for r in s["learn"]]
        L.append("- What unpredictable sizes cost (the same distribution replayed from a short array the "
                 "predictors learn vs the reference's 50,000): " + "; ".join(parts) + " cycles per call. "
                 "Zen 4 learns a replayed sequence of a few thousand calls, so random-size tests need "
                 "the reference's long arrays.")
    L.append("")
    L.append("## rep stosb cut-over")
    L.append("")
    if s.get("threshold"):
        for c in s["threshold"]:
            extra = []
            if c["at_800"] is not None:
                extra.append(f"800 B (reference): {c['at_800']:.1f}")
            if c["at_glibc"] is not None:
                extra.append(f"{thr_glibc(info)} B (glibc's threshold): {c['at_glibc']:.1f}")
            L.append(f"- `{c['kernel']}`, {c['stream']}: best threshold **{c['best']} B** "
                     f"({c['best_cycles']:.1f} cycles per call); " + "; ".join(extra) + ".")
        L.append(f"- glibc's `x86_rep_stosb_threshold` here: {thr_glibc(info)} B "
                 f"({g.get('x86_rep_stosb_threshold_source')}).")
    else:
        L.append("- Not measured in this run.")
    L.append("")
    L.append("## Caveats")
    L.append("")
    L.append("- One machine, a KVM guest with a noisy neighbour; cycles are TSC-calibrated, not counted. "
             "Serialized fixed-size figures repeat within about 3% or half a cycle; random-size figures of small "
             "sizes moved by up to about 3 cycles per call between runs (each runner process gets another "
             f"address layout); this run pooled {cfg.random_processes} process(es) per random-size row.")
    L.append("- The kernels are reconstructions from the reference's text, not Microsoft's code.")
    L.append("- \"Clear L1\" evicts only the L1d sets the destination can occupy, before every call; the "
             "reference does not say how it cleared L1, and the eviction noise limits those rows.")
    if cfg.name == "quick":
        L.append("- This was a `--quick` run: a subset of sizes, rows and thresholds, fewer repetitions. "
                 "Run without `--quick` for the full grid.")
    L.append("")
    for title, md in tables_md.items():
        L += [f"## Table: {title}", "", md]
    path.write_text("\n".join(L) + "\n")


def thr_glibc(info) -> int | None:
    return info.get("glibc", {}).get("x86_rep_stosb_threshold")


# ---------------------------------------------------------------------------------------------

def write_outputs(cfg, records: list[dict], out: Path, impls: list[str]) -> dict[str, Path]:
    info_rec = next(of_experiment(records, "info"), {"result": {}, "machine": {}})
    info, machine = info_rec["result"], info_rec.get("machine", {})
    fixed = fixed_table(records, "serialized")
    b2b = fixed_table(records, "back-to-back")
    if not fixed["long"] and b2b["long"]:
        fixed, b2b = b2b, {"long": []}
    rnd = random_table(records, impls)
    tr = trace_table(records, fixed)
    lt = learn_table(records)
    thr = threshold_table(records, thr_glibc(info))
    paths: dict[str, Path] = {}
    texts = []
    md = {}
    if fixed["long"]:
        txt, h, rows = render_fixed(fixed, impls)
        texts.append(txt)
        md[f"fixed sizes, {fixed['mode']} (net cycles per call)"] = markdown_table(h, rows)
        fixed_txt = txt
        plot_fixed(fixed, impls, out / "fixed_sizes.png",
                   f"memset, fixed sizes, {fixed['mode']}: net cycles per call ({machine.get('cpu_model_name', '')})")
        paths.update(fixed_csv=out / "fixed_sizes.csv", fixed_txt=out / "fixed_sizes.txt",
                     fixed_png=out / "fixed_sizes.png")
        if b2b["long"]:
            txt, h, rows = render_fixed(b2b, impls)
            texts.append(txt)
            md["fixed sizes, back to back"] = markdown_table(h, rows)
            fixed_txt += "\n" + txt
            plot_fixed(b2b, impls, out / "fixed_sizes_back_to_back.png",
                       f"memset, fixed sizes, back to back: net cycles per call ({machine.get('cpu_model_name', '')})")
            paths["fixed_b2b_png"] = out / "fixed_sizes_back_to_back.png"
        _csv(out / "fixed_sizes.csv", fixed["long"] + b2b["long"])
        (out / "fixed_sizes.txt").write_text(fixed_txt)
    if rnd["rows"]:
        txt, h, rows = render_random(rnd)
        texts.append(txt)
        md["random sizes"] = markdown_table(h, rows)
        _csv(out / "random_sizes.csv", rnd["long"])
        (out / "random_sizes.txt").write_text(txt)
        paths.update(random_csv=out / "random_sizes.csv", random_txt=out / "random_sizes.txt")
    if tr["long"] or lt["rows"]:
        parts = []
        if tr["long"]:
            txt, h, rows = render_stores(tr, impls)
            parts.append(txt)
            md["stores and branches per call"] = markdown_table(h, rows)
        if lt["rows"]:
            txt, h, rows = render_learn(lt)
            parts.append(txt)
            md["unpredictable sizes"] = markdown_table(h, rows)
        texts += parts
        (out / "stores.txt").write_text("\n".join(parts))
        _csv(out / "stores.csv", tr["long"] + [dict(r, kind="learn") for r in lt["rows"]])
        paths.update(stores_txt=out / "stores.txt", stores_csv=out / "stores.csv")
    if thr["columns"]:
        txt, h, rows = render_threshold(thr)
        texts.append(txt)
        md["rep stosb threshold"] = markdown_table(h, rows)
        (out / "threshold.txt").write_text(txt)
        _csv(out / "threshold.csv", [{"kernel": c["kernel"], "stream": c["stream"], "threshold": t,
                                      "net_fastest10": v, "best": t == c["best"]}
                                     for c in thr["columns"] for t, v in c["cycles"].items()])
        plot_threshold(thr, out / "threshold.png", "memset: rep stosb cut-over sweep")
        paths.update(threshold_txt=out / "threshold.txt", threshold_csv=out / "threshold.csv",
                     threshold_png=out / "threshold.png")
    s = summarize_findings(fixed, rnd, tr, lt, thr, info, impls)
    write_summary(out / "summary.md", s, info, machine, cfg, md)
    (out / "tables.txt").write_text("\n".join(texts))
    doc = {"schema": "cyclebench.memset-study", "schema_version": 1, "config": cfg.to_dict(),
           "machine": machine, "info": info, "findings": s,
           "tables": {"fixed": {str(k): v for k, v in fixed["by_size"].items()},
                      "fixed_back_to_back": {str(k): v for k, v in b2b.get("by_size", {}).items()},
                      "random": rnd["rows"],
                      "stores": {n: {str(k): v for k, v in d.items()} for n, d in tr["by_routine"].items()},
                      "learn": lt["rows"], "threshold": thr}}
    (out / "results.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    paths.update(summary=out / "summary.md", tables=out / "tables.txt", json=out / "results.json",
                 results=out / "results.jsonl")
    return paths
