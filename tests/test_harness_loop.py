"""The harness loop's end changes no flag and no register but its counter, so a chain that runs
only through the flags (the register reset in every copy) is carried from iteration to iteration
as it is from copy to copy."""
import iced_x86
import pytest

import cyclebench
from cyclebench.harness.codegen import LOOP_REGISTER, loop_close
from cyclebench.instructions.gas import assemble_lines


def _decoded(line: str) -> iced_x86.Instruction:
    line = line.replace("cb_top", ".").replace("cb_done", ".")    # a label the line alone can reach
    data = assemble_lines([line])[0].data
    return iced_x86.Decoder(64, data).decode()


def test_the_loop_end_writes_no_flag_and_only_its_counter_and_rcx():
    lines = [x for x in loop_close(LOOP_REGISTER, "cb_top", "cb_done") if not x.endswith(":")]
    info = iced_x86.InstructionInfoFactory()
    written = set()
    for line in lines:
        ins = _decoded(line)
        assert ins.rflags_modified == 0, line
        written |= {u.register for u in info.info(ins).used_registers()
                    if u.access in (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE)}
    assert written <= {iced_x86.Register.RCX, iced_x86.Register.R15, iced_x86.Register.RIP}
    # RCX lends its place: exchanged in and back on both paths out of the test
    body = loop_close(LOOP_REGISTER, "cb_top", "cb_done")
    assert body.count(f"xchg rcx, {LOOP_REGISTER}") == 3 and body[-2] == "cb_done:"


@pytest.mark.measured
def test_a_chain_through_the_flags_alone_keeps_its_latency_across_iterations():
    # add -> flags -> cmovs -> add: at least two cycles a copy on any x86-64 core. With two copies
    # an iteration, a loop end that wrote the flags let iterations overlap (read well under 2).
    r = cyclebench.measure("cmovs ebx, r11d; pxor xmm1, xmm2; pxor xmm3, xmm4; pxor xmm5, xmm6; "
                           "add ebx, 2; mov ebx, 5", unroll=2, n_measurements=10)
    assert r.events["cycles"].value >= 1.9
