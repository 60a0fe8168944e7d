"""Immediates and displacements a dispatch group carries (ports/fields.py), on fabricated figures:
the values and integer ALU operations an instruction carries by operand shape, the greedy groups,
the capacities read from the probe's times, the record it keeps and the bound a block takes."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from cyclebench.instructions.ports import fields
from cyclebench.instructions.ports import run as ports_run
from cyclebench.instructions.ports.predict import decode
from ports_fake import empty_results


@pytest.mark.parametrize("code, n", [
    ("cmp rcx, rbx", 0),
    ("cmp rcx, 0x12", 1),
    ("cmp rcx, 0x12345", 1),                     # the value's size does not count
    ("mov rdx, [r14]", 0),
    ("mov rdx, [r14+0x40]", 1),
    ("mov rdx, [rbp]", 1),                       # an encoded displacement of 0
    ("lea rax, [rbx+rcx*8]", 0),
    ("cmp byte ptr [r14+0x48], 2", 2),           # a displacement and an immediate
    ("mov rax, 0x123456789", 2),                 # a 64-bit immediate
    ("shl rax, 1", 0),                           # the count implied by the encoding
    ("shl rax, 3", 1),
    ("vpshufd xmm1, xmm2, 0x1b", 1),
    ("nop dword ptr [rax+rax+0x0]", 0),
])
def test_the_values_an_instruction_carries_follow_its_operands(code, n):
    assert fields.values(decode(code)[0]) == n


@pytest.mark.parametrize("weights, groups", [
    ([1, 1, 1, 2], 1.0),             # the two-value one starts each group: one an iteration
    ([1, 1, 1, 1], 4 / 6),           # single values: six a group, the width's groups
    ([2, 2, 2, 1], 4 / 3),
    ([1, 1, 1, 1, 1, 2], 1.2),
    ([2, 1, 2, 2, 1], 1.5),
    ([0, 0, 0], 0.5),                # nothing to carry: the width's groups
])
def test_groups_are_cut_greedily_at_the_width_or_the_cap(weights, groups):
    assert fields.groups(weights, [1.0] * len(weights), 6) == pytest.approx(groups, abs=1e-3)


def test_a_slotless_nop_takes_no_room_in_a_group():
    assert fields.groups([1, 0, 1, 0], [1.0, 0.0, 1.0, 0.0], 6) == pytest.approx(2 / 6)


ZEN4 = {"wide": 1.334, "wide twin": 0.75, "mixed": 1.204, "mixed twin": 1.0, "alus": 2.001, "alus twin": 1.5}


def test_the_capacity_is_the_one_that_puts_both_probe_blocks_at_their_groups():
    assert fields.cap(ZEN4) == 6
    # blocks no slower than their twins: no limit shown, none kept
    assert fields.cap({"wide": 0.76, "wide twin": 0.75, "mixed": 1.0, "mixed twin": 1.0}) is None
    # slower, but as no capacity's groups say
    assert fields.cap({"wide": 3.0, "wide twin": 0.75, "mixed": 1.3, "mixed twin": 1.0}) is None


def test_the_probe_keeps_its_capacity_in_the_results_file(tmp_path):
    seen = []
    by_block = {tuple(code): name for name, code in fields.BLOCKS.items()}
    session = SimpleNamespace(measure=lambda code, init, per=1: (
        seen.append(code), SimpleNamespace(value=ZEN4[by_block[tuple(code)]]))[1])
    path = empty_results(tmp_path / "ports.jsonl", ["CMP (R64, I8)"])
    assert fields.stored(path, 6)[0] is None                    # a file without the record
    rec = ports_run.record(path, "fields", session)
    assert rec["cap"] == 6 and rec["alus"] == 4 and len(seen) == len(fields.BLOCKS)
    bound, _ = fields.stored(path, 6)
    block = decode("mov rdx, [r14+0x40]; cmp rcx, 0x12; cmp r11, 0x12; cmp byte ptr [r14+0x48], 2")
    assert bound.grouped(block, [1.0] * 4) == pytest.approx(1.0)
    assert bound.grouped(decode("mov rdx, [r14]; cmp rcx, rbx"), [1.0, 1.0]) == pytest.approx(2 / 6)
    assert bound.grouped(decode("; ".join(fields.BLOCKS["alus"])), [1.0] * 7) == pytest.approx(2.0)


def test_a_record_from_before_the_alu_part_is_measured_again_and_read_as_no_alu_limit(tmp_path):
    path = empty_results(tmp_path / "ports.jsonl", ["CMP (R64, I8)"])
    with ports_run.store(path) as st:
        st.start({}, resume=True)
        st.append({"type": "fields", "cap": 6, "times": {"wide": 1.334, "mixed": 1.204}})
    bound, _ = fields.stored(path, 6)
    assert bound.cap == 6 and bound.alus is None
    assert bound.grouped(decode("; ".join(fields.BLOCKS["alus"])), [1.0] * 7) == pytest.approx(1.5)
    session = SimpleNamespace(measure=lambda code, init, per=1: SimpleNamespace(
        value=ZEN4[{tuple(c): n for n, c in fields.BLOCKS.items()}[tuple(code)]]))
    assert ports_run.record(path, "fields", session)["alus"] == 4


@pytest.mark.parametrize("code, alu", [
    ("cmp rcx, rbx", True),
    ("cmp byte ptr [r14+0x48], 2", True),        # a load and an ALU operation
    ("lea rax, [rbx+8]", True),
    ("mov eax, 5", True),
    ("movzx eax, bl", True),
    ("mov rax, rbx", False),                     # renamed away
    ("xor eax, eax", False),                     # a zero idiom
    ("mov rdx, [r14+0x40]", False),              # a plain load
    ("movzx eax, byte ptr [rbx]", False),
    ("mov [rbx], rax", False),                   # a plain store
    ("vpaddd xmm1, xmm2, xmm3", False),
    ("movd xmm1, eax", False),
    ("kmovw k1, eax", False),
    ("nop dword ptr [rax+rax+0x0]", False),
])
def test_an_integer_alu_operation_is_read_from_the_operands(code, alu):
    assert fields.integer_alu(decode(code)[0]) is alu


def test_a_group_holds_at_most_its_alu_operations():
    weights, alu = fields.ALUS["alus"]
    assert fields.groups(weights, [1.0] * 7, 6) == pytest.approx(1.5)          # values alone
    assert fields.groups(weights, [1.0] * 7, 6, 6, alu, 4) == pytest.approx(2.0)
    assert fields.groups(fields.ALUS["alus twin"][0], [1.0] * 7, 6, 6, fields.ALUS["alus twin"][1], 4) == pytest.approx(1.5)


@pytest.mark.parametrize("code, slots, n", [
    ("lea rsi, [r14+rcx*8+0x40]", 2.0, 2),      # two slots, no memory read: two operations
    ("lea rsi, [r14+rcx*8]", 1.0, 1),
    ("cmovs rax, qword ptr [r14+0x40]", 2.0, 1),   # the other slot is its load
    ("add rax, qword ptr [r14+0x40]", 1.0, 1),
    ("add qword ptr [r14+0x40], rax", 2.0, 1),
    ("add rax, 1", 1.0, 1),
    ("mov rax, rbx", 1.0, 0),                      # renamed away
    ("vpaddd xmm1, xmm2, xmm3", 2.0, 0),
])
def test_an_instruction_takes_an_alu_operation_a_slot_where_it_reads_no_memory(code, slots, n):
    assert fields.alu_operations(decode(code)[0], slots) == n


@pytest.mark.parametrize("block, cycles", [
    ("L A A A", 4 / 3), ("L A A A A A", 2.0), ("L A L A", 2.0), ("L L A", 1.5), ("L L", 1.0), ("C C A A", 1.0),
])
def test_a_two_slot_lea_fills_a_group_of_four_alu_operations_as_measured_on_zen4(block, cycles):
    code = {"L": "lea rsi, [r14+rcx*8+0x40]", "A": "add r8, 1", "C": "cmovs rax, qword ptr [r14+0x40]"}
    ins = decode("; ".join(code[k] for k in block.split()))
    slots = [2.0 if k in "LC" else 1.0 for k in block.split()]
    assert fields.FieldBound(6, 6, 4).grouped(ins, slots) == pytest.approx(cycles)


def test_the_alu_capacity_is_the_one_that_puts_the_block_and_its_twin_at_their_groups():
    assert fields.alu_cap(ZEN4, 6) == 4          # 3 would put the twin at 2.00 too
    assert fields.alu_cap(dict(ZEN4, alus=1.52), 6) is None     # no slower than its twin
    assert fields.alu_cap(ZEN4, None) is None    # no values capacity, no groups to cut
    assert fields.alu_cap({k: v for k, v in ZEN4.items() if not k.startswith("alus")}, 6) is None


def test_a_two_slot_instruction_is_never_split_between_groups():
    # three one-slot instructions and a two-slot one: five slots, yet a group an iteration
    assert fields.groups([0, 0, 0, 1], [1.0, 1.0, 1.0, 2.0], 6) == pytest.approx(1.0)
    assert fields.groups([0, 0, 1], [1.0, 1.0, 2.0], 6) == pytest.approx(4 / 6)


def test_the_probe_weights_are_the_values_its_blocks_carry():
    for name, weights in fields.WEIGHTS.items():
        assert [fields.values(i) for i in decode("; ".join(fields.BLOCKS[name]))] == weights
        assert not any(fields.values(i) for i in decode("; ".join(fields.BLOCKS[f"{name} twin"])))
    for name, (weights, alu) in fields.ALUS.items():
        ins = decode("; ".join(fields.BLOCKS[name]))
        assert [fields.values(i) for i in ins] == weights and [int(fields.integer_alu(i)) for i in ins] == alu


def test_a_resource_whose_blocker_the_groups_time_is_the_values_limit():
    # mov r64, imm64 alone at 0.33 (three 2-value copies a group) is the groups; sub r64, r64 at
    # 0.25 (four ALU operations a group, no values) and a blocker slower than its groups are not
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.model import Model
    from cyclebench.instructions.ports.predict import form_of
    cat = Catalogue.load()
    probes = {"R0": "MOV (R64, I64)", "R1": "SUB_29 (R64, R64)", "R2": "IMUL (R64, R64)"}
    model = Model(resources=list(probes), usage={f: {r: 0.25} for r, f in probes.items()}, width=6,
                  alone={"MOV (R64, I64)": 1 / 3, "SUB_29 (R64, R64)": 0.25, "IMUL (R64, R64)": 1.0}, probes=probes)
    bound = fields.FieldBound(6, 6, 4)
    assert fields.values_resources(model, bound, cat, decode, form_of) == {"R0"}
    model.alone["MOV (R64, I64)"] = 0.5         # slower than its groups: a resource of its own
    assert fields.values_resources(model, bound, cat, decode, form_of) == set()
