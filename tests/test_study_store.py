"""The results store (cyclebench/study/store.py): header, append, resume, torn last lines cut,
foreign and malformed files refused untouched, bounded reading, and the output-path check."""
import json
import os

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from cyclebench.errors import ResultFileError
from cyclebench.study import store as S
from cyclebench.study.store import ResultsStore, check_output_path, same_file


def _check(rec):
    return None if isinstance(rec.get("k"), str) else "no string 'k'"


def _store(path, **kw):
    return ResultsStore(path, "demo", 2, check_record=_check, **kw)


def _write(path, n=3, meta=None):
    with _store(path) as s:
        s.start(meta or {"run": 1}, resume=False)
        for i in range(n):
            s.append({"k": f"r{i}", "v": i})
    return path.read_bytes()


def test_a_new_file_gets_the_header_and_one_line_per_record(tmp_path):
    data = _write(tmp_path / "r.jsonl")
    lines = data.decode().splitlines()
    assert json.loads(lines[0]) == {"cyclebench": "results", "kind": "demo", "schema": 2, "meta": {"run": 1}}
    assert [json.loads(x)["k"] for x in lines[1:]] == ["r0", "r1", "r2"]
    assert data.endswith(b"\n")
    meta, recs = _store(tmp_path / "r.jsonl").load()
    assert meta == {"run": 1} and [r["v"] for r in recs] == [0, 1, 2]


def test_a_missing_or_empty_file_holds_nothing(tmp_path):
    assert _store(tmp_path / "none.jsonl").load() == (None, [])
    (tmp_path / "e.jsonl").write_bytes(b"")
    assert _store(tmp_path / "e.jsonl").load() == (None, [])


def test_resume_returns_the_records_and_appends_after_them(tmp_path):
    p = tmp_path / "r.jsonl"
    _write(p, 2)
    s = _store(p)
    recs = s.start({"run": 2}, resume=True)
    s.append({"k": "more"})
    s.close()
    assert [r["k"] for r in recs] == ["r0", "r1"] and s.meta == {"run": 1}   # the first header stays
    assert [r["k"] for r in _store(p).load()[1]] == ["r0", "r1", "more"]


def test_resume_of_a_missing_file_creates_it(tmp_path):
    p = tmp_path / "sub" / "r.jsonl"
    with _store(p) as s:
        assert s.start({}, resume=True) == []
    assert _store(p).load() == ({}, [])


def test_a_torn_last_line_is_cut_and_noted(tmp_path):
    p = tmp_path / "r.jsonl"
    whole = _write(p, 2)
    p.write_bytes(whole + b'{"k":"half')
    s = _store(p)
    recs = s.start({}, resume=True)
    s.append({"k": "again"})
    s.close()
    assert len(recs) == 2 and len(s.notes) == 1 and "torn last line 4" in s.notes[0]
    assert p.read_bytes() == whole + b'{"k":"again"}\n'


