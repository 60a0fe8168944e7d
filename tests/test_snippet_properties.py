"""Snippet parsing on arbitrary text raises only cyclebench's own errors (issue 8)."""
from hypothesis import given, settings, strategies as st

from cyclebench.errors import CycleBenchError
from cyclebench.snippet.parse import MAX_STATEMENTS, parse_part

# Text made of the characters the parser cares about, plus anything at all.
_PIECES = st.sampled_from(["|", "*", ";", "\n", "#", "0", "9", "15", "100000", "100001", " ",
                           "nop", ".rept", ".incbin", "cb_ctl", "cb_sym_f", ":", "=", '"', "\\",
                           "ü", "\x00", "\r"])
_TEXT = st.one_of(st.text(max_size=200), st.lists(_PIECES, max_size=40).map("".join))


def _parse_or_own_error(text: str):
    try:
        part = parse_part("code", text)
    except CycleBenchError as err:
        assert err.hint and "\n" not in err.cause
        return None
    assert len(part.statements) <= MAX_STATEMENTS
    return part


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_parse_part_raises_only_cyclebench_errors(text):
    part = _parse_or_own_error(text)
    if part is not None:
        # What reaches the assembler is ASCII, one statement per line.
        assert all(s.text.isascii() and "\n" not in s.text for s in part.statements)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=10**7), _TEXT)
def test_repeat_extension_raises_only_cyclebench_errors(count, inner):
    _parse_or_own_error(f"{count}*|{inner}|")


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="0123456789 ", max_size=30))
def test_nop_extension_raises_only_cyclebench_errors(n):
    _parse_or_own_error(f"|{n}")


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_raw_code_is_kept_byte_for_byte(data):
    part = parse_part("code", data)
    assert part.raw == data
