"""Predictions from several models of one CPU (ports/ensemble.py), on fabricated model files:
the mean of the members' figures, the bounds of the member nearest it, the forms any model
lacks, and the command lines that take several files."""
from __future__ import annotations

import json

import pytest

from cyclebench.cli.main import main
from cyclebench.instructions.ports.ensemble import Models, combined, spread
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import Prediction
from cyclebench.instructions.ports.run import store

ADD, MUL = "ADD_01 (R64, R64)", "IMUL (R64, R64)"


def _file(path, mul_share: float, forms=(ADD, MUL), machine=None):
    """A results file whose model gives the multiply ``mul_share`` cycles of its one unit (R1)."""
    st = store(path)
    st.start({"forms": [], **({"machine": machine} if machine else {})}, resume=False)
    usage = {ADD: {"R0": 0.25}, MUL: {"R0": 0.25, "R1": mul_share}}
    model = Model(["R0", "R1"], {f: usage[f] for f in forms}, 6)
    st.append({"type": "model", "model": model.to_json(), "report": {"blockers": {"R0": ADD, "R1": MUL}}})
    st.close()
    return path


def _p(cycles, resource=1.0):
    return Prediction(cycles=cycles, resource_bound=resource, binding_resource="R1", chain_bound=0.0, forms=[])


def test_the_figure_is_the_mean_and_the_bounds_the_nearest_members():
    p = combined([_p(2.0, 2.0), _p(3.0, 3.0), _p(2.2, 2.2)])
    assert p.cycles == pytest.approx(2.4) and p.members == [2.0, 3.0, 2.2]
    assert p.resource_bound == 2.2                   # the member nearest 2.4
    assert spread(p) == pytest.approx(1.0 / 2.4)
    one = combined([_p(1.5)])
    assert one.cycles == 1.5 and one.members == [1.5] and spread(one) == 0.0


def test_two_model_files_predict_their_mean(tmp_path):
    a, b = _file(tmp_path / "a.jsonl", 1.0), _file(tmp_path / "b.jsonl", 2.0)
    block = "imul rax, rbx; imul rcx, rbx; add rdx, rbx"
    alone = [Models.load([f]).predict(block).cycles for f in (a, b)]
    both = Models.load([a, b]).predict(block)
    assert alone == [pytest.approx(2.0), pytest.approx(4.0)]
    assert both.cycles == pytest.approx(3.0) and both.members == [pytest.approx(2.0), pytest.approx(4.0)]


def test_a_form_one_model_lacks_makes_the_mean_a_lower_bound(tmp_path):
    a, b = _file(tmp_path / "a.jsonl", 1.0), _file(tmp_path / "b.jsonl", 1.0, forms=(ADD,))
    p = Models.load([a, b]).predict("imul rax, rbx; add rdx, rbx")
    assert p.unknown == [MUL]


def test_predict_cli_takes_several_models_and_names_each_figure(tmp_path, capsys):
    a, b = _file(tmp_path / "a.jsonl", 1.0), _file(tmp_path / "b.jsonl", 2.0)
    block = "imul rax, rbx; imul rcx, rbx; add rdx, rbx"
    assert main(["predict", "--model", str(a), "--model", str(b), "--json", block]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cycles"] == pytest.approx(3.0) and doc["members"] == [pytest.approx(2.0), pytest.approx(4.0)]
    assert doc["models"] == [str(a), str(b)]
    assert main(["predict", "--model", str(a), "--model", str(b), block]) == 0
    out = capsys.readouterr().out
    assert "predicted: 3.00" in out and "the mean of 2 models" in out and "2.00 (" in out and "4.00 (" in out
    assert "warning: the models stand more than 10% apart" in out            # 2.00 and 4.00
    assert main(["predict", "--model", str(a), "--model", str(a), block]) == 0
    assert "warning" not in capsys.readouterr().out                          # one figure twice
    assert main(["predict", "--model", str(a), block]) == 0
    assert "the mean of" not in capsys.readouterr().out           # one model: as before


def test_a_missing_second_model_is_refused_with_a_hint(tmp_path, capsys):
    a = _file(tmp_path / "a.jsonl", 1.0)
    assert main(["predict", "--model", str(a), "--model", str(tmp_path / "MISSING"), "add rax, rbx"]) == 10
    err = capsys.readouterr().err
    assert "MISSING" in err and "hint:" in err


def test_the_block_predictor_takes_several_model_files(tmp_path):
    from cyclebench.blocks.predictors import make
    a, b = _file(tmp_path / "a.jsonl", 1.0), _file(tmp_path / "b.jsonl", 2.0)
    code = bytes.fromhex("480fafc3" "480fafcb")      # imul rax, rbx; imul rcx, rbx
    assert make("predict", model=[str(a), str(b)]).predict(code) == pytest.approx(3.0)
    assert make("predict", model=str(a)).predict(code) == pytest.approx(2.0)


def test_models_of_different_cpus_are_refused(tmp_path, capsys):
    zen4 = {"cpu_vendor": "AuthenticAMD", "cpu_family": 25, "cpu_model": 17}
    a = _file(tmp_path / "a.jsonl", 1.0, machine=zen4)
    b = _file(tmp_path / "b.jsonl", 2.0, machine={**zen4, "cpu_model": 1})
    c = _file(tmp_path / "c.jsonl", 2.0, machine=dict(zen4))
    assert Models.load([a, c]).predict("imul rax, rbx").cycles == pytest.approx(1.5)
    assert main(["predict", "--model", str(a), "--model", str(b), "add rax, rbx"]) == 2
    err = capsys.readouterr().err
    assert "different CPUs" in err and "hint:" in err
