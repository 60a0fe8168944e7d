"""Floors from one resource two forms' pair readings show they share (ports/shared.py), on a
fabricated model and readings: a fit at any ratio, a blocker's side counting its class, and the
pairs that give no floor."""
from __future__ import annotations

import pytest

from cyclebench.instructions.ports.model import Model
from cyclebench.instructions.ports.predict import predict
from cyclebench.instructions.ports.shared import SharedFloors

CMP, TEST, XFER, SHL = "CMP_39 (R32, R32)", "TEST (R32, R32)", "UCOMISS (XMM, XMM)", "SHL (R64, I8)"
XFER2, LOADOP = "UCOMISD (XMM, XMM)", "CMP (R64, M64)"


def _model():
    # R0: four ALUs, of which the transfer takes two cycles' worth in the model; R1: its own unit
    return Model(["R0", "R1"], {CMP: {"R0": 0.25}, TEST: {"R0": 0.25}, XFER: {"R0": 0.5, "R1": 1.0},
                                SHL: {"R0": 0.25}},
                 6, alone={CMP: 0.25, TEST: 0.25, XFER: 1.0, SHL: 0.25})


# beside 4 and 8 of the ALU blocker the transfer reads as a whole cycle of the four ALUs
READ = [({XFER: 1, CMP: 4}, 2.0), ({XFER: 1, CMP: 8}, 3.0)]


def test_a_pairs_shared_resource_is_a_floor_at_every_ratio_and_a_blocker_counts_its_class():
    shared = SharedFloors.build(_model(), READ, {TEST: CMP})
    assert shared.pairs[(CMP, XFER)] == (pytest.approx(0.25), pytest.approx(1.0))
    assert shared.floor({XFER: 1, CMP: 4}) == (pytest.approx(2.0), f"shared by {CMP} + {XFER} (their readings)")
    assert shared.floor({XFER: 1, TEST: 1})[0] == pytest.approx(1.25)     # a ratio never read
    assert shared.floor({XFER: 2, TEST: 2, CMP: 2})[0] == pytest.approx(3.0)
    assert shared.floor({TEST: 4}) == (0.0, None)                         # one side only
    assert shared.floor({XFER: 1, SHL: 4}) == (0.0, None)                 # not of the class


def test_the_forms_that_share_what_a_blocker_probes_add_up_on_it():
    m = _model()
    m.usage.update({XFER2: {"R0": 0.5, "R1": 1.0}, LOADOP: {"R0": 0.0}})
    m.alone.update({XFER2: 1.0, LOADOP: 1 / 3})
    read = READ + [({XFER2: 1, CMP: 4}, 2.0), ({XFER2: 1, CMP: 8}, 3.0),
                   ({LOADOP: 1, CMP: 1}, 0.5), ({LOADOP: 1, CMP: 2}, 0.75)]
    shared = SharedFloors.build(m, read, {TEST: CMP})
    assert set(shared.probed[CMP]) == {CMP, XFER, XFER2, LOADOP}
    # a transfer of each kind, a load-op compare and a test: 1 + 1 + 0.25 + 0.25 on the ALUs
    cycles, why = shared.floor({XFER: 1, XFER2: 1, LOADOP: 1, TEST: 1})
    assert cycles == pytest.approx(2.5) and why.startswith(f"the resource {CMP} probes, shared by 3 forms")
    assert shared.floor({XFER: 1, LOADOP: 1})[0] == pytest.approx(1.25)   # none of the blocker's class
    assert shared.floor({XFER: 1, SHL: 1}) == (0.0, None)                 # one form on it


def test_a_form_of_the_blockers_class_fitted_beside_it_counts_once():
    m = _model()
    member = "VORPS_Z (YMM, K, YMM, M32_1to8)"        # of the blocker's class, and fitted beside it
    m.usage[member], m.alone[member] = {"R1": 0.5}, 0.5
    shared = SharedFloors.build(m, [({member: 1, CMP: 2}, 1.0), ({member: 1, CMP: 4}, 1.5)],
                                {TEST: CMP, member: CMP})
    assert shared.pairs[(CMP, member)] == (pytest.approx(0.25), pytest.approx(0.5))
    assert shared.probed[CMP][member] == pytest.approx(0.5)
    assert shared.floor({member: 1}) == (0.0, None)       # one instance: no mix, no floor
    assert shared.floor({member: 1, TEST: 2})[0] == pytest.approx(1.0)   # 0.5 + 2 x 0.25


