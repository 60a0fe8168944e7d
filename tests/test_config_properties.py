"""nanoBench config parsing on arbitrary bytes or text raises only cyclebench's own errors."""
from hypothesis import given, settings, strategies as st

from cyclebench.counters.nanobench_config import load_config, parse_config
from cyclebench.errors import ConfigError

_PIECES = st.sampled_from(["0E", ".", "01", "1FF", "FFFFFFFFFFFFFFFFFFFFF", ".CMSK=", ".CTR=", "0x",
                           "99999", ".AnyT", ".EDG", ".INV", ".TakenAlone", ".MSR_3F6H=", ".MSR_PF=",
                           ".MSR_RSP0=", "B7", "CD", " ", "Name", "\n", "#", "# vendor: AMD",
                           "# vendor: Intel", "\x00", "ü", "=", "-1"])
_TEXT = st.one_of(st.text(max_size=300), st.lists(_PIECES, max_size=40).map("".join))


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from([None, "intel", "amd"]))
def test_parse_config_raises_only_config_errors(text, vendor):
    try:
        specs = parse_config(text, "p.cfg", vendor=vendor)
    except ConfigError as err:
        assert err.hint and len(err.cause) < 5000
        return
    assert all(s.source.startswith("p.cfg:") for s in specs)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=400), _TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_load_config_of_any_bytes_raises_only_config_errors(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cfg") / "any.txt"
    path.write_bytes(data)
    try:
        load_config(path, vendor="intel")
    except ConfigError as err:
        assert err.hint and "\n" not in err.hint
