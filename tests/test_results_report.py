"""cyclebench report: each kind of input, the merge of two machines' inst files, and the HTML page
in headless Chromium (one launch for all the browser checks: DOM, console, sorting, screenshot)."""
import json
import re
from pathlib import Path

import pytest

from cyclebench.cli.main import main
from cyclebench.reports import get_reporter
from cyclebench.results.loaders import load
from cyclebench.results.machines import machines_table
from cyclebench.results.page import build_page

import report_page

DATA = report_page.DATA


@pytest.mark.parametrize("name,kind,tables,figures", [
    ("asm-imul-1.json", "asm", 1, 1),
    ("inst-imul.jsonl", "inst", 1, 0),
    ("memory-tiny", "study", 7, 3),
])
def test_each_kind_of_input_becomes_a_section(name, kind, tables, figures):
    item = load(DATA / name)
    assert item.kind == kind
    page = build_page([item])
    (section,) = page.sections
    assert len(section.tables) >= tables and len(section.figures) == figures
    html = get_reporter("html").render(page)
    assert html.count("<svg") == figures and not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    rows = [r for t in section.tables for r in t.rows if "_detail" in r]
    assert rows and all(r["_detail"]["command"].startswith("cyclebench ") for r in rows)


def test_inst_json_table_is_read(tmp_path):
    docs = [json.loads(x) for x in (DATA / "inst-imul.jsonl").read_text().splitlines()[1:]]
    doc = {"schema": "cyclebench.inst.table", "schema_version": 1, "machine": {}, "forms": docs}
    (tmp_path / "t.json").write_text(json.dumps(doc))
    assert load(tmp_path / "t.json").docs == docs


def test_two_machines_merge_into_one_table_with_a_column_per_cpu(tmp_path):
    # the second machine is the real run with its header metadata edited (report_page.second_machine)
    other = report_page.second_machine(tmp_path / "b.jsonl")
    table = machines_table([load(DATA / "inst-imul.jsonl"), load(other)])
    heads = [c.header for c in table.columns]
    assert any("AMD EPYC" in h and "µcode 0x1000065" in h for h in heads)
    assert any("Intel Xeon (edited copy)" in h and "0x2b000590" in h for h in heads)
    rows = {r["form"]: r for r in table.rows}
    assert len(rows) == 4
    assert rows["IMUL (R32, R32, I32)"]["differs"] == "throughput"
    assert rows["IMUL (R32, R32, I32)"]["_class"] == "differs"
    assert rows["IMUL (R16, R16, I16)"]["differs"] == ""
    # one machine twice (a node that resumed into a second file) stays one column pair
    assert len(machines_table([load(DATA / "inst-imul.jsonl")] * 2).columns) == 4


@pytest.mark.parametrize("args,code,what", [
    (["report", "EMPTY", "-o", "OUT"], 10, "is a folder with no results"),
    (["report", str(DATA / "fixture.json"), "-o", "OUT"], 10, "is not a cyclebench result"),
    (["report", str(DATA / "asm-imul-1.json"), "-o", "report.txt"], 2, "does not end in .html"),
])
def test_bad_input_is_one_error_and_one_hint(tmp_path, capsys, args, code, what):
    (tmp_path / "EMPTY").mkdir()
    args = [str(tmp_path / a) if a in ("EMPTY", "OUT") else a for a in args]
    args = [a + ".html" if a.endswith("OUT") else a for a in args]
    assert main(args) == code
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and what in err[0] and err[1].startswith("hint: ")


def test_an_unreadable_result_file_is_one_error(tmp_path, capsys, monkeypatch):
    # (a permission the test cannot take from root: the loader's open is made to refuse)
    from cyclebench.results import loaders

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(loaders, "open", denied, raising=False)
    assert main(["report", str(DATA / "asm-imul-1.json"), "-o", str(tmp_path / "r.html")]) == 10
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("asm-imul-1.json: Permission denied") and err[1].startswith("hint: ")


# --------------------------------------------------------------------------------- in the browser

@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if report_page.chromium() is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; see apt-packages.txt)")
    out = tmp_path_factory.mktemp("report")
    html = report_page.build(out)
    shot = out / "report.png"
    dom, log = report_page.run_chromium(html, shot)
    return html, dom, log, shot


def test_page_is_self_contained(browser):
    html = browser[0].read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


def test_dom_has_the_tables_and_figures(browser):
    _, dom, _, _ = browser
    assert dom.count('<figure class="plot"') == 4           # 3 study plots + the snippet's repetitions
    assert dom.count("<svg") >= 4
    assert "instruction forms across machines" in dom and 'class="differs' in dom
    assert "lat · published" in dom
    assert "every measurement" in dom and "cyclebench study memory" in dom
    assert "cpu_model_name" in dom


def test_console_shows_no_errors(browser):
    _, dom, log, _ = browser
    assert 'data-ready="1"' in dom, "the page's script did not run to its end"
    html_tag = re.search(r"<html[^>]*>", dom).group(0)
    assert "data-errors" not in html_tag, html_tag
    assert not [l for l in log.splitlines() if "Uncaught" in l or ":CONSOLE" in l]


def test_sort_filter_and_details_work(browser):
    _, dom, _, _ = browser
    assert re.search(r'data-first-desc="IMUL \(R32, R32, I32\)"', dom)     # sorted by form, descending
    assert 'data-shown="2"' in dom and 'data-count="2 of 4 rows"' in dom    # filtered on R16
    assert "cyclebench inst" in re.search(r'data-detail="([^"]*)"', dom).group(1)


def test_screenshot_is_taken(browser):
    shot = browser[3]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
