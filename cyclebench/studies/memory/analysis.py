"""From records to the study's table models: the latency curves, the detected levels beside sysfs
and CPUID, TLB reach, MLP, bandwidth and loaded latency. Every row carries its measurement's
stability flag; figures from an unstable measurement are marked where they are quoted."""
from __future__ import annotations

from collections import defaultdict

from .levels import agrees, detect

LEVEL_NAMES = ("L1d", "L2", "L3", "L4")
DRAM_NS = 60.0         # no cache level of a current x86 core takes this long; DRAM takes longer
HUGE_OK = 0.9          # share of a region that must be in huge pages to call it 2 MiB-backed


def _fig(rec: dict, event: str = "cycles") -> dict:
    return rec["result"][event]


def _row(rec: dict) -> dict:
    c, n = _fig(rec), _fig(rec, "ns")
    rng = rec["result"].get("range")
    return {"cycles": c["value"], "pm": c["uncertainty"], "ns": n["value"], "stable": rec["result"]["stable"],
            "bound": c.get("upper_bound"), "variable": bool(rec["result"].get("variable")),
            "between": varies_between(rec["result"]), "p10": rng[0] if rng else None, "p90": rng[1] if rng else None}


def varies_between(res: dict) -> bool:
    """The figure is a settled median over processes (processes.py), not one process's figure."""
    return bool((res.get("between") or {}).get("settled"))


def latency(records: list[dict]) -> dict:
    """{"rows": [...], "curves": {(layout, page): [(size, cycles, ns, stable)]}}"""
    rows, curves = [], defaultdict(list)
    for r in records:
        if r["experiment"] != "latency":
            continue
        p = r["params"]
        hk = p.get("huge_kb")
        cover = None if hk is None else min(1.0, hk * 1024 / max(p["span"], 1))
        row = {"layout": p["layout"], "page": p["page"], "size": p["size"], **_row(r), "huge_share": cover}
        rows.append(row)
        curves[(p["layout"], p["page"])].append(row)
    for v in curves.values():
        v.sort(key=lambda x: x["size"])
    return {"rows": rows, "curves": dict(curves)}


def choose_curve(lat: dict) -> tuple[tuple[str, str] | None, str]:
    """The curve levels are detected on: random over lines with 2 MiB pages when the runner got
    huge pages (no TLB misses blur the cache edges), else with 4 KiB pages."""
    big = [r for r in lat["curves"].get(("random", "2m"), []) if r["size"] >= 4 << 20]
    if big and all((r["huge_share"] or 0) >= HUGE_OK for r in big):
        return ("random", "2m"), "random over lines, 2 MiB pages (huge pages confirmed in the runner)"
    if ("random", "4k") in lat["curves"]:
        why = "random over lines, 4 KiB pages" + (" (2 MiB pages were not confirmed)" if big else "")
        return ("random", "4k"), why
    if lat["curves"]:
        k = next(iter(lat["curves"]))
        return k, f"{k[0]}, {k[1]} pages (no random curve was measured)"
    return None, "no latency curve was measured"


def levels_table(lat: dict, spec: dict) -> dict:
    key, why = choose_curve(lat)
    if key is None:
        return {"curve": why, "rows": [], "levels": []}
    pts = lat["curves"][key]
    lv = detect([p["size"] for p in pts], [p["cycles"] for p in pts])
    unstable = {p["size"] for p in pts if not p["stable"]}
    ghz = _ghz(pts)
    sys_sizes = {c["level"]: c["size"] for c in spec.get("sysfs", []) if c.get("type") in ("Data", "Unified")}
    cp_sizes = {c["level"]: c["size"] for c in spec.get("cpuid", []) if c.get("type") in ("Data", "Unified")}
    rows = []
    dram = 0
    described = max(len(sys_sizes), len(cp_sizes), 1)
    largest = max([*sys_sizes.values(), *cp_sizes.values()], default=None)
    for i, L in enumerate(lv):
        # caches by position, except that a plateau at DRAM latency (>= DRAM_NS) or past the
        # levels described is memory; a second memory plateau is a step within it (TLB reach).
        # A plateau past the levels described that is faster than DRAM and ends inside the largest
        # described cache is a step within that cache: a shared L3 of which other tenants leave
        # this core a part gives one (4-8 MiB at 60 cycles inside a 32 MiB L3 on a Zen 4 guest).
        slow = ghz is not None and L.latency / ghz >= DRAM_NS
        last = i == len(lv) - 1 and len(lv) > 1
        inside = (not slow and not last and i >= described and largest is not None
                  and L.last_size < largest and not rows[-1]["level"].startswith("DRAM"))
        if inside:
            base = rows[-1]["level"].split(",")[0]
            steps = sum(r["level"].split(",")[0] == base for r in rows)
            name = f"{base}, step {steps + 1}"
        elif slow or i >= described or last:
            dram += 1
            name = "DRAM" if dram == 1 else f"DRAM, step {dram}"
        else:
            name = LEVEL_NAMES[min(i, 3)]
        n = i + 1
        desc_sys, desc_cp = (None, None) if name.startswith("DRAM") or inside else (sys_sizes.get(n), cp_sizes.get(n))
        ok = agrees(L, desc_sys)
        plateau = [p for p in pts if L.first_size <= p["size"] <= L.last_size]
        rows.append({"level": name, "latency": L.latency, "ns": L.latency / ghz if ghz else None,
                     "first": L.first_size, "last": L.last_size, "edge_hi": L.edge_hi, "points": L.points,
                     "thin": L.thin, "sloped": L.sloped,
                     "unstable_points": sum(p["size"] in unstable for p in plateau),
                     "sysfs": desc_sys, "cpuid": desc_cp, "agrees": ok})
    return {"curve": why, "key": key, "rows": rows, "levels": [x.to_dict() for x in lv]}


