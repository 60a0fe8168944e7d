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


class _Run:
    """A stand-in for one measure() call: its best (ns a pass) and its own median verdict."""

    def __init__(self, best, stable=True):
        self.best, self.stable = best, stable
        self.backend = {"calibrated_ghz": 3.7}
        self.warnings = [] if stable else ["unstable measurement (repetitions spread 9%)"]


@pytest.fixture
def fake_processes(monkeypatch):
    from cyclebench.studies.memory import measuring as M
    monkeypatch.setattr(M, "best_ns", lambda r: r.best)
    monkeypatch.setattr(M, "compact", lambda r: {"stable": r.stable, "warnings": list(r.warnings), "best": r.best})

    def run(bests):
        it = iter(bests)
        calls = []

        def one():
            calls.append(1)
            return next(it)
        return M.best_of_processes(one), len(calls)
    return run


def test_a_best_needs_a_second_process_to_agree(fake_processes):
    out, n = fake_processes([_Run(199.5), _Run(199.7)])
    assert n == 2 and out["stable"] and out["best_ns"] == 199.5
    # a process slow throughout (a busy host sibling) is outvoted, not averaged in
    out, n = fake_processes([_Run(222.5), _Run(199.5), _Run(199.6)])
    assert n == 3 and out["stable"] and out["best_ns"] == 199.5 and out["process_best_ns"] == [199.5, 199.6, 222.5]


def test_bests_that_never_agree_are_flagged_not_settled(fake_processes):
    # six processes (VARYING_PROCESSES) whose bests neither agree nor have a median known within 20%
    out, n = fake_processes([_Run(100.0), _Run(120.0), _Run(140.0), _Run(160.0), _Run(185.0), _Run(215.0), _Run(1.0)])
    assert n == 6 and out["stable"] is False and out["best_ns"] == 100.0 and "between" not in out
    assert any("best not reproduced" in w for w in out["warnings"])


def test_bests_that_never_agree_but_gather_are_stated_by_their_median(fake_processes):
    out, n = fake_processes([_Run(100.0), _Run(104.0), _Run(108.2), _Run(112.5), _Run(117.0), _Run(121.7)])
    assert n == 6 and out["stable"] and out["between"]["settled"]
    assert out["best_ns"] == (108.2 + 112.5) / 2 and any("varies between processes" in w for w in out["warnings"])


def test_a_confirmed_best_keeps_the_median_verdict_apart(fake_processes):
    out, _ = fake_processes([_Run(50.0, stable=False), _Run(50.5)])
    assert out["stable"] and out["median_stable"] is False
    assert all("best is confirmed" in w for w in out["warnings"])
