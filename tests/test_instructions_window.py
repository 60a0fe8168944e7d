"""The in-flight probe of the throughput copies (window.py); fabricated readings, no timing."""
import pytest

from cyclebench.instructions import Catalogue, window
from cyclebench.instructions.characterize import Session
from test_instructions_distinct import Fake

BLOCK = "\n".join(["imul r13, r13"] * window.BLOCK)


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


def test_copies_that_do_not_fit_in_flight_are_limited():
    copies = [f"vpcmpd k{i}, xmm1, xmmword ptr [r14+0x40], 2" for i in range(1, 8)]
    w = window.probe(Session(measure_fn=Fake({BLOCK: 48.0}, default=71.0)), copies, [], 0.58, 0)
    assert w["copies"] == window.MAX_COPIES and w["block_cycles"] == 48.0 and w["limited"] is True
    text = window.cause({"value": 0.58, "window": w})
    assert text.startswith("limited in flight here: 64 copies") and "37.1" in text
    assert "mask registers" not in text     # the probe alone does not know what the copies write
    # as long as the block: the ports set the figure, no cause from the probe
    w = window.probe(Session(measure_fn=Fake({BLOCK: 48.0}, default=48.5)), copies, [], 0.58, 0)
    assert w["limited"] is False and window.cause({"value": 0.58, "window": w}) is None
    # a slow form: too few copies fit the block to tell
    w = window.probe(Session(measure_fn=Fake({BLOCK: 48.0}, default=48.0)), copies, [], 10.0, 0)
    assert w["limited"] is None and w["error"]


class _Room(Fake):
    """The block (48 cycles) with ``room`` copies in flight behind it at no cost, each copy past
    them ``each`` cycles longer."""

    def __init__(self, room, each=0.58, unstable_from=None):
        super().__init__({})
        self.room, self.each, self.unstable_from = room, each, unstable_from

    def __call__(self, code, init=None, **kw):
        n = sum(not line.startswith("imul") for line in code.splitlines())
        self.default = 48.0 + max(0, n - self.room) * self.each
        r = super().__call__(code, init, **kw)
        if self.unstable_from is not None and 0 < n and len(self.calls) >= self.unstable_from:
            r.stable = False
        return r


def test_the_probe_counts_how_many_copies_fit_behind_the_block():
    copies = [f"kmovw k{i}, word ptr [r14+0x40]" for i in range(1, 8)]
    for room in (8, 41, 53, 57):
        w = window.probe(Session(measure_fn=_Room(room)), copies, [], 0.55, 0)
        assert w["limited"] is True and w["copies"] == 64
        assert room <= w["fits"] <= room + 2, (room, w["fits"])   # KNEE_TOL lets about two more pass
    w = window.probe(Session(measure_fn=_Room(41)), copies, [], 0.55, 0)
    text = window.cause({"value": 0.55, "window": w})
    assert f"about {w['fits']} fit" in text and f"about {round(w['fits'] * 0.55)} cycles from rename" in text
    # the one-register copies' reading, when they were not kept (not faster)
    one = {"register": "k1", "value": 0.56, "kept": False}
    assert "all writing k1, with the mask registers they do not name zeroed (kxorw), they read 0.56" in \
        window.cause({"value": 0.55, "window": w, "one_mask": one})
    assert "all writing" not in window.cause({"value": 0.55, "window": w, "one_mask": dict(one, kept=True)})
    # fewer than the smallest count fit, or a reading unstable on the way: no count, the probe still stands
    w = window.probe(Session(measure_fn=_Room(2, each=2.0)), copies, [], 0.55, 0)
    assert w["limited"] is True and w["fits"] is None
    assert "fit (the most" not in window.cause({"value": 0.55, "window": w})
    w = window.probe(Session(measure_fn=_Room(41, unstable_from=4)), copies, [], 0.55, 0)
    assert w["limited"] is True and w["fits"] is None
    # not limited: nothing to count
    fake = _Room(64)
    assert window.probe(Session(measure_fn=fake), copies, [], 0.55, 0)["fits"] is None and len(fake.calls) == 2


def test_forms_probed_on_the_grid_write_a_mask_register_from_memory(cat):
    assert window.suspect(cat.get("VPCMPD (K, XMM, M128, I8)")) and window.suspect(cat.get("KMOVW (K, M16)"))
    for name in ("VPCMPD (K, XMM, XMM, I8)", "VPADDD (XMM, XMM, M128)", "KMOVW (M16, K)"):
        assert not window.suspect(cat.get(name)), name


