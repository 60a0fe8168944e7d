"""measure()'s keyword checks (measurement/params.py) on arbitrary values: they accept a value or
raise UsageError, never a raw Python error."""
from hypothesis import given, settings
from hypothesis import strategies as st

from cyclebench.errors import UsageError
from cyclebench.measurement import params

KEYWORDS = ["code", "init", "late_init", "one_time_init", "unroll", "loop", "n_measurements", "warm_up",
            "initial_warm_up", "alignment_offset", "aggregate", "counters", "timeout", "budget", "cpu",
            "group_size", "events", "data", "symbols", "libraries", "r14_size", "area_size", "max_memory",
            *params.FLAGS]
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10) | st.binary(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(KEYWORDS), values)
def test_any_value_of_any_keyword_is_accepted_or_a_usage_error(keyword, value):
    try:
        params.check(**{keyword: value})
    except UsageError as e:
        assert e.exit_code == 2 and e.hint and "\n" not in e.cause


def test_the_defaults_pass():
    params.check(code="nop", init=None, unroll=None, loop=None, n_measurements=None, warm_up=5,
                 initial_warm_up=0, alignment_offset=0, aggregate="avg", counters="auto", timeout=10.0,
                 budget=2.0, cpu=None, group_size=None, events=None, data=None, symbols=None, libraries=None,
                 r14_size=None, area_size=None, max_memory=None, **{f: False for f in params.FLAGS})
