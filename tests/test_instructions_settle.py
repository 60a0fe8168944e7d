"""A form left unsettled by a bulk run is measured once more (bulk.py); fabricated documents."""
from cyclebench.instructions import Catalogue, bulk


def _doc(name, stable):
    return {"schema": "cyclebench.inst", "schema_version": 1, "form": name, "status": "ok",
            "extensions": [], "notes": [], "latency": [{"start": "op1 (R64)", "end": "op0 (R64)", "value": 1.0,
                                                        "bound": "exact", "stable": stable}],
            "throughput": {"value": 0.25, "bound": "exact", "stable": True}}


def test_an_unsettled_form_is_measured_again_and_the_settled_document_kept(tmp_path, monkeypatch):
    cat = Catalogue.load()
    sel = bulk.select(cat, names=["add rax, rbx", "sub rax, rbx"])
    names = [s.name for s in sel]
    calls = []

    def fake(form, session, opts, name):
        calls.append(name)
        # ADD is unstable the first time only; SUB is settled at once
        return _doc(name, stable=not (name == names[0] and calls.count(name) == 1))

    monkeypatch.setattr(bulk, "_characterize_one", fake)
    monkeypatch.setattr(bulk, "Session", lambda **kw: None)
    docs = bulk.run(sel, results=tmp_path / "r.jsonl", cpus=[0])
    assert calls == [names[0], names[1], names[0]]
    assert [bulk.unsettled_figures(d) for d in docs] == [0, 0]
    # the results file keeps the last document of a form: resuming reads the settled one
    assert bulk.unsettled_figures(bulk.run(sel, results=tmp_path / "r.jsonl", cpus=[0], resume=True)[0]) == 0
    assert calls == [names[0], names[1], names[0]]


def test_a_form_that_stays_unsettled_is_measured_again_once(tmp_path, monkeypatch):
    cat = Catalogue.load()
    calls = []
    monkeypatch.setattr(bulk, "_characterize_one", lambda f, s, o, n: calls.append(n) or _doc(n, False))
    monkeypatch.setattr(bulk, "Session", lambda **kw: None)
    docs = bulk.run(bulk.select(cat, names=["add rax, rbx"]), cpus=[0])
    assert len(calls) == 1 + bulk.SETTLE_ROUNDS and bulk.unsettled_figures(docs[0]) == 1
