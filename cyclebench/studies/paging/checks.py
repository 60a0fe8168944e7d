"""Correctness before anything is timed (prepare): the tree Array gives a flat array's elements
(c/check_tree.c), every storage kind gives blackscholes and the chase the same answers, the split
build really switches stack segments (and the normal build never does), and what THP offers.
A failed check raises RoutineIncorrect (exit code 11: not timed) with a hint; the facts go to the summary."""
from __future__ import annotations

from pathlib import Path

from cyclebench.errors import RoutineIncorrect as CheckFailed
from cyclebench.routines.program import build_program

from cyclebench.study.programs import Programs, run_ok

from .programs import C_DIR

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
KINDS = ("plain", "plain4k", "plain2m", "tree", "tree3")


def tree_check() -> str:
    exe = build_program([C_DIR / "check_tree.c"], cflags=["-O2", "-Wall"], name="paging-check-tree")
    out = run_ok(exe.path, [], timeout=120).stdout
    if not out.rstrip().endswith("all ok"):
        bad = [ln for ln in out.splitlines() if "BAD" in ln][:3]
        raise CheckFailed("the tree Array does not hold a flat array's elements: " + "; ".join(bad),
                          hint="fix c/tree_array.h (run the paging-check-tree program for every case)")
    return f"{len(out.splitlines()) - 1} trees (pages 4 KiB-1 MiB, depths 1-3) equal a flat array"


def split_check(p: Programs, depth: int = 100_000) -> dict:
    split = run_ok(p.path("split"), ["sum", depth, 1]).report
    normal = run_ok(p.path("normal"), ["sum", depth, 1]).report
    if not split.get("morestack_calls"):
        raise CheckFailed(f"the -fsplit-stack build made no __morestack call at recursion depth {depth:,}",
                          hint="check that gcc supports -fsplit-stack and that gold links it (-fuse-ld=gold)")
    if normal.get("morestack_calls") or split.get("result") != normal.get("result"):
        raise CheckFailed("the normal build switched stacks, or the two builds disagree on the sum",
                          hint="rebuild: clear ~/.cache/cyclebench/routines/paging-*")
    return split


def same_answers(p: Programs) -> None:
    for layout in ("soa", "aos"):
        sums = {k: run_ok(p.path("blackscholes"), [layout, k, 8192, 3000, 1]).report["checksum"]
                for k in KINDS}
        if max(sums.values()) - min(sums.values()) > 1e-6 * abs(sums["plain"]):
            raise CheckFailed(f"blackscholes {layout} prices differ between storage kinds: {sums}",
                              hint="fix the element access in c/storage.h or c/blackscholes.c")
    for n in (1024, 1 << 16):
        last = {k: run_ok(p.path("chase"), [k, 4096, n, 50_000]).report["last"] for k in KINDS}
        if len(set(last.values())) != 1:
            raise CheckFailed(f"the chase ends on different elements per storage kind: {last}",
                              hint="fix the element access in c/storage.h or c/chase.c")


def thp() -> str:
    try:
        return THP.read_text().strip()
    except OSError:
        return "not exposed"


def run_all(p: Programs) -> dict:
    tree = tree_check()
    s = split_check(p)
    same_answers(p)
    return {"tree_check": tree, "thp": thp(),
            "split_check": f"sum(100,000) in the split build made {s['morestack_calls']} segment switches and "
                           f"allocated {s['segments_allocated']} segments; the normal build none."}
