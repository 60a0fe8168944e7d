"""The correctness checker catches each planted bug, with the first failing case, and passes
correct routines (the study's kernels are in test_memset_kernels.py)."""
import pytest

from cyclebench.errors import AssemblyError, RoutineIncorrect, UnsupportedInstruction, UsageError
from cyclebench.routines import resolve
from cyclebench.studies.memset.correctness import MemsetDomain, check_memset
from routines_kernels import kernel, planted_bugs

# small domain for quick negative tests where the bug shows early
QUICK = MemsetDomain(max_size=300, large_samples=0)


@pytest.fixture(scope="module")
def bugs():
    return planted_bugs()


def _fail(bugs, symbol, domain=None, **kw):
    with pytest.raises(RoutineIncorrect) as e:
        check_memset(resolve(symbol, library=bugs), domain or QUICK, **kw)
    return e.value


def test_libc_memset_passes_full_domain():
    res = check_memset(resolve("libc:memset"))
    assert res.calls == 4097 * 64 * 2 + 64


def test_off_by_one_tail(bugs):
    err = _fail(bugs, "cb_bug_tail_off_by_one")
    d = err.details
    assert (d["kind"], d["size"], d["align"], d["offset"]) == ("not_written", 64, 1, 63)
    assert err.exit_code == 11
    assert "cb_bug_tail_off_by_one" in err.cause and "size 64" in err.cause
    assert "dst alignment 1" in err.cause and "dst+63 was not written" in err.cause


def test_missing_alignment_fix_crashes(bugs):
    err = _fail(bugs, "cb_bug_no_align")
    d = err.details
    assert (d["kind"], d["size"], d["align"]) == ("crash", 64, 1)
    assert "SIGSEGV" in err.cause


def test_alignment_rounded_down_writes_before_start(bugs):
    err = _fail(bugs, "cb_bug_align_down")
    d = err.details
    assert (d["kind"], d["size"], d["align"], d["offset"]) == ("before_start", 64, 1, -1)
    assert "before the start" in err.cause


def test_write_past_end_caught_by_guard_bytes_only(bugs):
    err = _fail(bugs, "cb_bug_past_end")
    d = err.details
    # the region itself was right (that is checked first); only the guard byte after it changed
    assert (d["kind"], d["size"], d["align"], d["offset"]) == ("past_end", 4, 0, 4)
    assert d["got"] == 0xA5
    assert "past the end" in err.cause


def test_nonzero_fill_matters(bugs):
    err = _fail(bugs, "cb_bug_ignores_fill")
    assert (err.details["kind"], err.details["size"], err.details["fill"]) == ("wrong_value", 1, 0xA5)
    # on a zero-only domain the same routine is correct
    check_memset(resolve("cb_bug_ignores_fill", library=bugs), MemsetDomain(max_size=300, fills=(0,),
                                                                            large_samples=0))


def test_return_value(bugs):
    err = _fail(bugs, "cb_bug_return_end")
    assert err.details["kind"] == "return_value"
    assert "returned dst+1" in err.cause


def test_callee_saved_register(bugs):
    err = _fail(bugs, "cb_bug_clobbers_rbx")
    assert (err.details["kind"], err.details["size"]) == ("clobbered_reg", 0)
    assert "rbx" in err.cause


def test_large_sizes_are_sampled(bugs):
    bug = resolve("cb_bug_large_only", library=bugs)
    # the exhaustive part alone does not see it...
    check_memset(bug, MemsetDomain(max_size=512, large_samples=0))
    # ...the random large sizes do
    err = _fail(bugs, "cb_bug_large_only", MemsetDomain(max_size=512, large_samples=8))
    assert err.details["kind"] == "not_written" and err.details["phase"] == "large"
    assert err.details["size"] > 65536 and err.details["offset"] == err.details["size"] - 1


def test_hang_is_reported_as_timeout(bugs):
    err = _fail(bugs, "cb_bug_hangs", timeout=1)
    assert (err.details["kind"], err.details["size"]) == ("timeout", 100)


def test_sigill_is_unsupported_instruction(bugs):
    with pytest.raises(UnsupportedInstruction) as e:
        check_memset(resolve("cb_bug_sigill", library=bugs), QUICK)
    assert e.value.exit_code == 4 and e.value.details["size"] == 32


def test_domain_restricts_the_check():
    # heap_zero is only correct on 16-aligned dst and sizes: the full domain rejects it
    hz = kernel("heap_zero")
    with pytest.raises(RoutineIncorrect):
        check_memset(hz, QUICK)
    res = check_memset(hz, MemsetDomain.heap_zero())
    assert res.calls == (4096 // 16 + 1) * 4 + 64


def test_domain_validation():
    with pytest.raises(UsageError):
        MemsetDomain(size_step=0)
    with pytest.raises(UsageError):
        MemsetDomain(max_size=4096, large_max=100)
    with pytest.raises(UsageError):
        MemsetDomain(fills=())
    assert MemsetDomain().calls() == 4097 * 64 * 2 + 64


def test_unloadable_library(tmp_path):
    from cyclebench.routines.build import Routine
    bogus = Routine(library=str(tmp_path / "missing.so"), symbol="memset")
    with pytest.raises(AssemblyError):
        check_memset(bogus, QUICK)
