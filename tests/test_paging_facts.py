"""Facts of the paging study's C programs (no timing): the tree Array equals a flat array for
every page size and depth, split-stack builds call __morestack beyond a depth, blackscholes prices
match a float64 numpy reference, and every storage kind walks the same chase."""
import math

import numpy as np
import pytest

from cyclebench.studies.paging import checks, programs
from cyclebench.study.programs import run_ok


@pytest.fixture(scope="module")
def progs():
    return programs.build_all()


def test_tree_array_equals_a_flat_array_for_every_page_size_and_depth(monkeypatch):
    runs = []                                    # the check's own run of check_tree, read here too

    def kept(path, *args, **kwargs):
        runs.append((path, run_ok(path, *args, **kwargs)))
        return runs[-1][1]
    monkeypatch.setattr(checks, "run_ok", kept)
    text = checks.tree_check()                   # raises RoutineIncorrect on any difference
    assert "equal a flat array" in text
    ((path, run),) = runs
    assert "paging-check-tree" in str(path)
    lines = [ln.split() for ln in run.stdout.splitlines()[:-1]]
    seen = {(int(page), int(depth)) for page, _, _, depth, ok in lines if ok == "ok"}
    assert len(lines) == len([ln for ln in lines if ln[4] == "ok"])
    for page in (4096 << k for k in range(9)):
        assert {(page, 1), (page, 2), (page, 3)} <= seen, page


def test_split_stack_build_calls_morestack_beyond_a_depth(progs):
    calls = lambda build, depth: run_ok(progs.path(build), ["sum", depth, 1]).report  # noqa: E731
    shallow, deeper, deep = calls("split", 10), calls("split", 100), calls("split", 200_000)
    assert shallow["morestack_calls"] == deeper["morestack_calls"] <= 1     # no switch while the stack fits
    assert deep["morestack_calls"] > shallow["morestack_calls"] + 10        # beyond it, segment after segment
    assert deep["segments_allocated"] >= 10
    assert calls("normal", 200_000)["morestack_calls"] == 0
    assert deep["result"] == 200_000 * 200_001 // 2


def _normal_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


@pytest.mark.parametrize("layout,kind,page", [("soa", "plain", 4096), ("aos", "tree", 8192), ("soa", "tree3", 4096)])
def test_blackscholes_prices_match_a_float64_reference(progs, layout, kind, page):
    out = run_ok(progs.path("blackscholes"), [layout, kind, page, 3000, 1, "dump"]).stdout
    rows = np.array([ln.split() for ln in out.splitlines() if len(ln.split()) == 8], dtype=float)
    assert rows.shape == (3000, 8)
    s, k, r, v, t, put, price = rows[:, 1:].T
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    fv = k * np.exp(-r * t)
    ref = np.where(put == 1, fv * _normal_cdf(-d2) - s * _normal_cdf(-d1), s * _normal_cdf(d1) - fv * _normal_cdf(d2))
    assert np.allclose(price, ref, rtol=1e-5, atol=1e-4)   # float32 and the 5-term N(x) (error < 7.5e-8)
    assert 0.2 < put.mean() < 0.8


def test_every_storage_kind_walks_the_same_chase(progs):
    checks.same_answers(progs)                 # raises RoutineIncorrect on any difference
    out = run_ok(progs.path("chase"), ["tree", 4096, 1024, 1024, "dump"]).stdout.split()
    values = [int(x) for x in out[:1024]]
    assert sorted(values) == list(range(1024))  # a permutation ...
    x, seen = 0, set()
    for _ in range(1024):
        seen.add(x)
        x = values[x]
    assert len(seen) == 1024                    # ... with one cycle through every element
