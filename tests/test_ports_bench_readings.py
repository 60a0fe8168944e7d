"""bench/ports_accuracy.py's Readings: the predictor's accuracy figures count stable readings only
(a reading flagged unstable is taken again on the next CPU; a block never read stable is left out),
checked with fabricated sessions (no measuring)."""
import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from cyclebench.errors import CounterUnavailable
from cyclebench.measurement.evaluate import fp_flags_warning

BENCH = Path(__file__).resolve().parent.parent / "bench" / "ports_accuracy.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("ports_accuracy_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FakeSession:
    """Readings by CPU, in turn: a float is a stable reading, ('u', v) an unstable one, ('b', v) a
    stable bound below the resolution, ('n', v) a stable reading not linear in the copies, ('d', v)
    a stable reading whose floating-point work met denormals, an exception is raised."""

    def __init__(self, cpu, script, log):
        self.cpu, self.script, self.log = cpu, script, log

    def measure(self, lines, init, per=1):
        self.log.append(self.cpu)
        r = self.script[self.cpu].pop(0)
        if isinstance(r, Exception):
            raise r
        if isinstance(r, dict):         # a stable reading whose repetitions read two modes
            return SimpleNamespace(value=r["value"], stable=True, modes=r["modes"], linear=True, below=None,
                                   warnings=[])
        kind, v = r if isinstance(r, tuple) else ("", r)
        warnings = [fp_flags_warning({"fp_status": ["0x1f82"]})] if kind == "d" else ["two modes: ..."]
        return SimpleNamespace(value=v, stable=kind != "u", modes=None, linear=kind != "n",
                               below=v if kind == "b" else None, warnings=warnings)


def readings(bench, script, processes=1):
    log = []
    return bench.Readings(sorted(script), session=lambda c: FakeSession(c, script, log), processes=processes), log


def test_an_unstable_reading_is_taken_again_on_the_next_cpu(bench):
    r, log = readings(bench, {0: [("u", 1.13), 1.0], 1: [0.76, 0.5]})
    assert r(["add rax, rbx"], []) == (0.76, 1)
    # the next block starts on the CPU that last read stable
    assert r(["add rax, rbx"], []) == (0.5, 1)
    assert log == [0, 1, 1]
    assert (r.again, r.unsettled) == (1, 0)


def test_a_bound_or_a_non_linear_reading_is_no_figure(bench):
    # a stable reading below the resolution, or whose cost did not grow with the copies, is read again
    r, log = readings(bench, {0: [("b", 0.02), ("n", 0.3)], 1: [2.0, 1.5]})
    assert r(["ucomiss xmm1, xmm2"], []) == (2.0, 1)
    r.first = 0
    assert r(["ucomiss xmm1, xmm2"], []) == (1.5, 1)
    assert log == [0, 1, 0, 1] and r.again == 2


def test_a_block_never_read_stable_is_left_out(bench):
    r, log = readings(bench, {0: [("u", 3.0)] * 2, 1: [("u", 6.1)] * 2})
    assert r(["mulss xmm1, xmm2"], []) is None
    assert log == [0, 1, 0, 1] and len(log) == bench.Readings.TRIES
    assert r.unsettled == 1
    assert "1 left out" in r.summary()


def test_a_failed_reading_is_tried_again_and_raised_only_if_all_fail(bench):
    burst = CounterUnavailable("the clock calibration failed its check", "re-run")
    r, _ = readings(bench, {0: [burst], 1: [2.0]})
    assert r(["nop"], []) == (2.0, 1)
    r, _ = readings(bench, {0: [burst, burst], 1: [("u", 1.0), burst]})
    with pytest.raises(CounterUnavailable):
        r(["nop"], [])


def test_a_block_read_in_two_modes_gives_the_faster_and_keeps_both(bench):
    # the first reading settled in the slower mode and showed one level; the second, in another
    # process, showed both: the block reads the faster, whichever mode the first settled in
    r, log = readings(bench, {0: [3.17, {"value": 3.16, "modes": (2.17, 3.17)}]}, processes=2)
    assert r(["mulss xmm1, xmm2"], []) == (2.17, 0)
    assert r.modes == (2.17, 3.17) and log == [0, 0] and r.again == 0
    # a reading that showed both modes is not taken again; one that showed one level is, once
    r, log = readings(bench, {0: [{"value": 2.2, "modes": (2.17, 3.17)}, 1.0, 1.01]}, processes=2)
    assert r(["nop"], []) == (2.17, 0) and log == [0]
    assert r(["nop"], []) == (1.0, 0) and r.modes is None and log == [0, 0, 0]


