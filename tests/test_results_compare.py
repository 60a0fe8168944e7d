"""cyclebench compare: verdicts on synthetic samples with known differences, on two real runs of one
snippet, and the errors for inputs that cannot be compared."""
import json
import random
import shutil
from pathlib import Path

import pytest

from cyclebench.cli.main import main
from cyclebench.results.compare import FASTER, FEW, SAME, SLOWER, compare, min_p_value, verdict
from cyclebench.results.loaders import load

DATA = Path(__file__).parent / "data" / "reports"


def _normal(mean, sd, n, seed):
    rng = random.Random(seed)
    return [rng.gauss(mean, sd) for _ in range(n)]


def test_a_known_slowdown_is_slower_and_a_speedup_faster():
    old = _normal(100, 1, 30, 1)
    v, p, noise = verdict(old, _normal(110, 1, 30, 2), 0.10, 0.05)
    assert v == SLOWER and p < 1e-6 and noise < 0.10
    assert verdict(old, _normal(90, 1, 30, 3), -0.10, 0.05)[0] == FASTER


def test_one_distribution_twice_is_no_significant_change():
    for seed in range(10):
        a, b = _normal(100, 1, 30, 10 + seed), _normal(100, 1, 30, 50 + seed)
        delta = (sum(b) - sum(a)) / sum(a)
        assert verdict(a, b, delta, 0.01)[0] == SAME


def test_a_significant_shift_inside_the_noise_is_no_change():
    # 0.5% apart with a 10% spread: many samples make it significant, the noise makes it nothing
    rng = random.Random(7)
    a = [100 * (1 + rng.uniform(-0.1, 0.1)) for _ in range(4000)]
    b = [x * 1.005 for x in a]
    v, p, noise = verdict(a, b, 0.005, 0.05)
    assert p < 0.05 and noise > 0.005 and v == SAME


def test_too_few_repetitions_are_said_so():
    assert min_p_value(3, 3) == pytest.approx(0.1)
    assert verdict([1, 1.1, 1.2], [5, 5.1, 5.2], 3.0, 0.05)[0] == FEW
    assert verdict([1, 1.1, 1.2, 1.3], [5, 5.1, 5.2, 5.3], 3.0, 0.05)[0] == SLOWER


def test_two_real_runs_of_one_snippet_say_no_significant_change(capsys):
    assert main(["compare", str(DATA / "asm-imul-1.json"), str(DATA / "asm-imul-2.json")]) == 0
    out = capsys.readouterr().out
    assert "no significant change" in out and "SLOWER" not in out


def test_fail_on_regression_exits_12_with_one_error_line(tmp_path, capsys):
    doc = json.loads((DATA / "asm-imul-1.json").read_text())
    ev = doc["events"]["cycles"]
    ev["samples"] = [x * 1.5 for x in ev["samples"]]
    ev["value"] *= 1.5
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    assert main(["compare", str(DATA / "asm-imul-1.json"), str(slow), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["findings"]["regressions"] == 1
    assert main(["compare", str(DATA / "asm-imul-1.json"), str(slow), "--fail-on-regression"]) == 12
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: 1 figure(s) got significantly slower") and err[1].startswith("hint:")


def test_markdown_and_inst_runs(capsys):
    assert main(["compare", str(DATA / "inst-imul.jsonl"), str(DATA / "inst-imul.jsonl"), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| figure |" in out and "IMUL (R32, R32, I32): throughput" in out


def test_study_runs_compare_by_record_key():
    c = compare(load(DATA / "memory-tiny"), load(DATA / "memory-tiny"))
    assert c.changes and not c.regressions


@pytest.mark.parametrize("old,new,code,what", [
    ("asm-imul-1.json", "inst-imul.jsonl", 2, "cannot compare asm results"),
    ("asm-imul-1.json", "fixture.json", 10, "is not a cyclebench result"),
    ("asm-imul-1.json", "empty-folder", 10, "is a folder with no results"),
])
def test_inputs_that_cannot_be_compared(tmp_path, capsys, old, new, code, what):
    paths = []
    for name in (old, new):
        p = tmp_path / name
        if name == "empty-folder":
            p.mkdir()
        else:
            shutil.copy(DATA / name, p)
        paths.append(str(p))
    assert main(["compare", *paths]) == code
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and what in err[0] and err[1].startswith("hint: ")


def test_two_cpus_of_one_model_name_are_two_cpus(tmp_path, capsys):
    # a VM guest reads "AMD EPYC" on Zen 3 (family 25 model 1) and Zen 4 (model 17) alike: the
    # family and model tell them apart, the name does not
    doc = json.loads((DATA / "asm-imul-1.json").read_text())
    doc["machine"]["cpu_model"] = 1 if doc["machine"]["cpu_model"] != 1 else 17
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    assert main(["compare", str(DATA / "asm-imul-1.json"), str(other), "--format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["findings"]["warnings"]
    assert any("different CPUs" in w for w in warnings)
    assert main(["compare", str(DATA / "asm-imul-1.json"), str(DATA / "asm-imul-2.json"), "--format", "json"]) == 0
    assert not any("different CPUs" in w for w in json.loads(capsys.readouterr().out)["findings"]["warnings"])
