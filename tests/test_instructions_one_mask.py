"""Throughput copies that write one mask register, the others zeroed (one_mask.py); fabricated
readings, no timing."""
import pytest

from cyclebench.instructions import Catalogue, one_mask
from cyclebench.instructions.characterize import Session
from cyclebench.instructions.throughput import measure_throughput
from test_instructions_distinct import Fake


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def test_the_copies_write_one_mask_register_and_zero_the_ones_they_do_not_name(cat):
    cps, init, dest, zeroed = one_mask.build(cat.get("KMOVW (K, M16)"), 16, ())
    assert {one_mask.destination(cat.get("KMOVW (K, M16)"), i) for i in cps.instances} == {dest}
    assert dest not in zeroed and len(zeroed) == 7 and init[-7:] == [f"kxorw {k}, {k}, {k}" for k in zeroed]
    # a write mask is read by every copy: it keeps its value
    form = cat.get("VPTESTNMD (K, K, XMM, M128)")
    cps, init, dest, zeroed = one_mask.build(form, 16, ())
    assert "{k1}" in cps.instances[0].text and "k1" not in zeroed and dest != "k1" and len(zeroed) == 6
    # no mask register written, or the mask register also read: nothing to build
    assert one_mask.build(cat.get("VPADDD (XMM, XMM, M128)"), 16, ()) is None
    assert one_mask.build(cat.get("KMOVW (M16, K)"), 16, ()) is None


class _Zeroed(Fake):
    """``zeroed`` cycles a copy when the init zeroes mask registers, ``usual`` otherwise."""

    def __init__(self, usual, zeroed):
        super().__init__({})
        self.usual, self.zeroed = usual, zeroed

    def __call__(self, code, init=None, **kw):
        n = len(code.splitlines())
        self.default = n * (self.zeroed if "kxorw" in (init or "") else self.usual)
        return super().__call__(code, init, **kw)


def test_the_one_register_copies_are_kept_when_faster_and_said_so(cat):
    form = cat.get("KMOVW (K, M16)")
    tp = measure_throughput(Session(measure_fn=_Zeroed(0.58, 0.50)), form, processes=1)
    one = tp["one_mask"]
    assert one["kept"] and tp["value"] == pytest.approx(0.50) and one["with"] == pytest.approx(0.58)
    assert "kxorw" in tp["init"] and len({line.split(",")[0] for line in tp["code"].splitlines()}) == 1
    assert f"every copy writes {one['register']}" in tp["note"] and "read 0.58" in tp["note"]
    # a second run that adopts the first run's reading keeps its copies and init
    again = measure_throughput(Session(measure_fn=_Zeroed(0.58, 0.58)), form, processes=1, earlier=tp)
    assert again["value"] == pytest.approx(0.50) and again["one_mask"]["kept"] and "kxorw" in again["init"]
    # no faster: the usual copies stay, with the reading beside them
    tp = measure_throughput(Session(measure_fn=_Zeroed(0.50, 0.50)), form, processes=1)
    assert tp["one_mask"]["kept"] is False and "kxorw" not in tp["init"] and "every copy" not in (tp["note"] or "")
    # not a mask written from memory: not measured
    assert "one_mask" not in measure_throughput(Session(measure_fn=_Zeroed(0.58, 0.50)), cat.get("KMOVW (K, K)"),
                                                processes=1)
