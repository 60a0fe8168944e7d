"""cyclebench block: the basic-block check, extraction, the start state, the static address check,
the error table, bulk resume, and a few real blocks run with their pages mapped."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from cyclebench.blocks import accuracy, bulk, extract, memory
from cyclebench.blocks.code import NotABlock, block, parse_hex
from cyclebench.blocks.measure import FILL, loop_code, measure_block, plan, start_state
from cyclebench.errors import ConfigError, UsageError
from cyclebench.snippet import features

LOAD_STORE = "488b4308488904cb4883c008"      # mov rax,[rbx+8]; mov [rbx+rcx*8],rax; add rax,8


def test_hex_forms_and_errors():
    assert parse_hex("48 01 d8") == parse_hex("0x48,0x01,0xd8") == parse_hex("\\x48\\x01\\xd8") == b"\x48\x01\xd8"
    for bad in ("", "zz", "480"):
        with pytest.raises(UsageError):
            parse_hex(bad)


def test_basic_block_check():
    b = block(bytes.fromhex(LOAD_STORE + "7500"))            # ... ; jne: the final branch is dropped
    assert b.code == bytes.fromhex(LOAD_STORE) and b.dropped.text == "jne to the block's end"
    assert block(bytes.fromhex("4801d875fb")).dropped.text == "jne to the block's start"     # add; jne back
    assert block(bytes.fromhex("4801d8eb10")).dropped.text == "jmp to 16 bytes past the block's end"
    assert block(bytes.fromhex("4801d8ebf0")).dropped.text == "jmp to 11 bytes before the block"
    assert len(b.instructions) == 3 and "dropped" in b.notes[0]
    assert block(bytes.fromhex("4801d8c3")).dropped.text == "ret"
    with pytest.raises(NotABlock, match="system call"):
        block(bytes.fromhex("4801d80f05"))                     # add; syscall
    with pytest.raises(NotABlock, match="not a basic block"):
        block(bytes.fromhex("75004801d8"))                     # jne; add
    with pytest.raises(NotABlock, match="do not decode"):
        block(bytes.fromhex("4801"))                           # cut inside an instruction
    with pytest.raises(NotABlock, match="only its final"):
        block(bytes.fromhex("c3"))


def test_loop_code_runs_copies_in_an_aligned_loop():
    import iced_x86
    body = bytes.fromhex("4801d8")
    code = loop_code(body, "r12", 5, 777)
    assert len(code) % 64 == 0 and code[64:64 + 15] == body * 5        # the loop top is 64-byte aligned
    ins = list(iced_x86.Decoder(64, code, ip=0))
    fmt = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    assert fmt.format(ins[0]) == "mov r12d,309h"                       # 777 iterations
    jnz = next(i for i in ins if i.flow_control == iced_x86.FlowControl.CONDITIONAL_BRANCH)
    assert jnz.near_branch_target == 64 and fmt.format(ins[ins.index(jnz) - 1]) == "dec r12"


def test_a_block_that_carries_flags_ends_its_loop_without_writing_them():
    import iced_x86
    body = bytes.fromhex("410f48db83c302bb05000000")        # cmovs ebx, r11d; add ebx, 2; mov ebx, 5
    blk = block(body)
    assert plan(blk)[3] and not plan(block(bytes.fromhex("4801d8")))[3]
    # a flag chain's end counts in RCX where the block leaves it free (harness/loopend.py), other
    # blocks in the first free register of COUNTER_ORDER
    assert plan(blk)[0] == "rcx" and plan(block(bytes.fromhex("4801d8")))[0] == "r15"
    assert plan(block(bytes.fromhex("0f48d983c302")))[0:4:3] == ("r15", True)   # cmovs ebx, ecx; add ebx, 2
    assert not plan(block(bytes.fromhex("0f92c0660f2eca")))[3]     # setb al; ucomisd: read, written, no chain
    code = loop_code(body, "r12", 5, 777, keep_flags=True)
    assert len(code) % 64 == 0 and code[64:64 + 60] == body * 5
    ins = [i for i in iced_x86.Decoder(64, code, ip=0)][1:]
    ins = [i for i in ins if i.ip >= 124 and i.mnemonic != iced_x86.Mnemonic.NOP]
    assert [i.mnemonic for i in ins] == [iced_x86.Mnemonic.XCHG, iced_x86.Mnemonic.LEA, iced_x86.Mnemonic.JRCXZ,
                                         iced_x86.Mnemonic.XCHG, iced_x86.Mnemonic.JMP, iced_x86.Mnemonic.XCHG]
    assert ins[4].near_branch_target == 64 and ins[2].near_branch_target == ins[5].ip


def test_start_state_sets_every_register_but_the_counter():
    text = start_state("r15", avx=False)
    for r in memory.GPRS:
        assert (f"mov {r}, {FILL:#x}" in text) == (r != "r15")
    assert "ldmxcsr" in text and "xorps xmm15" in text
    assert FILL < 2**32 and FILL % 64 == 0 and all((FILL >> s) & 0xFF for s in (0, 8, 16, 24))


def test_used_registers_include_implicit_ones():
    assert features.used_gprs(bytes.fromhex("4d8b3f")) == {"r15"}                  # mov r15,[r15]
    assert {"rax", "rdx", "rcx"} <= features.used_gprs(bytes.fromhex("48f7f1"))     # div rcx
    assert "rsp" in features.used_gprs(bytes.fromhex("50"))                         # push rax


def test_static_address_check():
    start = {r: FILL for r in memory.GPRS}
    acc = memory.accesses(bytes.fromhex(LOAD_STORE), start)
    assert [(a.read, a.write) for a in acc] == [(True, False), (False, True)]
    assert acc[0].address == FILL + 8 and acc[1].address == FILL + 8 * FILL
    # mov [rax+0x9bc],rcx (crosses 0x12346000); a 4K-aliased load; rax written: unknown
    code = bytes.fromhex("488988bc090000" "488b9040060000" "4883c001" "488b00")
    f = memory.flags(memory.accesses(code, start))
    assert f["page_crossing"] == [0] and f["unknown_addresses"] == 1
    # mov [rax],rcx; mov rdx,[rbx]: different registers, one address (all registers start equal)
    assert memory.flags(memory.accesses(bytes.fromhex("488908488b13"), start))["registers_meet"] == [(0, 1)]
    # mov [rax],rcx; mov rdx,[rbx+0x1000]: same offset in the page, different addresses
    assert memory.flags(memory.accesses(bytes.fromhex("488908488b9300100000"), start))["aliasing_4k"] == [(0, 1)]


def test_objdump_listing_and_elf_symbol(tmp_path):
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("gcc is not installed")
    src = tmp_path / "f.c"
    src.write_text("long f(long *p, long n) { long s = 0; for (long i = 0; i < n; i++) s += p[i] * 3; return s; }\n")
    obj = tmp_path / "f.o"
    subprocess.run([gcc, "-O2", "-fcf-protection=none", "-c", str(src), "-o", str(obj)], check=True)
    whole = extract.from_elf(obj, "f", 0, None)
    first = extract.from_elf(obj, "f")                            # up to the first branch
    assert whole.startswith(first) and len(first) < len(whole)
    assert block(first).dropped is not None or len(first) == len(whole)
    assert extract.from_elf(obj, "f", 1, 3) == whole[1:4]
    listing = subprocess.run(["objdump", "-d", str(obj)], capture_output=True, text=True, check=True).stdout
    (tmp_path / "f.txt").write_text(listing)
    assert extract.from_objdump(tmp_path / "f.txt") == whole
    with pytest.raises(UsageError, match="no code for symbol"):
        extract.from_elf(obj, "nothere")
    with pytest.raises(UsageError, match="outside"):
        extract.from_elf(obj, "f", len(whole), 4)
    with pytest.raises(UsageError, match=rf"^--offset {len(whole)} is outside f"):   # past the end, no --length
        extract.from_elf(obj, "f", len(whole))
    for offset, length in ((-1, None), (0, 0), (0, -1), (10 ** 30, None), (0, 10 ** 30)):   # whole numbers' edges
        with pytest.raises(UsageError, match=r"is outside f"):
            extract.from_elf(obj, "f", offset, length)
    (tmp_path / "empty.txt").write_text("hello\n")
    with pytest.raises(ConfigError):
        extract.from_objdump(tmp_path / "empty.txt")


def test_blocks_csv(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("hex,application,weight\n4801d8,a,0.5\n48 01 d8,a,0.5\n31ff,b,\n")
    rows = bulk.read_csv(p)
    assert [r["hex"] for r in rows] == ["4801d8", "31ff"] and rows[1]["weight"] is None
    p.write_text("code\n4801d8\n")
    with pytest.raises(ConfigError, match="no 'hex' column"):
        bulk.read_csv(p)
    p.write_bytes(b"\xef\xbb\xbf Hex ,Application\n4801d8,a\n")       # as a spreadsheet saves it
    assert bulk.read_csv(p) == [{"hex": "4801d8", "application": "a", "weight": None}]
    p.write_text("hex\n48zz\n")
    with pytest.raises(ConfigError, match="line 2"):
        bulk.read_csv(p)


def _doc(h, app, cycles, **kw):
    return {"hex": h, "application": app, "status": "ok", "cycles": cycles, "stable": True, "late_pages": 0, **kw}


def test_error_table_and_agreement():
    docs = [_doc("01", "a", 1.0), _doc("02", "a", 2.0), _doc("03", "b", 4.0), _doc("04", "b", 1.0, stable=False)]
    pred = {"01": 1.5, "02": 2.0, "03": 3.0, "04": 9.0}
    rows = {r.application: r for r in accuracy.error_table(docs, pred)}
    assert rows["a"].n == 2 and rows["a"].mape == pytest.approx(0.25)
    assert rows["b"].n == 1 and rows["b"].tau is None                  # the unstable block is left out
    assert rows["overall"].n == 3 and rows["overall"].mape == pytest.approx((0.5 + 0 + 0.25) / 3)
    assert rows["overall"].tau == pytest.approx(1.0)
    assert "Kendall tau" in accuracy.format_table(list(rows.values()), "x")
    ag = accuracy.agreement(docs, [_doc("01", "a", 1.005), _doc("02", "a", 2.2)])
    assert ag["n"] == 2 and ag["max"] == pytest.approx(0.1) and ag["within_1pct"] == 0.5


def test_cli_errors_have_exit_codes(cli, tmp_path):
    assert cli("block", "zz")[0] == 2
    code, out, err = cli("block", "4801d80f05")
    assert code == 2 and "system call" in err and "hint:" in err
    assert cli("block", "75004801d8")[0] == 2
    assert cli("block")[0] == 2                                        # no source
    assert cli("block", "4801d8", "--objdump", "x")[0] == 2            # two sources
    assert cli("block", "--file", str(tmp_path / "none.csv"))[0] == 9
    assert cli("block", "4801d8", "--resume")[0] == 2
    assert cli("block", "--elf", str(tmp_path / "none"), "--symbol", "f")[0] == 9


@pytest.mark.measured
def test_loads_and_stores_through_any_register_are_mapped():
    d = measure_block(bytes.fromhex(LOAD_STORE), n_measurements=5)
    assert d["status"] == "ok" and d["pages_mapped"] >= 1 and d["late_pages"] == 0
    d = measure_block(bytes.fromhex("4d8b3f"), n_measurements=5)       # mov r15,[r15]: R15 is not the counter
    assert d["status"] == "ok" and d["counter"] != "r15" and d["pages_mapped"] == 1
    assert d["cycles"] >= 3.0                                          # a pointer chase: a load's latency
    d = measure_block(bytes.fromhex("48f7f1"), n_measurements=5)       # div rcx with rdx = rcx: #DE
    assert d["status"] == "failed" and d["exit_code"] == 5 and "division" in d["reason"]
    d = measure_block(bytes.fromhex("488d04c0488b08"), n_measurements=5, max_pages=4)  # lea rax,[rax+rax*8]: a walk
    assert d["status"] == "failed" and d["exit_code"] == 5 and "more than 4 pages" in d["reason"]


@pytest.mark.measured
def test_bulk_resume(cli, tmp_path):
    csv = tmp_path / "b.csv"
    csv.write_text("hex,application,weight\n4801d8,a,1\n" + LOAD_STORE + ",a,1\n0f05,b,1\n")
    res = tmp_path / "r.jsonl"
    code, out, err = cli("block", "--file", str(csv), "--limit", "2", "--results", str(res), "-n", "5")
    assert code == 0, err
    assert "2 blocks" in out and "blocks/min" in out
    first = res.read_text().splitlines()
    # one line per block, and a second for a block a noise burst left unstable (the retry pass)
    assert json.loads(first[0])["kind"] == "block"
    assert {json.loads(x)["hex"] for x in first[1:]} == {"4801d8", LOAD_STORE}
    assert cli("block", "--file", str(csv), "--results", str(res))[0] == 10      # never overwritten
    code, out, err = cli("block", "--file", str(csv), "--results", str(res), "--resume", "-n", "5", "--json")
    assert code == 0, err
    lines = res.read_text().splitlines()
    assert lines[:len(first)] == first
    # only the new block was run afresh; any other new line is a retry pass over a block stored unstable
    added = [json.loads(x) for x in lines[len(first):]]
    fresh = [d for d in added if not d.get("retried")]
    assert [d["hex"] for d in fresh] == ["0f05"]
    assert all(d["hex"] in {"4801d8", LOAD_STORE} for d in added if d.get("retried"))
    assert fresh[0]["status"] == "refused" and "system call" in fresh[0]["reason"]
    assert [d["hex"] for d in json.loads(out)] == ["4801d8", LOAD_STORE, "0f05"]


def test_blocks_study_analysis_on_fabricated_records():
    from cyclebench.studies.blocks import analysis as an
    recs = [{"result": _doc("01", "a", 1.0), "predictions": {"m": 2.0}},
            {"result": _doc("02", "b", 2.0), "predictions": {"m": 2.0}},
            {"result": {"hex": "0f05", "application": "b", "status": "refused", "reason": "'syscall' at offset 0"},
             "predictions": {}}]
    docs, preds = an.docs_and_predictions(recs)
    s = an.share(docs)
    assert s["clean"] == 2 and s["blocks"] == 3 and s["reasons"][0][1] == 1
    t = an.error_view("m", docs, preds["m"])
    assert t.rows[-1]["application"] == "overall" and t.rows[-1]["mape"] == pytest.approx(50.0)
    fig = an.scatter("m", docs, preds["m"], "cpu")
    assert fig.panels[0].series[0].x == [1.0, 2.0]


def test_tiny_blocks_study_writes_outputs_and_resumes(tmp_path, monkeypatch):
    from dataclasses import replace
    monkeypatch.setenv("CYCLEBENCH_CLOCK_MHZ", "3000")     # asserts no timing: no calibration to fail under load

    from cyclebench.study import engine
    from cyclebench.studies.blocks.study import QUICK, BlocksStudy
    tiny = replace(QUICK, name="tiny", every=1000, reps=2)          # 3 blocks
    run = engine.run_study(BlocksStudy(), tiny, tmp_path, progress=False)
    assert len(run.records) == 3
    for name in ("measured.txt", "errors.txt", "errors.csv", "scatter.png", "summary.md", "results.jsonl"):
        assert (tmp_path / name).is_file(), name
    assert "Kendall" in (tmp_path / "errors.txt").read_text()
    again = engine.run_study(BlocksStudy(), tiny, tmp_path, resume=True, progress=False)
    assert again.skipped == 3


def test_resource_model_predictor(cli, tmp_path):
    from cyclebench.blocks.predictors import PredictionFailed, make
    from test_ports import _fake_model_file
    path = _fake_model_file(tmp_path)
    p = make("predict", model=str(path))
    assert p.predict(bytes.fromhex("480fafc3480fafcb4801da")) == pytest.approx(2.0)   # imul; imul; add
    assert p.name == "cyclebench predict"          # a file without a machine record: nothing to say
    with pytest.raises(PredictionFailed, match=r"the model lacks SUB.*cyclebench ports FORM"):   # not a lower bound as a figure
        p.predict(bytes.fromhex("480fafc34829d1"))                                  # imul rax, rbx; sub rcx, rdx
    from cyclebench.machine.metadata import machine_metadata
    here = machine_metadata()
    for machine, other in ((here, False), ({**here, "cpu_model": here["cpu_model"] + 1}, True)):
        (tmp_path / str(other)).mkdir()
        p = make("predict", model=str(_fake_model_file(tmp_path / str(other), machine)))
        assert ("a model of another CPU" in p.name) == other
    code, out, err = cli("block", "4801d8", "--predictor", "predict")
    assert code == 2 and "--ports-model" in err