def test_a_torn_header_is_cut(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"cyclebench":"resu')
    s = _store(p)
    assert s.start({}, resume=True) == [] and s.notes
    s.close()
    assert p.read_bytes().startswith(b'{"cyclebench":"results"') and _store(p).load() == ({}, [])


def test_a_run_resumed_on_another_cpu_is_refused(tmp_path):
    # its figures would go into a file whose header names the first machine
    p = tmp_path / "r.jsonl"
    zen4 = {"cpu_vendor": "AuthenticAMD", "cpu_family": 25, "cpu_model": 17, "cpu_stepping": 1}
    whole = _write(p, 1, meta={"machine": zen4})
    with pytest.raises(ResultFileError, match=r"started on another CPU \(AuthenticAMD, family 25 model 17"):
        _store(p).start({"machine": {**zen4, "cpu_vendor": "GenuineIntel", "cpu_family": 6}}, resume=True)
    assert p.read_bytes() == whole
    for meta in ({"machine": {**zen4, "microcode": "0x2"}}, {}):     # the same CPU, or a caller without it
        with _store(p) as s:
            assert len(s.start(meta, resume=True)) == 1


def test_reading_alone_never_changes_the_file(tmp_path):
    # a command that only reads (predict --model, report, compare) leaves a torn line where it is:
    # the file may be read-only, or a run may be appending to it right now
    p = tmp_path / "r.jsonl"
    whole = _write(p, 2)
    for torn in (whole + b'{"k":"half', b'{"cyclebench":"resu'):
        p.write_bytes(torn)
        s = _store(p)
        meta, recs = s.load()
        assert p.read_bytes() == torn and len(s.notes) == 1 and "left out the torn last line" in s.notes[0]
        assert (meta, len(recs)) == (({"run": 1}, 2) if torn.startswith(whole) else (None, 0))


@pytest.mark.parametrize("content, why", [
    (b'{"form": "ADD_01 (R64, R64)"}', "not a cyclebench results file"),          # torn but foreign
    (b'{"form": ["x"]}\n', "not a cyclebench results file"),
    (b"\x00\xff\xfe binary\n\x89PNG", "not a cyclebench results file"),
    (b'{"schema": "cyclebench.inst", "form": "x"}\n', "older cyclebench"),
    (b'{"cyclebench":"results","kind":"other","schema":2,"meta":{}}\n', "holds other results"),
    (b'{"cyclebench":"results","kind":"demo","schema":3,"meta":{}}\n', "schema 3"),
    (b'{"cyclebench":"results","kind":"demo","schema":"2","meta":{}}\n', "schema"),
    (b'{"cyclebench":"results","kind":"demo","schema":2}\n', "meta"),
    (b'{"cyclebench":"results","kind":"demo","schema":2,"meta":{}}\n[1]\n', ":2 is not a record of demo results"),
    (b'{"cyclebench":"results","kind":"demo","schema":2,"meta":{}}\n{"k":1}\n{"k":"x"}\n', "no string 'k'"),
    (b'{"cyclebench":"results","kind":"demo","schema":2,"meta":{}}\n\xff\n{"k":"x"}\n', ":2 is not"),
])
def test_foreign_or_malformed_files_are_refused_and_left_alone(tmp_path, content, why):
    p = tmp_path / "r.jsonl"
    p.write_bytes(content)
    for call in (lambda s: s.load(), lambda s: s.start({}, resume=True),
                 lambda s: s.start({}, resume=False)):
        with pytest.raises(ResultFileError) as info:
            call(_store(p))
        assert str(p) in str(info.value) and info.value.hint
    with pytest.raises(ResultFileError, match=why):
        _store(p).load()
    assert p.read_bytes() == content


def test_an_existing_file_is_never_overwritten_without_resume(tmp_path):
    p = tmp_path / "r.jsonl"
    data = _write(p)
    with pytest.raises(ResultFileError, match="already holds results"):
        _store(p).start({}, resume=False)
    assert p.read_bytes() == data
    other = tmp_path / "page.html"
    other.write_text("<html></html>\n")
    with pytest.raises(ResultFileError, match="already exists and is not a cyclebench results file"):
        _store(other).start({}, resume=False)
    assert other.read_text() == "<html></html>\n"


@pytest.mark.parametrize("make", ["folder", "device", "fifo", "parent_is_file"])
def test_unwritable_paths_fail_at_start(tmp_path, make):
    p = tmp_path / "x"
    if make == "folder":
        p.mkdir()
    elif make == "device":
        p = type(p)("/dev/full")
    elif make == "fifo":
        os.mkfifo(p)
    else:
        p.write_text("a file")
        p = p / "r.jsonl"
    for resume in (False, True):
        with pytest.raises(ResultFileError):
            _store(p).start({}, resume=resume)


def test_a_write_error_while_appending_is_a_result_file_error(tmp_path):
    s = _store(tmp_path / "r.jsonl")
    s.start({}, resume=False)
    os.close(s._fd)
    s._fd = os.open("/dev/full", os.O_WRONLY)      # as if the disk filled up mid-run
    with pytest.raises(ResultFileError, match="cannot write"):
        s.append({"k": "x"})
    s.close()


def test_numpy_values_are_written_as_plain_numbers(tmp_path):
    np = pytest.importorskip("numpy")
    p = tmp_path / "r.jsonl"
    with _store(p) as s:
        s.start({}, resume=False)
        s.append({"k": "n", "a": np.int64(3), "b": np.float64(0.5), "c": np.arange(2)})
    assert _store(p).load()[1] == [{"k": "n", "a": 3, "b": 0.5, "c": [0, 1]}]


def test_reading_an_over_long_line_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "MAX_LINE", 1000)
    monkeypatch.setattr(S, "_CHUNK", 100)
    head = b'{"cyclebench":"results","kind":"demo","schema":2,"meta":{}}\n'
    p = tmp_path / "r.jsonl"
    p.write_bytes(head + b'{"k":"' + b"x" * 5000 + b'"}\n')
    with pytest.raises(ResultFileError, match="longer than") as info:
        _store(p).load()
    assert len(str(info.value)) < 300
    p.write_bytes(head + b"x" * 5000)                  # the torn last line of a huge record
    s = _store(p)
    assert s.load() == ({}, []) and len(p.read_bytes()) == len(head) + 5000
    assert s.start({}, resume=True) == [] and p.read_bytes() == head
    s.close()
    p.write_bytes(b"y" * 5000)
    with pytest.raises(ResultFileError, match="not a cyclebench results file"):
        _store(p).load()


