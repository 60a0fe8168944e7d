"""Cycles of one vector-to-integer (or integer-to-vector) transfer beside k = 0..8 integer
operations of one form, each form's copies independent (ports/mixes.py, the mixes the resource
inference measures): which integer forms lose time to the transfer, and how much.

    flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/transfer_grid.py [--k 0,1,2,4,8]

Prints one row per transfer and integer form: cycles per unit of the mix (one transfer and k of
the integer form) for each k, then each integer form alone at those k.  docs/ports-findings.md ("A
transfer holds the integer side it writes") shows one run on Zen 4.
"""
from __future__ import annotations

import argparse

TRANSFERS = ("UCOMISS (XMM, XMM)", "COMISS (XMM, XMM)", "UCOMISD (XMM, XMM)", "MOVMSKPS (R32, XMM)",
             "CVTTSD2SI (R64, XMM)", "MOVD (R32, XMM)", "PEXTRD (R32, XMM, I8)", "CVTSI2SD (XMM, R64)",
             "MOVD (XMM, R32)")
INTEGER = ("ADD_01 (R64, R64)", "CMP_39 (R64, R64)", "AND (R64, I32)", "MOV (R64, I64)", "LEA_B_D8 (R64)",
           "LEA_B_I (R64)", "LEA_B_I_D8 (R64)", "MOVSXD (R64, R32)", "SETNBE (R8)", "CMOVNBE (R64, R64)",
           "SHL (R64, I8)", "MOV (R64, M64)", "MOV (M64, R64)")


def main() -> None:
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.mixes import measure_mix
    from cyclebench.instructions.session import Session
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", default="0,1,2,3,4,5,6,7,8", help="counts of the integer form")
    ks = [int(k) for k in ap.parse_args().k.split(",")]
    cat, session = Catalogue.load(), Session(budget=0.5)
    print("k:" + "".join(f"{k:>6}" for k in ks))
    for t in TRANSFERS + (None,):
        print(f"== {t or 'alone'}")
        for i in INTEGER:
            forms = {n: cat.get(n) for n in (t, i) if n}
            row = []
            for k in ks:
                counts = dict(({t: 1} if t else {}), **({i: k} if k else {}))
                c = measure_mix(session, forms, counts).cycles if counts else None
                row.append(f"{c:6.2f}" if c else "     -")
            print(f"  {i:<20}" + "".join(row), flush=True)


if __name__ == "__main__":
    main()
