"""Branches, calls, returns, stack and string forms without REP (instructions/flow.py): the
published ones have an offered form, each is set up as uops.info runs it, the harness sets the
moved registers back at every loop iteration, and the forms run in the sandbox."""
import re

import iced_x86
import pytest

from cyclebench.harness import HarnessSpec, generate
from cyclebench.instructions import Catalogue
from cyclebench.instructions.coverage import index_of
from cyclebench.instructions.flow import FLAG_VALUES, _holds
from cyclebench.instructions.instantiate import instantiate, verified
from cyclebench.instructions.session import Session, form_init
from cyclebench.instructions.throughput import measure_throughput
from cyclebench.runner import layout
from cyclebench.snippet import parse_part

# uops.info's names, as in its ZEN4, ZEN3 and ADL-P columns
PUBLISHED = ["JNZ (Rel8)", "JZ (Rel32)", "JNLE (Rel8)", "JMP (Rel8)", "JMP (Rel32)", "JMP (R64)",
             "JMP (M64)", "CALL_NEAR (Rel32)", "CALL_NEAR (R64)", "CALL_NEAR (M64)", "RET_NEAR",
             "RET_NEAR (I16)", "LOOPNE (Rel8)", "JRCXZ (Rel8)", "PUSHF", "PUSHFQ", "POPF",
             "ENTER (I16, I8)", "ENTER_W (I16, I8)", "LEAVE", "LEAVE_W", "STOSQ", "LODSB", "MOVSW",
             "SCASD", "CMPSQ"]


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


@pytest.fixture(scope="module")
def index(cat):
    return index_of(cat)


def test_published_branch_stack_and_string_forms_are_offered(index):
    for name in PUBLISHED:
        form, _ = index.find(name)
        assert form is not None and form.offered, (name, form and form.reason)
        oci = iced_x86.OpCodeInfo(form.code)
        # a near branch's or stack form's plain name is the 64-bit mode's default size, _W is 16-bit
        if oci.default_op_size64 or "_W " in name + " ":
            assert (oci.operand_size == 16) == ("_W " in name + " "), name


def test_direct_branches_go_to_the_next_instruction_taken_or_not(cat):
    seen = 0
    for f in cat.offered():
        if not any(s.kind == "branch" for s in f._slots):
            continue
        inst = verified([instantiate(f)])[0]
        ins = iced_x86.Decoder(64, inst.encoding).decode()
        assert ins.near_branch_target == len(inst.encoding), f.name
        if ins.condition_code != iced_x86.ConditionCode.NONE and f.mnemonic.startswith("J"):
            value = int(re.fullmatch(r"push (0x[0-9a-f]+)", inst.loop_init[0]).group(1), 16)
            assert value in FLAG_VALUES and inst.loop_init[1] == "popfq"
            assert _holds(ins.condition_code, value) == f.taken, f.name
            seen += 1
    assert seen >= 2 * 2 * 16       # every Jcc, rel8 and rel32, not taken and taken


def test_forms_that_leave_the_code_keep_a_stated_reason(cat, index):
    assert "16-bit operand size" in index.find("JNZ_JNE_REL8_16 (REL8)")[0].skip_reason
    assert "far" in cat.get("JMP (M80)").skip_reason and "far" in cat.get("RETF").skip_reason
    assert "mmap" in cat.get("MOV (RAX, M64)").skip_reason     # moffs: no address known


def test_what_moves_with_every_copy_is_set_back_at_every_iteration(cat):
    for name, reset, chained in [("PUSHFQ", ("rsp",), ("rsp",)), ("CALL (REL32)", ("rsp",), ("rsp",)),
                                 ("STOSQ", ("rsi", "rdi"), ("rsi", "rdi")), ("LEAVE", (), ("rsp", "rbp"))]:
        inst = instantiate(cat.get(name))
        assert inst.reset == reset and inst.chained == chained, name
        assert form_init(cat.get(name), inst).head.get("reset", ()) == reset
    ret = instantiate(cat.get("RET (I16)"))
    assert ret.text.splitlines() == ["lea rax, [rip + 7]", "mov qword ptr [rsp], rax", "ret 0x8"]


def test_the_loop_head_runs_every_iteration_before_the_copies():
    spec = HarnessSpec(parse_part("code", "push rax"), parse_part("init", None), parse_part("l", None),
                       parse_part("o", None), unroll=4, use_loop=True, reset=("rsp",),
                       loop_init=parse_part("loop_init", "push 0x8d5; popfq"))
    lines, _ = generate(spec)
    head = lines.index("cb_run_b_loop:")
    assert lines[head + 1] == f"mov rsp, {layout.field(layout.REG_INIT['rsp'])}"
    assert lines.index("cb_run_b_body:") > head and "jnz cb_run_b_loop" in lines
    plain, _ = generate(HarnessSpec(spec.code, spec.init, spec.late_init, spec.one_time_init, 4, True))
    assert "cb_run_b_loop:" not in plain and "jnz cb_run_b_body" in plain


@pytest.mark.measured
def test_the_new_forms_run_in_the_sandbox_and_give_a_figure(cat):
    session = Session(n_measurements=5, budget=0.1)
    for name in ("JNZ_TAKEN (REL8)", "JMP (M64)", "CALL (R64)", "RET (I16)", "ENTER (I16, I8)",
                 "LEAVE", "POPFQ", "PUSH (M64)", "STOSQ", "CMPSB", "LOOPNE (REL8)", "JRCXZ (REL8)"):
        doc = measure_throughput(session, cat.get(name))
        assert doc["error"] is None and doc["value"] is not None and doc["value"] > 0.1, (name, doc["error"])


def test_a_reset_of_a_register_that_is_no_area_pointer_is_refused():
    from cyclebench.errors import UsageError
    from cyclebench.measurement.api import measure
    with pytest.raises(UsageError, match="area registers"):
        measure("push rax", reset=("rax",))
