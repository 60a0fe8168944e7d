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


def test_a_pair_bounded_by_a_reference_read_during_a_burst_is_unsettled():
    from types import SimpleNamespace

    from cyclebench.instructions import connectors as C
    from cyclebench.instructions.characterize import _closed
    from cyclebench.instructions.comparing import unsettled
    from cyclebench.instructions.session import Session

    def measure(code, init=None, **kw):
        # the mask connector's pinning loops read unstable: its latency stays between 1 and 3
        v = {"vpcmpuq k1, xmm1, xmm31, 5\nvmovdqu64 xmm1{k1}, xmm1": 4.0, "vmovdqu64 xmm1{k1}, xmm1": 1.0,
             "vpcmpuq k1, xmm1, xmm31, 5\nkmovq rbx, k1\nkmovq k1, rbx": 5.0}.get(code, 3.0)
        ev = SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)
        stable = "vmovdqu64" not in code
        return SimpleNamespace(events={"cycles": ev}, stable=stable, warnings=[],
                               stability={"stable": stable, "linearity": {"linear": True}}, backend={})

    s = Session(measure_fn=measure)
    conn = SimpleNamespace(steps=["vec2k128"], text="vpcmpuq k1, xmm1, xmm31, 5")
    upper, lower, exact, info = _closed(s, 6.0, conn)
    assert not exact and info["unsettled_reference"] == ["vec2k128"] and s.unsettled_step("k2vec128")
    pair = {"start": "op1 (K)", "end": "op0 (XMM)", "value": upper, "bound": "upper", "stable": True,
            "linear": True, "connector": info}
    assert unsettled({"latency": [pair]}, "latency_max")
    pair["connector"] = {**info, "unsettled_reference": []}     # a settled reference: a bound, not unsettled
    assert not unsettled({"latency": [pair]}, "latency_max")
    assert not C.PINNING.get("alu")                             # only the mask steps are pinned


def test_a_throughput_off_the_port_grid_is_measured_again_on_each_cpu_the_fastest_kept(tmp_path, monkeypatch):
    cat = Catalogue.load()
    sel = bulk.select(cat, names=["movq xmm1, rbx", "add rax, rbx"])
    k, add = (s.name for s in sel)
    calls, sessions = [], []

    def fake(form, session, opts, name):
        calls.append((name, session, opts["latency"]))
        d = _doc(name, True)
        if name == k:    # 1.80 a copy in the pool's run and on CPU 1, 1.38 on CPU 0 alone
            d["throughput"]["value"] = 1.38 if session == 0 and not opts["latency"] else 1.80
        return d

    monkeypatch.setattr(bulk, "_characterize_one", fake)
    monkeypatch.setattr(bulk, "Session", lambda cpu=None, **kw: cpu)      # the session is its CPU here
    monkeypatch.setattr(bulk, "pinned_pool", lambda items, cpus, init, args, work, finish:
                        [finish(fake(cat.get(n), 1, {"latency": True}, n)) for n in items])
    docs = {d["form"]: d for d in bulk.run(sel, results=tmp_path / "r.jsonl", cpus=[0, 1])}
    # 0.25 is on the grid (µops over four ports): only the off-grid figure runs again, throughput only
    assert [(n, c) for n, c, lat in calls if not lat] == [(k, 0), (k, 1)]
    assert docs[k]["throughput"]["value"] == 1.38 and docs[k]["throughput"]["by_cpu"] == {"0": 1.38, "1": 1.80}
    assert docs[add]["throughput"]["value"] == 0.25 and "by_cpu" not in docs[add]["throughput"]
    # the results file keeps the last document of a form: resuming reads the faster one
    again = bulk.run(sel, results=tmp_path / "r.jsonl", cpus=[0, 1], resume=True)
    assert again[0]["throughput"]["value"] == 1.38
    assert len([c for c in calls if not c[2]]) == 2          # a resumed form is not measured again
    assert bulk.off_grid({"status": "ok", "throughput": {"value": 1.8, "stable": True}})
    assert not bulk.off_grid({"status": "ok", "throughput": {"value": 0.667, "stable": True}})
    assert not bulk.off_grid({"status": "ok", "throughput": {"value": 1.8, "stable": False}})


def test_the_issue_bound_labels_follow_the_throughput_the_pass_on_each_cpu_keeps(tmp_path, monkeypatch):
    # movq's chain ran 1.80 a link, as its copies did in the form's own run: marked issue-bound (≤);
    # the pass on each CPU keeps 1.38, so the chain is slower than the copies issue: a latency, exact
    from cyclebench.instructions.issue_fill import ISSUE_BOUND, ISSUE_NOTE, mark_issue_bound
    cat = Catalogue.load()
    sel = bulk.select(cat, names=["movq xmm1, rbx"])
    k = sel[0].name

    def fake(form, session, opts, name):
        d = _doc(name, True)
        d["latency"] = [{"start": "op1 (R64)", "end": "op0 (XMM)", "value": 1.80, "bound": "exact", "stable": True}]
        d["throughput"] = {"value": 1.80 if opts["latency"] or session == 1 else 1.38, "bound": "exact",
                           "stable": True}
        if opts["latency"]:
            assert mark_issue_bound(d)
            d["notes"].append(ISSUE_NOTE)
            d["latency_max"] = {"value": 1.80, "bound": "upper", "pair": "op1 (R64) -> op0 (XMM)"}
        return d

    monkeypatch.setattr(bulk, "_characterize_one", fake)
    monkeypatch.setattr(bulk, "Session", lambda cpu=None, **kw: cpu)
    monkeypatch.setattr(bulk, "pinned_pool", lambda items, cpus, init, args, work, finish:
                        [finish(fake(cat.get(n), 1, {"latency": True}, n)) for n in items])
    doc = bulk.run(sel, results=tmp_path / "r.jsonl", cpus=[0, 1])[0]
    assert doc["throughput"]["value"] == 1.38
    pair = doc["latency"][0]
    assert pair["label"] is None and pair["bound"] == "exact"
    assert doc["latency_max"]["bound"] == "exact" and ISSUE_NOTE not in doc["notes"]
    # the results file's last document of the form is the relabelled one
    again = bulk.run(sel, results=tmp_path / "r.jsonl", cpus=[0, 1], resume=True)[0]
    assert again["latency"][0]["label"] is None and again["latency"][0].get("label") != ISSUE_BOUND
