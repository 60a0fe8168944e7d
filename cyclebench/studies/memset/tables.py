"""The memset study's tables as shown (text, Markdown): one Table per experiment from the table
models of analysis.py. Figures are net cycles per call unless a header says otherwise; '-' marks a
figure that is missing or not derivable."""
from __future__ import annotations

from cyclebench.reports.model import Column, Table

from . import grid
from .analysis import BASE, NEW, OLD, order, pct


def _f(v, digits=1) -> str:
    return "-" if v is None or (isinstance(v, float) and v != v) else f"{v:.{digits}f}"


def _numeric(s: str) -> bool:
    try:
        float(s.replace("%", "").replace("+", "").replace(" *", "").split(" (")[0])
        return True
    except ValueError:
        return s == "-"


def table(title: str, headers: list[str], rows: list[list], notes: list[str]) -> Table:
    """A Table whose columns of numbers are right-aligned; None shows as '-'."""
    cells = [["-" if c is None else str(c) for c in r] for r in rows]
    cols = [Column(f"c{i}", h, "right" if cells and all(_numeric(r[i]) for r in cells) else "left")
            for i, h in enumerate(headers)]
    return Table(title, cols, [{c.key: r[i] for i, c in enumerate(cols)} for r in cells], notes)


MODE_TEXT = {"serialized": "serialized: an lfence after every call, each call timed in isolation",
             "back-to-back": "back to back: calls overlap, what a loop of calls pays"}


def fixed_view(fixed: dict, impls: list[str]) -> Table:
    by = fixed["by_size"]
    names = order({n for v in by.values() for n in v}, impls)
    ours = [n for n in names if n != BASE]
    rows = []
    for size, v in by.items():
        cand = {n: v[n] for n in ours if n in v}
        best = min(cand, key=cand.get) if cand else None
        p = pct(v.get(BASE), cand.get(best)) if best else None
        rows.append([size] + [_f(v.get(n), 2) for n in names] + [best, None if p is None else f"{p:+.0f}%"])
    return table(f"Fixed sizes, {MODE_TEXT[fixed['mode']]}: net cycles per call (trained predictors, "
                 "fastest 10%)", ["size"] + names + ["best here", "vs glibc"], rows,
                 ["best here: the fastest implementation other than glibc; vs glibc: how much faster it is "
                  "(negative: slower); '-' where glibc costs under 1 cycle net."])


def random_view(rnd: dict) -> Table:
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
    return table("Random sizes: improvement of the new design (new_sse) over the old (nt_old)", headers, rows,
                 ["ref: the reference's published %; ours: from net cycles (routine only); incl. call: from "
                  "the pass cost including the call overhead (the empty pass; not for clear-L1 rows, whose "
                  "pass is mostly the eviction). X vs glibc: (glibc - X) / glibc, positive = X faster. '-' "
                  "where a figure is missing or the denominator is under 1 cycle."])


def _rng(t) -> str:
    return f"{t[0]}" if t[0] == t[1] else f"{t[0]}-{t[1]}"


def stores_view(tr: dict, impls: list[str], misses_note: str) -> Table:
    """``misses_note``: where branch mispredictions are (or why they are not) counted in this run."""
    rows = []
    for n in order(set(tr["by_routine"]), impls):
        for size, a in tr["by_routine"][n].items():
            ref = grid.REFERENCE_STORE_COUNTS.get(size)
            refcol = None
            if ref and n in (OLD, NEW):
                lo, hi = ref[0] if n == OLD else ref[1]
                refcol = _rng((lo, hi))
            rows.append([n, size, _rng(a["stores"]), refcol, _rng(a["branches"]), _rng(a["taken"]),
                         _rng(a["rep_bytes"]) if a["rep_bytes"][1] else "0", a["widest_store"],
                         _f(a["fixed_cycles"], 2), _f(a["stores_per_cycle"], 2)])
    return table("Stores and conditional branches per call (exact, by single-stepping; min-max over dst "
                 "alignments)", ["routine", "size", "stores", "ref stores", "cond. branches", "taken",
                                 "rep stosb bytes", "widest store", "net cycles", "stores/cycle"], rows,
                 ["stores: executed instructions that write memory (rep stosb counts once; its bytes are the "
                  "next column). stores/cycle: stores at dst alignment 0 / net cycles at that fixed size; not "
                  "derivable when rep stosb does the work or the call costs under 1 cycle net.", misses_note])


def learn_view(lt: dict) -> Table:
    rows = [[r["sizes"], r["routine"], r["short_calls"], _f(r["trained"]), r["long_calls"], _f(r["untrained"]),
             _f(r["penalty"])] for r in lt["rows"]]
    return table("Unpredictable sizes: the same size distribution, replayed from a short array (the "
                 "predictors learn it) and from a long one (they cannot)",
                 ["sizes", "routine", "replay of N calls", "trained", "replay of M calls", "untrained", "penalty"],
                 rows, ["penalty: net cycles per call lost when the sizes cannot be predicted; an upper bound "
                        "on the cost of branch mispredictions, not a count of them."])


def threshold_view(thr: dict) -> Table:
    cols = thr["columns"]
    rows = []
    for t in sorted({t for c in cols for t in c["cycles"]}):
        mark = " (reference)" if t == thr["reference"] else ""
        mark += " (glibc)" if t == thr.get("glibc") else ""
        rows.append([f"{t}{mark}"] + [_f(c["cycles"].get(t), 2) + (" *" if c["best"] == t else "") for c in cols])
    return table("rep stosb cut-over: net cycles per call per threshold (* = best)",
                 ["threshold"] + [f"{c['kernel']}: {c['stream']}" for c in cols], rows,
                 [f"The reference uses {thr['reference']} B; glibc's x86_rep_stosb_threshold here is "
                  f"{thr.get('glibc')} B (glibc's own memset, not these kernels)."])
