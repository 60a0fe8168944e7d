"""The three things that measure (a snippet's Result, a routine's Timing, a program's
ProgramTiming) are one Measurement, and their stored facts read back the same way."""
from cyclebench.measurement.measured import Measurement, facts_of, group_facts
from cyclebench.routines.program import ProgramTiming
from cyclebench.routines.timing import Timing
from cyclebench.study.facts import run_facts
from cyclebench.study.programs import parse_report

TSC = {"name": "tsc", "reason": "no hardware PMU", "calibrated_ghz": 3.7}
SUMMARY = {"median": 10.0, "fastest10": 9.0, "minimum": 8.5}


def _timing():
    return Timing("r", "libc:memset", "fixed", {}, "d", 100, "fixed", {"n_measurements": 7, "flush": "none"},
                  SUMMARY, SUMMARY, SUMMARY, {}, events={"branch-misses": {}}, backend=TSC, stable=False,
                  warnings=["burst"])


def _program():
    return ProgramTiming("p", ["p", "2"], 0, "difference", [1, 2], SUMMARY, 9.0, SUMMARY, SUMMARY, SUMMARY,
                         {"ghz_before": 3.7, "ghz_after": 3.7}, {}, backend=TSC, options={"n_measurements": 5})


def test_every_kind_is_a_measurement(stored_result):
    for m in (stored_result, _timing(), _program()):
        assert isinstance(m, Measurement)
        f = m.facts()
        assert set(f) >= {"backend", "options", "stable", "warnings"} and f["stable"] == m.stable
        assert facts_of(f)["backend"] == m.backend and facts_of(m.to_dict())["backend"] == m.backend
    assert stored_result.cycles == stored_result.value("cycles")
    assert _timing().cycles == 9.0 and _program().cycles == 10.0
    assert _timing().facts()["events"] == ["branch-misses"] and _timing().facts()["options"]["flush"] == "none"


def test_run_facts_count_what_each_kind_stored(stored_result):
    recs = [{"result": m.facts()} for m in (stored_result, _timing(), _program())]
    recs.append({"result": group_facts([_program().facts(), _timing().facts()])})
    recs.append({"result": {"traces": []}})                        # not a measurement
    f = run_facts("x", "quick", {}, recs)
    assert f.measurements == 4 and f.unstable == 2 + (not stored_result.stable) and f.counted("branch-misses")
    assert 5 in f.repetitions and 7 in f.repetitions and ("burst", 2) in f.warnings
    assert facts_of(None) is None and facts_of({"backend": "tsc"}) is None


def test_a_program_report_has_one_rule_for_numbers():
    rep = parse_report("iterations 10\nratio 1.5\nbig 1e3\nname split\nnot a pair here\n9bad 1\n")
    assert rep == {"iterations": 10, "ratio": 1.5, "big": 1000.0, "name": "split"}
    assert type(rep["iterations"]) is int and type(rep["big"]) is float
