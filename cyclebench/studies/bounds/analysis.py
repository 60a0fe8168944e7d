"""Records into findings: per part, rows with our figures and the published ones beside them.

A timed figure is flagged (``flag``) when its measurement was unstable or, for whole programs,
the interquartile range over the repetitions exceeds NOISY of the median."""
from __future__ import annotations

from . import published as pub
from . import snippets

NOISY = 0.05
DISAGREE = 0.10


def _snip(rec) -> dict:
    r = rec["result"]
    ok = r["cycles"] > 0                     # a burst can leave B - A below zero: no figure
    return {"cycles": r["cycles"], "ipc": r["ipc"] if ok else None, "instructions": r["instructions"],
            "per_cycle": 1 / r["cycles"] if ok else None, "flag": not r["stable"] or not ok}


def instructions(records) -> list[dict]:
    by = {(r["params"]["kind"], r["params"]["code"]): r for r in records if r["experiment"] == "instructions"}
    out = []
    for row in snippets.instruction_rows():
        rec = by.get((row.kind, row.code))
        if rec is None:
            continue
        p = pub.INSTRUCTIONS.get(row.name) if row.kind == "bnd" else None
        out.append({"name": row.name, "kind": row.kind, "code": row.code, "replaces": row.replaces, **_snip(rec),
                    "label": snippets.NOP if row.kind == "bnd" else "", "published": p})
    return out


def sequences(records) -> list[dict]:
    by = {r["params"]["code"]: r for r in records if r["experiment"] == "sequences"}
    out = []
    for access in ("load", "store"):
        for check in snippets.CHECKS:
            row = {"access": access, "check": check, "name": f"{snippets.CHECK_NAMES[check]} {access}".strip(),
                   "published_ipc": pub.SEQUENCES[(access, check)]}
            for kind in snippets.KINDS:
                rec = by.get(snippets.sequence(access, check, kind).code)
                row[kind] = _snip(rec) if rec else None
            out.append(row)
    return out


def _prog(res) -> dict:
    """A whole program's figure: ``cycles`` is time_program's ``best`` (the fastest n run against
    the fastest 2n run: on this host, noisy in bursts, the least disturbed figure; the paired
    median is kept as ``median``), flagged by the spread of the paired differences."""
    s = res["per_iteration"]
    spread = s.get("relative_spread")
    return {"cycles": res["best"], "median": s["median"], "seconds": res["per_iteration_ns"]["median"] / 1e9,
            "flag": (not res["stable"]) or (spread is not None and spread > NOISY), "report": res.get("report", {})}


def overhead(records) -> list[dict]:
    """Per kernel and build: ``ratio`` over native from the thread CPU time per pass the program
    reports (``best_pass_ns``: the fastest of 20 slices of a 2n run's passes, the fastest over the
    repetitions' 2n runs; preemption by other processes does not count in CPU time, and the fastest
    slice of the fastest run avoids the host's bursts, which can halve the speed for a whole run),
    ``ratio_wall`` from time_program's wall-clock n/2n difference. A
    ratio is flagged when the two disagree by more than DISAGREE."""
    out = []
    for r in (x for x in records if x["experiment"] == "overhead"):
        k, n = r["params"]["kernel"], r["params"]["size"]
        builds = {}
        for m in r["members"]:
            f = _prog(m["result"])
            ghz = m["result"]["backend"]["calibrated_ghz"]
            best = [x["best_pass_ns"] for x in m["result"].get("reports", []) if x.get("best_pass_ns")]
            f["cpu_cycles"] = min(best) * ghz if best else None
            builds[m["build"]] = f
        nat = builds["native"]
        accesses = n // 3 if k == "arraywrite" else n // 2 if k == "arrayread" else n if k == "struct" else 5 * n
        for b in builds.values():
            b["ratio_wall"] = b["cycles"] / nat["cycles"] if min(nat["cycles"], b["cycles"]) > 0 else None
            b["ratio"] = (b["cpu_cycles"] / nat["cpu_cycles"]) if b["cpu_cycles"] and nat["cpu_cycles"] else None
            # two independent methods agreeing is the check here: the wall figures' own spread is
            # always wide on this host, and the headline does not rest on them
            b["ratio_flag"] = (b["ratio"] is None or b["ratio_wall"] is None
                               or abs(b["ratio_wall"] / b["ratio"] - 1) > DISAGREE)
            b["per_access"] = (b["cpu_cycles"] or 0) / max(1, accesses)
        pubs = {f"{c}_{t}": pub.slowdown(k, c, t) for c in ("gcc", "icc") for t in ("mpx", "mpx_only_write",
                                                                                   "mpx_no_narrow_bounds")}
        out.append({"kernel": k, "size": n, "accesses": accesses, "builds": builds, "published": pubs})
    order = {k: i for i, k in enumerate(("arraywrite", "arrayread", "struct", "ptrcreation"))}
    return sorted(out, key=lambda r: order.get(r["kernel"], 9))


def tables(records) -> list[dict]:
    out = []
    for r in (x for x in records if x["experiment"] == "tables"):
        v, n = r["params"]["variant"], r["params"]["chunks"]
        builds = {m["build"]: _prog(m["result"]) for m in r["members"]}
        nat = builds["native"]
        for b in builds.values():
            b["ratio"] = b["cycles"] / nat["cycles"] if min(nat["cycles"], b["cycles"]) > 0 else None
            b["ratio_flag"] = b["flag"] or nat["flag"]
        out.append({"variant": v, "chunks": n, "builds": builds, "published": pub.OS[v][0]})
    return sorted(out, key=lambda r: (r["variant"], r["chunks"]))


def race(records) -> list[dict]:
    out = [{"mode": r["params"]["mode"], "build": r["params"]["build"], "elements": r["params"]["elements"],
            "iterations": r["params"]["iterations"], **{k: v for k, v in r["result"].items() if k != "outcomes"}}
           for r in records if r["experiment"] == "race"]
    return sorted(out, key=lambda r: (r["mode"], ("mpx_emu", "asan", "native").index(r["build"])))


def analyse(records) -> dict:
    return {"instructions": instructions(records), "sequences": sequences(records), "overhead": overhead(records),
            "tables": tables(records), "race": race(records)}