def test_a_gathers_copies_are_also_measured_without_their_mask_set_up(cat):
    from cyclebench.instructions.throughput import measure_throughput
    form = cat.get("VPGATHERDD (XMM, VSIB_XMM, XMM)")
    fake = Fake({}, default=80.0)
    tp = measure_throughput(Session(measure_fn=fake), form, processes=1)
    unset = tp["mask_unset"]
    assert "vpcmpeqd" in tp["code"] and "vpcmpeqd" not in unset["code"]
    assert unset["code"].count("vpgatherdd") == tp["code"].count("vpgatherdd")
    assert unset["value"] == pytest.approx(80.0 / unset["code"].count("vpgatherdd"))
    # not a gather: nothing to leave unset
    assert "mask_unset" not in measure_throughput(Session(measure_fn=fake), cat.get("VPADDD (XMM, XMM, XMM)"))


def test_a_gathers_copies_without_their_mask_set_up_are_what_the_agreement_compares():
    """uops.info's copies run with the mask the first copy emptied (comparing.reference): that
    reading is compared, and a mismatch names it beside the reported figure."""
    from types import SimpleNamespace

    from cyclebench.instructions.agreement import cause, match
    from cyclebench.instructions.comparing import MASK_EMPTY
    rec = SimpleNamespace(throughput=SimpleNamespace(lo=4.0, hi=4.0, lo_upper_bound=False, hi_upper_bound=False),
                          throughput_text="2.50 / 4.00", latency=None)
    tp = {"value": 5.0, "bound": "exact", "carried": [], "stable": True,
          "mask_unset": {"value": 4.0, "stable": True}}
    doc = {"throughput": tp, "notes": [], "latency": []}
    assert match(doc, rec, "throughput")["match"]
    tp["mask_unset"]["value"] = 4.6
    why = cause(doc, rec, None, "throughput")
    assert MASK_EMPTY in why and "4.60 against the published 4" in why and "5.00 as reported" in why


class _Layout(Fake):
    """A gather's copies: ``ahead`` cycles a copy with every mask set-up ahead of the copies,
    ``in_place`` with each set-up before its own copy (the code's first two lines tell)."""

    def __init__(self, ahead, in_place):
        super().__init__({})
        self.ahead, self.in_place = ahead, in_place

    def __call__(self, code, init=None, **kw):
        lines = code.splitlines()
        n = sum("gather" in line for line in lines)
        grouped = len(lines) > 1 and all(line.startswith("vpcmpeqd") for line in lines[:2])
        self.default = n * (self.ahead if grouped else self.in_place)
        return super().__call__(code, init, **kw)


def test_a_gathers_mask_set_ups_also_run_ahead_of_its_copies(cat):
    from cyclebench.instructions.copies import independent_copies
    from cyclebench.instructions.gathers import ahead_count
    from cyclebench.instructions.throughput import measure_throughput
    form = cat.get("VGATHERQPD (YMM, VSIB_YMM, YMM)")
    # 15 vector registers besides the index, two a copy: the eighth copy's mask is the first's destination
    assert ahead_count(form, independent_copies(form, 16).instances) == 7
    # every AVX-512 copy sets k1: no set-up can move ahead of another copy
    evex = cat.get("VGATHERQPD (ZMM, K, VSIB_ZMM)")
    assert ahead_count(evex, independent_copies(evex, 16).instances) == 1
    tp = measure_throughput(Session(measure_fn=_Layout(4.29, 5.0)), form, processes=1)
    assert tp["value"] == pytest.approx(4.29) and tp["copies"] == 7
    lines = tp["code"].splitlines()
    assert all(line.startswith("vpcmpeqd") for line in lines[:7]) and all("vgatherqpd" in line for line in lines[7:])
    assert tp["setups_ahead"]["in_place"] == pytest.approx(5.0) and "ahead of them all" in tp["note"]
    assert tp["mask_unset"]["code"].count("vgatherqpd") == 7
    # no faster ahead: the copies keep their set-ups in place, all of them
    tp = measure_throughput(Session(measure_fn=_Layout(5.0, 5.0)), form, processes=1)
    assert tp["copies"] == 15 and "kept" not in tp["setups_ahead"] and "vpcmpeqd" in tp["code"].splitlines()[2]


