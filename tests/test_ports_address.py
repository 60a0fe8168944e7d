"""A memory operand's time by addressing mode (ports/address.py) on fabricated figures: the
costs the probe keeps, which register of which operand they raise, and the chain bound with them."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports import address
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.dataflow import ADDRESS, chain_bound
from cyclebench.instructions.ports.predict import decode, load
from ports_fake import empty_results, model_file, timed

# Zen 4's shape: a base beside a scaled index and an index cost a cycle past a plain base
TIMES = {"base": 4.0, "scaled": 5.0, "three": 5.0, "index": 5.0}
COST = address.AddressCost(*address.costs(TIMES))
LOAD = (0.0, 4.0)          # a plain load: nothing from its data operand, 4 cycles from its address


def test_the_costs_are_what_the_modes_take_past_a_base():
    assert address.costs(TIMES) == (1.0, 1.0, 1.0)
    assert address.costs({"base": 4.0, "scaled": 4.04, "three": 5.0, "index": 5.0}) == (0.0, 1.0, 1.0)   # noise: none
    assert address.costs(dict.fromkeys(TIMES, 5.0)) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("code, cycles", [
    ("mov rax, qword ptr [rax]", 4.0),
    ("mov rax, qword ptr [rax+r13]", 4.0),              # through the base, the index unscaled
    ("mov rax, qword ptr [rax+r13*4]", 5.0),            # through the base beside a scaled index
    ("mov rax, qword ptr [rax+r13+8]", 5.0),            # ... beside an index and a displacement
    ("mov rax, qword ptr [rax+r13*4+8]", 5.0),          # ... both: the larger cost, not their sum
    ("mov rax, qword ptr [rax+0x1000]", 4.0),           # a base and a displacement: the measured mode
    ("mov rax, qword ptr [r13+rax*1]", 5.0),            # through the index
    ("mov rdi, qword ptr [rdi*8]", 5.0),
    ("mov rax, qword ptr [r13+rax*8+8]", 5.0),
])
def test_a_chase_takes_the_cost_of_the_register_it_runs_through(code, cycles):
    ins = decode(code)
    assert chain_bound(ins, COST.delayed(ins, [""], [LOAD])) == pytest.approx(cycles)
    assert chain_bound(ins, [LOAD]) == pytest.approx(4.0)                 # without the probe: as measured


def test_lea_rip_and_register_forms_keep_their_figures():
    for code in ("lea rax, [rax+r13*4]", "mov rax, qword ptr [rip+0x40]", "add rax, rbx"):
        assert COST.extra(decode(code)[0]) == {}
    ins = decode("add rax, qword ptr [rbx+rax*2]")[0]          # a load-op: its data path as it was
    lat = COST.delayed([ins], [""], [(1.0, 5.0, {"mem": 7.0})])[0]
    assert lat[:2] == (1.0, 5.0) and lat[2] == {"mem": 7.0, ADDRESS[0]: 6.0, ADDRESS[1]: 6.0}


def test_a_core_whose_modes_cost_nothing_gets_no_rule(tmp_path):
    path = empty_results(tmp_path / "p.jsonl")
    assert address.stored(path)[0] is None and "no addressing-mode probe" in address.stored(path)[1]
    codes = {(code,): TIMES["base"] for code in address.CHASES.values()}
    rec = ports_run.record(path, address.RECORD, timed(codes))
    assert (rec["scaled"], rec["three"], rec["index"]) == (0.0, 0.0, 0.0) and address.stored(path)[0] is None


def test_the_record_is_kept_and_read_back_into_the_loaded_bounds(tmp_path):
    path = model_file(tmp_path / "m.jsonl", {"ADD_01 (R64, R64)": {"R0": 0.25}})
    session = timed({(code,): TIMES[k] for k, code in address.CHASES.items()})
    rec = ports_run.record(path, address.RECORD, session)
    assert rec["times"] == TIMES and (rec["scaled"], rec["three"], rec["index"]) == (1.0, 1.0, 1.0)
    assert ports_run.record(path, address.RECORD, None) == rec                   # kept, not measured again
    cost, where = address.stored(path)
    assert cost == COST and "through an index 5.0" in where
    assert COST in load(path).bounds


def test_a_record_without_a_later_figure_is_measured_again(tmp_path):
    path = empty_results(tmp_path / "p.jsonl")
    old = {"type": address.RECORD, "scaled": 1.0, "index": 1.0, "times": {"base": 4.0, "scaled": 5.0, "index": 5.0}}
    st = ports_run.store(path)
    with st:
        st.start({}, resume=True)
        st.append(old)
    assert address.stored(path)[0] == address.AddressCost(1.0, 0.0, 1.0)      # read as it is until then
    rec = ports_run.record(path, address.RECORD, timed({(code,): TIMES[k] for k, code in address.CHASES.items()}))
    assert rec["three"] == 1.0 and address.stored(path)[0] == COST
