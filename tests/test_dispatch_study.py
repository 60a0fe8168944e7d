"""The dispatch study's facts: every dispatcher of every build reaches the right target (the built
code run through ctypes in a child process, not timed), the abort path, what the retpoline / CFI /
kcfi builds really contain in their disassembly, and a tiny run writing its outputs."""
import re
from dataclasses import replace

import pytest

from cyclebench.studies.dispatch import builds as bl
from cyclebench.studies.dispatch.checking import DispatchChecker, problems, run_checks
from cyclebench.studies.dispatch.sources import DISPATCHERS, RANGE, asm_source, symbol

INDIRECT = re.compile(r"^(call|jmp)\s+(QWORD PTR \[|r[a-z0-9]+$)")


def _built(name):
    b = bl.BY_NAME[name]
    if bl.missing(b):
        pytest.skip(bl.missing(b))
    return bl.make(b)


def _code(name):
    return bl.functions(bl.objdump(_built(name).path))


@pytest.mark.parametrize("name", [b.name for b in bl.BUILDS])
def test_every_dispatcher_reaches_every_target_and_aborts_out_of_range(name):
    verdict = run_checks(str(_built(name).path))
    assert set(verdict) == set(DISPATCHERS)
    assert problems(verdict) == []
    assert verdict["2"]["abort_signal"] == 6 and verdict["3"]["abort_signal"] == 6


def test_the_checker_catches_a_wrong_dispatcher_and_refuses_out_of_range_streams():
    from cyclebench.errors import RoutineIncorrect, UsageError
    from cyclebench.routines import dispatch_shape, make_stream
    bb = _built("clang-Os")
    wrong = replace(bb.routines["2"], symbol=symbol("direct"))     # calls target 6 for every index
    with pytest.raises(RoutineIncorrect):
        DispatchChecker("2").check(wrong)
    s = make_stream(dispatch_shape("x"), "s", index=[0, RANGE["1"]], x=[5, 5])
    with pytest.raises(UsageError):
        DispatchChecker("1").admits(s, bb.routines["1"])


def test_retpoline_build_has_no_indirect_branch_outside_its_thunk():
    fns = _code("clang-retpoline")
    assert any(n.startswith("__llvm_retpoline_") for n in fns)
    for n, ins in fns.items():
        if n.startswith(("cb_", "__llvm_retpoline_")) and not n.startswith("__llvm_retpoline_"):
            assert not [i for i in ins if INDIRECT.match(i)], n
    # the thunk itself: call into the capture loop, then overwrite the return address
    assert any(i.startswith("pause") for i in fns[next(n for n in fns if n.startswith("__llvm_retpoline_"))])
    plain = _code("clang-Os")
    assert not any(n.startswith("__llvm_retpoline_") for n in plain)
    assert any(INDIRECT.match(i) for i in plain["cb_d_2"])


def test_gcc_thunk_build_calls_its_thunks():
    fns = _code("gcc-thunk")
    assert any(n.startswith("__x86_indirect_thunk") for n in fns)
    assert any(n.startswith("__x86_return_thunk") for n in fns)
    assert not [i for i in fns["cb_d_2"] if INDIRECT.match(i)]


def test_cfi_icall_checks_the_pointer_against_its_jump_table():
    fns = _code("clang-cfi-icall")
    for d in ("0", "0m", "2"):
        ins = fns[symbol(d)]
        trap = [k for k, i in enumerate(ins) if i.startswith(("ud1", "ud2"))]
        jump = [k for k, i in enumerate(ins) if INDIRECT.match(i)]
        assert trap and jump, d
        assert any(i.startswith("rol") for i in ins[:jump[0]]), d        # the range-and-alignment check
        assert any(n.endswith(".cfi") for n in fns)                    # bodies renamed behind a jump table


def test_kcfi_compares_the_type_hash_before_the_call():
    fns = _code("clang-kcfi")
    for d in ("0", "0m", "2"):
        ins = fns[symbol(d)]
        jump = next(k for k, i in enumerate(ins) if INDIRECT.match(i))
        before = " ".join(ins[:jump])
        assert re.search(r"add\s+r10d,DWORD PTR \[r[a-z0-9]+-0x4\]", before) and "ud2" in before, d
    assert not [i for i in _code("clang-Os")["cb_d_2"] if i.startswith("ud2")]


