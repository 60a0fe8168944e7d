"""Every output format, from one result (Google Benchmark's output-test style)."""
import csv
import io
import json

import pytest

import cyclebench
from cyclebench.reports import FORMATS, get_reporter


@pytest.fixture(scope="module")
def result():
    return cyclebench.measure("imul rax, rax", n_measurements=10, budget=0)


def test_text(result):
    text = get_reporter("text").render([result])
    first = text.splitlines()[0]
    assert first.startswith("cycles (TSC-calibrated") or first.startswith("cycles (PMU")
    assert "TSC ticks:" in text and "nanoseconds:" in text and "# backend" in text


def test_text_verbose_prints_every_raw_reading(result):
    text = get_reporter("text", verbose=True).render([result])
    assert sum(1 for l in text.splitlines() if l.startswith("#  rep")) == 10


def test_json(result):
    d = json.loads(get_reporter("json").render([result]))
    assert d["events"]["cycles"]["value"] == result.value("cycles")


def test_markdown(result):
    md = get_reporter("markdown").render([result]).splitlines()
    assert md[0].startswith("| code |") and len(md) == 2 + len(result.events)


def test_csv(result):
    rows = list(csv.DictReader(io.StringIO(get_reporter("csv").render([result]))))
    assert [r["event"] for r in rows] == list(result.events)
    assert float(rows[0]["value"]) == pytest.approx(result.value("cycles"))


def test_every_format_is_tested():
    assert set(FORMATS) == {"text", "json", "markdown", "csv"}
