"""Reports that mix measuring methods: report and compare show each file's options, report refuses
to pool one machine's files measured differently (exit 10), compare sets them side by side with a
warning, and a resume compares --counters auto as the backend it chose. Fixtures: inst-imul-n20
and inst-imul-n5-tsc are the real inst-imul run with an options header written in (-n 20 and
--counters auto; -n 5 and --counters tsc) and each measured form's backend (tsc, as measured)."""
from __future__ import annotations

import json

import pytest

import report_page
from cyclebench.results.compare import compare
from cyclebench.results.loaders import load
from cyclebench.results.machines import machines_table
from cyclebench.results.methods import UNRECORDED, describe, differences, method_of

DATA = report_page.DATA
N20, N5, OLD = DATA / "inst-imul-n20.jsonl", DATA / "inst-imul-n5-tsc.jsonl", DATA / "inst-imul.jsonl"


def test_a_files_options_are_one_line_and_auto_names_the_backend_it_chose():
    line = describe(method_of(load(N20)))
    assert line.startswith("measured with -n 20 --avg --warm-up 5") and "--counters auto (chose tsc)" in line
    assert "--counters tsc" in describe(method_of(load(N5)))
    assert describe(method_of(load(OLD))) == UNRECORDED
    asm = describe(method_of(load(DATA / "asm-imul-1.json")))
    assert "-n 15" in asm and "(ran unroll 100, loop 245)" in asm


def test_auto_that_chose_tsc_and_tsc_are_one_method():
    a, b = method_of(load(N20)), method_of(load(N5))
    assert differences(a, b) == ["-n 20 vs -n 5"]
    assert differences(a, None) == []                 # a file without options: nothing to tell


def test_report_refuses_to_pool_one_machines_files_of_two_methods(cli, tmp_path):
    other = report_page.second_machine(tmp_path / "b.jsonl")      # two machines: one table
    code, _, err = cli("report", str(N20), str(N5), str(other), "-o", str(tmp_path / "r.html"))
    assert code == 10
    assert "were measured differently (-n 20 vs -n 5): one column cannot hold both" in err
    assert len(err.strip().splitlines()) == 2 and not (tmp_path / "r.html").exists()


def test_one_machines_files_of_one_method_or_unrecorded_pool_and_say_so():
    table = machines_table([load(N20), load(OLD)])
    assert len(table.columns) == 4
    assert any("inst-imul-n20.jsonl measured with -n 20" in n for n in table.notes)
    assert any(n.endswith(f"inst-imul.jsonl {UNRECORDED}") for n in table.notes)


def test_two_machines_of_two_methods_stay_apart_with_a_warning(tmp_path):
    other = report_page.second_machine(tmp_path / "b.jsonl")
    lines = other.read_text().splitlines()
    head = json.loads(lines[0])
    head["meta"]["options"] = json.loads(N5.read_text().splitlines()[0])["meta"]["options"]
    other.write_text("\n".join([json.dumps(head, separators=(",", ":"))] + lines[1:]) + "\n")
    table = machines_table([load(N20), load(other)])
    assert len(table.columns) == 6
    assert "warning: the machines were measured with different options (-n 20 vs -n 5): a difference between " \
           "their columns may be the method's, not the CPU's" in table.notes


def test_compare_sets_two_methods_side_by_side_and_warns(cli):
    c = compare(load(N20), load(N5))
    assert c.methods[0].startswith("measured with -n 20") and c.methods[1].startswith("measured with -n 5")
    assert any("measured with different options (-n 20 vs -n 5)" in w for w in c.warnings)
    code, out, _ = cli("compare", str(OLD), str(N20))
    assert code == 0 and f"old: {UNRECORDED}" in out and "new: measured with -n 20" in out
    assert "different options" not in out


def _resume(cli, tmp_path, src, *extra):
    """``inst HLT`` (a skipped form: nothing is measured) resumed into a copy of ``src`` made this
    machine's (a resume on another CPU is refused before the options are compared)."""
    from cyclebench.machine.metadata import machine_metadata
    tmp_path.mkdir()
    r = tmp_path / "r.jsonl"
    lines = src.read_text().splitlines()
    head = json.loads(lines[0])
    head["meta"]["machine"] = machine_metadata()
    r.write_text("\n".join([json.dumps(head, separators=(",", ":"))] + lines[1:]) + "\n")
    return cli("inst", "HLT", "--resume", str(r), *extra)


def test_a_resume_compares_what_auto_chose(cli, tmp_path, monkeypatch):
    # the file's auto chose tsc (its documents say so): --counters tsc is the same method
    assert _resume(cli, tmp_path / "a", N20, "--counters", "tsc")[0] == 0
    # a file whose documents do not say what auto chose is refused, as before
    lines = N20.read_text().splitlines()
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join([lines[0]] + [json.dumps({k: v for k, v in json.loads(x).items() if k != "backend"})
                                            for x in lines[1:]]) + "\n")
    code, _, err = _resume(cli, tmp_path / "b", bare, "--counters", "tsc")
    assert code == 10 and "with --counters auto, this run with --counters tsc" in err
    # this run's auto is what it chooses here (stood in for: no measuring, no dependence on this host's PMU)
    import cyclebench.counters.backends as backends
    for chosen, code in (("tsc", 0), ("perf", 10)):
        monkeypatch.setattr(backends, "select_backend", lambda *a, **k: type("B", (), {"name": chosen})())
        got = _resume(cli, tmp_path / chosen, N5, "-n", "5", "--counters", "auto")
        assert got[0] == code, got[2]
