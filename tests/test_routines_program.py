"""Whole programs built from C: the iteration protocol, the differencing arithmetic, the resource
limits and the errors. Only the first test reads a timing."""
import pytest

from cyclebench.errors import SnippetFault, SnippetTimeout, UsageError
from cyclebench.routines import program
from cyclebench.routines.program import ProgramLimits, Run, build_program, run_once, time_program

LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {          /* a dependent chain of imuls, one per iteration */
    long n = argc > 1 ? atol(argv[1]) : 1000;
    unsigned long x = 3;
    for (long i = 0; i < n; i++) __asm__ volatile("imul %0, %0" : "+r"(x));
    printf("iterations %ld\n", n);
    return x == 0;
}
"""
MISBEHAVING = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    const char *what = argv[1];
    if (!strcmp(what, "file")) { FILE *f = fopen(argv[2], "w"); fputs("x", f); fflush(f); }
    if (!strcmp(what, "spin")) for (;;) __asm__ volatile("");
    if (!strcmp(what, "status")) { fputs("bad input\n", stderr); return 3; }
    if (!strcmp(what, "fixed")) { puts("iterations: 1000"); return 0; }
    if (!strcmp(what, "memory")) { char *p = malloc(1L << 30); if (!p) return 4; memset(p, 1, 1L << 30); }
    return 0;                                  /* "silent": no iteration count */
}
"""


@pytest.fixture(scope="session")     # built once: its measured test runs at the suite's end (conftest.py)
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("prog")
    (d / "loop.c").write_text(LOOP)
    (d / "bad.c").write_text(MISBEHAVING)
    return build_program([d / "loop.c"], cflags="-O2"), build_program([d / "bad.c"], cflags="-O2")


@pytest.mark.measured
def test_a_loop_costs_its_chain_per_iteration(built):
    t = time_program(built[0], iterations=3_000_000, repetitions=5)
    assert t.method == "difference" and t.iterations == [3_000_000, 6_000_000]
    assert t.command[-1] == "6000000" and t.per_iteration["n"] == 5
    assert 2.5 < t.best < 4.5                    # imul latency 3, start-up and exit cancel
    assert t.wall_seconds["median"] > 0 and t.cpu_seconds["median"] > 0
    assert t.calibration["ghz_before"] > 0.5 and t.to_dict()["best"] == t.best


def test_differencing_arithmetic_and_limits_on_fabricated_runs(built, monkeypatch):
    seen = []

    def fake_run(argv, cpu, limits, memory):
        n = int(argv[1])
        seen.append((n, memory))
        return Run(ticks=1000 + 2 * n + (50 if len(seen) == 3 else 0), iterations=n, cpu_seconds=0.1)
    monkeypatch.setattr(program, "clock", lambda cpu=None: (1.5, 2e9, 1))
    monkeypatch.setattr(program, "run_once", fake_run)
    t = time_program(built[0], iterations=100, repetitions=3, flags=["-fsanitize=address"])
    assert [n for n, _ in seen] == [100, 200] * 3
    assert all(m is None for _, m in seen)       # a sanitizer lifts the address-space limit
    assert t.best == pytest.approx(2 * 1.5)      # 2 ticks per iteration at 1.5 cycles per tick
    assert t.per_iteration["median"] == pytest.approx(3.0) and t.per_iteration["minimum"] < 3.0
    assert t.per_iteration_ns["median"] == pytest.approx(1.0) and t.cpu == 1
    seen.clear()
    time_program(built[0], ["{n}", "x"], iterations=7, repetitions=1)
    assert seen[0][1] == ProgramLimits().memory


def test_programs_timed_together_interleave_between_one_pair_of_calibrations(built, monkeypatch):
    seen, clocks = [], []

    def fake_run(argv, cpu, limits, memory):
        seen.append((argv[1], int(argv[2])))
        return Run(ticks=100 + int(argv[2]) * (3 if argv[1] == "b" else 1), iterations=int(argv[2]), cpu_seconds=0.0)
    monkeypatch.setattr(program, "clock", lambda cpu=None: clocks.append(cpu) or (1.0, 1e9, 0))
    monkeypatch.setattr(program, "run_once", fake_run)
    a, b = program.time_programs([(built[0], ["a", "{n}"]), (built[0], ["b", "{n}"])], iterations=10, repetitions=2)
    assert seen == [("a", 10), ("a", 20), ("b", 10), ("b", 20)] * 2 and len(clocks) == 2
    assert a.best == pytest.approx(1.0) and b.best == pytest.approx(3.0) and b.command[-1] == "20"


def test_a_program_must_report_and_obey_its_iteration_count(built, monkeypatch):
    bad = str(built[1].path)
    with pytest.raises(UsageError, match="iteration count"):
        run_once([bad, "silent"], -1, ProgramLimits(), None)
    fixed = run_once([bad, "fixed"], -1, ProgramLimits(), None)
    assert fixed.iterations == 1000 and fixed.output == "iterations: 1000\n"     # kept for the caller
    monkeypatch.setattr(program, "clock", lambda cpu=None: (1.0, 1e9, 0))
    with pytest.raises(UsageError, match=r"reported \[\(1000, 1000\)\] iterations"):
        time_program(built[1], ["fixed"], iterations=10, repetitions=1)


def test_resource_limits_and_failures(built, tmp_path):
    bad = str(built[1].path)
    with pytest.raises(SnippetFault, match="write a file") as e:
        run_once([bad, "file", str(tmp_path / "out")], -1, ProgramLimits(), None)
    assert e.value.exit_code == 5 and not (tmp_path / "out").read_text()
    with pytest.raises(SnippetTimeout):
        run_once([bad, "spin"], -1, ProgramLimits(timeout=1), None)
    with pytest.raises(SnippetFault, match="status 3: bad input"):
        run_once([bad, "status"], -1, ProgramLimits(), None)
    with pytest.raises(SnippetFault, match="status 4"):          # malloc fails under RLIMIT_AS
        run_once([bad, "memory"], -1, ProgramLimits(), 256 << 20)
    with pytest.raises(SnippetFault, match="SIGXCPU"):
        run_once([bad, "spin"], -1, ProgramLimits(cpu_seconds=1, timeout=20), None)


def test_bad_arguments_are_usage_errors(built, tmp_path):
    with pytest.raises(UsageError):
        ProgramLimits(cpu_seconds=0)
    with pytest.raises(UsageError):
        time_program(built[0], iterations=0)
    with pytest.raises(UsageError, match="not an executable"):
        time_program(tmp_path / "missing")
