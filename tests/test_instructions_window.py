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
