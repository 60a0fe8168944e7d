"""The shipped uops.info tables and which one is a CPU's own: its column, the nearest one (labelled),
or a usage error on an unknown CPU, never another core's column."""
from pathlib import Path

import pytest

from cyclebench.errors import UsageError
from cyclebench.instructions import published, reference
from cyclebench.machine import uarch
from cyclebench.machine.cpu import parse_cpuinfo

CPUS = Path(__file__).parent / "data" / "cpus"


def ident(name):
    return uarch.identify(parse_cpuinfo((CPUS / f"{name}.cpuinfo").read_text().splitlines()))


def test_every_uops_info_code_is_shipped():
    assert reference.codes() == sorted(uarch.UOPS_INFO_CODES)


@pytest.mark.parametrize("name,code,nearest", [("zen3", "ZEN3", False), ("skylake", "SKL", False),
                                               ("masked-guest", "ADL-P", True), ("zen5", "ZEN4", True)])
def test_own_column(name, code, nearest):
    col = reference.own_column(ident(name))
    assert (col.code, col.nearest, col.path.name) == (code, nearest, f"{code}.csv")
    assert ("nearest to" in col.label) == nearest


def test_an_unknown_cpu_has_no_column():
    with pytest.raises(UsageError) as e:
        reference.own_column(ident("unknown-intel"))
    assert "--arch" in e.value.hint


def test_codes_name_shipped_tables_and_read():
    path, label = reference.resolve_source("adl-p", None)
    assert label == "uops.info ADL-P"
    assert reference.resolve_source(" adl-p ", None) == (path, label) and reference.column("Zen4 ").code == "ZEN4"
    records = published.read_csv(str(path))
    assert records["INC (R64)"].latency.lo == 0       # Golden Cove executes INC in the renamer
    with pytest.raises(UsageError):
        reference.column("ZEN9")
