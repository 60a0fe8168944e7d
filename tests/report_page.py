"""The HTML report test's page and its one headless-Chromium run, shared by tests/test_results_report.py
and by ``python3 tests/report_page.py``, which writes docs/report-screenshot.png (the README's picture).

The page is built from the real fixtures in tests/data/reports: a tiny memory-study folder, an inst
run and a second "machine" made from it by editing its header metadata (see second_machine), and a
snippet run. Before Chromium opens it, two scripts are injected: a recorder at the top of <head>
(window.onerror, unhandled rejections and console.error go into data-errors on <html>) and, after the
page's own script, one that sorts and filters the first instruction table the way a user would and
writes what it saw into data-* attributes; --dump-dom returns the DOM after both ran.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "reports"
SCREENSHOT = ROOT / "docs" / "report-screenshot.png"

RECORDER = """<script>(function(){var e=[];function put(m){e.push(String(m));
document.documentElement.setAttribute('data-errors', JSON.stringify(e));}
window.addEventListener('error', function(ev){put('error: '+ev.message);});
window.addEventListener('unhandledrejection', function(ev){put('rejection: '+ev.reason);});
var ce=console.error; console.error=function(){put('console.error: '+Array.prototype.join.call(arguments,' '));
ce.apply(console, arguments);};})();</script>"""

ACTIONS = """<script>(function(){var t=document.querySelector('table.data[id]');
var tables=document.querySelectorAll('table.data'); var m=null;
for (var i=0;i<tables.length;i++){ if (tables[i].tHead.rows[0].cells[0].textContent==='form') { m=tables[i]; break; } }
var th=m.tHead.rows[0].cells[0]; th.click(); th.click();
var first=m.tBodies[0].rows[0].cells[0].textContent;
var input=document.getElementById(m.dataset.filter); input.value='R16'; input.dispatchEvent(new Event('input'));
var shown=Array.prototype.filter.call(m.tBodies[0].rows, function(r){return !r.hidden;}).length;
var count=document.getElementById(m.dataset.count).textContent;
var tr=m.tBodies[0].querySelector('tr.has-detail'); if (tr) tr.cells[0].click();
var detail=document.getElementById(m.id+'-detail').textContent;
input.value=''; input.dispatchEvent(new Event('input'));
var h=document.documentElement; h.setAttribute('data-first-desc', first); h.setAttribute('data-shown', shown);
h.setAttribute('data-count', count); h.setAttribute('data-detail', detail.slice(0, 400));})();</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def second_machine(dst: Path) -> Path:
    """A second machine's inst results, made by editing the metadata of a real run (this host's):
    another vendor, family/model and microcode, and one form's throughput changed so that the
    machines differ there. Nothing in it was measured on such a CPU."""
    lines = (DATA / "inst-imul.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    head["meta"]["machine"].update(cpu_vendor="GenuineIntel", cpu_family=6, cpu_model=0x8F, cpu_stepping=8,
                                   cpu_model_name="Intel Xeon (edited copy)", microcode="0x2b000590")
    docs = [json.loads(x) for x in lines[1:]]
    for d in docs:
        if d["form"] == "IMUL (R32, R32, I32)":
            d["throughput"]["value"] = 2.0
    dst.write_text("\n".join(json.dumps(x, separators=(",", ":")) for x in [head, *docs]) + "\n")
    return dst


def build(out: Path) -> Path:
    """The report page of every kind of input, written into ``out``; returns the HTML path."""
    from cyclebench.cli.main import main
    other = second_machine(out / "inst-machine-b.jsonl")
    pub = out / "published.csv"
    pub.write_text('instruction,latency,throughput\n"IMUL (R32, R32, I32)",3,1\n')
    html = out / "report.html"
    code = main(["report", str(DATA / "memory-tiny"), str(DATA / "inst-imul.jsonl"), str(other),
                 str(DATA / "asm-imul-1.json"), "--compare", str(pub), "-o", str(html)])
    assert code == 0, code
    return html


def run_chromium(html: Path, screenshot: Path, inject: bool = True) -> tuple[str, str]:
    """(DOM after the scripts ran, Chromium's stderr) of one headless run that also takes the screenshot."""
    page = html
    if inject:
        text = html.read_text()
        text = text.replace("<head>", "<head>" + RECORDER, 1)
        text = text.replace("</body>", ACTIONS + "</body>", 1)
        page = html.with_name("page-under-test.html")
        page.write_text(text)
    proc = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", "--window-size=1280,1500",
                           f"--screenshot={screenshot}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    return proc.stdout, proc.stderr


if __name__ == "__main__":
    import tempfile
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        page = build(Path(tmp))
        run_chromium(page, SCREENSHOT, inject=False)
    print(f"wrote {SCREENSHOT}")