def test_endbr_only_with_cf_protection():
    assert "endbr64" in " ".join(_code("clang-cf-branch")["cb_d_1"])
    assert "endbr64" not in " ".join(_code("clang-Os")["cb_d_1"])
    assert "ENTRY" in asm_source()


# Times for real but asserts no timing (the broken-pairing check needs p < 0.001: never on 2 repetitions);
# a stated clock, so that no calibration fails its check while the other worker loads the machine
def test_a_tiny_study_writes_its_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CLOCK_MHZ", "3000")
    from cyclebench.study.engine import run_study
    from cyclebench.studies.dispatch.config import StudyConfig
    from cyclebench.studies.dispatch.study import DispatchStudy
    if bl.missing(bl.BY_NAME["clang-Os"]):
        pytest.skip("no clang-16")
    cfg = StudyConfig(name="tiny", builds=("clang-Os",), pattern_builds=("clang-Os",), targets_3=(0,),
                      ks=(2,), fixed_calls=200, random_calls=512, reps=2, budget=0.1)
    run = run_study(DispatchStudy(), cfg, tmp_path, progress=False)
    for f in ("ertl.txt", "builds.txt", "patterns.txt", "code_size.txt", "by_dispatcher.png",
              "by_targets.png", "summary.md", "results.json", "records.csv"):
        assert (tmp_path / f).is_file() and (tmp_path / f).stat().st_size > 0, f
    text = (tmp_path / "summary.md").read_text()
    assert "Ertl's statements, here" in text and "spectre_v2" in text and "published" in text
    assert run.measured == len(run.records) > 10


def test_code_size_counts_the_bytes_each_path_really_executes():
    from cyclebench.studies.dispatch import codesize
    s = codesize.measure(_built("clang-retpoline"))
    p = s["paths"]
    assert p["direct"]["dispatcher"] == [p["direct"]["total"]] * RANGE["direct"]   # straight-line: all of it
    one = p["1"]["dispatcher"]
    assert len(one) == 7 and len(set(one)) > 1                 # the path depends on the index
    assert max(one) <= p["1"]["used"] < p["1"]["total"]          # the out-of-range path is never run
    # derived from the object: the symbol sizes nm reports, and the retpoline thunk runs beside 2
    assert p["2"]["total"] == s["symbols"][symbol("2")] and s["symbols"]["cb_table"] == 8 * RANGE["2"]
    assert min(p["2"]["thunk"]) > 0 and max(p["1"]["thunk"]) == 0
    assert all(max(v["other"]) == 0 for v in p.values())       # every executed byte is placed
    plain = codesize.measure(_built("clang-Os"))["paths"]
    assert plain["2"]["dispatcher"][0] < p["2"]["dispatcher"][0] and max(plain["2"]["thunk"]) == 0


def test_our_column_is_named_from_the_recorded_cpu():
    from cyclebench.studies.dispatch.study import machine_label
    amd = {"cpu_vendor": "AuthenticAMD", "cpu_family": 25, "hypervisor": True}
    assert machine_label({**amd, "cpu_model": 1}) == ("AMD Zen 3, VM guest (family 25 model 1)", "Zen3", True)
    here, col, same = machine_label({**amd, "cpu_model": 0x11})
    assert here.startswith("AMD Zen 4") and (col, same) == ("Zen3", False)    # Ertl has no Zen 4 column
    assert machine_label({"cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 0x5E})[1] == "Skylake"
    assert machine_label({})[0].startswith("unknown core")
    masked = {"cpu_vendor": "GenuineIntel", "cpu_family": 6, "cpu_model": 167, "hypervisor": True,
              "core": {"key": "SPR", "inferred": True}}
    here, col, same = machine_label(masked)
    assert here.startswith("Sapphire Rapids class (Golden Cove), inferred from CPUID features, VM guest")
    assert (col, same) == ("Skylake", False)        # Ertl's newest Intel column, not Zen3
