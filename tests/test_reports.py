"""Every output format on fixture data (Google Benchmark's output-test style): the instruction and
sequence tables against golden files, a measurement Result, a report with its metadata block, and
figures. Nothing here measures."""
import csv
import io
import json
from pathlib import Path

import pytest

from cyclebench.errors import ResultFileError, UsageError
from cyclebench.measurement.result import Result
from cyclebench.reports import FORMATS, Column, Figure, Panel, Report, Series, Table, get_reporter
from cyclebench.reports.tables import get_table_reporter, instruction_table, sequence_table

DATA = Path(__file__).parent / "data" / "reports"
FIX = json.loads((DATA / "fixture.json").read_text())
SUFFIX = {"text": "txt", "markdown": "md", "csv": "csv", "json": "json"}


@pytest.mark.parametrize("fmt", SUFFIX)
def test_instruction_and_sequence_tables_match_their_golden_files(fmt):
    inst = instruction_table(FIX["docs"], FIX["comparisons"], ["summary line"])
    seq = sequence_table(FIX["sequences"])
    assert get_table_reporter(fmt).render([inst]) == (DATA / f"inst.{SUFFIX[fmt]}").read_text()
    assert get_table_reporter(fmt).render([seq]) == (DATA / f"seq.{SUFFIX[fmt]}").read_text()


@pytest.fixture(scope="module")
def result():
    return Result.from_json((DATA / "result.json").read_text())


def test_result_text_is_nanobench_like(result):
    text = get_reporter("text").render([result])
    assert text.splitlines()[0].startswith("cycles (TSC-calibrated, 3.23 GHz): 2.990 ± 0.003")
    assert "TSC ticks:" in text and "nanoseconds:" in text and "# backend tsc" in text
    two = get_reporter("text").render([result, result])
    assert two.count("== imul rax, rax") == 2


def test_result_text_verbose_prints_every_raw_reading(result):
    text = get_reporter("text", verbose=True).render([result])
    assert sum(1 for ln in text.splitlines() if ln.startswith("#  rep")) == 4


def test_result_json_is_the_result_document(result):
    d = json.loads(get_reporter("json").render([result]))
    assert d["events"]["cycles"]["value"] == result.value("cycles")


def test_result_markdown(result):
    md = get_reporter("markdown").render([result]).splitlines()
    assert md[0].startswith("| code | event |") and md[1].startswith("| --- |")
    assert md[2].startswith("| `imul rax, rax` | cycles |") and "| 2.9903 |" in md[2]
    assert len([ln for ln in md if ln.startswith("| `")]) == len(result.events)


def test_result_csv_keeps_full_precision(result):
    rows = list(csv.DictReader(io.StringIO(get_reporter("csv").render([result]))))
    assert [r["event"] for r in rows] == list(result.events)
    assert float(rows[0]["value"]) == result.value("cycles")


def _report():
    t = Table("t", [Column("name"), Column("x", "x (cycles)", "right", 2), Column("ok")],
              [{"name": "a|b", "x": 1.23456, "ok": True}, {"name": "c", "x": None, "ok": False}], ["a note"])
    return Report(tables=[t], meta={"machine": {"cpu_model_name": "Fake CPU"}, "parameters": {"n": 3}},
                  findings={"best": "a"}, schema="cyclebench.test")


def test_report_json_carries_the_metadata_block():
    d = json.loads(get_reporter("json").render(_report()))
    assert d["schema"] == "cyclebench.test" and d["metadata"]["machine"]["cpu_model_name"] == "Fake CPU"
    assert d["findings"] == {"best": "a"}
    assert d["tables"][0]["rows"][0] == {"name": "a|b", "x": 1.23456, "ok": True}


def test_report_cells_in_text_markdown_and_csv():
    r = _report()
    text = get_reporter("text").render(r)
    assert "1.23" in text and "1.2345" not in text and "—" in text and "# a note" in text
    md = get_reporter("markdown").render(r).splitlines()
    assert md[0] == "### t" and md[2] == "| name | x (cycles) | ok |" and md[3] == "| --- | ---: | --- |"
    assert md[4] == "| a\\|b | 1.23 | yes |" and md[5] == "| c | — | no |"
    assert get_reporter("csv").render(r) == "name,x,ok\na|b,1.23456,True\nc,,False\n"


def test_of_records_builds_a_long_table():
    t = Table.of_records("long", [{"a": 1}, {"a": 2, "b": 0.5}])
    assert [c.key for c in t.columns] == ["a", "b"]
    assert get_reporter("csv").render([t]) == "a,b\n1,\n2,0.5\n"


def _figure():
    return Figure("f", "a title", [Panel("left", "size", "cycles", [Series("one", [1, 2, 4], [1.0, 2.0, 3.0],
                                                                           {"marker": "o"})], xlog=2),
                                   Panel("right", ylog=True, vlines=[(2, "cut", {"linestyle": ":"})])])


def test_png_and_svg_figures(tmp_path):
    png = get_reporter("png").write(_figure(), tmp_path / "f.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    svg = get_reporter("svg").render(_figure()).decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert get_reporter("svg").render(_figure()) == get_reporter("svg").render(_figure())   # no date


def test_a_plot_file_holds_one_figure():
    with pytest.raises(UsageError):
        get_reporter("png").render(Report())


def test_an_unwritable_file_is_a_result_file_error(tmp_path):
    with pytest.raises(ResultFileError):
        get_reporter("csv").write(_report(), tmp_path / "missing" / "x.csv")


def test_unknown_format():
    with pytest.raises(UsageError):
        get_reporter("xml")


def test_html_renders_the_report_model():
    html = get_reporter("html").render(_report())
    assert html.startswith("<!DOCTYPE html>") and '<table class="data"' in html
    assert html.count("<svg") == len(_report().figures)


def test_every_format_is_tested():
    # html: also tests/test_results_report.py (in headless Chromium)
    assert set(FORMATS) == {"text", "json", "markdown", "csv", "png", "svg", "html"}


def test_log_axis_labels_are_plain_numbers():
    from cyclebench.reports.fmt_plot import _compact
    assert [_compact(v, 2) for v in (8, 73, 1024, 4096, 3 << 20, 1 << 30)] == ["8", "73", "1K", "4K", "3M", "1G"]
    assert [_compact(v, 10) for v in (0.5, 20, 1000, 20000)] == ["0.5", "20", "1000", "20000"]
