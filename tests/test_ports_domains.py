"""Bypass delays between vector domains (ports/domains.py), on fabricated figures: the probe's
chains, the references it takes, the record it keeps, and the delay the chain bound then charges."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.ports import domains
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.dataflow import chain_bound
from cyclebench.instructions.ports.naming import decode
from ports_fake import empty_results

FP, INT, FMA, SHUF = "ADDSS (XMM, XMM)", "PADDD (XMM, XMM)", "VFMADD213PS (XMM, XMM, XMM)", "UNPCKLPS (XMM, XMM)"
LOAD, WIDE = "MOVSD (XMM, M64)", "VPERMD (YMM, YMM, YMM)"
# a fabricated core: mnemonic -> (latency, domain); a round trip across domains costs two cycles
CORE = {"addss": (3, "fp"), "vfmadd213ps": (4, "fp"), "paddd": (1, "int"), "unpcklps": (1, "int"),
        "vpermd": (3, "int")}


def fake_session(seen):
    def measure(code, init, per=1):
        seen.append(code)
        parts = [CORE[next(w for w in line.split() if not w.startswith("{"))] for line in code]
        t = sum(lat for lat, _ in parts) + (2 if len({d for _, d in parts}) > 1 else 0)
        return SimpleNamespace(value=float(t), modes=(), stable=True)
    return SimpleNamespace(avx512=False, measure=measure)


def test_the_chain_runs_through_one_register_of_each_form():
    cat = Catalogue.load()
    assert domains.chain_code(cat.get(FP))[0].endswith("addss xmm1, xmm2")
    # a VEX form's first source is tied to its destination
    assert "vfmadd213ps xmm1, xmm2, xmm3" in domains.chain_code(cat.get(FMA))[0]
    assert domains.chain_code(cat.get(WIDE))[0].split(None, 1)[-1].startswith("vpermd ymm1, ymm1,")
    assert not domains.eligible(cat.get(LOAD))           # reads no vector register it writes
    assert not domains.eligible(cat.get("MOVAPS (M128, XMM)"))
    assert not domains.reference(cat.get("DIVSS (XMM, XMM)"))     # a latency that follows the data


def test_the_probe_takes_a_reference_for_each_domain_and_reads_every_form_beside_each(tmp_path):
    seen = []
    path = empty_results(tmp_path / "ports.jsonl", [FP, INT, FMA, SHUF, LOAD, WIDE])
    rec = ports_run.record(path, "domains", fake_session(seen))
    # VEX XMM forms come first, then wider VEX ones; the legacy integer form cannot follow the
    # 256-bit reference, so it is in no domain found so far and becomes one too
    assert rec["references"] == [FMA, WIDE, INT]
    assert rec["latency"] == {FP: 3.0, INT: 1.0, FMA: 4.0, SHUF: 1.0, WIDE: 3.0}
    assert rec["pairs"][f"{INT}|{FMA}"] == 7.0 and rec["pairs"][f"{WIDE}|{FMA}"] == 9.0
    assert f"{INT}|{WIDE}" not in rec["pairs"] and f"{SHUF}|{WIDE}" not in rec["pairs"]
    n = len(seen)
    assert ports_run.record(path, "domains", fake_session(seen)) == rec and len(seen) == n   # kept
    d, why = domains.stored(path)
    assert d.within[FP] == {FMA} and d.within[SHUF] == {INT} and d.within[WIDE] == {WIDE}
    assert d.crossing(FP, SHUF) == d.crossing(SHUF, FP) == d.crossing(WIDE, FP) == 1.0
    assert d.crossing(FP, FMA) == 0.0 and d.crossing(LOAD, FP) == 0.0      # one domain; a form unread
    assert d.crossing(WIDE, SHUF) == 0.0            # never read side by side: no delay is charged
    assert "3 domains" in why and "1.00 cycle each way" in why


def test_a_form_in_both_domains_crosses_nothing():
    d = domains.Domains.build({"latency": {"A": 3, "B": 1, "MOVE": 0}, "references": ["A", "B"],
                               "pairs": {"B|A": 6, "MOVE|A": 3, "MOVE|B": 1}})
    assert d.within["MOVE"] == {"A", "B"} and d.crossing("MOVE", "A") == d.crossing("B", "MOVE") == 0.0
    assert d.crossing("A", "B") == 1.0
    # a round trip within CROSS of the two latencies is one domain: no delay, no bound
    assert domains.Domains.build({"latency": {"A": 3, "B": 1}, "references": ["A", "B"], "pairs": {"B|A": 4.6}}) is None


def test_the_chain_bound_charges_the_delay_where_a_vector_value_crosses():
    block = "paddd xmm1, xmm2; addss xmm1, xmm3"
    ins = decode(block)
    forms = [INT, FP]
    d = domains.Domains({INT: frozenset({"I"}), FP: frozenset({"F"})}, {("I", "F"): 1.0, ("F", "I"): 1.0})
    lats = [1.0, 3.0]
    assert chain_bound(ins, lats) == pytest.approx(4.0)
    assert chain_bound(ins, d.delayed(ins, forms, lats)) == pytest.approx(6.0)
    # a general register read by the consumer is on time, whatever wrote it
    mixed = decode("cvtsi2ss xmm1, rax; paddd xmm1, xmm2; add rax, rbx")
    d2 = domains.Domains({"CVTSI2SS (XMM, R64)": frozenset({"F"}), INT: frozenset({"I"})}, {("F", "I"): 1.0})
    forms2 = ["CVTSI2SS (XMM, R64)", INT, "ADD (R64, R64)"]
    out = d2.delayed(mixed, forms2, [3.0, 1.0, 1.0])
    # PADDD's XMM1 (its operand 0) comes a cycle late from the conversion; the table holds that
    # way only, so the conversion's read of PADDD's XMM1 (it merges into it) is on time
    assert out == [3.0, (1.0, 1.0, {0: 2.0}), 1.0]