def test_pairs_that_give_no_floor():
    m = _model()
    # explained by the model already: nothing to add
    assert SharedFloors.build(m, [({XFER: 1, CMP: 4}, 1.5), ({XFER: 1, CMP: 8}, 2.5)], {}).pairs == {}
    # one ratio read: no fit
    assert SharedFloors.build(m, READ[:1], {}).pairs == {}
    # readings no one resource explains (the second is slower than the first's fit allows)
    assert SharedFloors.build(m, [({XFER: 1, CMP: 4}, 2.0), ({XFER: 1, CMP: 8}, 4.5)], {}).pairs == {}
    # a fit that asks more of a form than its time alone: no shared resource
    assert SharedFloors.build(m, [({XFER: 1, CMP: 2}, 2.5), ({XFER: 1, CMP: 4}, 3.0)], {}).pairs == {}


def test_predict_takes_the_shared_floor_among_its_bounds():
    shared = SharedFloors.build(_model(), READ, {TEST: CMP})
    block = "ucomiss xmm1, xmm2; test ecx, edx"
    assert predict(block, _model()).resource_bound == pytest.approx(1.0)
    p = predict(block, _model(), floors=shared)
    assert p.forms == [XFER, TEST]
    assert (p.resource_bound, p.binding_resource) == (pytest.approx(1.25), f"shared by {CMP} + {XFER} (their readings)")


def test_load_gives_the_floors_of_a_results_file_and_its_upper_state_factor(tmp_path):
    from cyclebench.instructions.ports.predict import load
    from cyclebench.instructions.ports.run import store
    from cyclebench.instructions.ports.upper import RECORD
    path = tmp_path / "m.jsonl"
    st = store(path)
    st.start({"forms": []}, resume=False)
    for counts, t in READ:
        st.append({"type": "reading", "counts": counts, "cycles": t})
    st.append({"type": "model", "model": _model().to_json(), "report": {"classes": {TEST: CMP}}})
    st.close()
    loaded = load(path)
    assert (loaded.upper_factor, loaded.upper_probed) == (None, False)
    assert loaded.bounds == (loaded.floors, loaded.shared) and (CMP, XFER) in loaded.shared.pairs
    assert predict("ucomiss xmm1, xmm2; test ecx, edx", loaded.model, floors=loaded.bounds).resource_bound \
        == pytest.approx(1.25)
    st = store(path)
    st.start({"forms": []}, resume=True)
    st.append({"type": RECORD, "factor": 2.0, "clean": 4.0, "dirty": 8.0})
    st.close()
    loaded = load(path)
    assert (loaded.upper_factor, loaded.upper_probed) == (2.0, True)


def test_a_class_member_that_shares_no_resource_with_the_other_form_is_not_counted():
    m = _model()
    plain = "MOV (R64, M64)"          # of the blocker's class, but on a resource the transfer never uses
    m.usage[plain], m.alone[plain] = {"R2": 1 / 3}, 1 / 3
    m.resources.append("R2")
    m.probes = {"R0": CMP}
    shared = SharedFloors.build(m, READ, {TEST: CMP, plain: CMP})
    assert shared.floor({XFER: 1, TEST: 1, plain: 3})[0] == pytest.approx(1.25)   # the test only


def test_a_form_the_readings_give_a_whole_resource_is_charged_it_by_the_floor_only():
    m = _model()
    m.probes = {"R0": CMP}
    shared = SharedFloors.build(m, READ, {TEST: CMP})
    assert shared.whole_group(m, {"R0": 4}) == {XFER: "R0"}       # 1.0 of R0 read, 0.5 fitted
    assert shared.whole_group(m, {"R0": 1}) == {}                   # one unit: nothing to hold whole
    held = shared.charged_whole(m, {"R0": 4})
    assert "R0" not in held.usage[XFER] and m.usage[XFER]["R0"] == 0.5    # a copy; the model kept
    # beside forms of the blocker's class the floor charges the whole cycle; beside others, nothing
    block = "ucomiss xmm1, xmm2" + "; shl rbx, 2" * 4
    assert predict(block, m, floors=shared).resource_bound == pytest.approx(1.5)
    assert predict(block, held, floors=shared).resource_bound == pytest.approx(1.0)
    assert predict("ucomiss xmm1, xmm2" + "; test ecx, edx" * 4, held, floors=shared).resource_bound \
        == pytest.approx(2.0)


