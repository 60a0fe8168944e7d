import json

import pytest

from settle import settled, unsettled


@pytest.mark.measured
def test_raw_machine_code_file_measures_like_its_assembly(cli, tmp_path):
    f = tmp_path / "imul.bin"
    f.write_bytes(bytes.fromhex("480fafc0"))            # imul rax, rax

    def run():
        docs = []
        for code in (["--code-file", str(f)], ["imul rax, rax"]):
            rc, out, _ = cli("asm", *code, "--json", "-n", "15")
            assert rc == 0
            docs.append(json.loads(out))
        return [d["events"]["cycles"]["value"] for d in docs], [
            x for label, d in zip(("file", "assembly"), docs)
            for x in unsettled(label, {"stable": d["stability"].get("stable"), "warnings": d["warnings"]})]

    a, b = settled(run)
    assert abs(a - b) / b < 0.03


def test_text_and_file_for_one_part_conflict(cli, tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"\x90")
    rc, _, err = cli("asm", "nop", "--code-file", str(f))
    assert rc == 2 and err.startswith("error: both assembly")


def test_missing_code_file(cli, tmp_path):
    rc, _, err = cli("asm", "--code-file", str(tmp_path / "nope.bin"))
    assert rc == 2 and err.startswith("error: cannot read the code file")


def test_emit_asm_prints_the_measured_code(cli):
    rc, out, _ = cli("asm", "--emit-asm", "--unroll", "3", "--loop", "0", "--init", "mov rbx, 5", "imul rax, rbx")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == ".intel_syntax noprefix"
    body_a = lines[lines.index("cb_run_a_body:") + 1:lines.index("cb_run_a_body_end:")]
    body_b = lines[lines.index("cb_run_b_body:") + 1:lines.index("cb_run_b_body_end:")]
    assert [l for l in body_a if not l.endswith(":")] == ["imul rax, rbx"] * 3
    assert [l for l in body_b if not l.endswith(":")] == ["imul rax, rbx"] * 6
    assert "mov rbx, 5" in lines and "rdtsc" in lines


def test_output_file_holds_the_json_result(cli, tmp_path, stored_result):
    out_file = tmp_path / "r.json"
    rc, _, _ = cli("asm", "nop", "-n", "5", "-o", str(out_file))
    assert rc == 0 and json.loads(out_file.read_text()) == stored_result.to_dict()
