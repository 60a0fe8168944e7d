"""A resume compares --counters auto as the backend it chose (each measured form keeps it).
Fixtures: inst-imul-n20 and inst-imul-n5-tsc are the real inst-imul run with an options header
written in (-n 20 and --counters auto; -n 5 and --counters tsc) and each measured form's backend
(tsc, as measured)."""
from __future__ import annotations

import json

import report_page

DATA = report_page.DATA
N20, N5 = DATA / "inst-imul-n20.jsonl", DATA / "inst-imul-n5-tsc.jsonl"


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
