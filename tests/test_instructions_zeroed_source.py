"""A scalar form's pass-through source is measured zeroed too, uops.info's configuration
(zeroed_source.py); checked with a fake measurement (no timing)."""
import pytest

from cyclebench.instructions import Catalogue, latency_pairs, zeroed_source
from cyclebench.instructions.characterize import Session, measure_pair
from test_instructions_distinct import Fake


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def _pairs(form):
    return [str(p) for p in latency_pairs(form) if zeroed_source.applies(form, p)]


def test_which_pairs_are_measured_with_the_source_zeroed(cat):
    # the first XMM source of a scalar form (narrower last source: XMMM64, RM64, M64)
    assert _pairs(cat.get("VROUNDSD (XMM, XMM, XMM, I8)")) == ["op1 (XMM) -> op0 (XMM)"]
    assert _pairs(cat.get("VCVTSI2SD (XMM, XMM, R64)")) == ["op1 (XMM) -> op0 (XMM)"]
    assert _pairs(cat.get("VMOVLPD (XMM, XMM, M64)")) == ["op1 (XMM) -> op0 (XMM)"]
    assert _pairs(cat.get("VCVTSD2SS_Z (XMM, K, XMM, XMM)")) == ["op2 (XMM) -> op0 (XMM)"]
    # a merge reads the destination (its own chain stays); packed forms pass nothing through;
    # legacy SSE forms write their first source; divide and square root have chains of their own
    for name in ("VCVTSD2SS (XMM, K, XMM, XMM)", "VADDPD (XMM, XMM, XMM)", "ROUNDSD (XMM, XMM, I8)",
                 "VSQRTSD (XMM, XMM, XMM)", "VPERMW (ZMM, K, ZMM, ZMM)"):
        form = cat.get(name)
        assert form is not None and not _pairs(form), name


def test_the_configuration_is_uops_infos_chain(cat):
    form = cat.get("VROUNDSD (XMM, XMM, XMM, I8)")
    pair = next(p for p in latency_pairs(form) if zeroed_source.applies(form, p))
    inst, lines, init = zeroed_source.code(form, pair)
    src, dst = inst.regs[1], inst.regs[0]
    assert src != dst and lines[0] == inst.text
    assert lines[1:] == [f"vandpd {src}, {dst}, {dst}"] + [f"vandpd {src}, {src}, {src}"] * (zeroed_source.LINKS - 1)
    assert init == [f"vpxor {src}, {src}, {src}"]


def _measured(form, loop):
    """measure_pair with the form's own chain 3 cycles, the zeroed loop ``loop``, vpand 1."""
    pair = next(p for p in latency_pairs(form) if zeroed_source.applies(form, p))
    _inst, lines, _ = zeroed_source.code(form, pair)
    fake = Fake({"\n".join(lines): loop, "vpand xmm1, xmm1, xmm1": 1.0}, default=3.0)
    return measure_pair(Session(measure_fn=fake), form, pair)


def test_a_loop_faster_than_its_connector_reads_no_dependency(cat):
    d = _measured(cat.get("VROUNDSD (XMM, XMM, XMM, I8)"), 1.74)      # Zen 4's reading
    assert d["value"] == 0.0 and d["bound"] == "exact" and d["label"] == zeroed_source.LABEL
    assert d["usual_values"]["value"] == pytest.approx(3.0)             # kept beside it
    assert d["zeroed_source"]["cycles"] == pytest.approx(1.74)


def test_a_dependency_through_the_zeroed_source_keeps_the_pair(cat):
    d = _measured(cat.get("VROUNDSD (XMM, XMM, XMM, I8)"), 8.0)       # 3 + five vandpd
    assert d["value"] == pytest.approx(3.0) and d.get("label") is None
    assert d["zeroed_source"]["value"] is None and d["zeroed_source"]["cycles"] == pytest.approx(8.0)


def test_an_unstable_zeroed_loop_that_would_read_0_leaves_the_pair_unsettled(cat):
    # seed 2121, busy vCPU: vcvtsi2sd's zeroed loop read 2.63 cycles (no dependency) but unstable;
    # the pair kept its chain's 3.00 and was counted a mismatch against the published 0
    form = cat.get("VROUNDSD (XMM, XMM, XMM, I8)")
    pair = next(p for p in latency_pairs(form) if zeroed_source.applies(form, p))
    _inst, lines, _ = zeroed_source.code(form, pair)
    loop = "\n".join(lines)

    class Shaky(Fake):
        def __call__(self, code, init=None, **kw):
            r = super().__call__(code, init, **kw)
            r.stable = code != loop
            return r
    for reading, unsettled in ((1.74, True), (8.0, False)):
        fake = Shaky({loop: reading, "vpand xmm1, xmm1, xmm1": 1.0}, default=3.0)
        d = measure_pair(Session(measure_fn=fake), form, pair)
        assert d["value"] == pytest.approx(3.0) and d.get("label") is None
        assert (d["stable"] is False) == unsettled
