"""The in-flight probe of the throughput copies (window.py); fabricated readings, no timing."""
import pytest

from cyclebench.instructions import Catalogue, window
from cyclebench.instructions.characterize import Session
from test_instructions_distinct import Fake

BLOCK = "\n".join(["imul r13, r13"] * window.BLOCK)


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def test_copies_that_do_not_fit_in_flight_are_limited():
    copies = [f"vpcmpd k{i}, xmm1, xmmword ptr [r14+0x40], 2" for i in range(1, 8)]
    w = window.probe(Session(measure_fn=Fake({BLOCK: 48.0}, default=71.0)), copies, [], 0.58, 0)
    assert w["copies"] == window.MAX_COPIES and w["block_cycles"] == 48.0 and w["limited"] is True
    text = window.cause({"value": 0.58, "window": w})
    assert text.startswith("limited in flight here: 64 copies") and "37.1" in text
    # as long as the block: the ports set the figure, no cause from the probe
    w = window.probe(Session(measure_fn=Fake({BLOCK: 48.0}, default=48.5)), copies, [], 0.58, 0)
    assert w["limited"] is False and window.cause({"value": 0.58, "window": w}) is None
    # a slow form: too few copies fit the block to tell
    w = window.probe(Session(measure_fn=Fake({BLOCK: 48.0}, default=48.0)), copies, [], 10.0, 0)
    assert w["limited"] is None and w["error"]


def test_forms_probed_on_the_grid_write_a_mask_register_from_memory(cat):
    assert window.suspect(cat.get("VPCMPD (K, XMM, M128, I8)")) and window.suspect(cat.get("KMOVW (K, M16)"))
    for name in ("VPCMPD (K, XMM, XMM, I8)", "VPADDD (XMM, XMM, M128)", "KMOVW (M16, K)"):
        assert not window.suspect(cat.get(name)), name


def test_a_gathers_copies_are_also_measured_without_their_mask_set_up(cat):
    from cyclebench.instructions.throughput import measure_throughput
    form = cat.get("VPGATHERDD (XMM, VSIB_XMM, XMM)")
    fake = Fake({}, default=80.0)
    tp = measure_throughput(Session(measure_fn=fake), form, processes=1)
    unset = tp["mask_unset"]
    assert "vpcmpeqd" in tp["code"] and "vpcmpeqd" not in unset["code"]
    assert unset["code"].count("vpgatherdd") == tp["code"].count("vpgatherdd")
    assert unset["value"] == pytest.approx(80.0 / unset["code"].count("vpgatherdd"))
    # not a gather: nothing to leave unset
    assert "mask_unset" not in measure_throughput(Session(measure_fn=fake), cat.get("VPADDD (XMM, XMM, XMM)"))


def test_a_gather_that_reads_the_published_figure_without_its_mask_set_up_says_so():
    from types import SimpleNamespace

    from cyclebench.instructions.agreement import cause
    from cyclebench.instructions.causes import MASK_UNSET_CAUSE
    rec = SimpleNamespace(throughput=SimpleNamespace(lo=4.0, hi=4.0, lo_upper_bound=False, hi_upper_bound=False),
                          throughput_text="2.50 / 4.00", latency=None)
    tp = {"value": 5.0, "bound": "exact", "carried": [], "stable": True,
          "mask_unset": {"value": 4.0, "stable": True}}
    doc = {"throughput": tp, "notes": [], "latency": []}
    assert cause(doc, rec, None, "throughput").startswith(MASK_UNSET_CAUSE + ": without the per-copy mask "
                                                          "set-up the copies read 4.00")
    tp["mask_unset"]["value"] = 4.6                   # not the published figure: no claim
    assert cause(doc, rec, None, "throughput") == "unexplained"
