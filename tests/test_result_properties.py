"""Result.from_json on arbitrary text and on arbitrary JSON (including mutated real documents)
raises only cyclebench's own errors, and what to_json writes is read back."""
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cyclebench.errors import CycleBenchError, ResultFileError
from cyclebench.measurement.result import SCHEMA, EventResult, Result

FAST = settings(max_examples=150, deadline=None)


def _result(**stability) -> Result:
    ev = EventResult("cycles", "cycles", 1.0, 0.001, "avg", "cycles (TSC-calibrated, 3.69 GHz)",
                     0.99, 1.0, 1.01, [0.99, 1.0, 1.01])
    return Result("snippet", {"code": "add rax, rbx"}, {"name": "tsc"}, {"cycles": ev},
                  {"stable": True, "spread": 0.01, **stability}, {"cpu": "x"})


def _reads_or_refuses(text):
    try:
        r = Result.from_json(text)
    except CycleBenchError as e:
        assert isinstance(e, ResultFileError) and e.hint
        return None
    assert isinstance(r, Result)
    return r


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@FAST
@given(st.text(max_size=200))
def test_any_text(text):
    _reads_or_refuses(text)


@FAST
@given(st.binary(max_size=200))
def test_any_bytes(data):
    _reads_or_refuses(data)


@FAST
@given(json_values)
def test_any_json_value(value):
    _reads_or_refuses(json.dumps(value))


FIELDS = ["kind", "parameters", "backend", "events", "stability", "machine", "warnings", "raw",
          "attempts", "schema_version"]


@FAST
@given(st.sampled_from(FIELDS), json_values)
def test_a_real_document_with_one_field_replaced(field, value):
    doc = _result().to_dict()
    doc[field] = value
    _reads_or_refuses(json.dumps(doc))


@FAST
@given(st.sampled_from(sorted(EventResult.__dataclass_fields__)), json_values)
def test_a_real_event_with_one_field_replaced(field, value):
    doc = _result().to_dict()
    doc["events"]["cycles"][field] = value
    r = _reads_or_refuses(json.dumps(doc))
    if r is not None:
        assert isinstance(r.value(), (int, float))


@pytest.mark.parametrize("text", ["[1,2]", "null", "5", '"str"', "[" * 100_000 + "]" * 100_000,
                                  json.dumps({**_result().to_dict(), "stability": None}),
                                  json.dumps({**_result().to_dict(), "events": [1]}),
                                  _result().to_json().replace('"value": 1.0', '"value": NaN')])
def test_known_malformed_documents(text):
    with pytest.raises(ResultFileError):
        Result.from_json(text)


def test_non_finite_figures_round_trip_as_standard_json():
    r = _result(spread=math.inf)
    r.events["cycles"].uncertainty = math.nan
    text = r.to_json()
    assert "NaN" not in text and "Infinity" not in text
    back = Result.from_json(text)
    assert back.stability["spread"] is None and math.isnan(back.events["cycles"].uncertainty)
    assert back.value() == 1.0


def test_an_upper_bound_round_trips():
    r = _result()
    r.events["cycles"].upper_bound = 0.002
    back = Result.from_json(r.to_json())
    assert back.below_resolution and back.events["cycles"].upper_bound == 0.002
    assert not _result().below_resolution
    assert json.loads(r.to_json())["schema"] == SCHEMA
