"""Store-to-load round trips (ports/store_load.py) and the memory dependencies the block start
state creates (dataflow.steady with ``trips``), on fabricated figures: which trip a load gets,
the record the probe keeps, and which blocks get a memory edge at all."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import store_load
from cyclebench.instructions.ports.dataflow import chain_bound
from cyclebench.instructions.ports.predict import decode
from cyclebench.instructions.ports import run as ports_run
from ports_fake import empty_results, timed

# a core that renames dword and qword loads through the store's own expression (Zen 4's shape)
TIMES = {"alu": 1.0, "plain": 1.0, "same 1": 7.6, "same 2": 7.5, "same 4": 1.0, "same 8": 1.0,
         "other": 7.5, "op": 8.0, "pair": 1.1, "pair and load": 2.0, "wider": 20.0, "misrenamed": 10.0}
TRIPS = store_load.Trips.from_times(TIMES)
# a core that renames nothing: every trip is forwarded
PLAIN = store_load.Trips.from_times({**{k: 5.0 for k in TIMES}, "alu": 1.0, "op": 6.0, "wider": 16.0,
                                     "pair": 1.0, "pair and load": 1.0})


def test_the_trips_read_from_the_probe_times():
    assert TRIPS.forwarded == pytest.approx(6.5)
    assert TRIPS.renamed == {4, 8} and TRIPS.renamed_cost == pytest.approx(0.0)
    assert TRIPS.wider == pytest.approx(19.0) and TRIPS.misrenamed == pytest.approx(2.5)
    assert TRIPS.op == pytest.approx(7.0) and TRIPS.unpairs
    assert PLAIN.renamed == set() and PLAIN.misrenamed == 0.0 and not PLAIN.unpairs


def test_which_trip_a_load_gets():
    q = ("q",)
    assert TRIPS.trip((q, 0, 8), (q, 0, 8), False) == pytest.approx(0.0)            # renamed
    assert TRIPS.trip((q, 0, 1), (q, 0, 1), False) == pytest.approx(6.5)            # a byte: not
    assert TRIPS.trip((("r",), 0, 8), (q, 0, 8), False) == pytest.approx(6.5)       # another expression
    assert TRIPS.trip((("r",), 0, 8), (q, 0, 8), True) == pytest.approx(9.0)        # misrenamed
    assert TRIPS.trip((q, 0, 8), (q, 0, 4), False) == pytest.approx(19.0)           # wider than the store
    assert TRIPS.trip((q, 0, 8), (q, 0, 8), False, op=True) == pytest.approx(7.0)   # a load-op
    assert PLAIN.trip((q, 0, 8), (q, 0, 8), False) == pytest.approx(4.0)


def test_the_probe_keeps_its_times_and_the_file_loads_them(tmp_path):
    by_code = {tuple(code): TIMES[k] for k, (code, _) in store_load.blocks().items()}
    assert len(by_code) == len(TIMES)                              # one block per figure
    session = timed(by_code)
    path = empty_results(tmp_path / "ports.jsonl")
    assert store_load.stored(path)[0] is None                      # no probe: the old rule
    rec = ports_run.record(path, "store_load", session)
    assert rec["renamed"] == [4, 8] and rec["forwarded"] == pytest.approx(6.5)
    assert store_load.stored(path)[0] == TRIPS                     # the file loads with it
    assert ports_run.record(path, "store_load", None)["times"] == rec["times"]  # kept, not measured again


LATS = [0.5, 0.5]       # a store and a load, inst's halves


@pytest.mark.parametrize("block, old, new", [
    # two registers that the start state makes equal: one place, forwarded
    ("mov [rdi], rax; mov rax, [rsi]", 0.0, 6.5),
    # 4K apart: one physical page in the start state
    ("mov [rdi+0x1000], rax; mov rax, [rsi]", 0.0, 6.5),
    # distinct addresses: no edge either way
    ("mov [rdi+0x40], rax; mov rax, [rsi]", 0.0, 0.0),
    ("mov [r14+0x40], rax; mov rax, [r14+0x80]", 0.0, 0.0),
    # one expression, a renamed size: the trip costs nothing
    ("mov [rdi], rax; mov rax, [rdi]", 1.0, 0.0),
    # a register the block writes: its address is not one place (only add's own chain)
    ("mov [rdi], rax; mov rax, [rsi]; add rsi, 8", 1.0, 1.0),
])
def test_a_load_waits_for_a_store_the_start_state_places_on_its_bytes(block, old, new):
    ins = decode(block)
    lats = LATS + [1.0] * (len(ins) - 2)
    assert chain_bound(ins, lats) == pytest.approx(old, abs=1e-6)
    assert chain_bound(ins, lats, TRIPS) == pytest.approx(new, abs=1e-6)


def test_a_vector_store_keeps_inst_halves():
    # movsd's trip is not the general registers' probe: inst's halves, 4.5 + 7.5
    ins = decode("movsd [rdi], xmm0; addsd xmm0, [rdi]")
    lat = [4.5, (3.0, 3.0, {0: 3.0, "mem": 7.5})]
    assert chain_bound(ins, lat, TRIPS) == pytest.approx(chain_bound(ins, lat)) == pytest.approx(12.0)


def test_a_prediction_says_when_the_start_state_made_the_dependency():
    from cyclebench.instructions.ports.model import Model
    from cyclebench.instructions.ports.predict import predict
    forms = {"MOV (M64, R64)": 0.5, "MOV (R64, M64)": 0.5}
    model = Model(["R0"], {f: {"R0": t} for f, t in forms.items()}, 6, dict(forms), {})
    meet = predict("mov [rdi], rax; mov rax, [rsi]", model, trips=TRIPS)
    assert meet.notes and "all registers equal" in meet.notes[0] and "data-dependent" in meet.notes[0]
    assert meet.chain_bound == pytest.approx(6.5)        # from the store's data: the trip, whatever its own latency
    assert not predict("mov [rdi+0x40], rax; mov rax, [rsi]", model, trips=TRIPS).notes
    assert not predict("mov [rdi], rax; mov rax, [rsi]", model).notes      # no probe: no claim


def test_the_meetings_the_start_state_places():
    # [rsi] and [rdi+4] overlap by 4 bytes: a meeting, the load wider than the store's bytes
    assert store_load.meetings(decode("mov [rdi+4], eax; mov rcx, [rsi]")) == [(1, 0, True)]
    assert store_load.meetings(decode("mov [rdi], rax; mov ecx, [rsi+4]")) == [(1, 0, False)]
    assert store_load.meetings(decode("mov [rdi+8], rax; mov rcx, [rsi]")) == []
    assert store_load.meetings(decode("add [rdi], rax")) == []         # never with itself
    assert store_load.meetings(decode("mov [rdi], rax; mov rcx, [rsi]; add rsi, 8")) == []


def test_stores_in_a_span_a_load_reads_are_written_one_a_cycle():
    from cyclebench.instructions.ports.model import Model
    from cyclebench.instructions.ports.predict import WIDER, predict, store_lines
    forms = {"MOV (M64, R64)": 0.5, "MOV (R64, M64)": 0.5}
    model = Model(["R0"], {f: {"R0": t} for f, t in forms.items()}, 6, dict(forms), {"MOV (M64, R64)": 1.0})
    pair = "mov [r14+0x200], rax; mov [r14+0x208], rax"
    ins = decode(pair)
    f = ["MOV (M64, R64)"] * 2
    assert store_lines(ins, f, model, 32) == 0.0                       # one span: the resources' pair
    assert store_lines(ins, f, model, 32, True, frozenset({0})) == pytest.approx(2.0)
    # the span a load reads is written one a cycle; the other keeps its pair
    four = decode(pair + "; mov [r14+0x240], rax; mov [r14+0x248], rax")
    assert store_lines(four, f * 2, model, 32, True, frozenset({0})) == pytest.approx(3.0)
    assert predict(pair + "; mov rcx, [r14+0x200]", model, grain=32, trips=TRIPS).resource_bound == pytest.approx(2.0)
    assert predict(pair + "; mov rcx, [r14+0x210]", model, grain=32, trips=TRIPS).resource_bound < 2.0
    assert predict(pair + "; mov rcx, [r14+0x200]", model, grain=32, trips=PLAIN).resource_bound < 2.0
    # a load astride two stores waits for them to be written, on no chain
    p = predict(pair + "; mov rcx, [r14+0x204]", model, grain=32, trips=TRIPS)
    assert p.binding_resource == WIDER and p.resource_bound == pytest.approx(19.0)


def test_the_steady_state_follows_addresses_the_block_recomputes_alike():
    from cyclebench.blocks.memory import FILL, steady_state
    got = steady_state(decode("mov [r14+0x48], rbx; lea rbx, [r14+0x38]; mov [rbx+0x18], rdi"))
    assert [a.address for a in got] == [FILL + 0x48, FILL + 0x50]       # rbx: r14+0x38 every iteration
    assert steady_state(decode("lea rax, [rax+8]; mov [rax], rcx"))[0].address is None    # it grows
    assert steady_state(decode("mov [rdi], rax; add rdi, 8"))[0].address is None
