"""uops.info's own throughput experiment run by inst --why and the accuracy bench's --why
(published_throughput.py, why.throughput_cause), with fake measurements (no timing)."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import Catalogue
from cyclebench.instructions import published_throughput as P
from cyclebench.instructions.causes import PORT_FIGURE_CAUSE
from cyclebench.instructions.session import Session
from cyclebench.instructions.why import REPRODUCED, throughput_cause


class Recording:
    """measure() stand-in: cycles per copy from ``by(code, kw)``; every call's code and options kept."""

    def __init__(self, by):
        self.by, self.calls = by, []

    def __call__(self, code, init=None, **kw):
        self.calls.append((code, kw))
        v = self.by(code, kw) * len(code.splitlines())      # the code's cycles, per copy below
        return SimpleNamespace(events={"cycles": SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)},
                               stable=True, warnings=[], stability={"linearity": {"linear": True}},
                               backend={"name": "tsc"})


def test_configurations_are_uops_infos_counts_and_layouts():
    # cpuBench getThroughputAndUops: ic in {1, 4, 8, n}; unrolled round(500/ic + 49, -2) times without
    # a loop, max(1, round(10/ic)) times in 1000 iterations and ten times that in 100
    assert P.configs(16) == [(1, "unrolled", 500, 0), (1, "loop", 10, 1000), (1, "loop", 100, 100),
                             (4, "unrolled", 200, 0), (4, "loop", 2, 1000), (4, "loop", 20, 100),
                             (8, "unrolled", 100, 0), (8, "loop", 1, 1000), (8, "loop", 10, 100),
                             (16, "unrolled", 100, 0), (16, "loop", 1, 1000), (16, "loop", 10, 100)]
    assert [c[0] for c in P.configs(4)] == [1, 1, 1, 4, 4, 4]


def test_each_configuration_runs_its_copies_apart_with_its_own_unroll_and_loop():
    form = Catalogue.load().get("VPEXPANDQ (XMM, M128)")
    fake = Recording(lambda code, kw: 1.0 if kw["loop"] == 0 else 0.67)
    got = P.measure(Session(measure_fn=fake, n_measurements=7), form)
    assert [(c["copies"], c["layout"], c["unroll"], c["loop"]) for c in got["configs"]] == P.configs(16)
    assert got["unrolled"] == pytest.approx(1.0) and got["loop"] == pytest.approx(0.67)
    code, kw = fake.calls[-1]
    assert kw["n_measurements"] == 7 and (kw["unroll"], kw["loop"]) == (10, 100)
    lines = code.splitlines()
    assert len(lines) == 16 and len({ln.split(",")[1] for ln in lines}) == 16     # an address per copy
    # copies linked by the flags are broken by uops.info's own instructions: not reproduced here
    assert P.measure(Session(measure_fn=fake), Catalogue.load().get("ADC (R64, I8)")) is None


def _result(values):
    cfgs = [{"copies": ic, "layout": lay, "unroll": u, "loop": lp, "value": v, "stable": True}
            for (ic, lay, u, lp), v in zip(P.configs(16), values)]
    return {"configs": cfgs, **{k: min(c["value"] for c in cfgs if c["layout"] == k) for k in ("unrolled", "loop")}}


SLOW_SOME = _result([2.0, 2.0, 2.0, 0.97, 0.79, 1.0, 0.69, 1.0, 0.69, 0.67, 1.0, 1.0])


def test_the_experiments_verdicts():
    # it keeps what is published: reproduced
    assert P.cause(_result([2.0] * 3 + [0.98] * 9), 0.67, 0.98, False).startswith("reproduced by an inst --why")
    # it keeps ours, and some of its configurations read the published figure
    why = P.cause(SLOW_SOME, 0.67, 0.98, False)
    assert why.startswith(P.SOME_CONFIGS) and "keep 0.67 here, as ours" in why and "5 of them" in why
    assert "(4 copies, unrolled, unroll 200: 0.97)" in why
    # nothing reaches a published figure below its own port figure; one copy never counts
    assert P.cause(SLOW_SOME, 0.67, 0.37, False).endswith("none of its configurations reads the published 0.37")
    assert "none" in P.cause(SLOW_SOME, 0.67, 2.0, False)
    # none within the tolerance, but its several-copy configurations read both below and above it
    spans = P.cause(_result([2.0] * 3 + [0.76, 0.83, 1.0, 0.8, 0.82, 1.23, 0.76, 0.8, 0.81]), 0.76, 0.91, False)
    assert spans.startswith(P.SPANS) and "read 0.76 to 1.23 cycles a copy here and it keeps 0.76" in spans
    assert P.cause(None, 0.67, 0.98, False) is None


def test_throughput_cause_puts_the_experiment_first_where_it_explains(monkeypatch):
    form = Catalogue.load().get("VPEXPANDQ (XMM, M128)")
    doc = {"throughput": {"value": 0.67, "bound": "exact"}}
    rec = SimpleNamespace(throughput=SimpleNamespace(lo=0.98, hi=0.98, lo_upper_bound=False, hi_upper_bound=False),
                          throughput_text="0.67 / 0.98")
    prior = f"{PORT_FIGURE_CAUSE}: 0.67 / 0.98 (ports / measured), ours matches the port figure"
    monkeypatch.setattr(P, "measure", lambda s, f: SLOW_SOME)
    why = throughput_cause(None, form, doc, rec, prior)
    assert why.startswith(P.SOME_CONFIGS) and why.endswith("; " + prior)
    monkeypatch.setattr(P, "measure", lambda s, f: _result([0.98] * 12))
    assert throughput_cause(None, form, doc, rec, "unexplained").startswith(REPRODUCED)
    monkeypatch.setattr(P, "measure", lambda s, f: _result([0.67] * 12))
    # not explained: an unexplained stays so, first, with the readings beside it
    assert throughput_cause(None, form, doc, rec, "unexplained").startswith("unexplained: " + P.REPRODUCED)
    monkeypatch.setattr(P, "measure", lambda s, f: None)
    assert throughput_cause(None, form, doc, rec, prior) == prior