class _States(Fake):
    """Copies of a mask load that fit in flight only so far: the block alone 48 cycles, the block
    and the copies 71; the 16 copies read ``readings`` one runner process after another."""

    def __init__(self, readings, rest):
        super().__init__({})
        self.readings, self.rest = list(readings), rest

    def __call__(self, code, init=None, **kw):
        lines = code.splitlines()
        if any(line.startswith("imul") for line in lines):
            self.default = 48.0 if all(line.startswith("imul") for line in lines) else 71.0
        else:
            self.default = len(lines) * (self.readings.pop(0) if len(lines) == 16 and self.readings else self.rest)
        return super().__call__(code, init, **kw)


def test_copies_limited_in_flight_run_in_more_processes(cat):
    from cyclebench.instructions.fastest import LIMITED_PROCESSES
    from cyclebench.instructions.throughput import measure_throughput
    form = cat.get("KMOVW (K, M16)")
    # 0.58 = 7/12 sits on the port grid: only the probe sends the copies to more processes
    tp = measure_throughput(Session(measure_fn=_States([0.583] * 4 + [0.50], 0.583)), form)
    assert tp["window"]["limited"] is True and len(tp["by_process"]) == LIMITED_PROCESSES + 1
    assert tp["value"] == pytest.approx(0.50) and tp["copies"] == 16
    text = window.cause(tp)
    assert text.startswith("limited in flight here") and \
        f"{LIMITED_PROCESSES + 1} runner processes read 0.50 to 0.58 a copy" in text
    # uops.info's own copies: k1-k7 (never k0), each load two bytes past the last
    theirs = tp["window"]["uops_info"]
    assert theirs["copies"] == 7 and theirs["value"] == pytest.approx(0.583)
    lines = theirs["code"].splitlines()
    assert [line.split(",")[0] for line in lines] == [f"kmovw k{i}" for i in range(1, 8)]
    assert lines[0].endswith("[r14+0x40]") and lines[1].endswith("[r14+0x42]") and lines[6].endswith("[r14+0x4c]")
    assert "uops.info's own copies (7, k0 unused, each load one operand width further on) read 0.58 here" in text
    # the copies write a mask register: the cause names the mask registers free for renaming
    assert tp["window"]["writes_mask"] is True and "mask registers the core has free for renaming" in text
    # one state in every process: the figure stands, and the cause still says how many were run
    tp = measure_throughput(Session(measure_fn=_States([], 0.583)), form)
    assert tp["value"] == pytest.approx(0.583) and "7 runner processes all read 0.58 a copy" in window.cause(tp)



def test_the_probe_reads_the_full_count_where_a_fewer_count_is_kept(cat):
    from cyclebench.instructions.fastest import LIMITED_PROCESSES
    from cyclebench.instructions.throughput import FEW_COPIES, measure_throughput
    form = cat.get("KMOVW (K, M16)")
    # 4 copies 0.553, 16 copies 0.583 in every process: the 4 are kept, the probe still runs (on
    # the 16), finds them limited and sends the 16 to more processes
    fake = _States([0.583] * 20, 0.553)
    tp = measure_throughput(Session(measure_fn=fake), form)
    assert tp["value"] == pytest.approx(0.553) and tp["copies"] == FEW_COPIES
    assert len(tp["code"].splitlines()) == FEW_COPIES
    assert tp["window"]["limited"] is True and len(tp["by_process"]) == LIMITED_PROCESSES + 1
    probed = next(c for c in fake.calls if "imul" in c and "kmovw" in c)
    assert len({line for line in probed.splitlines() if "kmovw" in line}) > FEW_COPIES     # k0-k7, not k1-k4
    assert window.cause(tp).startswith("limited in flight here")

def test_copies_also_run_without_breakers_and_the_faster_is_kept(cat):
    from cyclebench.instructions.throughput import measure_throughput

    def xchg(code, init=None, **kw):      # the renamer swaps xchg's registers: bare copies 0.33
        n = code.count("xchg ")
        return Fake({}, default=n * (0.5 if "xor eax" in code else 0.333))(code, init, **kw)
    tp = measure_throughput(Session(measure_fn=xchg), cat.get("XCHG (R32, EAX)"))
    assert tp["value"] == pytest.approx(0.333) and tp["breakers"] == [] and "xor" not in tp["code"]
    assert tp["bound"] == "upper" and tp["without_breakers"]["with"] == pytest.approx(0.5)
    assert "no dependency breakers: the copies ran faster without them (0.50 with)" in tp["note"]
    # a divide's breakers set its dividend: never dropped
    div = measure_throughput(Session(measure_fn=Fake({}, default=10.0)), cat.get("DIV (R32)"))
    assert "without_breakers" not in div and any(b.startswith("mov ") for b in div["breakers"])
