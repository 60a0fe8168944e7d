"""The C<->Python contract: struct ctl's layout, the protocol version, and strict parsing."""
from __future__ import annotations

import subprocess

import pytest

from cyclebench import runner
from cyclebench.runner import layout
from cyclebench.runner.protocol import PROTOCOL, RunnerProtocolError, parse_output

FIELDS = {"saved_rsp": layout.SAVED_RSP, "loop_count": layout.LOOP_COUNT, "reg_init": layout.REG_INIT["r14"],
          "scratch": layout.SCRATCH, "read_fd": layout.READ_FD, "read_size": layout.READ_SIZE,
          "read_ret": layout.READ_RET, "data_ptr": layout.DATA_PTR, "data_size": layout.DATA_SIZE,
          "sym": layout.SYM, "tsc_start": layout.TSC_START, "tsc_end": layout.TSC_END,
          "grp_start": layout.GRP_START, "grp_end": layout.GRP_END, "pmc_idx": layout.PMC_IDX,
          "pmc_start": layout.PMC_START, "pmc_end": layout.PMC_END, "sys_token": layout.SYS_TOKEN, "fp_status": layout.FP_STATUS,
          "size": layout.SIZE, "max_events": layout.MAX_EVENTS, "max_syms": layout.MAX_SYMS}


def test_layout_matches_the_compiled_struct():
    text = subprocess.run([str(runner.runner_path()), "--layout"], capture_output=True, text=True, check=True).stdout
    out = parse_output(text)
    dumped = {k.removeprefix("layout."): int(v[0]) for k, v in out.info.items() if k.startswith("layout.")}
    assert dumped == FIELDS
    assert out.protocol == PROTOCOL
    # the register slots follow each other in the order the harness assumes
    assert list(layout.REG_INIT.values()) == [layout.REG_INIT["r14"] + 8 * i for i in range(5)]


GOOD = f"protocol {PROTOCOL}\ninfo cpu 0\ninfo loop 4\nsample 0 a 100\nsample 0 b 300\ndone\n"


def test_parse_output_reads_a_good_run():
    out = parse_output(GOOD)
    assert out.done and out.samples == {"a": [[100]], "b": [[300]]} and out.info["loop"] == ["4"]


@pytest.mark.parametrize("bad", ["sample 0 a x1", "sample 0", "times 0 a 1", "bogus line", "group -1", "info",
                                 "probe 0 maybe"])
def test_parse_output_fails_loudly_on_a_malformed_line(bad):
    with pytest.raises(RunnerProtocolError, match="does not follow its protocol") as e:
        parse_output(GOOD.replace("info cpu 0\n", f"info cpu 0\n{bad}\n"))
    assert e.value.exit_code == 1 and e.value.hint


def test_parse_output_refuses_another_protocol():
    with pytest.raises(RunnerProtocolError, match=f"expected {PROTOCOL}"):
        parse_output(GOOD.replace(f"protocol {PROTOCOL}", "protocol 1"))


def test_a_line_cut_short_by_a_fault_is_not_a_protocol_error():
    out = parse_output(f"protocol {PROTOCOL}\nsample 0 a 1\nsamp\nerror signal sig=SEGV code=0x1 addr=0x0 rip=0x10\n")
    assert out.error_kind == "signal" and out.error["sig"] == "SEGV"
