"""Facts about the memory study's chains and size sweeps (no timing)."""
import numpy as np
import pytest

from cyclebench.errors import UsageError
from cyclebench.studies.memory import chains
from cyclebench.studies.memory.config import sweep_sizes


def _one_cycle_per_segment(c: chains.Chain) -> None:
    succ = c.successors()
    lines = c.lines()
    assert len(succ) == c.n == len(set(lines.tolist()))           # no line twice
    for seg in lines.reshape(c.segments, c.seg_len):
        start, cur, seen = int(seg[0]), int(seg[0]), 0
        while True:
            cur, seen = succ[cur], seen + 1
            if cur == start:
                break
        assert seen == c.seg_len                                  # the pointers close one cycle per segment


@pytest.mark.parametrize("layout", chains.LAYOUTS)
@pytest.mark.parametrize("size", [64, 4096, 40960, 1 << 20, 3 * 4096 + 640])
def test_every_chain_visits_every_line_once(layout, size):
    c = chains.build(layout, size, group_pages=4, seed=3)
    assert sorted(c.lines().tolist()) == list(range(size // 64))   # every line of the region, once
    assert c.span == size
    _one_cycle_per_segment(c)


def test_layouts_are_what_they_say():
    n = 64 * 64
    seq = chains.build("sequential", n * 64).lines()
    assert (np.diff(seq) == 1).all()
    lm = chains.build("lmbench", n * 64, seed=1).lines().reshape(-1, 64)
    assert ((lm // 64) == (lm[:, :1] // 64)).all()                # a page at a time ...
    assert (lm % 64 == lm[0] % 64).all()                           # ... lines in one fixed order
    mc = chains.build("multichase", n * 64, group_pages=4, seed=1).lines().reshape(-1, 256)
    assert ((mc // 256) == (mc[:, :1] // 256)).all()               # a group of pages at a time


@pytest.mark.parametrize("page", [4096, 2 << 20])
def test_tlb_chain_one_line_per_page(page):
    for dense in (False, True):
        c = chains.tlb(512, page, dense=dense, seed=2)
        _one_cycle_per_segment(c)
        lines = c.lines()
        lpp = page // 64
        if dense:
            assert sorted(lines.tolist()) == list(range(512))
        else:
            assert sorted((lines // lpp).tolist()) == list(range(512))   # every page once
            assert len(set((lines % 64).tolist())) == 64                  # spread over the L1 sets


@pytest.mark.parametrize("k", [1, 2, 5, 16])
def test_parallel_chains_split_the_lines(k):
    c = chains.parallel(1 << 20, k, seed=4)
    assert c.segments == k
    _one_cycle_per_segment(c)
    per = (1 << 20) // 64 // k
    for j, seg in enumerate(c.lines().reshape(k, per)):
        assert sorted(seg.tolist()) == list(range(j * per, (j + 1) * per))


def test_sweep_sizes_are_what_was_asked():
    s = sweep_sizes(4096, 1 << 20, 2)
    assert s[0] == 4096 and s[-1] == 1 << 20 and s == sorted(set(s))
    assert len(s) == 2 * 8 + 1
    assert all(x % 64 == 0 for x in s) and all(x % 4096 == 0 for x in s if x >= 1 << 20)
    assert {1 << i for i in range(12, 21)} <= set(s)
    e = sweep_sizes(4096, 1 << 20, 1, edges=(32768,), around=(0.75, 1.25))
    assert set(e) - set(sweep_sizes(4096, 1 << 20, 1)) == {24576, 40960}
    with pytest.raises(UsageError):
        sweep_sizes(8192, 4096, 1)
