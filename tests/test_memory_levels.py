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


def _named(steps, caches):
    """levels_table's names for a fabricated random/4k curve at 1 GHz (cycles = ns)."""
    from cyclebench.studies.memory.analysis import levels_table
    sizes = sweep_sizes(4096, 256 << 20, 4)
    pts = [{"size": s, "cycles": next(lat for edge, lat in steps if edge is None or s <= edge), "stable": True}
           for s in sizes]
    for p in pts:
        p["ns"] = p["cycles"]
    spec = {"sysfs": [{"level": i + 1, "size": c, "type": "Unified"} for i, c in enumerate(caches)]}
    return [r["level"] for r in levels_table({"curves": {("random", "4k"): pts}}, spec)["rows"]]


def test_a_plateau_inside_the_largest_cache_is_a_step_of_it_not_memory():
    # a shared 32 MiB L3 of which other tenants leave this core 2.8 MiB fast and up to 8 MiB slower (58 ns, not memory)
    steps = ((32 << 10, 4.0), (362 << 10, 14.0), (int(2.83 * (1 << 20)), 45.0), (8 << 20, 58.0), (None, 550.0))
    assert _named(steps, (32 << 10, 1 << 20, 32 << 20)) == ["L1d", "L2", "L3", "L3, step 2", "DRAM"]
    # the same plateau past a described cache it cannot lie in stays memory
    assert _named(steps, (32 << 10, 1 << 20, 2 << 20)) == ["L1d", "L2", "L3", "DRAM", "DRAM, step 2"]


def test_a_sloped_l3_without_a_flat_plateau_is_still_a_level():
    # a random 2 MiB-page curve measured on a Zen 4 guest (quick sweep, cycles): the shared L3's latency
    # climbs from 39 to 54 cycles over 1-2.8 MiB and the sweep reaches memory at 4 MiB, so no
    # plateau of the L3 is flat for an octave; the thin pieces are one sloped level
    kib = [4, 6, 8, 11, 16, 23, 24, 32, 40, 45, 48, 64, 91, 128, 181, 256, 362, 512, 724, 768, 1024, 1280, 1448,
           1536, 2048, 2896, 4096, 5792, 8192, 11584, 16384, 23172, 32768, 65536, 131072, 262144]
    cyc = [4.0] * 8 + [13.8, 13.9, 13.9, 14.0, 14.0, 14.0, 14.0, 14.0, 15.7, 17.3, 22.1, 23.3, 30.7, 38.7, 38.7, 43.4,
                       53.2, 54.0, 377.3, 133.7, 524.3, 542.0, 551.6, 557.0, 582.0, 604.7, 585.7, 680.6]
    lv = detect([k << 10 for k in kib], cyc)
    assert [round(L.latency) for L in lv][:2] == [4, 14] and len(lv) == 4
    l3 = lv[2]
    assert l3.sloped and 35 < l3.latency < 55 and l3.first_size <= 1280 << 10 and l3.last_size == 2896 << 10
    assert l3.edge_hi == 4096 << 10 and lv[3].latency > 500


def test_a_gradual_rise_between_two_levels_is_not_a_sloped_level():
    # thin pieces between 14 and 50 cycles that are not twice as slow as the level before them stay transitions
    kib = [4, 8, 16, 32, 64, 128, 256, 512, 724, 1024, 1448, 2048, 4096, 8192, 16384, 32768]
    cyc = [4.0, 4.0, 4.0, 4.0, 14.0, 14.0, 14.0, 14.0, 18.0, 22.0, 26.0, 50.0, 50.0, 50.0, 50.0, 50.0]
    lv = detect([k << 10 for k in kib], cyc)
    assert [round(L.latency) for L in lv] == [4, 14, 50] and not any(L.sloped for L in lv)
