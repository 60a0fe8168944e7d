#!/usr/bin/env python3
"""Experiment (not a test, measures nothing): refit a ``cyclebench ports`` model's usages to
saved random mixes of many forms, and write a copy of the results file with the refitted model.

Pairs of forms cannot show that small shares of one resource held by many forms add up past a
block's time; mixes of many forms can (PMEvo fits its mapping to such mixes).  This script takes
the random mixes of saved block files (bench/ports_accuracy.py --save) as training mixes and
solves one linear program (scipy's HiGHS) over the usages the predictor charges as they are:

* every training mix: no abstract resource's load above the mix's time (+ ``--tol``), the
  counts as predict.decode / form_of / upper.weights give them (a mix read at T cycles ran no
  resource longer than T);
* with ``--lower``: a mix the predictor puts more than 10% under while an abstract resource
  sets its figure gets that resource's load at least its time (- ``--tol``); with ``--keep`` as
  well, every other mix an abstract resource sets keeps that load at least min(the prediction,
  its time - ``--tol``), so a mix that fits stays fitted;
* every reading of the results file stays explained as the solve had it: no load above
  max(its time + ``--tol``, the load it has now), and the resource with the largest load, where it
  reaches the time and no bound (a form's floor, the front end) does, still reaching it;
* a usage that the predictor's views change (repair.mended, charged_whole, mul_loads.capped,
  vector_loads.view, apart.view, crowding.unnested), a vector-loading form's usage of the load
  path, and a blocker's usage of its own resource are held; the rest may move within
  [0, the form's time alone];
* the objective: the summed absolute change of the usages, plus ``--slack`` per mix-relative
  cycle of slack on any training constraint (so it is always feasible).

Only ``--only-bound`` restricts the training mixes to those whose figure an abstract resource sets.
Replay the written copy with bench/ports_accuracy.py --replay to see what it predicts.

Run: python3 bench/ports_refit.py --model ports.jsonl --out refit.jsonl --latencies lat.jsonl
                                  [--lower [--keep]] [--only-bound] [--tol 0.03] [--slack 100] blocks-*.jsonl
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, vstack

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.instructions.catalogue import Catalogue  # noqa: E402
from cyclebench.instructions.ports import apart, crowding, upper, vector_loads  # noqa: E402
from cyclebench.instructions.ports.dataflow import zero_idiom  # noqa: E402
from cyclebench.instructions.ports.latency import from_file  # noqa: E402
from cyclebench.instructions.ports.ensemble import one  # noqa: E402
from cyclebench.instructions.ports.predict import decode, load  # noqa: E402
from cyclebench.instructions.ports.repair import readings  # noqa: E402
from cyclebench.instructions.ports.run import load as load_run  # noqa: E402

RANDOM_SET = "random mixes of modelled forms"


def training(files, loaded, cat, lats):
    """(charged counts, measured cycles, predicted, the abstract resource that set it or None)."""
    out = []
    for fn in files:
        for line in open(fn):
            d = json.loads(line)
            if d.get("set") != RANDOM_SET:
                continue
            p = one(d["block"], loaded, cat, lats)
            if p.unknown:
                continue
            counts: dict[str, float] = {}
            instructions = decode(d["block"])
            for ins, f, w in zip(instructions, p.forms, upper.weights(instructions, loaded.upper_factor)):
                if not zero_idiom(ins) and f in loaded.model.usage:
                    counts[f] = counts.get(f, 0.0) + w
            sets = p.cycles == p.resource_bound and p.binding_resource in loaded.model.resources
            bound = p.binding_resource if sets else None
            out.append((counts, d["measured"], p.cycles, bound))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--latencies", type=Path, required=True)
    ap.add_argument("--tol", type=float, default=0.03)
    ap.add_argument("--slack", type=float, default=100.0)
    ap.add_argument("--lower", action="store_true")
    ap.add_argument("--only-bound", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    cat = Catalogue.load()
    raw, report = load_run(a.model)
    loaded = load(a.model)
    seen = crowding.unnested(apart.view(vector_loads.view(loaded.model, cat), cat))   # as predict charges
    lats = from_file(a.latencies, cat, sorted(seen.usage))[0]
    path = set(vector_loads.path(loaded.model, cat)[0])
    own = {b: r for r, b in raw.probes.items()}
    var, u0 = {}, []
    for f, u in raw.usage.items():
        form = cat.by_name.get(f)
        vec = form is not None and vector_loads._memory(form) is not None
        for r in raw.resources:
            v = u.get(r, 0.0)
            if v > 1e-4 and own.get(f) != r and abs(seen.usage[f].get(r, 0.0) - v) <= 1e-3 \
                    and not (vec and r in path):
                var[f, r] = len(u0)
                u0.append(v)
    nv = len(u0)

    def row(counts, r):
        idx, coef, const = [], [], 0.0
        for f, n in counts.items():
            if (f, r) in var:
                idx.append(var[f, r]); coef.append(n)
            else:
                const += n * seen.usage[f].get(r, 0.0)
        return idx, coef, const

    rows = []       # (indices, coefficients, low, high, (sign, mix time) of a slack or None)
    for counts, T in readings(a.model):
        if any(f not in seen.usage for f in counts):
            continue
        cur = {r: sum(n * seen.usage[f].get(r, 0.0) for f, n in counts.items()) for r in raw.resources}
        for r in raw.resources:
            idx, coef, const = row(counts, r)
            if idx:
                rows.append((idx, coef, -np.inf, max(T * (1 + a.tol), cur[r]) - const, None))
        bound = max([sum(counts.values()) / seen.width]
                    + [n * seen.alone[f] for f, n in counts.items() if f in seen.alone])
        b = max(cur, key=cur.get)
        if bound < T * (1 - a.tol) <= cur[b]:
            idx, coef, const = row(counts, b)
            if idx:
                rows.append((idx, coef, T * (1 - a.tol) - const, np.inf, None))
    mixes = training(a.files, loaded, cat, lats)
    for counts, T, pred, bound in mixes:
        if a.only_bound and bound is None:
            continue
        for r in raw.resources:
            idx, coef, const = row(counts, r)
            if idx:
                rows.append((idx, coef, -np.inf, T * (1 + a.tol) - const, (-1, T)))
        if a.lower and bound and (pred < 0.9 * T or a.keep):
            idx, coef, const = row(counts, bound)
            need = T * (1 - a.tol) if pred < 0.9 * T else min(pred, T * (1 - a.tol))
            if idx:
                rows.append((idx, coef, need - const, np.inf, (1, T)))
    # variables: usages | raised by | lowered by | slacks
    slacks = sum(1 for *_, s in rows if s)
    n = 3 * nv + slacks
    I, J, V, lo, hi = [], [], [], [], []
    k = s_id = 0
    for idx, coef, low, high, s in rows:
        I += [k] * len(idx); J += idx; V += coef
        if s:
            I.append(k); J.append(3 * nv + s_id); V.append(s[0] * s[1]); s_id += 1
        lo.append(low); hi.append(high); k += 1
    A = coo_matrix((V, (I, J)), shape=(k, n)).tocsr()
    lo, hi = np.array(lo), np.array(hi)
    up, down = np.isfinite(hi), np.isfinite(lo)
    eq = coo_matrix(([1.0] * nv + [-1.0] * nv + [1.0] * nv,
                     (list(range(nv)) * 3, list(range(3 * nv)))), shape=(nv, n))
    c = np.concatenate([np.zeros(nv), np.ones(2 * nv), np.full(slacks, a.slack)])
    alone = [raw.alone.get(f, np.inf) for f, _ in var]
    res = linprog(c, A_ub=vstack([A[up], -A[down]]), b_ub=np.concatenate([hi[up], -lo[down]]),
                  A_eq=eq, b_eq=np.array(u0), bounds=[(0, t) for t in alone] + [(0, None)] * (2 * nv + slacks),
                  method="highs")
    if res.x is None:
        sys.exit(f"no solution: {res.message}")
    x = res.x
    moved = [(f, r, u0[i], x[i]) for (f, r), i in var.items() if abs(x[i] - u0[i]) > 1e-3]
    print(f"{len(mixes)} training mixes, {nv} free usages, {len(rows)} constraints; "
          f"L1 change {np.abs(x[:nv] - u0).sum():.3f}, {int((x[3 * nv:] > 1e-6).sum())} slacks used; "
          f"{len(moved)} usages moved")
    for f, r, old, new in sorted(moved, key=lambda t: (t[1], t[0])):
        print(f"  {f:42s} {r:4s} {old:.3f} -> {new:.3f}")
    for (f, r), i in var.items():
        raw.usage[f][r] = float(x[i])
    shutil.copy(a.model, a.out)
    with open(a.out, "a") as fh:
        fh.write(json.dumps({"type": "model", "model": raw.to_json(), "report": report}) + "\n")


if __name__ == "__main__":
    main()
