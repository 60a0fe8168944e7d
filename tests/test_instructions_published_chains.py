"""inst --why's uops.info vector chain (why.py) run in more processes, with fake measurements."""
from types import SimpleNamespace

from cyclebench.instructions import Catalogue
from cyclebench.instructions.characterize import Session
from cyclebench.instructions.why import _vector_chains


def test_a_vector_chain_runs_again_until_a_process_reads_the_missed_figure():
    form = Catalogue.load().get("VPEXPANDW (ZMM, ZMM)")
    readings = iter([10.5, 11.5, 10.5, 11.5])

    def fake(code, init=None, **kw):
        v = next(readings) if "vpandd" in code else 10.4
        ev = SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                               stability={"stable": True, "linearity": {"linear": True}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})
    got = dict(_vector_chains(Session(measure_fn=fake), form, {6.0}))
    (text, value), = [(k, v) for k, v in got.items() if "vpandd" in k]
    assert value == 6.0 and "10.50, 11.50 cycles in 2 processes" in text
    # vandpd reads 5 in every process: three runs, the last kept
    (text, value), = [(k, v) for k, v in got.items() if "vandpd" in k]
    assert value == 5.0 and "in 3 processes" in text
