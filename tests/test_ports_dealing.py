"""Vector µops dealt to a pipe pair in turn (ports/dealing.py, ports/simulate.py) on a fabricated
model: which resources are dealt, how many µops each instruction is dealt, and that a chain's step
dealt the pipe of an older consumer of its last step waits for it."""
from __future__ import annotations

import pytest

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.ports import dealing
from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import _whole, decode, form_of
from cyclebench.instructions.ports.simulate import Units, simulate, units
from cyclebench.instructions.ports import run as ports_run

WIDE = 1 / 6
# P: a pair of vector pipes (addss holds one of its two units); V: four vector pipes (andps holds
# one); A: four ALUs; L: a load path of two units that only a memory form holds whole
MODEL = Model(["P", "V", "A", "L"],
              {"ADDSS (XMM, XMM)": {"P": 0.5, "V": 0.25}, "UCOMISS (XMM, XMM)": {"P": 0.5, "V": 0.25},
               "ANDPS (XMM, XMM)": {"V": 0.25}, "ADD_01 (R64, R64)": {"A": 0.25},
               "MOVSS (XMM, M32)": {"L": 0.5}},
              6, {"ADDSS (XMM, XMM)": 0.5, "UCOMISS (XMM, XMM)": 0.5, "ANDPS (XMM, XMM)": 0.25,
                  "ADD_01 (R64, R64)": 0.25, "MOVSS (XMM, M32)": 0.5})
CHAIN = "addss xmm1, xmm2; ucomiss xmm1, xmm2"        # the compare reads each step's result


def plan(block):
    ins = decode(block)
    forms = [form_of(i, Catalogue.load(), MODEL) or "?" for i in ins]
    discrete = units(MODEL)
    return ins, dealing.plan(ins, forms, MODEL, discrete, _whole(discrete))


def test_the_pairs_are_the_two_unit_resources_register_only_vector_forms_hold():
    discrete = units(MODEL)
    assert discrete == {"P": 2, "V": 4, "A": 4, "L": 2}
    assert dealing.pipes(MODEL, discrete, _whole(discrete)) == {"P", "V"}
    _, (counts, pairs, longer, sequenced) = plan("addss xmm1, xmm2; ucomiss xmm1, xmm2; andps xmm5, xmm6; "
                                                 "add rax, rbx; movss xmm5, [r14]; movss [r14], xmm5")
    # a compute µop each, the compare one more for its flags, the store one for its data; the
    # integer add and the plain load none
    assert counts == [1, 2, 1, 0, 0, 1] and pairs == {"P"} and not any(longer) and not any(sequenced)


def test_a_step_dealt_the_pipe_of_an_older_consumer_waits_for_it():
    ins, deal = plan(CHAIN)
    usage = [{"P": 0.5}, {"P": 0.5}]
    run = lambda block_ins, use, d: simulate(block_ins, [3, 3][:len(block_ins)] + [1] * (len(block_ins) - 2),
                                             use, [WIDE] * len(block_ins), units(MODEL), deal=d)
    # three µops an iteration: the compare's and the next step's turns fall on one pipe
    assert run(ins, usage, None) == pytest.approx(3.0, rel=0.01)
    assert run(ins, usage, deal) == pytest.approx(4.0, rel=0.01)
    # one more vector µop on other pipes: the step's turn moves to the other pipe
    ins4, deal4 = plan(CHAIN + "; andps xmm5, xmm6")
    assert deal4[0] == [1, 2, 1]
    assert run(ins4, usage + [{"V": 0.25}], deal4) == pytest.approx(3.0, rel=0.01)