def test_two_readings_each_of_one_level_apart_are_the_two_modes(bench):
    # each process held one level for its whole stretch: the faster is counted, both are kept
    r, log = readings(bench, {0: [0.958, 0.668, 1.0, 1.04]}, processes=2)
    assert r(["mov rax, [r14+0x200]"], []) == (0.668, 0) and r.modes == (0.668, 0.958)
    # two readings within two_modes' gap of each other are one level: the first is counted
    assert r(["nop"], []) == (1.0, 0) and r.modes is None and log == [0] * 4


def test_more_processes_read_more_levels_and_the_fastest_is_counted(bench):
    # four processes, each of one level: the fastest and the slowest are the modes
    r, log = readings(bench, {0: [0.971, 0.867, 0.899, 0.667, 1.0, 1.01, 1.02, 0.99]}, processes=4)
    assert r(["mov r9d, [r14+0x228]"], []) == (0.667, 0) and r.modes == (0.667, 0.971)
    assert r(["nop"], []) == (1.0, 0) and r.modes is None and len(log) == 8
    # a reading that shows two modes within itself ends the round; a failed one ends it too
    r, log = readings(bench, {0: [1.0, {"value": 1.0, "modes": (0.7, 1.0)}, 2.0, ("u", 1.5), ("u", 1.4)],
                              1: [("u", 1.6), ("u", 1.7)]}, processes=4)
    assert r(["nop"], []) == (0.7, 0) and len(log) == 2
    assert r(["nop"], []) == (2.0, 0) and r.modes is None and (r.again, r.unsettled) == (0, 0)


def test_a_reading_that_met_denormals_is_marked_and_one_that_did_not_is_not(bench):
    r, _ = readings(bench, {0: [("d", 16.7), 11.2]})
    assert r(["cvtpd2dq xmm1, xmm2", "mulss xmm1, xmm2"], []) == (16.7, 0) and r.values
    assert r(["cvtpd2ps xmm1, xmm2", "mulss xmm1, xmm2"], []) == (11.2, 0) and not r.values


def test_replay_counts_the_mixes_that_met_denormals_apart(bench, tmp_path, capsys):
    """Saved with the flag, or named by a --values file (seed, text): both counted apart, and the
    others' share within 10% printed beside."""
    path = tmp_path / "s.jsonl"
    rows = [("nop", 1.0, True), ("nop\nnop", 2.5, False), ("nop\nnop\nnop", 3.05, False), ("lfence", 1.0, False)]
    path.write_text("\n".join([json.dumps({"seed": 7, "cpu": "test"})] + [
        json.dumps({"set": "random mixes of modelled forms", "block": b, "text": b.replace("\n", "; "),
                    "measured": m, "mca": m, **({"values": True} if v else {})}) for b, m, v in rows]) + "\n")

    bench.replay([path], _by_lines, False, {(7, "nop; nop")})
    out = capsys.readouterr().out
    assert "2 of 4 met denormal operands or results" in out
    assert "the others: 100.0% within 10% (2 of 2 blocks;" in out


