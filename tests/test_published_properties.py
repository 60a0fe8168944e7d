"""Property test of the published-data CSV reader (instructions/published.py): any file gives a
table or cyclebench's own error, never another exception, and messages stay short."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cyclebench.errors import ConfigError, CycleBenchError
from cyclebench.instructions.published import MAX_PROBLEMS, Published, read_csv

HEADER = "instruction,latency,throughput,uops,ports\n"
CELL = st.one_of(st.sampled_from(["1", "[1;≤9]", "≤6", "0.50 / 0.25", "1*p0+1*p15", "", "-", '"a,b"',
                                  "[5;3]", "1e999", "9" * 5000, "\x00", '"', "\r"]),
                 st.text(max_size=12))
ROWS = st.lists(st.lists(CELL, min_size=1, max_size=6).map(",".join), max_size=6).map("\n".join)
CONTENT = st.one_of(st.binary(max_size=300),
                    st.text(max_size=300).map(str.encode),
                    ROWS.map(lambda rows: (HEADER + rows).encode()),
                    ROWS.map(lambda rows: (HEADER + rows).encode("utf-16")))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=CONTENT, collect=st.booleans())
def test_any_file_gives_a_table_or_a_cyclebench_error(tmp_path, content, collect):
    p = tmp_path / "pub.csv"
    p.write_bytes(content)
    try:
        out = read_csv(str(p), collect=collect)
    except CycleBenchError as e:
        assert e.hint is None or len(e.hint) < 2000
        assert len(str(e)) < 2000
        return
    records, problems = out if collect else (out, [])
    assert all(isinstance(r, Published) for r in records.values())
    assert all(isinstance(e, CycleBenchError) and len(str(e)) < 2000 for e in problems)


def test_a_binary_or_huge_field_file_is_a_config_error_with_a_short_message(tmp_path):
    p = tmp_path / "pub.csv"
    for content in ((HEADER + '"' + "x" * 300_000 + '",1,1,1,1\n').encode(), b"\x89PNG\r\n\x1a\n\xff" * 99):
        p.write_bytes(content)
        with pytest.raises(ConfigError, match="not a CSV table") as info:
            read_csv(str(p))
        assert len(str(info.value)) < 300


def test_long_cells_and_many_bad_rows_give_short_readable_problems(tmp_path):
    p = tmp_path / "pub.csv"
    p.write_text("\ufeff" + HEADER + "".join(f'"X{i} (R64)",{"9" * 9000},1,1,1*p0\n' for i in range(50)))
    records, problems = read_csv(str(p), collect=True)      # a UTF-8 BOM (Excel) is fine
    assert records == {} and len(problems) == MAX_PROBLEMS + 1
    assert "number too large" in problems[0].cause and "30 more bad rows" in problems[-1].cause
    assert all(len(e.cause) < 300 for e in problems)
    with pytest.raises(ConfigError, match="50 bad row"):
        read_csv(str(p))