def test_a_form_the_readings_give_one_unit_keeps_its_share():
    m = _model()
    m.probes = {"R0": CMP}
    # beside 4 and 8 of the blocker, a quarter cycle more: one ALU-cycle, not all four
    shared = SharedFloors.build(m, [({XFER: 1, CMP: 4}, 1.25), ({XFER: 1, CMP: 8}, 2.25)], {TEST: CMP})
    assert shared.whole_group(m, {"R0": 4}) == {}
    assert shared.charged_whole(m, {"R0": 4}) is m


def test_what_a_form_moves_to_the_integer_side_is_read_from_its_operands():
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.shared import integer_side
    c = Catalogue.load()
    side = {n: integer_side(c.get(n)) for n in (
        "UCOMISS (XMM, XMM)", "PTEST (XMM, XMM)", "MOVMSKPS (R32, XMM)", "CVTTSD2SI (R32, M64)",
        "PEXTRD (R32, XMM, I8)", "PEXTRD (M32, XMM, I8)", "CVTSI2SD (XMM, R64)", "ADDSS (XMM, XMM)",
        "ADD_01 (R64, R64)", "MOV (R64, M64)")}
    assert side["UCOMISS (XMM, XMM)"] == side["PTEST (XMM, XMM)"] == {"flags"}
    assert side["MOVMSKPS (R32, XMM)"] == side["PEXTRD (R32, XMM, I8)"] == {"gpr"}
    assert side["CVTTSD2SI (R32, M64)"] == {"gpr"}       # memory in a vector register's place
    for n in ("PEXTRD (M32, XMM, I8)", "CVTSI2SD (XMM, R64)", "ADDSS (XMM, XMM)", "ADD_01 (R64, R64)",
              "MOV (R64, M64)"):
        assert side[n] is None, n


def test_a_class_member_that_loses_no_whole_cycle_to_a_like_transfer_is_not_counted_beside_it():
    m = _model()
    lea = "LEA_B_D8 (R64)"            # of the blocker's class, writes no flags
    m.usage.update({XFER2: {"R0": 0.5, "R1": 1.0}, lea: {"R0": 0.25}})
    m.alone.update({XFER2: 1.0, lea: 0.25})
    sides = {XFER: frozenset({"flags"}), XFER2: frozenset({"flags"})}
    # beside the other compare, four of it read 1.58 (no whole cycle lost), four of the test 2.00
    read = READ + [({lea: 4, XFER2: 1}, 1.58), ({lea: 8, XFER2: 1}, 2.0), ({TEST: 4, XFER2: 1}, 2.0)]
    shared = SharedFloors.build(m, read, {TEST: CMP, lea: CMP}, sides)
    assert shared.apart[frozenset({"flags"})] == {lea}
    assert shared.floor({XFER: 1, lea: 8}) == (0.0, None)
    assert shared.floor({XFER: 1, lea: 4, TEST: 4})[0] == pytest.approx(2.0)     # the tests only
    # without what the forms write, every member counts as before
    assert SharedFloors.build(m, read, {TEST: CMP, lea: CMP}).floor({XFER: 1, lea: 4, TEST: 4})[0] \
        == pytest.approx(3.0)


def test_a_mix_no_longer_than_its_slower_part_bounds_the_fit_and_fixes_no_point_of_it():
    m = _model()
    mul = "IMUL (R64, R64)"
    m.usage[mul], m.alone[mul] = {"R1": 1.0}, 1.0
    # beside 2 of the ALU blocker the multiply runs as alone; 4 and 8 add a rising cost
    read = [({mul: 1, CMP: 2}, 1.0), ({mul: 1, CMP: 4}, 1.5), ({mul: 1, CMP: 8}, 2.25)]
    shared = SharedFloors.build(m, read, {TEST: CMP})
    # the two rising readings fit 0.75 + 0.1875 a CMP, which the overlapped mix (1.125) refutes
    assert (CMP, mul) not in shared.pairs
    assert shared.floor({mul: 1, CMP: 3}) == (0.0, None)
    # without the overlapped mix nothing refutes the fit
    assert SharedFloors.build(m, read[1:], {TEST: CMP}).pairs[(CMP, mul)] == (
        pytest.approx(0.1875), pytest.approx(0.75))


