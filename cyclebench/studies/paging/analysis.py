"""Records into the study's rows: per-call / per-option / per-access core cycles, each normalised
to its baseline (the normal build, the plain array), with a flag when a figure is doubtful.

A figure is ``flagged`` when time_program marked it unstable (the clock moved between its
calibrations), its repetitions' interquartile range exceeds ``NOISY`` of the median, or it is not
positive (the difference drowned in noise); a ratio is flagged when either side is. Headline figures are medians of the paired n/2n differences."""
from __future__ import annotations

NOISY = 0.05


def _fig(rec: dict | None, per: float = 1.0) -> dict | None:
    """{"cycles", "ns", "flag", "report"} per unit (an iteration divided by ``per``)."""
    if rec is None:
        return None
    r = rec["result"]
    pi = r["per_iteration"]
    flag = (not r.get("stable", True)) or (pi.get("relative_spread") or 0) > NOISY or pi["median"] <= 0
    return {"cycles": pi["median"] / per, "ns": r["per_iteration_ns"]["median"] / per, "flag": bool(flag),
            "spread": pi.get("relative_spread"), "report": r.get("report", {})}


def _ratio(a, b):
    """a / b, and whether it is flagged; None when either side is not positive (noise swamped the
    difference: no ratio is better than a wrong one)."""
    if not a or not b:
        return None, False
    if a["cycles"] <= 0 or b["cycles"] <= 0:
        return None, True
    return a["cycles"] / b["cycles"], a["flag"] or b["flag"]


def _index(records, exp):
    return [r for r in records if r.get("experiment") == exp]


def splitstack(records) -> dict:
    recs = _index(records, "splitstack")
    idx = {(r["params"]["bench"], r["params"]["arg"], r["params"]["build"], r["params"]["signals"]): r for r in recs}
    rows = []
    for bench, arg in sorted({(b, a) for b, a, _, _ in idx if b in ("fib", "sum")}, key=lambda k: (k[0] != "fib", k[1])):
        normal = idx.get((bench, arg, "normal", "on"))
        calls = (normal or idx.get((bench, arg, "split", "on")))["result"]["report"].get("calls_per_iteration") or 1
        n = _fig(normal, calls)
        row = {"bench": bench, "arg": arg, "calls": calls, "normal": n}
        for sig in ("on", "off"):
            s = _fig(idx.get((bench, arg, "split", sig)), calls)
            row[f"split_{sig}"] = s
            row[f"ratio_{sig}"], row[f"ratio_{sig}_flag"] = _ratio(s, n)
            if s:
                rep = s["report"]
                its = idx[(bench, arg, "split", sig)]["result"]["iterations"][-1]
                row["switches_per_iteration"] = (rep.get("morestack_calls") or 0) / its
                row["segments"] = rep.get("segments_allocated")
        rows.append(row)
    hot = {}
    for key, name in (((("hot", 1, "normal", "on")), "normal"), (("hot", 0, "split", "on"), "split_no_crossing"),
                      (("hot", 1, "split", "on"), "split_crossing"), (("hot", 1, "split", "off"), "split_crossing_nosig")):
        f = _fig(idx.get(key))
        if f:
            hot[name] = f
    if "split_no_crossing" in hot:
        base = hot["split_no_crossing"]
        for name in ("split_crossing", "split_crossing_nosig"):
            if name in hot:
                hot[name]["extra"] = hot[name]["cycles"] - base["cycles"]
                hot[name]["extra_flag"] = hot[name]["flag"] or base["flag"]
    return {"rows": rows, "hot": hot}


def _bs_key(p):
    return (p["input"], p["layout"], p["kind"], p["page"])