def test_a_512_bit_step_takes_its_turn_s_pipe_for_two_cycles():
    # a ZMM step holds the pair two unit-cycles (1.0 of P): it passes the pipe of its turn twice,
    # so it meets the compare on that pipe as a 128-bit step does (Zen 4, ``vcvtpd2qq zmm1{k1},
    # zmm2; ucomiss xmm1, xmm2`` 4.00 cycles, with one more vector µop 3.00; xmm and ymm alike)
    model = Model(["P", "V"], {**MODEL.usage, "VCVTPD2QQ (ZMM, K, ZMM)": {"P": 1.0, "V": 0.5}}, 6,
                  {**MODEL.alone, "VCVTPD2QQ (ZMM, K, ZMM)": 1.0})
    discrete = units(model)
    for extra, want in (("", 4.0), ("; andps xmm5, xmm6", 3.0)):
        ins = decode("vcvtpd2qq zmm1{k1}, zmm2; ucomiss xmm1, xmm2" + extra)
        forms = [form_of(i, Catalogue.load(), model) or "?" for i in ins]
        deal = dealing.plan(ins, forms, model, discrete, _whole(discrete))
        assert deal[0][:2] == [1, 2]
        usage = [{"P": 1.0, "V": 0.5}, {"P": 0.5}, {"V": 0.25}][:len(ins)]
        assert simulate(ins, [3.0, 4.0, 1.0][:len(ins)], usage, [WIDE] * len(ins), discrete,
                        deal=deal) == pytest.approx(want, rel=0.01)


def test_latencies_near_whole_cycles_keep_dealt_steps_in_one_cycle():
    # measured by source, 2.9999 and 3.0002: steps that become ready together drift apart unless
    # a dealt instruction's latency is taken whole
    ins, deal = plan(CHAIN)
    lat = [(3.0002, 3.0002, {0: 2.9999, 1: 3.0002}), 4.0]
    assert simulate(ins, lat, [{"P": 0.5}] * 2, [WIDE] * 2, units(MODEL), deal=deal) == pytest.approx(4.0, rel=0.01)


def test_a_dealt_unit_gives_way_to_the_other_when_its_queue_runs_long():
    pair = Units(2)
    pair.waiting = [[5.0, 6.0, 7.0], [5.0]]
    assert pair.dealt(0.0, 0) == 1 and pair.dealt(0.0, 1) == 1
    pair.waiting = [[5.0, 6.0], [5.0]]
    assert pair.dealt(0.0, 0) == 0


class _Fake:
    """A session that reads the probe's blocks as a core that deals (or not) would."""
    def __init__(self, late: float):
        self.late, self.calls = late, 0

    def measure(self, code, init):
        self.calls += 1
        return type("M", (), {"value": 3.0 + (self.late if len(code) > len(dealing.CHAIN) else 0.0)})()


def test_dealing_is_measured_kept_once_and_absent_means_none(tmp_path, capsys):
    from cyclebench.cli.main import main
    from cyclebench.instructions.ports.predict import load
    from ports_fake import model_file
    assert dealing.deals(3.0, 4.0) and not dealing.deals(3.0, 3.02) and not dealing.deals(3.0, 2.5)
    path = model_file(tmp_path / "m.jsonl", {"ADDSS (XMM, XMM)": {"R0": 0.5}})
    assert load(path).deals is False                              # no record: the fewest-waiting unit
    s = _Fake(1.0)
    rec = ports_run.record(path, "dealing", s)
    assert rec["deals"] is True and rec["times"] == {"chain": 3.0, "chain and one more": 4.0} and s.calls == 2
    assert ports_run.record(path, "dealing", s)["deals"] is True and s.calls == 2          # not measured again
    assert load(path).deals is True
    assert main(["ports", "--show", str(path)]) == 0
    assert "dealt to pipe pairs in turn (measured by cyclebench ports" in capsys.readouterr().out
    other = model_file(tmp_path / "o.jsonl", {"ADDSS (XMM, XMM)": {"R0": 0.5}})
    assert ports_run.record(other, "dealing", _Fake(0.0))["deals"] is False and load(other).deals is False


def test_a_probe_record_without_its_figure_is_refused_with_its_line(tmp_path):
    from cyclebench.errors import ResultFileError
    from cyclebench.instructions.ports.run import PROBES, store
    from ports_fake import model_file
    assert {"inflight", "upper", "upper_loop", "dealing", "store_grain", "load_order", "store_load",
            "flag_order", "mul_loads"} <= set(PROBES)
    path = model_file(tmp_path / "m.jsonl", {"ADDSS (XMM, XMM)": {"R0": 0.5}})
    with open(path, "a") as f:
        f.write('{"type": "dealing", "times": {}}\n')
    with pytest.raises(ResultFileError, match=r"m.jsonl:3 .*a dealing record without its figure"):
        store(path).load()