def test_a_register_form_shares_nothing_on_the_load_path_with_a_load_op_form():
    # Zen 4: ``shr r, cl`` beside two and three ``cmp [m], r32`` (the load probe) reads 1.00 and
    # 1.33 cycles, the shift at 0.33 of the probe's resource; a shift issues no load, so plain
    # loads of the probe's class, which use only the load units, are not counted beside it
    shr, probe, load = "SHR (R64, CL)", "CMP (M32, R32)", "MOV (R64, M64)"
    m = Model(["R0", "R1"], {shr: {"R0": 0.5, "R1": 0.1}, probe: {"R0": 0.1, "R1": 1 / 3}, load: {"R1": 1 / 3}},
              6, alone={shr: 0.5, probe: 1 / 3, load: 1 / 3}, probes={"R0": SHL, "R1": probe})
    read = [({shr: 1, probe: 2}, 1.0), ({shr: 1, probe: 3}, 4 / 3)]
    before = SharedFloors.build(m, read, {load: probe})
    assert before.floor({shr: 1, load: 4})[0] == pytest.approx(5 / 3, rel=0.02)
    after = SharedFloors.build(m, read, {load: probe}, loadless=({"R1"}, {shr}))
    assert after.floor({shr: 1, load: 4}) == (0.0, None)
    assert after.floor({shr: 1, probe: 2})[0] == pytest.approx(1.0, rel=0.02)    # the probe itself still counts


def test_a_transfer_takes_a_resource_whole_by_its_class_where_the_probe_writes_other_things():
    lea = "LEA_B_IS (R64)"            # the draw's probe of the four ALUs: writes no flags
    m = Model(["R0", "R1"], {lea: {"R0": 0.25}, TEST: {"R0": 0.25}, XFER: {"R1": 1.0}, XFER2: {"R1": 1.0}},
              6, alone={lea: 0.25, TEST: 0.25, XFER: 1.0, XFER2: 1.0})
    m.probes = {"R0": lea, "R1": XFER}
    sides = {XFER: frozenset({"flags"}), XFER2: frozenset({"flags"})}
    classes = {TEST: lea, XFER2: XFER}
    # the probe loses no whole cycle to the compare; its class's test, filling the compare's time, does
    read = [({XFER: 1, lea: 4}, 1.58), ({XFER: 1, lea: 8}, 2.0), ({XFER: 1, TEST: 2}, 1.61),
            ({XFER: 1, TEST: 4}, 2.0)]
    shared = SharedFloors.build(m, read, classes, sides)
    assert shared.probed[lea] == {lea: 0.25, XFER: 1.0, XFER2: 1.0}     # the compare's class too
    assert shared.whole_group(m, {"R0": 4}) == {XFER: "R0", XFER2: "R0"}
    assert shared.floor({XFER2: 1, TEST: 1})[0] == pytest.approx(1.25)
    assert shared.floor({XFER2: 1, lea: 4}) == (0.0, None)               # the probe is spared
    # read whole beside a second resource's class as well: held on neither
    shl = "SHR (R64, I8)"
    m.resources.append("R2")
    m.usage[shl], m.alone[shl], m.probes["R2"] = {"R2": 0.5}, 0.5, shl
    both = SharedFloors.build(m, read + [({XFER: 1, shl: 2}, 2.0)], classes, sides)
    assert lea not in both.probed and shl not in both.probed
    # a test that overlapped the compare in part: no whole cycle taken
    part = read[:3] + [({XFER: 1, TEST: 4}, 1.6)]
    assert lea not in SharedFloors.build(m, part, classes, sides).probed


