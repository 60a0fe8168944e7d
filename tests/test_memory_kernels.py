"""The bandwidth kernels move the bytes they claim: each pass runs inside measure() followed by a
check of its destination that executes ud2 on any wrong byte (facts, not timings)."""
import pytest

from cyclebench.errors import CycleBenchError
from cyclebench.machine.cpu import cpu_info
from cyclebench.measurement.api import measure
from cyclebench.studies.memory import kernels as K

SIZE = 4096


def _program(ks, size=SIZE, short=0):
    parts = []
    for k in ks:
        r14 = K.r14_size(size)
        parts += [K.one_time_init(k, size, r14), K.spoil(k, size), K.body(k, size - short), K.verify(k, size)]
    return "\n".join(parts)


def _run(code):
    r14 = K.r14_size(SIZE)
    return measure(code, init=K.init(SIZE, r14), unroll=1, loop=1, n_measurements=1, warm_up=0, r14_size=r14,
                   budget=0.0, paired=True, cpu=0)


def _widths():
    flags = cpu_info().flags
    return [w for w in K.WIDTHS if all(f in flags for f in K.FEATURES[w])]


def test_every_kernel_produces_its_result():
    _run(_program(K.kernels(_widths())))        # raises if any check executes ud2


@pytest.mark.parametrize("op", K.OPS)
def test_a_kernel_that_moves_too_little_is_caught(op):
    k = K.Kernel(op, "avx2" if "avx2" in _widths() else "scalar")
    with pytest.raises(CycleBenchError):
        _run(_program([k], short=k.step))


def test_byte_counts():
    k = K.Kernel("copy", "avx2")
    assert k.stream_bytes(1000) == 2000 and k.allocate_bytes(1000) == 3000
    assert K.Kernel("copy", "avx2", True).allocate_bytes(1000) == 2000
    assert K.Kernel("read", "sse").allocate_bytes(1000) == 1000
    assert K.Kernel("triad", "scalar").allocate_bytes(1000) == 4000


def test_avx512_kernels_assemble():
    from cyclebench.measurement.api import prepare
    for k in K.kernels(["avx512"]):
        try:
            prepare(K.body(k, SIZE), unroll=1, loop=1, counters="tsc")
        except CycleBenchError as e:        # this CPU lacks AVX-512: the CPUID check refuses, having assembled
            assert "avx512" in str(e).lower() or "not supported" in str(e)
