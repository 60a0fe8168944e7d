"""A compare to the flags after a flag writer (ports/flag_order.py): which instructions expose or
shield a compare, what the probe's times say, the record it keeps, and the floor the predictor
takes from it.  Facts only: fabricated models and times (Zen 4's readings), no timing."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import flag_order
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import decode, form_of, predict
from cyclebench.instructions.ports import run as ports_run
from ports_fake import empty_results, timed

CMP = "UCOMISS (XMM, XMM)"
TEST = "TEST (R64, R64)"
LEA = "LEA_B_D8 (R64)"
SHL = "SHL (R64, I8)"
ZEN4 = {"pair": 1.347, "shielded": 1.193, "exposed": 1.634, "chain": 1.0, "chained": 1.555, "moved": 1.601,
        "chain2": 2.0, "chained2": 2.289, "moved2": 2.333}


AND = "AND_21 (R64, R64)"
SETA = "SETNBE (R8)"
CVT = "CVTTSD2SI (R32, M64)"


def _model() -> Model:
    # R1 the four ALUs (a quarter cycle each), R2 the compare's vector pipe, R3 the shifts' two pipes
    usage = {CMP: {"R2": 1.0}, TEST: {"R1": 0.25}, LEA: {"R1": 0.25}, SHL: {"R1": 0.25, "R3": 0.5},
             AND: {"R1": 0.25}, SETA: {"R1": 0.25}, CVT: {"R2": 1.0}}
    return Model(["R1", "R2", "R3"], usage, 6,
                 {CMP: 1.0, TEST: 0.25, LEA: 0.25, SHL: 0.5, AND: 0.25, SETA: 0.25, CVT: 1.0})


def _exposed(block: str, catalogue, model=None) -> int:
    model = model or _model()
    ins = decode(block)
    forms = [form_of(i, catalogue, model) for i in ins]
    return flag_order.exposed(flag_order.kinds(ins, forms, {CMP}, {TEST, LEA}))


def test_the_last_alu_instruction_before_a_compare_exposes_or_shields_it(catalogue):
    c = "ucomiss xmm1, xmm2"
    assert _exposed(f"{c}; test rbx, rcx", catalogue) == 1
    assert _exposed(f"{c}; lea r9, [rcx+0x1]; test rbx, rcx", catalogue) == 1
    assert _exposed(f"{c}; test rbx, rcx; lea r9, [rcx+0x1]", catalogue) == 0      # lea writes no flags
    for other in ("mov r8, 5", "not r8", "movzx r8d, r9w", "seta r8b", "cmova r8, r9"):
        assert _exposed(f"{c}; test rbx, rcx; {other}", catalogue) == 0, other
    # passed over: slower ALU forms, memory forms, eliminated moves, vector forms
    for other in ("shl r8, 2", "cmp qword ptr [r14], 0", "mov r8, r9", "mov r8, qword ptr [r14]", "addps xmm3, xmm4"):
        assert _exposed(f"{c}; test rbx, rcx; {other}", catalogue) == 1, other
    assert _exposed(f"{c}; shl r8, 2", catalogue) == 0
    assert _exposed(f"{c}; cmp qword ptr [r14], 0", catalogue) == 0
    # no exposing writer: a zero idiom, CF only, a writer fused with its branch
    for other in ("xor r8d, r8d", "bt r8, 3", "clc"):
        assert _exposed(f"{c}; lea r9, [rcx+0x1]; {other}", catalogue) == 0, other
    assert _exposed(f"{c}; lea r9, [rcx+0x1]; test rbx, rcx; jz 0x0", catalogue) == 0
    assert _exposed(f"{c}; lea r9, [rcx+0x1]; test rbx, rcx; {c}; test rbx, rcx", catalogue) == 2
    assert _exposed(f"{c}; {c}; test rbx, rcx", catalogue) == 1       # the second follows the first


def test_the_probe_tells_an_order_that_costs():
    assert flag_order.exposes(ZEN4)
    assert not flag_order.exposes({"pair": 1.25, "shielded": 1.25, "exposed": 1.30})
    assert flag_order.late(ZEN4) == pytest.approx(0.555)
    assert flag_order.late({**ZEN4, "chained": 1.05}) is None          # within the chain's own time
    assert flag_order.late({**ZEN4, "exposed": 1.2}) is None           # no order: no exposing writer
    assert flag_order.late({k: ZEN4[k] for k in ("pair", "shielded", "exposed")}) is None   # an older record
    assert flag_order.late(ZEN4, "moved") == pytest.approx(0.601)
    assert flag_order.late(ZEN4, "chained2") == pytest.approx(0.289)   # over two steps alone
    assert flag_order.late({**ZEN4, "chained2": 2.05}, "chained2") is None
    assert flag_order.late({**ZEN4, "exposed": 1.2}, "moved") == pytest.approx(0.601)   # in any order


def test_the_record_is_kept_and_the_predictor_takes_the_floor_only_with_it(tmp_path, catalogue):
    by_code = {(flag_order.COMPARE, flag_order.WRITER): ZEN4["pair"],
               (flag_order.COMPARE, flag_order.WRITER, flag_order.OTHER): ZEN4["shielded"],
               (flag_order.COMPARE, flag_order.OTHER, flag_order.WRITER): ZEN4["exposed"],
               (flag_order.CHAINED,): ZEN4["chain"], (flag_order.COMPARE, flag_order.CHAINED): ZEN4["chained"],
               (flag_order.MOVED, flag_order.CHAINED): ZEN4["moved"],
               (flag_order.CHAINED, flag_order.CHAINED): ZEN4["chain2"],
               (flag_order.COMPARE, flag_order.CHAINED, flag_order.CHAINED): ZEN4["chained2"],
               (flag_order.MOVED, flag_order.CHAINED, flag_order.CHAINED): ZEN4["moved2"]}
    session = timed(by_code)
    path = empty_results(tmp_path / "ports.jsonl")
    assert flag_order.stored(path)[0] is None                      # no probe: no floor
    assert ports_run.record(path, "flag_order", session)["pair"] == ZEN4["pair"]
    pair, lates, _ = flag_order.stored(path)
    assert pair == ZEN4["pair"] and lates == {"flags": pytest.approx(0.555), "gpr": pytest.approx(0.601),
                                              "flags even": pytest.approx(0.289), "gpr even": pytest.approx(0.333)}
    assert ports_run.record(path, "flag_order", None)["times"]["exposed"] == ZEN4["exposed"]    # kept, not measured again
    older = empty_results(tmp_path / "older.jsonl")                # a record from before the chained parts
    with ports_run.store(older) as st:
        st.start({}, resume=True)
        st.append({"type": "flag_order", "pair": ZEN4["pair"], "times": {k: ZEN4[k] for k in ("pair", "shielded", "exposed")}})
    assert flag_order.stored(older)[1] == {}
    assert ports_run.record(older, "flag_order", timed(by_code))["late"] == pytest.approx(0.555)   # measured again
    assert flag_order.stored(older)[1]["gpr even"] == pytest.approx(0.333)
    model = _model()
    sides = {CMP: frozenset({"flags"})}
    units = lambda m, r: 4                                         # noqa: E731
    floor = flag_order.FlagOrder.build(ZEN4["pair"], model, catalogue, sides, {CMP: "R1"}, units)
    assert floor.fast == {TEST, LEA, AND, SETA}                    # a shift runs two a cycle
    assert flag_order.FlagOrder.build(None, model, catalogue, sides, {CMP: "R1"}, units) is None
    assert flag_order.FlagOrder.build(ZEN4["pair"], model, catalogue, sides, {}, units) is None
    exposed = "ucomiss xmm1, xmm2; lea r9, [rcx+0x1]; test rbx, rcx"
    shielded = "ucomiss xmm1, xmm2; test rbx, rcx; lea r9, [rcx+0x1]"
    assert predict(exposed, model, catalogue).resource_bound == pytest.approx(1.0)
    p = predict(exposed, model, catalogue, floors=[floor])
    assert p.resource_bound == pytest.approx(ZEN4["pair"]) and p.binding_resource == flag_order.LABEL
    assert predict(shielded, model, catalogue, floors=[floor]).resource_bound == pytest.approx(1.0)


def test_an_exposing_writer_on_a_chain_is_late_unless_the_chain_reads_the_compare(catalogue):
    model = _model()
    sides = {CMP: frozenset({"flags"})}
    floor = flag_order.FlagOrder.build(ZEN4["pair"], model, catalogue, sides, {CMP: "R1"}, lambda m, r: 4,
                                       {"flags": 0.5})
    assert floor.fast == {TEST, LEA, AND, SETA}
    chained = "ucomiss xmm1, xmm2; and rbx, rcx"                   # the and exposes the compare and waits on itself
    assert predict(chained, model, catalogue).chain_bound == pytest.approx(1.0)
    assert predict(chained, model, catalogue, floors=[floor]).chain_bound == pytest.approx(1.5)
    older = flag_order.FlagOrder.build(ZEN4["pair"], model, catalogue, sides, {CMP: "R1"}, lambda m, r: 4)
    assert predict(chained, model, catalogue, floors=[older]).chain_bound == pytest.approx(1.0)   # no late: as before
    shielded = "ucomiss xmm1, xmm2; and rbx, rcx; lea r9, [rcx+0x1]"
    assert predict(shielded, model, catalogue, floors=[floor]).chain_bound == pytest.approx(1.0)
    read = "ucomiss xmm1, xmm2; seta bl; and rbx, rcx"             # the chain takes the compare's flags
    assert predict(read, model, catalogue, floors=[floor]).chain_bound == predict(read, model, catalogue).chain_bound
    apart = "ucomiss xmm1, xmm2; seta dl; and rbx, rcx; and rbx, rcx"   # the reader is off the chain
    assert predict(apart, model, catalogue, floors=[floor]).chain_bound == pytest.approx(
        predict(apart, model, catalogue).chain_bound + 0.5)
    two = "ucomiss xmm1, xmm2; and rbx, rcx; and rbx, rcx"
    assert predict(two, model, catalogue, floors=[floor]).chain_bound == pytest.approx(2.5)   # no even figure
    even = flag_order.FlagOrder.build(ZEN4["pair"], model, catalogue, sides, {CMP: "R1"}, lambda m, r: 4,
                                      {"flags": 0.5, "flags even": 0.25})
    assert predict(two, model, catalogue, floors=[even]).chain_bound == pytest.approx(2.25)
    assert predict(chained, model, catalogue, floors=[even]).chain_bound == pytest.approx(1.5)
    for long in ("ucomiss xmm1, xmm2; and rbx, rcx; and rbx, rcx; and rbx, rcx",    # three steps
                 "ucomiss xmm1, xmm2; and rbx, qword ptr [r14]; and rbx, rcx"):     # a step through memory
        assert predict(long, model, catalogue, floors=[floor]).chain_bound == predict(long, model, catalogue).chain_bound


def test_the_loops_of_a_block(catalogue):
    from cyclebench.instructions.ports.dataflow import loops
    got = loops(decode("add rbx, 1; ucomiss xmm1, xmm2; setne bl; mov rdx, rcx; lea r9, [r9+1]"))
    assert got == [{0, 2}, set(), {0, 2}, set(), {4}]


def test_a_chained_writer_beside_a_transfer_to_a_general_register_is_late_in_any_order(catalogue):
    model = _model()
    sides = {CMP: frozenset({"flags"}), CVT: frozenset({"gpr"})}
    floor = flag_order.FlagOrder.build(None, model, catalogue, sides, {CMP: "R1"}, lambda m, r: 4, {"gpr": 0.5})
    assert floor.moves == {CVT} and floor.floor_of(decode("ucomiss xmm1, xmm2; test rbx, rcx"), {CMP: 1})[0] == 0.0
    cvt = "cvttsd2si eax, qword ptr [r14+0x40]"
    for block in (f"{cvt}; and rbx, rcx", f"{cvt}; and rbx, rcx; lea r9, [rcx+0x1]", f"{cvt}; lea r9, [rcx+0x1]; and rbx, rcx"):
        assert predict(block, model, catalogue, floors=[floor]).chain_bound == pytest.approx(1.5), block
    for block in (f"{cvt}; test rbx, rcx",                 # no general register written
                  "cvttsd2si ebx, qword ptr [r14+0x40]; and rbx, rcx",   # the transfer breaks the chain
                  f"{cvt}; and rbx, rax"):                 # the chain reads the transfer's result
        assert predict(block, model, catalogue, floors=[floor]).chain_bound == predict(block, model, catalogue).chain_bound, block
