"""Readers for uops.info data (CSV table, instructions.xml)."""
import pytest

from cyclebench.errors import ConfigError
from cyclebench.instructions.published import (Value, parse_ports, parse_value, read, read_csv,
                                               read_xml)

CSV = '''"instruction",                "extension", "latency",  "throughput",  "uops",  "ports"
"VANDNPS (YMM, YMM, M256)",   "AVX",       "[1;≤9]",   "0.50 / 0.50", "1 / 2", "1*p015+1*p23"
"IMUL (R64, R64)",            "BASE",      "3",        "1.00",        "1",     "1*FP0123"
"VPERMW (ZMM, ZMM, ZMM)",     "AVX512",    "6",        "0.50 / 1.00", "1",     "1*FP12"
"DIV (R64)",                  "BASE",      "[≤5;≤9]",  "≤6",          "2",     "1*p0+2*p15"
"BAD (R64)",                  "BASE",      "[5;3]",    "1",           "1",     "1*p0"
"ALSO BAD (R64)",             "BASE",      "1",        "fast",        "1",     "1*p0"
"SHORT ROW", "1"
"PORTS BAD (R64)",            "BASE",      "1",        "1",           "1",     "p0+1"
'''


def test_values():
    assert parse_value("3") == Value(3, 3, False, False, "3")
    v = parse_value("[1;≤9]")
    assert (v.lo, v.hi, v.lo_upper_bound, v.hi_upper_bound) == (1, 9, False, True)
    v = parse_value("≤6")
    assert v.upper_bound and v.hi == 6
    v = parse_value("[≤5;≤9]")
    assert v.lo_upper_bound and v.hi_upper_bound and (v.lo, v.hi) == (5, 9)
    assert parse_value("") is None
    for bad in ("[5;3]", "x", "[1;2;3]", "≤"):
        with pytest.raises(ValueError):
            parse_value(bad)
    assert parse_ports("1*p0+1*p15") == {"p0": 1, "p15": 1}
    assert parse_ports("2*FP0123+1*ALU") == {"FP0123": 2, "ALU": 1}


def test_csv_good_rows_and_bad_rows_by_line(tmp_path):
    p = tmp_path / "uops.csv"
    p.write_text(CSV, encoding="utf-8")
    records, problems = read_csv(str(p), collect=True)
    assert set(records) == {"VANDNPS (YMM, YMM, M256)", "IMUL (R64, R64)", "DIV (R64)",
                            "VPERMW (ZMM, ZMM, ZMM)"}
    r = records["VANDNPS (YMM, YMM, M256)"]
    assert r.throughput.hi == 0.5 and r.uops.hi == 1 and r.uops_alt.hi == 2
    assert r.ports == {"p015": 1, "p23": 1} and r.extra["extension"] == "AVX"
    assert records["DIV (R64)"].throughput.upper_bound
    lines = sorted(e.details["line"] for e in problems)
    assert lines == [6, 7, 8, 9]
    assert all(str(p) in e.cause and f":{e.details['line']}:" in e.cause for e in problems)
    with pytest.raises(ConfigError) as e:
        read_csv(str(p))
    assert e.value.exit_code == 9 and f"{p}:6:" in e.value.cause


def test_csv_two_value_throughput_compares_the_measured_one(tmp_path):
    """'0.50 / 1.00': the first is computed from the port usage, the second measured (uops.info)."""
    p = tmp_path / "uops.csv"
    p.write_text(CSV, encoding="utf-8")
    records, _ = read_csv(str(p), collect=True)
    r = records["VPERMW (ZMM, ZMM, ZMM)"]
    assert r.throughput.hi == 1.0 and r.throughput_computed.hi == 0.5
    assert r.throughput_text == "0.50 / 1.00"
    one = records["IMUL (R64, R64)"]
    assert one.throughput.hi == 1.0 and one.throughput_computed is None


def test_csv_bad_header_and_missing_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("name,value\nIMUL (R64, R64),3\n")
    with pytest.raises(ConfigError, match=r"x.csv:1: header"):
        read_csv(str(p))
    with pytest.raises(ConfigError, match="cannot read"):
        read_csv(str(tmp_path / "missing.csv"))


XML = '''<root>
<instruction asm="IMUL" string="IMUL (R64, R64)" extension="BASE">
  <operand idx="1" type="reg" r="1" w="1">RAX</operand><operand idx="2" type="reg" r="1">RBX</operand>
  <operand idx="3" type="flags" w="1" suppressed="1"/>
  <architecture name="ZEN4"><measurement TP_unrolled="1.00" TP_loop="1.00" uops="1" ports="1*FP0123">
    <latency start_op="1" target_op="1" cycles="3"/><latency start_op="2" target_op="1" cycles="3"/>
    <latency start_op="1" target_op="3" cycles="4" cycles_is_upper_bound="1"/></measurement></architecture>
  <architecture name="ADL-P"><measurement TP_unrolled="1.00" uops="1" ports="1*p1">
    <latency start_op="1" target_op="1" cycles="3"/></measurement></architecture>
</instruction>
<instruction asm="ADD" string="ADD (R64, I32)">
  <architecture name="ADL-P"><measurement TP_unrolled="0.20" uops="1" ports="1*p06"/></architecture>
</instruction>
</root>'''


def test_xml_architecture_filter(tmp_path):
    p = tmp_path / "instructions.xml"
    p.write_text(XML)
    zen = read_xml(str(p), "ZEN4")
    assert set(zen) == {"IMUL (R64, R64)"}
    imul = zen["IMUL (R64, R64)"]
    assert imul.ports == {"FP0123": 1} and imul.throughput.hi == 1 and imul.uops.hi == 1
    assert (imul.latency.lo, imul.latency.hi, imul.latency.hi_upper_bound) == (3, 4, True)
    assert len(imul.latencies) == 3
    assert set(read(str(p), "ADL-P")) == {"IMUL (R64, R64)", "ADD (R64, I32)"}
    with pytest.raises(ConfigError) as e:
        read_xml(str(p), "SKX")
    assert "ADL-P" in e.value.hint and "ZEN4" in e.value.hint
    with pytest.raises(ConfigError):
        read(str(p))                               # XML needs an architecture
    bad = tmp_path / "bad.xml"
    bad.write_text("<root><instruction")
    with pytest.raises(ConfigError, match="not valid XML"):
        read_xml(str(bad), "ZEN4")