def _saved(path, rows, mca=1.0):
    """A --save file of random mixes: (block, measured) rows, llvm-mca's figure ``mca`` times the
    measured one."""
    lines = [json.dumps({"when": "2026-01-01T00:00:00Z", "seed": 1, "cpu": "test"})]
    lines += [json.dumps({"set": "random mixes of modelled forms", "block": b, "text": b, "measured": m,
                          "mca": mca * m}) for b, m in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _by_lines(block):
    """A prediction of each block's own number of lines."""
    n = float(len(block.split("\n")))
    return SimpleNamespace(cycles=n, resource_bound=n, chain_bound=0.0, binding_resource="R0",
                           simulated=n, unknown=[], members=[n], simulation_binds=lambda: False)


def test_replay_pools_several_files(bench, tmp_path, capsys):
    """--replay of several --save files reports each and then the sets pooled: the figures a
    document quotes over many seeds come from one command."""
    first = _saved(tmp_path / "a.jsonl", [("nop", 1.0), ("nop\nnop", 2.5)], mca=2)      # in, out
    second = _saved(tmp_path / "b.jsonl", [("nop\nnop\nnop", 3.05)], mca=2)             # in
    bench.replay([first, second], _by_lines, False)
    out = capsys.readouterr().out
    assert "50.0% within 10% (1 of 2 blocks;" in out
    assert "100.0% within 10% (1 of 1 blocks;" in out
    pooled = out.split("pooled over 2 files:")[1]
    assert "66.7% within 10% (2 of 3 blocks;" in pooled
    assert "0.0% within 10% (0 of 3 blocks;" in pooled       # llvm-mca's figures (twice measured) pooled alike


def test_replay_with_again_counts_the_blocks_that_read_the_same_twice_apart(bench, tmp_path, capsys):
    """--again pairs each --replay file with its blocks measured again: the share within 10% is
    given apart for the blocks whose two readings agree within 5%, and for the others against the
    first reading and against either."""
    one, two, three, four = "nop", "nop\nnop", "nop\nnop\nnop", "nop\nnop\nnop\nnop"
    first = _saved(tmp_path / "a.jsonl", [(one, 1.0), (two, 2.5), (three, 4.0), (four, 4.0)])
    again = _saved(tmp_path / "a-again.jsonl", [(one, 1.02), (two, 2.52), (three, 3.0), (four, 6.0)])
    bench.replay([first], _by_lines, False, again=[again])
    out = capsys.readouterr().out
    assert ("read again (a-again.jsonl): 2 of 4 blocks within 5% of their first reading, predicted within 10% "
            "for 1 (50.0%); 2 further apart, within 10% of the first reading for 1 and of either for 2") in out


def test_the_misses_are_counted_by_how_far_the_models_stand_apart(bench):
    import ports_figures                      # beside the bench, on the path it added
    # (measured, predicted, ..., spread): two of three apart by more than 10% miss, none of two close
    rows = [(1.0, p, 0, 0, None, "", "", "", 0, sp) for p, sp in
            [(1.0, 0.01), (1.05, 0.02), (1.3, 0.2), (1.0, 0.15), (0.8, 0.5), (1.2, 0.05)]]
    assert ports_figures.by_spread(rows) == "within 3% 0 of 2 (0%), 3-10% 1 of 1 (100%), over 10% 2 of 3 (67%)"


def test_the_blocks_are_counted_apart_by_whether_they_touch_memory(bench):
    import ports_figures
    assert ports_figures.touches_memory("mov rbx,[rdi]; test rbx,rbx")
    assert ports_figures.touches_memory("add rax, rbx; mov DWORD PTR [r14+0x200], ebx")
    assert not ports_figures.touches_memory("lea rbx, [rcx*8+0x1000]; nop word ptr [r14+0x80]; {load} paddb xmm1, xmm2")
    rows = [(1.0, p, 0, 0, None, text, "", "", 0, 0) for p, text in
            [(1.0, "add rax, rbx"), (1.3, "lea rax, [rbx+8]"), (1.05, "mov rax, [rbx]"), (0.7, "cmp [rbx], rax")]]
    assert ports_figures.by_memory(rows) == ("no memory operand 1 of 2 within 10% (50%), "
                                             "with one 1 of 2 within 10% (50%)")


def test_ports_values_names_the_saved_mixes_that_meet_denormals(tmp_path, monkeypatch, capsys):
    """bench/ports_values.py runs each saved random mix once and keeps only the flag: a mix that
    multiplies the integers of a conversion as floats meets denormals, the same with a float
    conversion does not (a fact of the values, not of a timing)."""
    saved = tmp_path / "blocks-9.jsonl"
    mixes = ["{load} cvtpd2dq xmm1, xmm2; mulss xmm1, xmm2", "{load} cvtpd2ps xmm1, xmm2; mulss xmm1, xmm2"]
    saved.write_text("\n".join([json.dumps({"seed": 9}), *(json.dumps(
        {"set": "random mixes of modelled forms", "block": m.replace("; ", "\n"), "text": m, "init": [],
         "measured": 1.0, "mca": 1.0}) for m in mixes)]) + "\n")
    out = tmp_path / "values.jsonl"
    spec = importlib.util.spec_from_file_location("ports_values_bench", BENCH.with_name("ports_values.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr("sys.argv", ["ports_values.py", "--out", str(out), "--cpu", "0", str(saved)])
    mod.main()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r for r in rows if "text" in r] == [{"seed": 9, "text": mixes[0]}]
    assert "1 of 2 random mixes met denormals" in capsys.readouterr().out


def test_a_model_file_is_compared_with_the_column_of_the_cpu_it_was_measured_on(bench, tmp_path):
    # read on another CPU, a Zen 1 file was compared with that CPU's column (ZEN3's, 62 of 90
    # where ZEN+ reads 77)
    from cyclebench.instructions.reference import resolve_arch
    data = BENCH.parent / "data"
    for name, code in (("zen1/pub-3.jsonl", "ZEN+"), ("zen3/pub-3.jsonl", "ZEN3"), ("spr/pub-3.jsonl", "ADL-P")):
        column = resolve_arch("auto", bench.measured_on(data / name))
        assert column.code == code
    assert resolve_arch("ZEN4", bench.measured_on(data / "zen1" / "pub-3.jsonl")).code == "ZEN4"
    bare = tmp_path / "bare.jsonl"
    bare.write_text('{"cyclebench": "results", "kind": "ports", "schema": 1, "meta": {}}\n')
    assert bench.measured_on(bare) is None and bench.measured_on(tmp_path / "none.jsonl") is None
