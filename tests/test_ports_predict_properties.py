"""The predictor on any model the inference could solve (cyclebench/instructions/ports/predict.py):
generated models (resources, usages, probes, times alone, front end) and blocks of familiar forms
of every kind the predictor's rules single out (ALU, loads, stores, vector loads of three widths,
legacy SSE beside ZMM writes, a divider, a NOP).  Whatever the model, a prediction is a finite
figure no lower than its two bounds.  A re-solved Zen 4 model once held a plain vector load whose
load path had no share (vector_loads.path) and the predictor stopped on an empty min().  Facts
only: no timing."""
from __future__ import annotations

import functools
import math

from hypothesis import HealthCheck, given, settings, strategies as st

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.ports.model import FRONT_END, Model
from cyclebench.instructions.ports.predict import decode, form_of, predict

LINES = ["add rax, rbx", "lea rcx, [rdx+rsi*8+0x40]", "imul rdx, rcx", "mov rbx, qword ptr [r14+0x40]",
         "mov qword ptr [r14+0x80], rcx", "add ecx, dword ptr [r14+0xc0]", "cmp qword ptr [r14+0x100], 0x2",
         "movsd xmm1, qword ptr [r14+0x140]", "movaps xmm2, xmmword ptr [r14+0x180]",
         "vmovups ymm3, ymmword ptr [r14+0x1c0]", "vpminuw zmm4{k1}{z}, zmm5, zmmword ptr [r14+0x200]",
         "vpxord zmm6, zmm7, zmm8", "mulss xmm1, xmm2", "orps xmm2, xmm3", "divsd xmm9, xmm10",
         "cvttsd2si eax, qword ptr [r14+0x240]", "nop dword ptr [r14+0x280]", "setb bl"]
RESOURCES = [f"R{i}" for i in range(6)]


@functools.cache
def forms() -> dict[str, str]:
    """Line -> its form (the catalogue's), read once."""
    cat = Catalogue.load()
    return {line: form_of(decode(line)[0], cat) for line in LINES}


@st.composite
def models(draw):
    names = sorted(set(forms().values()))
    n = draw(st.integers(1, len(RESOURCES)))
    resources = RESOURCES[:n]
    use = st.floats(0.0, 2.0, allow_nan=False)
    usage, alone = {}, {}
    for f in names:
        usage[f] = draw(st.dictionaries(st.sampled_from(resources), use, max_size=n))
        if draw(st.booleans()):
            usage[f][FRONT_END] = 0.0         # a form that passes the front end on another path
        # a time alone is a reading: at least the harness's resolution (hundredths of a cycle)
        alone[f] = max(usage[f].values(), default=0.0) + draw(st.floats(0.01, 1.0))
    probes = {r: draw(st.sampled_from(names)) for r in resources if draw(st.booleans())}
    width = draw(st.none() | st.integers(1, 8))
    return Model(list(resources), usage, width, alone, probes=probes)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.lists(st.sampled_from(LINES), min_size=1, max_size=8))
def test_every_model_gives_every_block_a_finite_figure_at_its_bounds(model, lines):
    p = predict("; ".join(lines), model, Catalogue.load())
    assert math.isfinite(p.cycles) and p.cycles >= 0
    assert p.cycles >= max(p.resource_bound, p.chain_bound) - 1e-9
    assert not p.unknown                    # every line's form is in the model


def test_each_line_is_one_form_of_the_catalogue():
    assert all(forms()[line] for line in LINES) and len(set(forms().values())) == len(LINES)
