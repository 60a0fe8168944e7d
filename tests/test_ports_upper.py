"""The upper vector state in the predictor (cyclebench/instructions/ports/upper.py): which
instructions find it dirty, which pay for it, and what the two bounds charge.  Facts only: the
factor is given, as upper.probe would measure it."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.ports.mixes import legacy_sse, upper_state_apart
from cyclebench.instructions.ports.dataflow import KEPT, load_time, merged_after
from cyclebench.instructions.ports.predict import chain_bound, decode, predict
from cyclebench.instructions.ports.upper import PROBE, DIRTY_ZMM, dirty, legacy_xmm_write, weights
from ports_fake import model_file

ZMM = "vpxord zmm9, zmm9, zmm10"


def test_the_state_is_dirty_from_a_wide_register_0_to_15_until_vzeroupper():
    block = decode("cvtdq2ps xmm1, xmm9; vpxor ymm9, ymm9, ymm10; cvtdq2ps xmm2, xmm9; vzeroupper; cvtdq2ps xmm3, xmm9")
    # steady state: the first instruction runs after the loop's vzeroupper, the third after the YMM write
    assert dirty(block) == [False, True, True, False, False]
    assert dirty(block, wide=True) == [False] * 5             # only a ZMM register makes it wide
    assert dirty(decode(f"cvtdq2ps xmm1, xmm9; {ZMM}")) == [True, True]       # the loop wraps round
    assert dirty(decode("vpxord zmm19, zmm19, zmm20; cvtdq2ps xmm1, xmm9"), wide=True) == [False, False]
    assert dirty(decode("vpxord ymm19, ymm19, ymm20; cvtdq2ps xmm1, xmm9")) == [False, False]


def test_only_legacy_sse_writes_of_an_xmm_register_pay():
    w = [legacy_xmm_write(i) for i in decode("cvtdq2ps xmm1, xmm9; vcvtdq2ps xmm1, xmm9; comiss xmm1, xmm2; "
                                             "movss dword ptr [r14], xmm1; addss xmm1, dword ptr [r14]")]
    assert w == [True, False, False, False, True]
    # an implicit destination counts: pcmpistrm writes XMM0, pcmpistri only RCX; the mixes agree
    # (a Zen 3 mix of seven pcmpistrm and seven vphsubd ymm ran 2,497 cycles)
    assert [legacy_xmm_write(i) for i in decode("pcmpistrm xmm1, xmm2, 8; pcmpistri xmm1, xmm2, 8")] == [True, False]
    cat = Catalogue.load()
    assert legacy_sse(cat.get("PCMPISTRM (XMM, XMM, I8)")) and not legacy_sse(cat.get("PCMPISTRI (XMM, XMM, I8)"))
    assert upper_state_apart(cat.get("PCMPESTRM (XMM, M128, I8)"), cat.get("VPHSUBD (YMM, YMM, YMM)"))


def test_a_write_computing_from_memory_alone_merges_its_kept_part_after_its_operation():
    # a plain load merges in one cycle; a form that computes from memory takes its operation's
    # time, its latency from memory less a plain load's, on the kept part (Zen 4: vpxord zmm1
    # then pmovsxwq xmm1, [m] 3.06 cycles, movaps xmm1, [m] 2.00)
    load = 4.5
    convert = merged_after((6.5, 6.5, {"mem": 6.5}), load)
    assert convert[2][KEPT] == pytest.approx(2.0)
    assert merged_after((4.5, 4.5, {"mem": 4.5}), load)[2][KEPT] == pytest.approx(1.0)
    assert merged_after((3.0, 3.0, {0: 3.0, "mem": 7.5}), load) == (3.0, 3.0, {0: 3.0, "mem": 7.5})
    assert merged_after(convert, None) == convert and merged_after(2.0, load) == 2.0
    zmm = (1.0, 1.0, {1: 1.0, 2: 1.0})
    assert chain_bound(decode("vpxord zmm1, zmm1, zmm2; pmovsxwq xmm1, dword ptr [r14]"), [zmm, convert]) \
        == pytest.approx(3.0)
    assert chain_bound(decode("vpxord zmm1, zmm1, zmm2; movaps xmm1, xmmword ptr [r14]"),
                       [zmm, merged_after((4.5, 4.5, {"mem": 4.5}), load)]) == pytest.approx(2.0)


def test_the_plain_load_time_is_the_least_of_the_vector_loads_from_memory_alone():
    cat = Catalogue.load()
    lats = {"MOVSS (XMM, M32)": (4.5, 4.5, {"mem": 4.5}), "PMOVSXWQ (XMM, M32)": (6.6, 6.6, {"mem": 6.6}),
            "CVTSS2SD (XMM, M32)": (3.0, 3.0, {0: 3.0, "mem": 2.0}), "MOV (R64, M64)": (4.0, 4.0, {"mem": 1.0})}
    # the convert reads its destination, the GPR load writes no vector register
    assert load_time(lats, cat) == pytest.approx(4.5)
    assert load_time({}, cat) is None


def test_the_factor_weighs_computing_writes_under_a_dirty_zmm_state():
    block = decode(f"{ZMM}; cvtdq2ps xmm1, xmm9; vcvtdq2ps xmm2, xmm9; comiss xmm1, xmm2; "
                   "movss xmm3, dword ptr [r14]; divss xmm4, dword ptr [r14]")
    assert weights(block, 2.0) == [1.0, 2.0, 1.0, 1.0, 1.0, 2.0]     # a plain load is not charged
    assert weights(block, None) == [1.0] * 6
    ymm = decode("vpxor ymm9, ymm9, ymm10; cvtdq2ps xmm1, xmm9")
    assert weights(ymm, 2.0) == [1.0, 1.0]


def test_predict_charges_the_measured_factor_to_the_resources_only():
    usage = {"CVTDQ2PS (XMM, XMM)": {"R0": 0.5}, "VPXORD (ZMM, ZMM, ZMM)": {"R1": 0.5}}
    model = Model(["R0", "R1"], usage, 6, {"CVTDQ2PS (XMM, XMM)": 0.5})
    block = "; ".join(DIRTY_ZMM + PROBE)
    assert predict(block, model).resource_bound == pytest.approx(4.0)          # 8 x 0.5, no factor
    p = predict(block, model, upper_factor=2.0)
    assert p.resource_bound == pytest.approx(8.0) and p.upper_charged == 8
    clean = "; ".join(PROBE)
    assert predict(clean, model, upper_factor=2.0).resource_bound == pytest.approx(4.0)


def test_a_dirty_state_chains_a_computing_write_to_its_destination():
    # cvtdq2ps writes xmm4 without reading it; with bits 128 and up dirty it waits for the old
    # value at its own latency (Zen 4: 3.0 cycles a copy), a move or a load only merges (1 cycle)
    assert chain_bound(decode("vaddps ymm1, ymm2, ymm3; cvtdq2ps xmm4, xmm5"), [4.0, 3.0]) == pytest.approx(3.0)
    assert chain_bound(decode("vaddps xmm1, xmm2, xmm3; cvtdq2ps xmm4, xmm5"), [4.0, 3.0]) == pytest.approx(0.0, abs=1e-9)
    assert chain_bound(decode("vaddps ymm1, ymm2, ymm3; movaps xmm4, xmm5"), [4.0, 0.0]) == pytest.approx(1.0)


def test_vzeroupper_makes_no_chain_through_the_vector_registers():
    # iced has vzeroupper read and write every vector register; it keeps their low parts, so two
    # chains of 3 cycles stay 3 cycles an iteration, not one chain through the vzeroupper
    block = decode("vaddps xmm1, xmm1, xmm2; vaddps xmm3, xmm3, xmm4; vzeroupper")
    assert chain_bound(block, [3.0, 3.0, 1.0]) == pytest.approx(3.0)
    # vzeroall zeroes them: no chain goes round the loop through it
    assert chain_bound(decode("vaddps xmm1, xmm1, xmm2; vzeroall"), [3.0, 1.0]) == pytest.approx(0.0, abs=1e-9)
    assert chain_bound(decode("vaddps xmm1, xmm1, xmm2; vzeroupper"), [3.0, 1.0]) == pytest.approx(3.0)


class _FakeSession:
    """Reads 4.0 cycles for the probe with a clean state and 8.0 after a ZMM write; counts calls."""
    def __init__(self, avx512=True):
        self.avx512, self.calls = avx512, 0

    def measure(self, lines, init, per=1):
        self.calls += 1
        return type("M", (), {"value": 8.0 if init == DIRTY_ZMM else 4.0, "modes": (), "stable": True})()


def _model_file(path):
    return model_file(path, {"CVTDQ2PS (XMM, XMM)": {"R0": 0.5}, "VPXORD (ZMM, ZMM, ZMM)": {"R1": 0.5}})


def test_the_probe_is_kept_in_the_model_file_once_and_read_back(tmp_path):
    from cyclebench.instructions.ports.run import record
    from cyclebench.instructions.ports.upper import stored
    path = _model_file(tmp_path / "m.jsonl")
    assert stored(path)[0] is None and "not measured" in stored(path)[1]      # a file from before the probe
    s = _FakeSession()
    assert record(path, "upper", s)["factor"] == pytest.approx(2.0) and s.calls == 2
    assert record(path, "upper", s)["factor"] == pytest.approx(2.0) and s.calls == 2  # resumed: not measured again
    factor, where = stored(path)
    assert factor == pytest.approx(2.0) and "measured" in where
    bare = _model_file(tmp_path / "bare.jsonl")
    assert record(bare, "upper", _FakeSession(avx512=False))["factor"] is None
    assert stored(bare)[0] is None and "AVX-512" in stored(bare)[1]


def test_predict_charges_the_stored_factor_by_default(tmp_path, capsys):
    import json
    from cyclebench.cli.main import main
    from cyclebench.instructions.ports.run import record
    path = _model_file(tmp_path / "m.jsonl")
    block = "; ".join(DIRTY_ZMM + PROBE)
    assert main(["predict", "--model", str(path), "--json", block]) == 0
    assert json.loads(capsys.readouterr().out)["resource_bound"] == pytest.approx(4.0)   # no figure: nothing
    record(path, "upper", _FakeSession())
    assert main(["predict", "--model", str(path), "--json", block]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["resource_bound"] == pytest.approx(8.0) and doc["upper_factor"] == pytest.approx(2.0)
    assert main(["predict", "--model", str(path), "--upper-factor", "1", "--json", block]) == 0
    assert json.loads(capsys.readouterr().out)["resource_bound"] == pytest.approx(4.0)   # given wins


def test_the_factor_doubles_a_forms_own_pipes_not_every_usage():
    # CVTDQ2PS is bound alone by R0 (0.5 = its time alone); the 0.2 of R1 the inference spread it
    # over is not its pipe: under a dirty ZMM state only R0 and its floor grow
    usage = {"CVTDQ2PS (XMM, XMM)": {"R0": 0.5, "R1": 0.2}, "VPXORD (ZMM, ZMM, ZMM)": {"R2": 0.5}}
    model = Model(["R0", "R1", "R2"], usage, 6, {"CVTDQ2PS (XMM, XMM)": 0.5})
    from cyclebench.instructions.ports.upper import loads
    got = loads(model, {"CVTDQ2PS (XMM, XMM)": 8}, {"CVTDQ2PS (XMM, XMM)": 16.0})
    assert got["R0"] == pytest.approx(8.0) and got["R1"] == pytest.approx(1.6)
    assert got["CVTDQ2PS (XMM, XMM) alone"] == pytest.approx(8.0)
    assert got["front end"] == pytest.approx(8 / 6)             # the extra pass takes no slot
    same = {"CVTDQ2PS (XMM, XMM)": 8}
    assert loads(model, same, {"CVTDQ2PS (XMM, XMM)": 8.0}) == model.loads(same)     # no extra: as before


def test_cyclebench_ports_keeps_the_probe_and_show_prints_it(tmp_path, capsys, monkeypatch):
    from cyclebench.cli.main import main
    from cyclebench.instructions import session as session_mod
    from cyclebench.instructions.ports import run as ports_run
    path = tmp_path / "m.jsonl"

    def infer(forms, results, **kw):        # the readings and the model, as a finished run leaves them
        _model_file(results)
        return ports_run.load(results)
    monkeypatch.setattr(ports_run, "infer", infer)
    monkeypatch.setattr(ports_run, "sample", lambda *a, **k: ["CVTDQ2PS (XMM, XMM)"])
    monkeypatch.setattr(session_mod, "Session", lambda **kw: _FakeSession())
    assert main(["ports", "CVTDQ2PS (XMM, XMM)", "--results", str(path)]) == 0
    assert "2.00 times (measured by cyclebench ports" in capsys.readouterr().out
    assert main(["ports", "--show", str(path)]) == 0
    assert "2.00 times" in capsys.readouterr().out


def test_a_form_slower_alone_than_its_pipes_keeps_its_floor():
    # MPSADBW runs 3 cycles alone on pipes that take 2 of them: its extra pass has room under the
    # floor, which stays 3 (the pipes below its floor are not doubled either)
    usage = {"MPSADBW (XMM, M128, I8)": {"R0": 2.0, "R1": 1.2}}
    model = Model(["R0", "R1"], usage, 6, {"MPSADBW (XMM, M128, I8)": 3.0})
    from cyclebench.instructions.ports.upper import loads
    got = loads(model, {"MPSADBW (XMM, M128, I8)": 2}, {"MPSADBW (XMM, M128, I8)": 4.0})
    assert got["MPSADBW (XMM, M128, I8) alone"] == pytest.approx(6.0)
    assert got["R0"] == pytest.approx(4.0) and got["R1"] == pytest.approx(2.4)


def test_the_extra_pass_does_not_load_again():
    # Zen 4, cyclebench asm after a ZMM write: 4 xorps xmm, [m128] and 4 vxorps xmm, xmm, [m128]
    # run 4.00 cycles as with a clean state (8 loads, two a cycle): the load path (``once``) is
    # charged once, and a floor only that path reaches is not doubled either
    usage = {"XORPS (XMM, M128)": {"R0": 0.5, "R1": 0.25}}
    model = Model(["R0", "R1"], usage, 6, {"XORPS (XMM, M128)": 0.5})
    from cyclebench.instructions.ports.upper import loads
    got = loads(model, {"XORPS (XMM, M128)": 4}, {"XORPS (XMM, M128)": 8.0}, once={"R0"})
    assert got["R0"] == pytest.approx(2.0) and got["XORPS (XMM, M128) alone"] == pytest.approx(2.0)
    assert loads(model, {"XORPS (XMM, M128)": 4}, {"XORPS (XMM, M128)": 8.0})["R0"] == pytest.approx(4.0)


def test_the_extra_pass_takes_the_forms_own_pipe_not_the_group_that_holds_it():
    # ADDPD binds a pair (R0, two units) and the four-unit group R1 that holds it alike; under a
    # dirty ZMM state only the pair is taken twice (Zen 4: addpd xmm1 beside vpxord zmm1 1.00
    # cycles, two addpd 2.00), so four VEX writes on the group add their own share only
    usage = {"ADDPD (XMM, XMM)": {"R0": 0.5, "R1": 0.5}, "VANDPS (XMM, XMM, XMM)": {"R1": 0.25}}
    model = Model(["R0", "R1"], usage, 6, {"ADDPD (XMM, XMM)": 0.5, "VANDPS (XMM, XMM, XMM)": 0.25})
    from cyclebench.instructions.ports.upper import loads
    got = loads(model, {"ADDPD (XMM, XMM)": 4}, {"ADDPD (XMM, XMM)": 8.0}, pipes={"R0": 2, "R1": 4})
    assert got["R0"] == pytest.approx(4.0) and got["R1"] == pytest.approx(2.0)
    block = "; ".join([ZMM] + [f"addpd xmm{n}, xmm2" for n in (1, 3, 4, 5)] + ["vandps xmm6, xmm7, xmm8"] * 4)
    p = predict(block, model, upper_factor=2.0)
    assert p.resource_bound == pytest.approx(4.0) and p.binding_resource == "R0"
    # a resource no vector form holds whole (a one-unit transfer) is no pipe: all that bind are taken twice
    assert loads(model, {"ADDPD (XMM, XMM)": 4}, {"ADDPD (XMM, XMM)": 8.0}, pipes={"R2": 1})["R1"] == pytest.approx(4.0)


def test_the_extra_pass_takes_one_unit_cycle_of_a_pipe_held_longer():
    # CVTSI2SS (XMM, R64) holds the FP23 pair (R0, two units) 1.08 cycles in the model, for its
    # transfer: under a dirty ZMM state its one FP23 µop passes again, half a cycle more, and its
    # floor rises in step (Zen 4, cyclebench asm: 8 of them 12.20 -> 15.63 cycles)
    usage = {"CVTSI2SS (XMM, R64)": {"R0": 1.08, "R1": 0.25}}
    model = Model(["R0", "R1"], usage, 6, {"CVTSI2SS (XMM, R64)": 1.08})
    from cyclebench.instructions.ports.upper import loads
    got = loads(model, {"CVTSI2SS (XMM, R64)": 2}, {"CVTSI2SS (XMM, R64)": 4.0}, pipes={"R0": 2})
    assert got["R0"] == pytest.approx(2 * 1.58) and got["CVTSI2SS (XMM, R64) alone"] == pytest.approx(2 * 1.58)
    assert got["R1"] == pytest.approx(0.5)                       # not its pipe: once
    # a factor that is no whole pass takes that share of the unit-cycle
    half = loads(model, {"CVTSI2SS (XMM, R64)": 2}, {"CVTSI2SS (XMM, R64)": 3.0}, pipes={"R0": 2})
    assert half["R0"] == pytest.approx(2 * 1.33)
    # a one-unit resource (a slow unit, no pipe) is held the whole time again
    assert loads(model, {"CVTSI2SS (XMM, R64)": 2}, {"CVTSI2SS (XMM, R64)": 4.0})["R0"] == pytest.approx(4 * 1.08)
