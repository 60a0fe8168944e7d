"""The level detector finds known edges in synthetic curves."""
import numpy as np
import pytest

from cyclebench.studies.memory.config import sweep_sizes
from cyclebench.studies.memory.levels import agrees, detect

STEPS = ((32 << 10, 4.0), (512 << 10, 14.0), (16 << 20, 50.0), (None, 400.0))


def _curve(sizes, noise, seed, smooth=False):
    rng = np.random.default_rng(seed)
    out = []
    for s in sizes:
        for i, (edge, lat) in enumerate(STEPS):
            if edge is None or s <= edge:
                v = lat
                if smooth and i and s < 1.6 * STEPS[i - 1][0]:          # a gradual rise past an edge
                    v = (STEPS[i - 1][1] + lat) / 2
                break
        out.append(v * (1 + noise * rng.standard_normal()))
    return out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("smooth", [False, True])
def test_detects_known_steps(seed, smooth):
    sizes = sweep_sizes(4096, 1 << 30, 4)
    lv = detect(sizes, _curve(sizes, 0.03, seed, smooth))
    assert len(lv) == 4
    for L, (edge, lat) in zip(lv, STEPS):
        assert abs(L.latency / lat - 1) < 0.1
        if edge is not None:
            assert L.last_size <= edge * 1.01 and L.edge_hi > edge * 0.99 or smooth
            assert agrees(L, edge)


def test_flat_curve_is_one_level():
    sizes = sweep_sizes(4096, 1 << 20, 2)
    lv = detect(sizes, [4.0] * len(sizes))
    assert len(lv) == 1 and lv[0].edge_hi is None