def test_a_transfer_held_whole_beside_several_classes_runs_beside_the_forms_its_readings_spare():
    # Zen 4: ``cvttsd2si r32, [m]`` ran the two times added beside the ALU probe's class and the
    # shifts' (no one hold), while four ``cmp`` beside it, which write only flags, read 1.40, not 2.00
    lea, shl, gpr, add = "LEA_B_IS (R64)", "SHR (R64, I8)", "CVTTSD2SI (R32, M64)", "ADD_01 (R64, R64)"
    m = Model(["R0", "R2", "R3"], {lea: {"R0": 0.25}, CMP: {"R0": 0.25}, add: {"R0": 0.25}, shl: {"R2": 0.5},
                                   gpr: {"R0": 1.0, "R2": 1.0, "R3": 1.0}},
              6, alone={lea: 0.25, CMP: 0.25, add: 0.25, shl: 0.5, gpr: 1.0},
              probes={"R0": lea, "R2": shl, "R3": gpr})
    read = [({gpr: 1, lea: 4}, 2.0), ({gpr: 1, lea: 8}, 3.0), ({gpr: 1, shl: 2}, 2.0), ({gpr: 1, shl: 4}, 3.0),
            ({gpr: 1, add: 4}, 2.0), ({gpr: 1, CMP: 4}, 1.40), ({gpr: 1, CMP: 8}, 2.0)]
    shared = SharedFloors.build(m, read, {add: lea, CMP: lea}, {gpr: frozenset({"gpr"})})
    assert shared.several == {gpr: {"R0", "R2"}} and lea not in shared.probed
    units = {"R0": 4, "R2": 2}
    # beside three ``cmp`` the transfer's cycle of the ALUs is the larger side: the compares' runs beside it
    assert shared.overlapping(m, {gpr: 1, CMP: 3}, units) == {"R0": {CMP}}
    assert shared.overlapping(m, {gpr: 1, CMP: 8}, units) == {"R0": {gpr}}
    assert shared.overlapping(m, {gpr: 1, add: 4}, units) == {}            # ``add`` loses the cycle
    assert shared.overlapping(m, {gpr: 1, shl: 2}, units) == {}
    assert shared.overlapping(m, {gpr: 1, CMP: 3, add: 2}, units) == {"R0": {CMP}}


def test_on_a_transfers_resource_the_vector_and_the_integer_users_run_beside_each_other():
    # Zen 4: ``ucomiss`` beside a vector store (on the transfer path) and four or eight ALU forms
    # (each a share of the cycle the compare takes from them) read 1.99 and 3.00 cycles, the larger
    # part, where the sum of the model's usages said 2.41 and 3.32
    store = "MOVSS (M32, XMM)"
    m = Model(["R0", "R1"], {CMP: {"R0": 0.25, "R1": 0.25}, store: {"R1": 0.5}, XFER: {"R1": 1.0}},
              6, alone={CMP: 0.25, store: 1.0, XFER: 1.0}, probes={"R0": CMP, "R1": XFER})
    shared = SharedFloors.build(m, [], {}, {XFER: frozenset({"flags"})})
    assert shared.overlapping(m, {XFER: 1, store: 1, CMP: 4}, {}) == {"R1": {store}}
    assert shared.overlapping(m, {XFER: 1, store: 1, CMP: 1}, {}) == {"R1": {CMP}}
    assert shared.overlapping(m, {XFER: 1, CMP: 4}, {}) == {}              # one side only
    assert shared.overlapping(m, {store: 1, CMP: 4}, {XFER: 1}) == {"R1": {store}}


def test_predict_leaves_out_the_usages_that_run_beside_others(catalogue):
    store = "MOVSS (M32, XMM)"
    m = Model(["R0", "R1"], {CMP: {"R0": 0.25, "R1": 0.25}, store: {"R1": 0.5}, XFER: {"R1": 1.0}},
              6, alone={CMP: 0.25, store: 1.0, XFER: 1.0}, probes={"R0": CMP, "R1": XFER},
              firm={CMP: {"R1"}})       # the readings show the share below saturation (crowding.shown)
    block = "ucomiss xmm1, xmm2; movss dword ptr [r14+0x40], xmm3; " + "; ".join(
        f"cmp {r}, esi" for r in ("eax", "ebx", "ecx", "edx"))
    plain = predict(block, m, catalogue)
    assert plain.resource_bound == pytest.approx(2.5) and plain.binding_resource == "R1"
    shared = SharedFloors.build(m, [], {}, {XFER: frozenset({"flags"})})
    p = predict(block, m, catalogue, floors=[shared])
    assert p.resource_bound == pytest.approx(2.0) and p.binding_resource == "R1"
