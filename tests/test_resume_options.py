"""A results file resumed with other measuring options (params.METHOD; block's -n) is refused
before anything is measured, exit 10, the file untouched; the same options, options outside the
method and a file from before the options were recorded resume.  No measuring: HLT is a skipped
form, and every block of the CSV is already in the file."""
from __future__ import annotations

import json

import pytest

HEADER = {"cyclebench": "results", "kind": "block", "schema": 1}
BLOCK = {"schema": "cyclebench.block", "schema_version": 1, "hex": "0f05", "status": "refused",
         "reason": "'syscall' at offset 0"}


def test_inst_resumed_with_other_options_is_refused(cli, tmp_path):
    r = tmp_path / "r.jsonl"
    code, _, err = cli("inst", "HLT", "--results", str(r))
    assert code == 0, err
    assert json.loads(r.read_text().splitlines()[0])["meta"]["options"]["n_measurements"] == 20
    whole = r.read_bytes()
    for extra, said in ((["-n", "5"], "with -n 20, this run with -n 5"),
                        (["--median"], "with --avg, this run with --median"),
                        (["--loop", "0"], "without --loop, this run with --loop 0"),
                        (["--df"], "without --drain-frontend, this run with --drain-frontend")):
        code, _, err = cli("inst", "HLT", "--resume", str(r), *extra)
        assert code == 10 and f"r.jsonl was measured {said}" in err, err
        assert "hint: resume with the options the file was started with, or give a new results file" in err
        assert r.read_bytes() == whole
    for extra in ([], ["-n", "20", "--avg"], ["--timeout", "5", "--budget", "1", "--jobs", "1"]):
        code, _, err = cli("inst", "HLT", "--resume", str(r), *extra)
        assert code == 0, err


def test_inst_clock_from_the_environment_counts(cli, tmp_path, monkeypatch):
    r = tmp_path / "r.jsonl"
    assert cli("inst", "HLT", "--results", str(r))[0] == 0
    monkeypatch.setenv("CYCLEBENCH_CLOCK_MHZ", "4100")
    code, _, err = cli("inst", "HLT", "--resume", str(r))
    assert code == 10 and "with --clock-mhz/CYCLEBENCH_CLOCK_MHZ 4100" in err, err


def test_an_inst_file_from_before_the_options_resumes(cli, tmp_path):
    r = tmp_path / "r.jsonl"
    assert cli("inst", "HLT", "--results", str(r))[0] == 0
    lines = r.read_text().splitlines()
    head = json.loads(lines[0])
    del head["meta"]["options"]
    r.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    code, _, err = cli("inst", "HLT", "--resume", str(r), "-n", "5")
    assert code == 0, err


@pytest.mark.parametrize("options, n, code", [({"n_measurements": 10, "max_pages": 16384, "timeout": 10.0}, "5", 10),
                                              ({"n_measurements": 10, "max_pages": 16384, "timeout": 10.0}, "10", 0),
                                              (None, "5", 0)])          # a header without the options
def test_block_resumed_with_another_n_is_refused(cli, tmp_path, options, n, code):
    (tmp_path / "b.csv").write_text("hex\n0f05\n")
    r = tmp_path / "r.jsonl"
    meta = {} if options is None else {"options": options}
    r.write_text(json.dumps({**HEADER, "meta": meta}) + "\n" + json.dumps(BLOCK) + "\n")
    whole = r.read_bytes()
    got, _, err = cli("block", "--file", str(tmp_path / "b.csv"), "--results", str(r), "--resume", "-n", n,
                      "--timeout", "5")
    assert got == code, err
    if code:
        assert "r.jsonl was measured with -n 10, this run with -n 5" in err
    assert r.read_bytes() == whole
