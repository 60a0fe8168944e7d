"""The single-step tracer counts executed stores and conditional branches exactly."""
import pytest

from cyclebench.errors import CycleBenchError
from cyclebench.studies.memset.trace import trace_memset
from routines_kernels import kernel


def test_rep_stosb_is_one_store_instruction_with_its_bytes():
    (t,) = trace_memset(kernel("rep_stosb"), [100])
    assert (t.stores, t.rep_iterations, t.rep_bytes, t.branches) == (1, 100, 100, 0)


def test_store_counts_match_the_designs():
    sizes = [8, 16, 24, 32, 36, 48, 64]
    old = trace_memset(kernel("nt_old"), sizes)
    assert [t.stores for t in old] == [1, 2, 3, 4, 5, 6, 8]        # the reference's old column
    new = trace_memset(kernel("new_sse"), sizes + [80, 96, 128, 144, 192])
    assert [t.stores for t in new] == [4] * 6 + [5, 9, 9, 9, 13, 13]
    assert all(t.rep_bytes == 0 for t in old + new)


def test_alignments_and_taken_branches():
    traces = trace_memset(kernel("nt_old"), [80], range(0, 64, 8))
    assert [t.align for t in traces] == list(range(0, 64, 8))
    assert all(0 <= t.taken <= t.branches for t in traces)
    assert min(t.stores for t in traces) == 5


def test_a_crashing_call_is_reported():
    with pytest.raises(CycleBenchError, match="crashed with SIGSEGV"):
        trace_memset(kernel("heap_zero"), [16], [1])     # outside its domain: movaps faults
