"""The memset study's kernels are correct on their whole domain, for every rep stosb threshold
build, and their load-time ERMS detection works."""
import subprocess
import sys

import pytest

from cyclebench.errors import AssemblyError, RoutineIncorrect, UsageError
from cyclebench.routines import build_shared
from cyclebench.studies.memset.correctness import MemsetDomain, check_memset
from cyclebench.studies import memset


def test_every_kernel_passes_its_domain():
    results = memset.check_kernels()
    supported = [n for n, k in memset.KERNELS.items() if not memset.missing_features(k)]
    assert sorted(results) == sorted(supported)
    for name, res in results.items():
        assert res.calls == memset.KERNELS[name].domain.calls()


@pytest.mark.parametrize("threshold", [64, 256, 4096])
def test_threshold_builds_are_correct(threshold):
    names = [n for n, k in memset.KERNELS.items()
             if k.uses_stosb_threshold and not memset.missing_features(k)]
    results = memset.check_kernels(names, threshold=threshold)
    assert sorted(results) == sorted(names)


def test_threshold_variants_are_separate_cached_builds():
    variants = memset.threshold_variants([256, 800, 1024])
    libs = {r.library for _, r in variants}
    assert len(libs) == 3
    assert [t for t, _ in variants] == [256, 800, 1024]
    assert variants[0][1].name == "new_sse@256" and variants[1][1].name == "new_sse"
    again = memset.threshold_variants([256])
    assert again[0][1].library == variants[0][1].library
    with pytest.raises(UsageError):
        memset.threshold_variants([256], kernel="nt_old")


def _probe(lib, expr):
    code = (f"import ctypes; lib = ctypes.CDLL({str(lib)!r}); "
            f"print({expr})")
    return subprocess.check_output([sys.executable, "-c", code], text=True).strip()


def test_load_time_erms_detection_and_recorded_threshold():
    lib = memset.build_kernels(1024).path
    erms = _probe(lib, "ctypes.c_uint8.in_dll(lib, 'cb_memset_have_erms').value")
    assert erms == ("1" if "erms" in memset.cpu_flags() else "0")
    assert _probe(lib, "ctypes.c_uint64.in_dll(lib, 'cb_memset_stosb_threshold').value") == "1024"


def test_threshold_below_64_is_rejected():
    with pytest.raises(UsageError):
        memset.build_kernels(32)
    with pytest.raises(AssemblyError) as e:  # the .S itself refuses too
        build_shared(memset.KERNEL_SOURCES, defines={"CB_STOSB_THRESHOLD": 32})
    assert "CB_STOSB_THRESHOLD must be >= 64" in e.value.cause


def test_heap_zero_precondition_is_its_domain():
    hz = memset.routine("heap_zero")
    check_memset(hz, MemsetDomain.heap_zero())
    with pytest.raises(RoutineIncorrect):  # outside its domain it is not a memset
        check_memset(hz, MemsetDomain(max_size=64, large_samples=0))


def test_kernel_table():
    assert memset.routine("libc").symbol == "memset"
    for name, k in memset.KERNELS.items():
        if name != "libc":
            r = memset.routine(name)
            assert r.symbol == k.symbol and r.name == name
    with pytest.raises(UsageError):
        memset.routine("no_such_kernel")


def test_unsupported_feature_is_skipped(monkeypatch):
    monkeypatch.setattr(memset.library, "cpu_flags", lambda: frozenset({"sse2"}))
    results = memset.check_kernels(["new_sse", "new_avx512"])
    assert list(results) == ["new_sse"]


def test_the_study_checks_an_implementation_once_per_process(monkeypatch):
    from cyclebench.studies.memset import implementations as im
    seen = []
    real = im.check_many
    monkeypatch.setattr(im, "check_many", lambda items: seen.append(len(items)) or real(items))
    impl = im.Impl("nt_old", memset.routine("nt_old"), memset.KERNELS["nt_old"].domain, "nt_old")
    im.check_all([impl])
    im.check_all([impl])
    assert seen[-1] == 0 and (len(seen) == 1 or seen[0] <= 1)
