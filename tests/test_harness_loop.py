"""The harness loop's end: for code that carries a chain through the flags from copy to copy it
changes no flag and no register but its counter, so that chain runs on from iteration to
iteration as it does from copy to copy; other code keeps ``dec``/``jnz``."""
import iced_x86
import pytest

import cyclebench
from cyclebench.harness import HarnessSpec, generate
from cyclebench.harness.codegen import LOOP_REGISTER
from cyclebench.harness.loopend import loop_close, loop_close_bytes
from cyclebench.measurement import api
from cyclebench.instructions.gas import assemble_lines
from cyclebench.runner import layout
from cyclebench.snippet import parse_part
from cyclebench.snippet.flagchain import carries_flags, flag_chain, flag_masks


def _decoded(*lines):
    return [next(iter(iced_x86.Decoder(64, a.data))) for a in assemble_lines(list(lines))]


def _code(*lines):
    return b"".join(a.data[:i.len] for a, i in zip(assemble_lines(list(lines)), _decoded(*lines)))


@pytest.mark.parametrize("lines, carried", [
    (("cmovs ebx, r11d", "add ebx, 2", "mov ebx, 5"), True),        # the add's flags feed the next copy's cmov
    (("add ebx, 2", "cmovs ebx, r11d"), False),                     # written before they are read
    (("adc rax, rbx",), True),
    (("shl rax, cl", "mov eax, 1"), True),                          # a count of 0 passes the flags on
    (("shl rax, 2", "setc al"), False),
    (("imul rax, rbx", "add rcx, 1"), False),
    (("cmovs ebx, r11d", "mov ebx, 5"), False),                     # flags never written: one value all along
])
def test_the_quick_test_needs_a_flag_read_before_it_is_written_and_written_later(lines, carried):
    assert carries_flags([flag_masks(i) for i in _decoded(*lines)]) is carried


@pytest.mark.parametrize("lines, chain", [
    (("cmovs ebx, r11d", "add ebx, 2", "mov ebx, 5"), True),
    (("adc rax, rbx",), True),
    (("shl rax, cl", "mov eax, 1"), True),
    (("setc al", "movzx eax, al", "add rbx, rax"), True),              # through a partial write and a move
    (("setc byte ptr [r14]", "add al, byte ptr [r14]"), True),         # through memory
    (("cmovl bx, r10w", "cmovs rbx, qword ptr [r14+0x140]", "add ebx, 2", "movzx ebx, word ptr [r14+0x1c0]"), True),
    (("setb al", "ucomisd xmm1, xmm2"), False),                        # the compare reads no tainted input
    (("cmovs rbx, qword ptr [r14+0x40]", "ucomisd xmm1, xmm2"), False),
    (("setc al", "movzx eax, al", "add rbx, rcx"), False),
])
def test_a_flag_chain_is_flags_that_depend_on_an_earlier_copys_flags(lines, chain):
    assert flag_chain(_code(*lines)) is chain


def _run_b(keep_flags):
    spec = HarnessSpec(parse_part("code", "cmovs ebx, r11d"), parse_part("init", None), parse_part("l", None),
                       parse_part("o", None), unroll=4, use_loop=True, keep_flags=keep_flags)
    lines, _ = generate(spec)
    return lines[lines.index("cb_run_b_copy2:"):lines.index("cb_run_b_body_end:")]


def test_the_loop_end_writes_flags_only_where_the_code_does_not_need_them():
    assert _run_b(False)[-2:] == [f"dec {LOOP_REGISTER}", "jnz cb_run_b_body"]
    end = _run_b(True)[-7:]
    assert end == loop_close(LOOP_REGISTER, "cb_run_b_body", "cb_run_b_loop_done")
    info = iced_x86.InstructionInfoFactory()
    written = set()
    for line in end:
        if line.endswith(":"):
            continue
        ins = next(iter(iced_x86.Decoder(64, assemble_lines([line.replace("cb_run_b_body", ".")
                                                                  .replace("cb_run_b_loop_done", ".")])[0].data)))
        assert ins.rflags_modified == 0, line
        written |= {u.register for u in info.info(ins).used_registers()
                    if u.access in (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE)}
    assert written <= {iced_x86.Register.RCX, iced_x86.Register.R15}
    assert end.count(f"xchg rcx, {LOOP_REGISTER}") == 3       # RCX back on both ways out


@pytest.mark.parametrize("code, unroll, counter, warned", [
    ("cmovs ebx, r11d; add ebx, r12d", 2, "rcx", False),     # RCX free: the count lives there
    ("cmovs ebx, ecx; add ebx, r12d", 2, LOOP_REGISTER, True),  # RCX read: exchanged in, with few copies a warning
    ("cmovs ebx, ecx; add ebx, r12d", 8, LOOP_REGISTER, False),
    ("add rax, rbx", 2, LOOP_REGISTER, False),               # no flag chain: dec/jnz on the usual counter
])
def test_a_flag_keeping_loop_end_counts_in_rcx_where_the_code_leaves_it_free(code, unroll, counter, warned):
    p = api.prepare(code, unroll=unroll, loop=10)
    assert p.spec.counter == counter
    assert f"mov {counter}, {layout.field(layout.LOOP_COUNT)}" in p.lines
    assert any("exchanges RCX" in w for w in p.warnings) is warned
    # a loop of one iteration runs its end once: nothing to warn of
    assert not any("exchanges RCX" in w for w in api.prepare(code, unroll=unroll, loop=1).warnings)


@pytest.mark.parametrize("counter", [1, 12])
def test_the_machine_code_end_is_the_text_one(counter):
    body = bytes.fromhex("4801d8") * 5
    code = body + loop_close_bytes(counter, len(body))
    ins = list(iced_x86.Decoder(64, code, ip=0))[5:]
    fmt = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    names = [fmt.format_mnemonic(i) for i in ins]
    assert names == (["lea", "jrcxz", "jmp"] if counter == 1 else ["xchg", "lea", "jrcxz", "xchg", "jmp", "xchg"])
    jrcxz, jmp = ins[names.index("jrcxz")], ins[names.index("jmp")]
    assert jmp.near_branch_target == 0 and jrcxz.near_branch_target == jmp.next_ip
    assert not any(i.rflags_modified for i in ins)


@pytest.mark.measured
def test_a_chain_through_the_flags_alone_keeps_its_latency_across_iterations():
    # add -> flags -> cmovs -> add: at least two cycles a copy on any x86-64 core. With two copies
    # an iteration, a loop end that wrote the flags let iterations overlap (read 1.00 on Zen 4).
    # On a Golden Cove core it read 1.74 while the end exchanged RCX with its counter (3 µops each
    # way) and 2.00 with the count in RCX (loopend.flag_counter).
    r = cyclebench.measure("cmovs ebx, r11d; pxor xmm1, xmm2; pxor xmm3, xmm4; pxor xmm5, xmm6; "
                           "add ebx, r12d; mov ebx, 5", unroll=2, n_measurements=10)
    assert r.events["cycles"].value >= 1.9