def _ghz(pts) -> float | None:
    r = [p["cycles"] / p["ns"] for p in pts if p["ns"]]
    return sorted(r)[len(r) // 2] if r else None


def tlb_table(records: list[dict], tlb_desc: dict) -> dict:
    by = defaultdict(dict)
    for r in records:
        if r["experiment"] == "tlb":
            p = r["params"]
            by[(p["page"], p["pages"])]["dense" if p["dense"] else "paged"] = _row(r)
    rows = []
    for (page, n), d in sorted(by.items()):
        a, b = d.get("paged"), d.get("dense")
        rows.append({"page": page, "pages": n, "paged": a and a["cycles"], "dense": b and b["cycles"],
                     "penalty": a["cycles"] - b["cycles"] if a and b else None,
                     "stable": bool(a and b and a["stable"] and b["stable"]),
                     "between": bool(a and b and (a["between"] or b["between"]))})
    knees = {}
    for page in ("4k", "2m"):
        pts = [x for x in rows if x["page"] == page and x["paged"]]
        if len(pts) >= 3:
            lv = detect([x["pages"] for x in pts], [x["paged"] for x in pts], min_step=0.15)
            knees[page] = [{"last_pages": L.last_size, "next_pages": L.edge_hi, "cycles": L.latency,
                            "step": (lv[i + 1].latency - L.latency) if i + 1 < len(lv) else None}
                           for i, L in enumerate(lv)]
    return {"rows": rows, "knees": knees, "cpuid": tlb_desc}


def mlp_table(records: list[dict]) -> dict:
    rs = sorted((r for r in records if r["experiment"] == "mlp"), key=lambda r: r["params"]["chains"])
    one = next((r for r in rs if r["params"]["chains"] == 1), None)
    lat1 = _fig(one)["value"] if one else None
    rows = []
    for r in rs:
        k, c, ns = r["params"]["chains"], _fig(r)["value"], _fig(r, "ns")["value"]
        thr = k / c if c > 0 else None
        rows.append({"chains": k, "cycles": c, "ns": ns, "loads_per_cycle": thr,
                     "gbs": 64 * k / ns if ns > 0 else None,
                     "outstanding": thr * lat1 if thr and lat1 else None, "stable": r["result"]["stable"],
                     "between": varies_between(r["result"])})
    return {"rows": rows, "lat1": lat1}


def bandwidth_table(records: list[dict]) -> dict:
    rows = []
    for r in records:
        if r["experiment"] != "bandwidth":
            continue
        p = r["params"]
        res = [r["result"]] + ([r["other"]] if "other" in r else [])
        # best (STREAM): fastest B minus fastest A; B/cycle at each run's own calibrated clock
        ns = [x.get("best_ns") or x["ns"]["value"] for x in res]
        ghz = [x["backend"].get("calibrated_ghz") or 0.0 for x in res]
        if min(ns) <= 0 or min(ghz) <= 0:
            continue
        rows.append({"level": p["level"], "kernel": p["kernel"], "op": p["op"], "width": p["width"], "nt": p["nt"],
                     "cpus": p["cpus"], "array_bytes": p["array_bytes"], "footprint": p["array_bytes"] * p["arrays"],
                     "bpc": sum(p["stream_bytes"] / n / g for n, g in zip(ns, ghz)) / len(ns),
                     "median_gbs": sum(p["stream_bytes"] / x["ns"]["value"] for x in res if x["ns"]["value"] > 0),
                     "gbs": sum(p["stream_bytes"] / n for n in ns),
                     "gbs_alloc": sum(p["allocate_bytes"] / n for n in ns),
                     "overlap": r.get("overlap"), "stable": all(x["stable"] for x in res),
                     "between": varies_between(res[0]),
                     "range_gbs": _range_gbs(res[0], p),
                     "median_stable": all(x.get("median_stable", x["stable"]) for x in res),
                     "processes": len(res[0].get("process_best_ns") or [None])})
    return {"rows": rows}


def _range_gbs(res: dict, p: dict) -> list[float] | None:
    """GB/s over the range of the processes' bests (ns a pass; for a pair, ns a pass of both
    together, 1 / the sum of their passes per ns, so the same division gives the summed GB/s)."""
    rng = (res.get("between") or {}).get("range")
    return [p["stream_bytes"] / ns for ns in reversed(rng)] if rng else None


def loaded_table(records: list[dict]) -> dict:
    out = {}
    for r in records:
        if r["experiment"] == "loaded":
            row = _row(r)
            if "stream" in r:
                s = r["stream"]
                row["stream"] = {**s, "bytes_per_cycle": (sorted(s["bytes_per_cycle"])[len(s["bytes_per_cycle"]) // 2]
                                                           if s["bytes_per_cycle"] else None)}
            out["loaded" if r["params"]["loaded"] else "idle"] = row
    return out


def prefetch_verdicts(lat: dict) -> list[dict]:
    """At the largest size measured in 4 KiB pages, each layout's latency against random's."""
    curves = {k[0]: v for k, v in lat["curves"].items() if k[1] == "4k"}
    if "random" not in curves:
        return []
    top = curves["random"][-1]
    out = []
    for layout, pts in curves.items():
        same = [p for p in pts if p["size"] == top["size"]]
        if same:
            p = same[0]
            out.append({"layout": layout, "size": p["size"], "cycles": p["cycles"], "ns": p["ns"],
                        "vs_random": p["cycles"] / top["cycles"], "stable": p["stable"]})
    return out