def tree(records) -> dict:
    recs = _index(records, "tree")
    idx = {_bs_key(r["params"]): r for r in recs}
    rows = []
    for inp, layout in sorted({(k[0], k[1]) for k in idx}, key=lambda k: (k[0], k[1] != "soa")):
        plain = _fig(idx.get((inp, layout, "plain", 4096)))
        for page in sorted({k[3] for k in idx if k[:2] == (inp, layout) and k[2] != "plain"}):
            row = {"input": inp, "layout": layout, "page": page, "plain": plain}
            for kind in ("tree", "tree3"):
                f = _fig(idx.get((inp, layout, kind, page)))
                row[kind] = f
                row[f"{kind}_ratio"], row[f"{kind}_flag"] = _ratio(f, plain)
                row[f"{kind}_depth"] = f["report"].get("depth") if f else None
            rows.append(row)
    return {"rows": rows}


def random_access(records) -> dict:
    recs = _index(records, "random")
    idx = {(r["params"]["size"], r["params"]["kind"]): r for r in recs}
    rows = []
    for size in ("small", "large"):
        plain = _fig(idx.get((size, "plain")))
        if not plain:
            continue
        rec = idx[(size, "plain")]
        row = {"size": size, "elements": rec["params"]["elements"], "plain": plain}
        for kind in ("tree", "tree3"):
            f = _fig(idx.get((size, kind)))
            row[kind] = f
            row[f"{kind}_ratio"], row[f"{kind}_flag"] = _ratio(f, plain)
            row[f"{kind}_depth"] = f["report"].get("depth") if f else None
        rows.append(row)
    return {"rows": rows}


def hugepages(records, rand: dict, tr: dict) -> dict:
    recs = _index(records, "hugepages")
    rows = []
    for bench in ("chase", "blackscholes"):
        groups = {}
        for r in recs:
            if r["routine"] != bench:
                continue
            p = r["params"]
            g = p.get("layout", "") if bench == "blackscholes" else p["size"]
            per = 1.0
            groups.setdefault(g, {})[p["kind"]] = (_fig(r, per), p)
        for g, kinds in sorted(groups.items()):
            small, big = kinds.get("plain4k"), kinds.get("plain2m")
            if not small or not big:
                continue
            ratio, flag = _ratio(big[0], small[0])
            p = big[1]
            row = {"bench": bench, "what": g, "size": p.get("elements") or p.get("options"),
                   "input": p.get("input"), "k4": small[0], "m2": big[0], "ratio": ratio, "flag": flag,
                   "huge_kb_4k": small[0]["report"].get("anon_huge_kb"), "huge_kb_2m": big[0]["report"].get("anon_huge_kb")}
            row["tree_overhead"] = _tree_overhead(bench, g, p, rand, tr)
            row["resolved"] = ratio is not None
            rows.append(row)
    return {"rows": rows}


def _tree_overhead(bench, g, p, rand, tr):
    """The tree's extra cycles over plain for the same workload, when measured (for comparing
    with what 2 MiB pages win)."""
    if bench == "chase":
        r = next((x for x in rand["rows"] if x["size"] == g), None)
        if r and r.get("tree") and r.get("tree_ratio") is not None:
            return {"cycles": r["tree"]["cycles"] - r["plain"]["cycles"], "page": 4096, "kind": "tree"}
        return None
    rows = [x for x in tr["rows"] if x["input"] == p.get("input") and x["layout"] == g and x.get("tree_ratio")]
    if not rows:
        return None
    best = min(rows, key=lambda x: x["tree"]["cycles"])
    return {"cycles": best["tree"]["cycles"] - best["plain"]["cycles"], "page": best["page"], "kind": "tree (best page)"}


def instructions(records) -> list[dict]:
    out = []
    for r in _index(records, "instructions"):
        p, res = r["params"], r["result"]
        per = res["instructions"]
        if p["bench"] == "fib":
            per /= _fib_calls(p["arg"])
        elif p["bench"] == "sum":
            per /= p["arg"] + 1
        out.append({**p, "instructions": per, "method": res["method"]})
    return out


def _fib_calls(k: int) -> int:
    a, b = 1, 1
    for _ in range(1, k + 1):
        a, b = b, a + b
    return 2 * a - 1
