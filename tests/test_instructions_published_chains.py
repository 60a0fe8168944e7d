"""uops.info's own chains run by inst --why (published_chains.py, why.py), and the cause they give
when they read our figure, with fake measurements (no timing)."""
from types import SimpleNamespace

from cyclebench.instructions import Catalogue
from cyclebench.instructions import published_chains as P
from cyclebench.instructions.characterize import Session
from cyclebench.instructions.why import CHAIN_PROCESSES, METHOD_READS_OURS, method_reads_ours, vector_chain_runs

from test_instructions_measure import Fake


def test_chains_are_uops_infos_for_memory_and_flags_pairs():
    cat = Catalogue.load()
    got = {(c["pair"], c["what"]): c for c in P.chains(cat.get("BTS (M64, R64)"), 3.0)}
    addr = got[("addr op0 -> flags", "cmovc r14, r14")]
    assert addr["code"][1] == "cmovc r14, r14" and addr["links"] == 1
    reg = next(c for (p, _w), c in got.items() if p == "op1 (R64) -> flags")
    # cRep for a throughput of 3: 2 + 2 * ceil(3 / 2) = 6 movsx after the first
    assert reg["links"] == 2 + 6 and reg["code"].count("movsx rbx, ebx") == 6
    assert reg["code"][2].startswith("movsx rbx, ")
    trip = next(c for c in got.values() if c["reference"])
    # after the form: sign-extended at the operand's width (32 for a qword), alone: from 16 bits
    assert "movsx r13, r13d" in trip["code"] and "movsx r13, r13w" in trip["reference"]
    assert trip["code"][-1].startswith("mov [r14") and len(trip["reference"]) == 1 + P.ROUND_TRIP_MOVSX + 1
    pairs = {c["pair"] for c in P.chains(cat.get("NOT (M8)"))}
    assert pairs == {"mem op0 (M8) -> mem op0 (M8)"}
    assert P.chains(cat.get("VPERMW (ZMM, ZMM, ZMM)")) == []          # not a legacy form


def test_chains_are_read_as_uops_info_reads_them():
    form = Catalogue.load().get("NOT (M8)")
    # the form alone 7.31 a copy; with the round trip 25.04 against the round trip's own 17.89
    fake = Fake({"not byte ptr [r14+0x40]\nmov": 25.04, "movsx r13, r13w": 17.89, "not byte": 7.31})
    got = P.measure(Session(measure_fn=fake), form)
    assert [v for _t, v in got] == [7.0, 7.0]      # int(7.31 + .2); int(25.24) - int(18.09)
    assert "the form alone" in got[0][0] and "less the round trip's 17.89" in got[1][0]


def _result(ours, published, variants, figure="latency_min"):
    return {"form": "X", "figures": [{"figure": figure, "ours": ours, "published": published,
                                      "published_bound": False, "match": False, "variants": variants}]}


def test_uops_infos_chain_reading_ours_is_the_cause():
    v = [{"variant": "latency pair a -> flags, uops.info's chain (...)", "value": 7.0, "published_method": True,
          "reproduces": False},
         {"variant": "latency pair b -> flags, uops.info's chain (...)", "value": 8.0, "published_method": True,
          "reproduces": False},
         {"variant": "latency pair a -> flags", "value": 5.0, "reproduces": False}]     # not its method
    why = method_reads_ours(_result(7.0, 6, v), "latency_min")
    assert why.startswith(METHOD_READS_OURS + ": latency pair a -> flags") and "the least of its 2" in why
    assert method_reads_ours(_result(8.0, 9, v, "latency_max"), "latency_max").startswith(METHOD_READS_OURS)
    assert method_reads_ours(_result(5.0, 6, v), "latency_min") is None       # its chains read neither
    assert method_reads_ours(_result(7.0, 6, v[2:]), "latency_min") is None   # none of its chains ran


def test_a_vector_chain_runs_again_until_a_process_reads_the_missed_figure():
    form = Catalogue.load().get("VPEXPANDW (ZMM, ZMM)")
    readings = iter([10.5, 11.5, 10.5, 11.5])

    def fake(code, init=None, **kw):
        v = next(readings) if "vpandd" in code else 10.4
        ev = SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[],
                               stability={"stable": True, "linearity": {"linear": True}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})
    got = {r["variant"]: r["value"] for r in vector_chain_runs(Session(measure_fn=fake), form, {6.0})}
    (text, value), = [(k, v) for k, v in got.items() if "vpandd" in k]
    assert value == 6.0 and "10.50, 11.50 cycles in 2 processes" in text
    # vandpd reads 5 in every process: CHAIN_PROCESSES runs, the last kept
    (text, value), = [(k, v) for k, v in got.items() if "vandpd" in k]
    assert value == 5.0 and f"in {CHAIN_PROCESSES} processes" in text