def test_check_output_path(tmp_path):
    check_output_path(tmp_path / "new.txt")
    (tmp_path / "old.txt").write_text("x")
    check_output_path(tmp_path / "old.txt")
    with pytest.raises(ResultFileError, match="is a folder"):
        check_output_path(tmp_path)
    with pytest.raises(ResultFileError, match="does not exist"):
        check_output_path(tmp_path / "no" / "such.txt")
    with pytest.raises(ResultFileError, match="old.txt is a file, not a folder"):
        check_output_path(tmp_path / "old.txt" / "x.txt")
    assert not (tmp_path / "new.txt").exists()


def test_same_file(tmp_path):
    (tmp_path / "a").write_text("x")
    os.symlink(tmp_path / "a", tmp_path / "b")
    assert same_file(tmp_path / "a", tmp_path / "b")
    assert same_file(tmp_path / "a", tmp_path / "." / "a")
    assert same_file(tmp_path / "n1", tmp_path / "." / "n1")          # neither exists yet
    assert not same_file(tmp_path / "a", tmp_path / "n1")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(
    st.binary(max_size=300),
    st.builds(lambda tail: b'{"cyclebench":"results","kind":"demo","schema":2,"meta":{}}\n' + tail,
              st.binary(max_size=200)),
    st.lists(st.text(max_size=40), max_size=5).map(lambda xs: "\n".join(xs).encode())))
def test_any_bytes_load_or_raise_result_file_error(tmp_path, content):
    p = tmp_path / "prop.jsonl"
    p.write_bytes(content)
    try:
        meta, recs = _store(p).load()
    except ResultFileError as e:
        assert e.hint and len(str(e)) < 500
        assert p.read_bytes() == content                # a refused file is left alone
    else:
        assert meta is None or isinstance(meta, dict)
        assert all(isinstance(r, dict) for r in recs)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["value", "bound", "note", "start", "end", "error"]) | st.text(max_size=4),
                        inner, max_size=4),
                    max_leaves=12)
VALUE = st.fixed_dictionaries({}, optional={k: JSON for k in ("value", "bound", "note", "start", "end", "error")})
INST_KEYS = ("form", "status", "reason", "extensions", "latency", "latency_max", "throughput", "notes",
             "uops", "ports", "stable")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.fixed_dictionaries(
    {"form": st.text(max_size=8), "status": st.sampled_from(["ok", "skipped", "failed"])},
    optional={k: JSON | st.lists(VALUE, max_size=2) | VALUE for k in INST_KEYS[2:]}))
@example(fields={"form": "x", "status": "ok", "throughput": {"note": [1]}})
@example(fields={"form": "x", "status": "ok", "latency": [None]})
def test_inst_records_are_refused_or_render_in_the_table(tmp_path, fields):
    from cyclebench.instructions import bulk
    from cyclebench.instructions.characterize import SCHEMA, SCHEMA_VERSION
    from cyclebench.reports.tables import get_table_reporter, instruction_table
    p = tmp_path / "inst.jsonl"
    rec = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **fields}
    p.write_bytes(b'{"cyclebench":"results","kind":"inst","schema":1,"meta":{}}\n' + json.dumps(rec).encode() + b"\n")
    try:
        _, docs = bulk.results_store(p).load()
    except ResultFileError:
        return
    get_table_reporter("text").render([instruction_table(docs)])      # what --resume then does with them


def test_a_run_resumed_with_another_method_is_refused(tmp_path):
    # figures measured another way would go into a file whose header names the first way
    p = tmp_path / "r.jsonl"
    opts = {"n_measurements": 20, "aggregate": "avg", "basic_mode": False, "unroll": None, "timeout": 10}
    whole = _write(p, 1, meta={"options": opts})
    method = {"n_measurements": "-n", "aggregate": "--{}", "basic_mode": "--basic-mode", "unroll": "--unroll"}
    for change, said in (({"n_measurements": 5}, "with -n 20, this run with -n 5"),
                         ({"aggregate": "median"}, "with --avg, this run with --median"),
                         ({"basic_mode": True}, "without --basic-mode, this run with --basic-mode"),
                         ({"unroll": 100}, "without --unroll, this run with --unroll 100")):
        with pytest.raises(ResultFileError, match=f"r.jsonl was measured {said}") as e:
            _store(p, method=method).start({"options": {**opts, **change}}, resume=True)
        assert "the options the file was started with" in e.value.hint
        assert p.read_bytes() == whole
    # an option outside the method, a header from before the options, a caller without them: resumed
    for path, meta in ((p, {"options": {**opts, "timeout": 60}}), (p, {}),
                       (tmp_path / "old.jsonl", {"options": {**opts, "n_measurements": 5}})):
        if not path.exists():
            _write(path, 1, meta={"run": 1})
        with _store(path, method=method) as s:
            assert len(s.start(meta, resume=True)) == 1
    # a key the header lacks (recorded by a later cyclebench) is not compared
    with _store(p, method={**method, "loop": "--loop"}) as s:
        assert len(s.start({"options": {**opts, "loop": 5}}, resume=True)) == 1