def test_a_form_holding_its_pair_longer_takes_its_turn_when_its_last_input_arrives():
    # cvtsi2ss xmm1, rbx holds the pair about a cycle of both pipes (1.08 of P), more than one
    # µop: its compute µop is still dealt the pipe of its turn and the rest stays fluid.  Its
    # result leaves 8 cycles after the GPR and 3 after the merged register, so it starts (its
    # transfer) before the merge input arrives: the compute µop takes its pipe when that does.
    # Zen 4: ``cvtsi2ss xmm1, rbx; ucomiss xmm1, xmm2`` 4.00 cycles for its 3-cycle chain
    model = Model(MODEL.resources, {**MODEL.usage, "CVTSI2SS (XMM, R64)": {"P": 1.08, "V": 1.08}}, 6,
                  {**MODEL.alone, "CVTSI2SS (XMM, R64)": 1.08})
    discrete = units(model)
    ins = decode("cvtsi2ss xmm1, rbx; ucomiss xmm1, xmm2")
    forms = [form_of(i, Catalogue.load(), model) or "?" for i in ins]
    deal = dealing.plan(ins, forms, model, discrete, _whole(discrete))
    assert deal[0] == [1, 2] and deal[2] == [{"P"}, set()]
    usage = [{"P": 1.08, "V": 1.08}, {"P": 0.5, "V": 0.25}]
    run = lambda d: simulate(ins, [(8.0, 8.0, {0: 3.0, 1: 8.0}), 4.0], usage, [WIDE] * 2, discrete, deal=d)
    assert run(deal) == pytest.approx(4.0, rel=0.01)
    assert run((*deal[:2], [set(), set()])) == pytest.approx(3.0, rel=0.01)   # all fluid: the compare never meets it


def test_a_sequenced_step_takes_no_pipe_by_turn_but_its_uops_advance_the_turn():
    # a form the sequencer issues (held.py: MPSADBW below, 3 cycles alone on resources it holds 1)
    # is dealt its µop as any other, but its own step takes the unit with the fewest waiting:
    # Zen 4, ``mpsadbw xmm1, [m], 2; ucomiss xmm1, xmm2`` 5.22 cycles for its 5-cycle chain, where
    # its turn would put it behind the compare (6); ``addss; ucomiss`` twice with an mpsadbw on no
    # chain 6.96, as with one more vector µop (8 without)
    from cyclebench.instructions.ports import held
    form = "MPSADBW (XMM, M128, I8)"
    model = Model(MODEL.resources, {**MODEL.usage, form: {"P": 0.5, "V": 1.0}}, 6, {**MODEL.alone, form: 3.0})
    assert held.holds(model).keys() == {form}
    discrete = units(model)

    def run(block, lat, use, sequenced):
        ins = decode(block)
        forms = [form_of(i, Catalogue.load(), model) or "?" for i in ins]
        deal = dealing.plan(ins, forms, model, discrete, _whole(discrete), held.holds(model).keys() if sequenced else ())
        assert deal.sequenced == tuple(sequenced and f == form for f in forms)
        return simulate(ins, lat, use, [WIDE] * len(ins), discrete, deal=deal)

    one = "mpsadbw xmm1, [r14], 2; ucomiss xmm1, xmm2"
    use = [{"P": 0.5}, {"P": 0.5}]
    assert run(one, [5.0, 4.0], use, False) == pytest.approx(6.0, rel=0.01)
    assert run(one, [5.0, 4.0], use, True) == pytest.approx(5.0, rel=0.01)
    # its µop moves the others' turns as one more vector µop does
    lat, use = [3.0, 4.0, 3.0, 4.0, 1.0], [{"P": 0.5}] * 4 + [{"P": 0.5}]
    alone = run(CHAIN + "; " + CHAIN, lat[:4], use[:4], True)
    beside = run(CHAIN + "; " + CHAIN + "; mpsadbw xmm4, [r14], 2", lat, use, True)
    assert alone == pytest.approx(8.0, rel=0.01) and beside < alone - 0.5
    assert beside == pytest.approx(run(CHAIN + "; " + CHAIN + "; addss xmm4, xmm5", lat, use, True), rel=0.01)