def test_experiments_that_cannot_run_say_so(monkeypatch):
    from cyclebench.errors import CycleBenchError
    from cyclebench.instructions import why
    from cyclebench.instructions.published import Published, Value

    def broken(*a, **kw):
        raise CycleBenchError("runner failed")
    monkeypatch.setattr(why, "explain", broken)
    form = Catalogue.load().get("NOT (M8)")
    rec = Published(name=form.name, source="test", latency=Value(6, 6), throughput=None)
    got = why.experiment_cause(Session(measure_fn=broken), form, {"form": form.name}, rec, "latency_min")
    assert got == "unexplained: the inst --why experiments could not run (runner failed)"


def test_a_chain_that_reads_differently_from_process_to_process_names_the_published_figure_in_its_range():
    from cyclebench.instructions.why import UNSTEADY_CHAIN, unsteady_chain
    v = [{"variant": "latency pair op2 -> op0, uops.info's chain (vandpd x5, ...)", "value": 7.0,
          "published_method": True, "reproduces": False, "cycles": [11.49, 11.81, 12.71]},
         {"variant": "latency pair op2 -> op0", "value": 5.0, "reproduces": False}]
    why = unsteady_chain(_result(5.0, 8, v), "latency_min")
    assert why.startswith(UNSTEADY_CHAIN) and "11.49 to 12.71 cycles, 6 to 7 its way" in why
    assert why.endswith("one above the highest (12.71 cycles; 12.80 reads 8)")
    v[0]["cycles"].append(12.9)
    assert unsteady_chain(_result(5.0, 8, v), "latency_min").endswith("the published 8 is within them")
    assert unsteady_chain(_result(5.0, 10, v), "latency_min") is None        # two above: not its reading
    v[0]["cycles"] = [11.8, 11.9, 12.0]                                       # steady: nothing claimed
    assert unsteady_chain(_result(5.0, 8, v), "latency_min") is None


def test_a_vector_chain_runs_to_an_implicit_vector_register_with_uops_infos_links():
    form = Catalogue.load().get("PCMPESTRM (XMM, M128, I8)")
    fake = Fake({}, default=15.05)
    # a form of throughput 4: cRep = 2 + 2 * ceil(4 / 2) = 6, seven links in all
    got = vector_chain_runs(Session(measure_fn=fake), form, frozenset(), 4.0)
    assert {r["links"] for r in got} == {7} and all(r["value"] == 8.0 for r in got)     # int(15.25) - 7
    codes = [c.splitlines() for c, _i in fake.calls]
    legacy = next(c for c in codes if "pshufd" in c[1])
    # a legacy SSE form: uops.info's integer chain is pshufd then pand, not the VEX vpand
    assert legacy[1].startswith("pshufd xmm") and legacy[1].endswith(", xmm0, 0") and legacy.count(legacy[2]) == 6
    assert any(c[1].startswith("vandpd xmm") and c[1].endswith("xmm0, xmm0") for c in codes)


def test_an_avx512_gathers_mask_chain_is_uops_infos_kmovq_chain():
    cat = Catalogue.load()
    (c,) = P.chains(cat.get("VGATHERQPS (YMM, K, VSIB_ZMM)"), 11.5)
    # cRep for a single-copy rate of 11.5: 2 + 2 * ceil(11.5 / 2) = 14, one kmovq more in the chain
    assert c["links"] == 15 and c["code"].count("kmovq k1, k1") == 15 and c["pair"] == "mask k1 -> mask k1"
    # the destination zeroed, the mask never set again: the gather itself, not its per-copy set-up
    assert c["code"][0] == "vpxord ymm1, ymm1, ymm1" and c["code"][1].startswith("{evex} vgatherqps ymm1{k1}")
    assert not any("kxnor" in line for line in c["code"])
    # not for an AVX2 gather (a vector mask) nor a scatter (no destination register)
    assert P.chains(cat.get("VGATHERQPS (XMM, VSIB_XMM, XMM)")) == []
    assert P.chains(cat.get("VPSCATTERDQ (VSIB_YMM, K, ZMM)")) == []
