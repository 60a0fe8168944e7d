"""A pair whose measurement failed for the moment (the clock calibration during a host's burst)
leaves the form's latency figures unsettled, not taken over the other pairs (fake readings)."""
import pytest

from cyclebench.errors import CalibrationFailed, SnippetFault
from cyclebench.instructions import Catalogue, latency_pairs
from cyclebench.instructions.characterize import Session, measure_pair
from cyclebench.instructions.comparing import unsettled
from test_instructions_measure import Fake


class Failing(Fake):
    def __init__(self, error, failing, **kw):
        super().__init__({}, **kw)
        self.error, self.failing = error, failing

    def __call__(self, code, init=None, **kw):
        if self.failing in code:
            raise self.error("the clock calibration failed its check")
        return super().__call__(code, init, **kw)


@pytest.fixture(scope="module")
def form():
    return Catalogue.load().get("VPMULUDQ_Z (YMM, K, YMM, M256)")


def _doc(form, error):
    # the mask pair's chain (closed by vpcmpuq) fails; the other pairs read 12 (memory bounds) or 3
    fake = Failing(error, "vpcmpuq k1, ymm1, ymm31, 5", default=3.0)
    pairs = [measure_pair(Session(measure_fn=fake), form, p) for p in latency_pairs(form)]
    return {"form": form.name, "latency": pairs}


def test_a_calibration_failure_leaves_the_figures_unsettled(form):
    doc = _doc(form, CalibrationFailed)
    mask = next(p for p in doc["latency"] if p["start"] == "op1 (K)")
    assert mask["value"] is None and mask["stable"] is False and "calibration" in mask["error"]
    assert unsettled(doc, "latency_min") and unsettled(doc, "latency_max")


def test_a_lasting_failure_is_no_unsettled_figure(form):
    # a fault is the form's (or the method's) own: measuring again would not change it
    doc = _doc(form, SnippetFault)
    mask = next(p for p in doc["latency"] if p["start"] == "op1 (K)")
    assert mask["value"] is None and mask["stable"] is None
    assert not unsettled(doc, "latency_min")
