#!/usr/bin/env python3
"""Benchmark (not a test): cyclebench's instruction latency/throughput vs published Zen 4 figures,
and llvm-mca-16 -mcpu=znver4 on the same forms.

The forms and figures are in bench/data/zen4_published.csv (≥60 common forms: integer ALU,
shifts/rotates, multiply, BMI1/2, popcnt/lzcnt, SSE/AVX/AVX-512 integer and FP, FMA, shuffles,
conversions, GPR<->vector moves, loads, stores; each row names its source and a confidence). A
figure matches when it is within 5% of the published one. Latency is the largest over operand
pairs (uops.info's table column); loads and stores are compared on throughput only.

Run: python3 bench/instruction_accuracy.py [-n REPS] [--cpus 0,1] [--no-mca] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from cyclebench.instructions import Catalogue, published  # noqa: E402
from cyclebench.instructions.bulk import Selected, run  # noqa: E402

TOLERANCE = 0.05
DATA = ROOT / "data" / "zen4_published.csv"


def close(ours, theirs):
    if ours is None or theirs is None:
        return None
    return abs(ours - theirs) <= TOLERANCE * abs(theirs)


def rate(flags):
    flags = [f for f in flags if f is not None]
    return sum(flags), len(flags)


def fmt(v, bound=None):
    if v is None:
        return "—"
    return ("≤" if bound == "upper" else "") + f"{v:.2f}"


def mark(ok):
    return "" if ok is None else ("✓" if ok else "✗")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20, help="repetitions per measurement (default 20, as cyclebench inst)")
    ap.add_argument("--cpus", default="0,1", help="CPUs for the runners (default 0,1)")
    ap.add_argument("--no-mca", action="store_true", help="skip llvm-mca")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    args = ap.parse_args()

    records = published.read_csv(str(DATA))
    extra_rows = {}
    import csv
    with open(DATA, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            extra_rows[row["instruction"]] = row
    cat = Catalogue.load()
    names = list(records)
    sel = [Selected(n, cat.get(n)) for n in names]
    t0 = time.monotonic()
    docs = {d["form"]: d for d in run(sel, cpus=[int(c) for c in args.cpus.split(",")],
                                       measure_kwargs={"n_measurements": args.n})}
    elapsed = time.monotonic() - t0

    mca = {}
    if not args.no_mca:
        from cyclebench.instructions.llvm_mca import LlvmMcaUnavailable, predict
        try:
            for n in names:
                try:
                    p = predict(cat.get(n), iterations=200)
                    mca[n] = (p.latency, p.rthroughput)
                except Exception as e:  # llvm-mca rejects a form: no prediction
                    mca[n] = (None, None)
                    print(f"llvm-mca: {n}: {e}", file=sys.stderr)
        except LlvmMcaUnavailable as e:
            print(f"llvm-mca unavailable: {e}", file=sys.stderr)

    table = Table(title=f"Zen 4: cyclebench and llvm-mca vs published (match = within {TOLERANCE:.0%})")
    for col in ("form", "conf.", "pub lat", "cb lat", "", "mca lat", "", "pub tp", "cb tp", "", "mca tp", ""):
        table.add_column(col, justify="left" if col in ("form", "conf.") else "right")
    out = []
    for n in names:
        rec, d = records[n], docs[n]
        pl = rec.latency.hi if rec.latency else None
        pt = rec.throughput.hi if rec.throughput else None
        lat = (d.get("latency_max") or {})
        tp = (d.get("throughput") or {})
        ml, mt = mca.get(n, (None, None))
        row = {"form": n, "confidence": extra_rows[n]["confidence"], "source": extra_rows[n]["source"],
               "published_latency": pl, "published_throughput": pt,
               "cyclebench_latency": lat.get("value"), "cyclebench_latency_bound": lat.get("bound"),
               "cyclebench_throughput": tp.get("value"), "cyclebench_throughput_bound": tp.get("bound"),
               "mca_latency": ml, "mca_throughput": mt, "status": d["status"], "reason": d.get("reason")}
        row["cb_lat_ok"] = close(row["cyclebench_latency"], pl) if pl is not None else None
        row["cb_tp_ok"] = close(row["cyclebench_throughput"], pt)
        row["mca_lat_ok"] = close(ml, pl) if pl is not None else None
        row["mca_tp_ok"] = close(mt, pt)
        out.append(row)
        table.add_row(n, row["confidence"], fmt(pl), fmt(lat.get("value"), lat.get("bound")), mark(row["cb_lat_ok"]),
                      fmt(ml), mark(row["mca_lat_ok"]), fmt(pt), fmt(tp.get("value"), tp.get("bound")),
                      mark(row["cb_tp_ok"]), fmt(mt), mark(row["mca_tp_ok"]))
    console = Console(width=160)
    console.print(table)

    def summary(rows, label):
        cl, ct = rate(r["cb_lat_ok"] for r in rows), rate(r["cb_tp_ok"] for r in rows)
        ml_, mt_ = rate(r["mca_lat_ok"] for r in rows), rate(r["mca_tp_ok"] for r in rows)
        pct = lambda a: f"{a[0]}/{a[1]} ({100 * a[0] / a[1]:.0f}%)" if a[1] else "—"
        console.print(f"{label}: cyclebench latency {pct(cl)}, throughput {pct(ct)}"
                      + (f"; llvm-mca latency {pct(ml_)}, throughput {pct(mt_)}" if mca else ""))
    summary(out, f"all {len(out)} forms")
    summary([r for r in out if r["confidence"] == "high"], f"{sum(r['confidence'] == 'high' for r in out)} 'high' rows")
    failed = [r for r in out if r["status"] != "ok"]
    console.print(f"measured in {elapsed:.1f} s on CPUs {args.cpus} (-n {args.n}); {len(failed)} not measured"
                  + (": " + "; ".join(f"{r['form']}: {r['reason']}" for r in failed) if failed else ""))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
