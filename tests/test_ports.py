"""The resource model, its inference and the predictor, on a fabricated CPU whose port mapping is
known (tests/ports_fake.py); the results file's resume path; the CLI's errors."""
from __future__ import annotations

import functools
import json
import random

import iced_x86
import pytest

from cyclebench.cli.main import main
from cyclebench.instructions.ports import infer as infer_mod
from cyclebench.instructions.ports.blocks import ALIAS, basic_blocks, random_blocks, rebase
from cyclebench.instructions.ports.cross import consistent
from cyclebench.instructions.ports.infer import Inference, pair, ratios, units
from cyclebench.instructions.ports.mixes import trusted
from cyclebench.instructions.ports.model import FRONT_END, Mix, Model, solve
from cyclebench.instructions.ports.portsets import (FITS, compare, crossed, fit, memory_probes, port_part, port_set,
                                                     pumping, resource_ports, seen, uops_of, width)
from cyclebench.instructions.ports.predict import chain_bound, decode, predict
from cyclebench.instructions.ports.run import load, store

from ports_fake import UOPS, WIDTH, cycles, mix_cycles, ports_text
from ports_fake import published as published_table


@functools.cache
def inference(seed: int):
    """The fabricated CPU's model and report for one blocker order: several tests read the same
    seeds, and the inference is deterministic (about half a second each)."""
    return Inference(measure=cycles).run(list(UOPS), seed=seed)


@pytest.fixture(scope="module")
def inferred():
    return inference(3)


def test_solver_recovers_a_known_mapping():
    # one port P0 (form a), two ports P0/P1 (form b): a's µop also loads the pair {P0, P1}
    truth = {"a": {"r0": 1.0, "r1": 0.5}, "b": {"r0": 0.0, "r1": 0.5}}
    mixes = [Mix({"a": 1}, 1.0), Mix({"b": 1}, 0.5), Mix({"a": 1, "b": 1}, 1.0), Mix({"a": 1, "b": 2}, 1.5),
             Mix({"a": 2, "b": 1}, 2.0)]
    usage, misfit = solve(mixes, ["r0", "r1"], ["a", "b"], fixed={("a", "r0"): 1.0, ("b", "r1"): 0.5})
    assert misfit < 1e-6
    for f in truth:
        for r in truth[f]:
            assert usage[f][r] == pytest.approx(truth[f][r], abs=1e-6)


def test_inference_explains_every_mix_of_the_fabricated_cpu(inferred):
    model, report = inferred
    assert model.width == WIDTH
    assert report["measurements_per_form"] == 1 + 2 * (len(report["blockers"]) - len(report["slow_units"]))
    rng = random.Random(5)
    errors = []
    for _ in range(300):
        forms = rng.sample(sorted(UOPS), rng.randint(1, 5))
        counts = {f: rng.randint(1, 4) for f in forms}
        errors.append(abs(model.cost(counts)[0] - cycles(counts)) / cycles(counts))
    assert sum(errors) / len(errors) < 0.02
    assert sum(e <= 0.10 for e in errors) >= 0.9 * len(errors)


def test_port_sets_of_the_fabricated_cpu_agree():
    # over several blocker orders (the seed): the mapping is not unique, so a few forms may differ
    published = {f: ports_text(f) for f in UOPS}
    pumps = pumping(published_table())
    agree = []
    for seed in range(6):
        model, report = inference(seed)
        mapped = resource_ports(report["blockers"], published, report["alone"], pumps)
        assert mapped                                   # the blockers' bottlenecks are named
        for r in report["slow_units"]:
            assert r not in mapped                      # the divider is no published port set
        units_ = report["slow_units"]
        agree += [r["agree"] for r in (compare(f, model, mapped, published[f], pumps, units_) for f in UOPS) if r]
    assert len(agree) >= 6 * (len(UOPS) - 2)
    assert sum(agree) >= 0.9 * len(agree)


def test_the_inst_table_reads_the_model_through_the_published_column(inferred):
    """``cyclebench inst --ports FILE --compare``: each form's resources named by the column's port
    sets, the µops they read as beside its ports, and the port-set agreement in the summary."""
    from cyclebench.cli.inst import _with_resources
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.portsets import against
    from cyclebench.reports.tables import instruction_table
    model, report = inferred
    from cyclebench.instructions.catalogue import normalize_name
    records = {normalize_name(n): r for n, r in published_table().items()}      # keyed as read_csv keys them
    cat = Catalogue.load()
    seen = against(model, report, records, cat)
    assert len(seen.comparisons) >= len(UOPS) - 2 and seen.agree >= 0.9 * len(seen.comparisons)
    docs = [{"form": f, "status": "ok"} for f in ("fadd (XMM)", "imul", "a form the model lacks")]
    lines = _with_resources(docs, model, report, records, "fake", cat)
    assert lines == ["port sets inferred from throughput vs fake ports: 2/2 forms agree (100.0%), read through "
                     f"{len(seen.mapped)} resources mapped to published port sets"]
    assert docs[0]["inferred_ports"] == {"read_as": "1*F23", "published": "1*F23", "agree": True}
    assert docs[0]["inferred_resources"].startswith("0.50 F23")
    assert docs[2]["inferred_resources"] is None and "inferred_ports" not in docs[2]
    rows = {r["form"]: r for r in instruction_table(docs).rows}
    assert rows["fadd (XMM)"]["inferred_ports"] == "1*F23 ✓"
    docs[1]["inferred_ports"]["agree"] = False
    assert instruction_table(docs).rows[1]["inferred_ports"] == "1*A1 ✗ (published 1*A1)"
    # without a column the resources keep their blockers' names, and no line is added
    alone = [{"form": "fadd (XMM)", "status": "ok"}]
    assert _with_resources(alone, model, report, None, "", cat) == [] and "inferred_ports" not in alone[0]
    assert "F23" not in alone[0]["inferred_resources"] and "[" in alone[0]["inferred_resources"]


def test_ports_says_how_its_port_sets_stand_to_its_cpus_column(inferred, tmp_path, monkeypatch):
    """``cyclebench ports`` (any mode) adds the agreement with the published column of the CPU the
    file was measured on, measuring nothing; --show lists the forms that differ."""
    import csv
    from cyclebench.cli.ports import _port_sets
    from cyclebench.errors import UsageError
    from cyclebench.instructions import reference
    model, report = inferred
    table = tmp_path / "FAKE.csv"
    with open(table, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["instruction", "family", "latency", "throughput", "uops", "ports"])
        for name, rec in published_table().items():
            w.writerow([name, "fake", "1", f"{rec.throughput_computed.hi:.2f} / {rec.throughput.hi:.2f}",
                        "1", rec.ports_text])
    column = reference.Column("FAKE", False, table, "the fake column")
    monkeypatch.setattr(reference, "own_column", lambda ident=None: column)
    path = _fake_model_file(tmp_path)          # a header naming no CPU: this one's column is asked
    head, *rest = _port_sets(path, model, report, listed=True)
    assert head.startswith("port sets inferred from throughput vs the fake column ports: ")
    assert all(line.startswith("  differs: ") for line in rest)
    assert _port_sets(path, model, report, listed=False) == [head]

    def unknown(ident=None):
        raise UsageError("this CPU is not in the microarchitecture table (Fake)", "name one")
    monkeypatch.setattr(reference, "own_column", unknown)
    assert _port_sets(path, model, report, listed=True) == [
        "port sets: none compared (this CPU is not in the microarchitecture table (Fake))"]


def test_every_interference_class_gets_a_blocker_whatever_the_order():
    # a dozen integer ALU forms and four vector logic forms (all four FP pipes) among the
    # candidates: each distinct class, the widest FP one included, has a blocker, and every
    # blocker maps to a published port set (the divider's unit aside), for every seed
    published = {f: ports_text(f) for f in UOPS}
    pumps = pumping(published_table())
    for seed in range(1, 6):
        model, report = inference(seed)
        mapped = resource_ports(report["blockers"], published, report["alone"], pumps)
        sets = sorted("".join(sorted(q)) for q, _ in mapped.values())
        assert {"A0A1A2A3", "F0F1F2F3", "F0F1", "F2F3", "F1F2", "L0L1"} <= set(sets), (seed, sets)
        assert len(mapped) == len(report["blockers"]) - len(report["slow_units"])
        # the class members use the wide resource as their blocker does, and nothing else
        r = next(r for r, (q, _) in mapped.items() if q == {"F0", "F1", "F2", "F3"})
        for f in ("pand (XMM)", "por (XMM)", "pxor (XMM)", "andps (XMM)"):
            assert model.used(f) == {r: pytest.approx(0.25)}


def test_a_mix_paced_by_its_own_register_chains_is_no_shared_resource():
    # two MMX forms share eight registers: in their mix each form's copies rotate through fewer of
    # them, and each register's chain of the form's latency paces the mix (Zen 3: ``pmullw mm``,
    # FP03, beside ``punpckhwd mm``, FP12, reads one a cycle each, their times alone added up,
    # where beside an XMM shuffle it runs in parallel).  The form's own stream of the mix, measured
    # alone on the same registers, reads that pace: a floor, and no shared resource
    uops = {"pmul": [("F0", "F3")], "punpck": [("F1", "F2")], "pshuf": [("F1", "F2")],
            "padd": [("F0", "F1", "F2", "F3")]}
    mmx = {"pmul", "punpck"}
    alone = {f: mix_cycles(uops, {f: 1}) for f in uops}

    def chained(counts):
        return len(counts) == 2 and set(counts) <= mmx

    def measure(counts):      # each stream runs at half its rate: the mix reads their sum
        return sum(n * alone[f] for f, n in counts.items()) if chained(counts) else mix_cycles(uops, counts)

    def stream(counts, form):
        return 2 * counts[form] * alone[form] if chained(counts) else counts[form] * alone[form]

    def cut(counts):
        return sorted(counts) if chained(counts) else []

    for seed in range(4):
        model, report = Inference(measure=measure, measure_stream=stream, cut=cut).run(list(uops), seed=seed)
        own = {b: r for r, b in report["blockers"].items()}
        assert "pmul" in own and report["classes"].get("punpck") != "pmul", seed
        assert model.usage["punpck"][own["pmul"]] < 0.1 and model.usage["pmul"].get(own.get("punpck", own.get("pshuf")), 0) < 0.1
        assert report["streams"] > 0 and own["pmul"] not in report["probed"]["punpck"]   # no reading there
    # read as before streams were measured (none in the file), the chain reads as a shared pipe
    model, report = Inference(measure=measure).run(list(uops), seed=0)
    own = {b: r for r, b in report["blockers"].items()}
    assert report["classes"].get("punpck") == "pmul" or model.usage["punpck"][own["pmul"]] >= 0.4


def test_a_mix_slower_than_its_parts_one_after_the_other_is_a_penalty_not_a_share(monkeypatch):
    # a GPR-to-vector insert (one F1 µop, and a transfer at one a cycle) beside any vector op runs
    # slower than the two one after the other (Zen 3: two inserts and one 0.5-cycle op, 2.9
    # cycles): no largest resource load comes to that, and chasing it read the insert as holding
    # every pipe.  Such readings are counted and set aside; the others still read the pipes
    uops = {"ins": [("F1",)], "pshuf": [("F1", "F2")], "padd": [("F0", "F1", "F2", "F3")],
            "fadd": [("F2", "F3")]}
    alone = {f: mix_cycles(uops, {f: 1}) for f in uops}
    alone["ins"] = 1.0

    def measure(counts):
        if "ins" in counts and len(counts) == 2:
            return 1.17 * sum(n * alone[f] for f, n in counts.items())
        return alone["ins"] * counts["ins"] if "ins" in counts else mix_cycles(uops, counts)

    def held(model, report):
        own = {b: r for r, b in report["blockers"].items()}
        return max(model.usage["ins"].get(r, 0.0) for b, r in own.items() if b != "ins")

    model, report = Inference(measure=measure).run(list(uops), seed=0)
    assert report["penalties"] > 0 and report["impossible"] == 0
    assert held(model, report) < 0.1
    monkeypatch.setattr(infer_mod, "SUPER", 10.0)        # read as shares, as before the rule
    model, report = Inference(measure=measure).run(list(uops), seed=0)
    assert report["penalties"] == 0 and held(model, report) >= 0.4


def test_a_union_probe_is_split_whichever_member_came_first():
    # forms with a µop on each of two pipe pairs (Zen 1's three-source forms hold a pipe on each
    # side) add up with the forms of either pair, which do not add up with each other; where the
    # blocker and the first member of its class are both such forms, a pair form that joins later
    # is told apart by the other members, so each pair still gets a probe of its own, whatever
    # the order
    uops = {"fma": [("F0", "F1"), ("F2", "F3")], "blendv": [("F0", "F1"), ("F2", "F3")],
            "fmul": [("F0", "F1")], "fmin": [("F0", "F1")], "fadd": [("F2", "F3")], "fsub": [("F2", "F3")]}
    orders = set()
    for seed in range(12):
        inf = Inference(measure=lambda counts: mix_cycles(uops, counts))
        alone = inf.alone(list(uops))
        kept, classes = inf.blockers(alone, seed)
        assert sorted(uops[b] for b in kept) == [[("F0", "F1")], [("F2", "F3")]], (seed, kept)
        shuffled = [f for f in uops if units(alone[f])]
        random.Random(seed).shuffle(shuffled)
        orders.add(tuple(len(uops[f]) for f in shuffled[:2]))
    assert (2, 2) in orders          # some seed drew both union forms first


def test_a_form_whose_own_published_throughput_is_a_multiple_of_its_ports_holds_its_pipe():
    from cyclebench.instructions.published import Published, Value
    from cyclebench.instructions.ports.portsets import holding

    def rec(name, ports, computed, measured, uops=None):
        return Published(name, "fake", throughput=Value(measured, measured),
                         throughput_computed=Value(computed, computed), ports_text=ports,
                         uops=None if uops is None else Value(uops, uops))
    records = {r.name: r for r in (
        rec("VMULW (XMM, XMM, XMM)", "1*FP0", 1.0, 2.0),          # one µop that holds its pipe 2 cycles
        rec("VMULW (XMM, XMM, M128)", "1*FP0", 1.0, 1.0),         # its load form: read through the twin
        rec("VADDW (XMM, XMM, XMM)", "1*FP23", 0.5, 0.5),        # most forms run as their ports say
        rec("VSUBW (XMM, XMM, XMM)", "1*FP23", 0.5, 0.5),
        rec("VANDW (XMM, XMM, XMM)", "1*FP0123", 0.25, 0.25),
        rec("VORW (XMM, XMM, XMM)", "1*FP0123", 0.25, 0.25),
        rec("VMIXW (XMM, XMM, XMM)", "1*FP0+1*FP12", 1.0, 2.0),   # two terms: which one holds is unknown
        rec("VODDW (XMM, XMM, XMM)", "1*FP0", 1.0, 2.5),          # no whole multiple
        rec("VWIDEW (ZMM, ZMM, ZMM)", "1*FP01", 0.5, 1.0),        # its width's pumping, not its own
        rec("VWIDEX (ZMM, ZMM, ZMM)", "1*FP01", 0.5, 1.0),
        # two µops, one on ports the column leaves out (Zen 3's MOVD (MM, R32): a transfer from a
        # general register, 1*FP0123 at 0.25 / 1.00): the other may pace it, not a held pipe
        rec("VMOVW (MM, R32)", "1*FP0123", 0.25, 1.0, uops=2),
        rec("VMULX (MM, MM)", "1*FP0", 1.0, 2.0, uops=1))}
    held = holding({n: records[n] for n in records}, records)
    assert held == {"VMULW (XMM, XMM, XMM)": 2, "VMULW (XMM, XMM, M128)": 2, "VMULX (MM, MM)": 2}
    # counted twice on its set, the form's two cycles of the FP0 probe agree
    model = Model(["R0"], {"VMULW (XMM, XMM, XMM)": {"R0": 2.0}}, 6)
    mapped = {"R0": (frozenset({"FP0"}), 1.0)}
    assert compare("VMULW (XMM, XMM, XMM)", model, mapped, "1*FP0", {"XMM": 1}, held=held)["agree"]
    assert not compare("VMULW (XMM, XMM, XMM)", model, mapped, "1*FP0", {"XMM": 1})["agree"]
    # the column's figures do not say the pipe is what paces it: a form whose mixes read one µop of
    # its set, its other cycle elsewhere (Zen 3's VEXTRACTI128 (XMM, YMM, I8), 1*FP01 at 0.50 / 1.00,
    # half a cycle of the FP01 probe), agrees with its ports as published
    f01, f0123 = frozenset({"FP0", "FP1"}), frozenset({"FP0", "FP1", "FP2", "FP3"})
    two = {"R0": (f01, 2.0), "R1": (f0123, 4.0)}
    once = Model(["R0", "R1"], {"VEXW (XMM, XMM)": {"R0": 0.5, "R1": 0.25}}, 6, alone={"VEXW (XMM, XMM)": 1.0})
    got = compare("VEXW (XMM, XMM)", once, two, "1*FP01", {"XMM": 1}, held={"VEXW (XMM, XMM)": 2})
    assert got["agree"] and got["expected"] == {"FP0FP1": 1, "FP0FP1FP2FP3": 1}
    # a form that holds a unit is paced by it: its own figure counts nothing more
    assert compare("VMULW (XMM, XMM, XMM)", model, mapped, "1*FP0", {"XMM": 1}, units={"R0"},
                   held=held)["expected"] == {"FP0": 1}


def test_pumping_is_read_from_the_published_table():
    # the fabricated 512-bit form runs twice as long as its published ports say; dividers are
    # slower still, but the median over the width's forms is not moved by them
    assert pumping(published_table()) == {"XMM": 1, "ZMM": 2}
    assert width("VADDPS (ZMM, K, ZMM, M512)") == "ZMM" and width("ADD (R64, M64)") is None
    # a vector form's memory operand counts (512 bits read: pumped), a prefetch's line does not
    assert width("VCVTPD2DQ_Z (YMM, K, M512)") == "ZMM" and width("VPADDQ_Z (XMM, K, XMM, M64_1to8)") == "ZMM"
    assert width("VFPCLASSPS (K, M32_1to16, I8)") == "ZMM" and width("VPADDQ (XMM, XMM, M64_1to2)") == "XMM"
    assert width("PREFETCHW (M512)") is None
    model = Model(["R0"], {"vaddz (ZMM)": {"R0": 1.0}}, 6)
    mapped = {"R0": (frozenset({"F2", "F3"}), 2.0)}
    assert compare("vaddz (ZMM)", model, mapped, "1*F23", {"ZMM": 2})["agree"]
    assert not compare("vaddz (ZMM)", model, mapped, "1*F23")["agree"]      # unscaled: 2 µops vs 1


def test_a_slow_unit_no_blocker_probes_is_found_by_pairing(inferred):
    model, report = inferred
    units_ = report["slow_units"]
    assert len(units_) == 1                                    # one divider, shared
    (r,) = units_
    assert report["blockers"][r] in ("fdiv (XMM)", "fsqrt (XMM)")
    assert model.usage["fdiv (XMM)"][r] == pytest.approx(4.0, rel=0.02)
    assert model.usage["fsqrt (XMM)"][r] == pytest.approx(6.0, rel=0.02)
    assert model.usage["div"].get(r, 0.0) == 0.0               # slow, but its pipe is a blocker's
    both = {"fdiv (XMM)": 1, "fsqrt (XMM)": 1}
    assert model.cost(both)[0] == pytest.approx(cycles(both), rel=0.02)     # 10, not the 6 of either
    assert pair("a", 4.0, "b", 6.0) == {"a": 3, "b": 2}


def test_blockers_are_chosen_by_rule_not_by_name(inferred):
    _, report = inferred
    alone = report["alone"]
    for r, b in report["blockers"].items():
        assert units(alone[b]) or r in report["slow_units"]     # 1/k cycles, or a slow unit's probe
    assert "div" not in report["blockers"].values()   # 3 cycles: never a probe
    # forms of one class are never two blockers: fmul and fma-with-load share the F01 bottleneck
    classes = report["classes"]
    assert all(c not in report["blockers"].values() for c in classes)


def test_usages_are_read_as_uops_on_the_mapped_port_sets():
    f01, f23, f123, f0123 = (frozenset(p) for p in (("F0", "F1"), ("F2", "F3"), ("F1", "F2", "F3"),
                                                     ("F0", "F1", "F2", "F3")))
    mapped = {"R0": (f01, 2.0), "R1": (f23, 2.0), "R2": (f123, 3.0), "R3": (f0123, 4.0)}
    # one µop on F23 loads F23, F123 and F0123; a short F123 usage does not change the reading
    assert uops_of({"R1": 0.5, "R2": 0.2, "R3": 0.25}, mapped) == {f23: 1}
    assert uops_of({"R0": 1.0, "R3": 0.5}, mapped) == {f01: 2}
    assert uops_of({"R0": 0.04, "R3": 0.03}, mapped) == {}
    model = Model(["R0", "R1", "R2", "R3"], {"fadd": {"R1": 0.5, "R2": 0.2, "R3": 0.25}}, 6)
    got = compare("fadd", model, mapped, "1*F23")
    assert got["agree"] and got["expected"] == {"F2F3": 1, "F1F2F3": 1, "F0F1F2F3": 1}


def test_a_wide_uop_that_crowds_a_narrower_set_part_of_the_time_is_read_on_the_wide_set():
    # a core's scheduler picks a µop's pipe at dispatch, not as an optimal schedule would: a µop
    # that may go to all four FP pipes crowds the FP123 probe half a µop's worth in a mix (Zen 4,
    # measured), and an FP123 shuffle the FP23 one; a µop held to a set loads it in full
    f01, f12, f23, f123, f0123 = (frozenset(p) for p in (("F0", "F1"), ("F1", "F2"), ("F2", "F3"),
                                                         ("F1", "F2", "F3"), ("F0", "F1", "F2", "F3")))
    mapped = {"R0": (f0123, 4.0), "R1": (f01, 2.0), "R2": (f123, 3.0), "R3": (f12, 2.0), "R4": (f23, 2.0)}
    assert uops_of({"R0": 0.25, "R2": 0.5 / 3}, mapped) == {f0123: 1}           # half a µop on FP123
    assert uops_of({"R0": 0.25, "R2": 1 / 3, "R4": 0.25}, mapped) == {f123: 1}  # half a µop on FP23
    assert uops_of({"R0": 0.25, "R2": 1 / 3}, mapped) == {f123: 1}              # a full one is a µop
    assert uops_of({"R0": 0.25, "R2": 1 / 3, "R3": 0.5}, mapped) == {f12: 1}
    model = Model(list(mapped), {"vpor": {"R0": 0.25, "R2": 0.5 / 3}}, 6)
    assert compare("vpor", model, mapped, "1*F0123")["agree"]
    # a form read as no µop crowds nothing: a lone set read at 0.54 µop is a µop, not crowding
    assert uops_of({"R0": 0.54 / 4}, {"R0": (f0123, 4.0)}) == {f0123: 1}


def test_uops_that_could_not_run_as_fast_as_the_form_alone_are_no_reading_of_it():
    # a four-pipe µop crowds the FP123 probe by most of a µop in a mix: read alone, that is an
    # FP123 µop, but a form that runs 4 a cycle by itself has no µop held to three pipes
    f123, f0123 = frozenset(("F1", "F2", "F3")), frozenset(("F0", "F1", "F2", "F3"))
    mapped = {"R0": (f0123, 4.0), "R2": (f123, 3.0)}
    usage = {"R0": 0.25, "R2": 0.25}
    assert uops_of(usage, mapped) == {f123: 1}
    assert uops_of(usage, mapped, alone=0.25) == {f0123: 1}
    assert uops_of(usage, mapped, alone=1 / 3) == {f123: 1}       # a form at 3 a cycle may have it
    model = Model(list(mapped), {"pcmpgt": usage}, 6, alone={"pcmpgt": 0.25})
    assert compare("pcmpgt", model, mapped, "1*F0123")["agree"]


def test_a_set_that_paces_the_form_alone_holds_a_uop_where_none_would_fit_as_well():
    # Zen 3, a draw whose FP01 probe's use of the four-pipe resource the blocker solve lowered to
    # nought: an FP01 form then reads a full µop on FP01 and none on FP0123, which one FP01 µop
    # (short on the wide set) and no µop (short on the narrow one) fit alike.  The form runs alone
    # at the FP01 resource's rate, so a µop is there
    f01, f0123 = frozenset(("F0", "F1")), frozenset(("F0", "F1", "F2", "F3"))
    mapped = {"R0": (f0123, 4.0), "R1": (f01, 2.0)}
    usage = {"R1": 0.5}
    assert uops_of(usage, mapped) == {}                          # the tie, with no time alone
    assert uops_of(usage, mapped, alone=0.5) == {f01: 1}
    assert uops_of(usage, mapped, alone=1.0) == {}                # a usage of half its time paces nothing
    model = Model(list(mapped), {"paddsb": usage}, 6, alone={"paddsb": 0.5})
    assert compare("paddsb", model, mapped, "1*F01")["agree"]
    # a tie-break only: a fit nearer the usages still wins (a lone four-pipe µop is no FP01 one)
    assert uops_of({"R0": 0.25, "R1": 0.25}, mapped, alone=0.25) == {f0123: 1}


def test_a_pumped_form_is_read_as_uops_that_pass_their_pipe_twice():
    # a 512-bit FMA on Zen 4: two passes through FP01, and crowding of the other pipes in its
    # mixes (measured: about 0.8 µop on FP123 and a full one on FP23); its µops come in pairs
    f01, f12, f23, f123, f0123 = (frozenset(p) for p in (("F0", "F1"), ("F1", "F2"), ("F2", "F3"),
                                                         ("F1", "F2", "F3"), ("F0", "F1", "F2", "F3")))
    mapped = {"R0": (f0123, 4.0), "R1": (f01, 2.0), "R2": (f123, 3.0), "R3": (f12, 2.0), "R4": (f23, 2.0)}
    usage = {"R0": 0.5, "R1": 1.0, "R2": 0.8 / 3, "R3": 0.67 / 2, "R4": 0.5}
    assert uops_of(usage, mapped, passes=2) == {f01: 2}
    assert uops_of(usage, mapped) != {f01: 2}                   # one at a time: the crowding reads as µops
    model = Model(list(mapped), {"vfma_z (ZMM)": usage}, 6)
    got = compare("vfma_z (ZMM)", model, mapped, "1*F01", {"ZMM": 2})
    assert got["agree"] and got["expected"] == {"F0F1": 2, "F0F1F2F3": 2}
    assert uops_of({"R0": 0.5, "R3": 1.0, "R2": 2 / 3, "R1": 0.6}, mapped, passes=2) == {f12: 2}


def test_a_set_the_form_was_never_mixed_with_a_probe_of_is_not_compared():
    # the FP123 probe is a legacy-SSE form, which a 256-bit form is never mixed with: its usage
    # of nought there is no reading, and an F23 µop must not be charged for leaving it empty
    f23, f123, f0123 = (frozenset(p) for p in (("F2", "F3"), ("F1", "F2", "F3"), ("F0", "F1", "F2", "F3")))
    mapped = {"R0": (f0123, 4.0), "R1": (f23, 2.0), "R2": (f123, 3.0)}
    model = Model(list(mapped), {"vsubpd (YMM)": {"R0": 0.25, "R1": 0.5}}, 6)
    assert not compare("vsubpd (YMM)", model, mapped, "1*F23")["agree"]
    got = compare("vsubpd (YMM)", model, mapped, "1*F23", probed=["R0", "R1"])
    assert got["agree"] and got["expected"] == {"F2F3": 1, "F0F1F2F3": 1}


def test_probed_resources_are_read_from_the_good_readings():
    inf = Inference(measure=lambda counts: None)
    inf.load([{"type": "reading", "counts": c, "cycles": t} for c, t in (
        ({"a": 1}, 0.5), ({"b": 1}, 0.25), ({"c": 1}, 0.5), ({"u": 1}, 4.0),
        ({"a": 1, "b": 2}, 1.0),           # a with b's resource: probed
        ({"a": 1, "c": 1}, None),          # failed: no reading
        ({"b": 4, "c": 1}, 0.2))]          # faster than c alone: impossible, set aside
    )
    alone = {"a": 0.5, "b": 0.25, "c": 0.5, "u": 4.0}
    got = inf.probed({"R0": "b", "R1": "c", "R2": "u"}, alone)
    assert got == {"a": ["R0"], "b": ["R0"], "c": ["R1"], "u": ["R2"]}


def test_a_memory_form_is_not_read_through_a_memory_probe():
    # an F12 probe held by its 128-bit load as much as by its pipe: a memory form that adds up
    # with it through the loads reads no F12 µop there
    published = {"pack (XMM, M128)": "1*F12", "perm (XMM, XMM)": "1*F12", "fadd (XMM, XMM)": "1*F23"}
    blockers = {"R0": "pack (XMM, M128)", "R1": "perm (XMM, XMM)", "R2": "fadd (XMM, XMM)"}
    alone = {b: 0.5 for b in blockers.values()}
    mapped = resource_ports(blockers, published, alone)
    assert memory_probes(blockers) == {"R0"}
    model = Model(list(blockers), {"fcvt (XMM, M128)": {"R0": 0.5, "R2": 0.5},
                                   "fcvt (XMM, XMM)": {"R0": 0.5, "R2": 0.5}}, 6)
    assert not compare("fcvt (XMM, M128)", model, mapped, "1*F23")["agree"]
    assert compare("fcvt (XMM, M128)", model, mapped, "1*F23", memory={"R0"})["agree"]
    assert not compare("fcvt (XMM, XMM)", model, mapped, "1*F23", memory={"R0"})["agree"]   # a register form is


def test_a_published_blocker_slower_than_its_ports_maps_to_none_whatever_its_class():
    # a memory form held by its load at 0.5 cycles, its published µop FP0123 (0.25): the load is
    # its bottleneck; an FP23 form at 0.5 in its class shares the load, not the FP23 pipes
    published = {"vblendmpd (XMM, M64)": "1*F0123", "vsubpd (XMM, M128)": "1*F23"}
    alone = {"vblendmpd (XMM, M64)": 0.5, "vsubpd (XMM, M128)": 0.5}
    classes = {"vsubpd (XMM, M128)": "vblendmpd (XMM, M64)"}
    assert resource_ports({"R0": "vblendmpd (XMM, M64)"}, published, alone, classes=classes) == {}


def test_a_probe_that_crowds_a_set_apart_from_its_own_maps_to_none():
    # an insert from a general register, published as one F1 µop at 1 cycle, whose mixes load the
    # F23 probe in full (its data come over a path the column does not count): F1 reads nothing
    f1, f23, f01 = (frozenset(p) for p in (("F1",), ("F2", "F3"), ("F0", "F1")))
    mapped = {"R0": (f01, 2.0), "R1": (f23, 2.0), "R2": (f1, 1.0)}
    probes = {"R0": "fmul", "R1": "fadd", "R2": "pinsr"}
    usage = {"fmul": {"R0": 0.5}, "fadd": {"R1": 0.5}, "pinsr": {"R2": 1.0, "R1": 0.45, "R0": 0.5},
             "fsqrt": {"R0": 0.5, "R2": 1.0}}
    model = Model(["R0", "R1", "R2"], usage, 6, {f: max(u.values()) for f, u in usage.items()}, probes=probes)
    assert crossed(mapped, model) == {"R2"}
    got = compare("fsqrt", model, mapped, "1*F01")
    assert got["agree"] and got["uops"] == {"F0F1": 1}          # not an F1 µop read through the insert
    usage["pinsr"]["R1"] = 0.2                                    # a share of a µop there: a probe of F1
    assert crossed(mapped, model) == set()
    assert not compare("fsqrt", model, mapped, "1*F01")["agree"]
    assert Model.from_json(model.to_json()).probes == probes
    assert Model.from_json({"resources": ["R0"], "usage": {}}).probes == {}     # a file from before probes


def test_a_blocker_the_column_leaves_out_maps_through_its_class():
    published = {"pand": "1*F0123", "fadd": "1*F23"}
    blockers = {"R0": "vpand_evex", "R1": "fadd"}
    alone = {"vpand_evex": 0.25, "pand": 0.25, "fadd": 0.5}
    mapped = resource_ports(blockers, published, alone, classes={"pand": "vpand_evex"})
    assert mapped == {"R0": (frozenset({"F0", "F1", "F2", "F3"}), 4.0), "R1": (frozenset({"F2", "F3"}), 2.0)}
    assert "R0" not in resource_ports(blockers, published, alone)


def test_a_units_form_is_compared_by_its_port_part():
    # a divide crowds the F01 pipes (their write-back, its scheduler entries) by more than one
    # µop's worth while it holds the divider, and the F23 ones too: no few µops explain that, and
    # the set it issues to is read, not a count
    f01, f23, f0123 = (frozenset(p) for p in (("F0", "F1"), ("F2", "F3"), ("F0", "F1", "F2", "F3")))
    mapped = {"R0": (f01, 2.0), "R1": (f23, 2.0), "R3": (f0123, 4.0)}
    usage = {"R0": 1.25, "R1": 0.9, "R3": 0.6, "U": 5.0}
    assert port_part(usage, mapped) == {f01: 1}
    assert port_part({"R0": 0.02, "U": 5.0}, mapped) == {}
    assert fit(usage, mapped)[1] > FITS
    model = Model(["R0", "R1", "R3", "U"], {"fdiv": usage}, 6)
    assert not compare("fdiv", model, mapped, "1*F01")["agree"]         # read as µops
    got = compare("fdiv", model, mapped, "1*F01", units={"U"})
    assert got["agree"] and got["unit"] and got["inferred"] == {"F0F1": 1, "F0F1F2F3": 1}
    assert not compare("fdiv", model, mapped, "1*F23", units={"U"})["agree"]


def test_a_units_form_whose_usages_are_uops_is_compared_by_their_sets():
    # a microcoded form paced at 2 cycles by its sequencer (a unit no blocker probes) whose three
    # µops crowd the probes as µops do: their sets are read, not just the one it crowds most
    f01, f12, f23, f0123 = (frozenset(p) for p in (("F0", "F1"), ("F1", "F2"), ("F2", "F3"), ("F0", "F1", "F2", "F3")))
    mapped = {"R0": (f0123, 4.0), "R1": (f23, 2.0), "R2": (f01, 2.0), "R3": (f12, 2.0)}
    usage = {"R0": 0.75, "R1": 0.4, "R3": 0.33 / 2, "U": 2.0}
    uops, rest = fit(usage, mapped)
    assert uops == {f0123: 2, f23: 1} and rest < FITS
    model = Model(["R0", "R1", "R2", "R3", "U"], {"vphsub": usage}, 6)
    got = compare("vphsub", model, mapped, "1*F0123+1*F123+1*F23", units={"U"})
    assert got["agree"] and got["unit"] and got["inferred"] == {"F0F1F2F3": 3, "F2F3": 1}
    assert port_part(usage, mapped) == {f0123: 1}                   # the port part alone misses F23


def test_a_port_set_probed_twice_reads_the_cleanest_probe_the_form_uses():
    # a 512-bit form and a register form both probe F12: a form is read through the register one,
    # and through the other where it was never mixed with the first (a usage of nought)
    published = {"vperm_z (ZMM, ZMM)": "1*F12", "vpmov (XMM, YMM)": "1*F12", "fadd (XMM)": "1*F23"}
    blockers = {"R0": "vperm_z (ZMM, ZMM)", "R1": "vpmov (XMM, YMM)", "R2": "fadd (XMM)"}
    alone = {"vperm_z (ZMM, ZMM)": 1.0, "vpmov (XMM, YMM)": 0.5, "fadd (XMM)": 0.5}
    mapped = resource_ports(blockers, published, alone, {"ZMM": 2})
    f12 = frozenset({"F1", "F2"})
    assert list(mapped) == ["R1", "R2", "R0"] and mapped["R0"][0] == mapped["R1"][0] == f12
    assert seen({"R0": 1.0, "R1": 0.5}, mapped)[f12] == pytest.approx(1.0)     # R1: one µop
    assert seen({"R0": 1.0, "R1": 0.0}, mapped)[f12] == pytest.approx(2.0)     # R0: two pumped


def _blocker_readings(inf, pairs):
    inf.load([{"type": "reading", "counts": c, "cycles": t} for c, t in pairs])


def _consistent(inf, usage, blockers, resources, alone):
    consistent(usage, [m for m in inf.mixes(blockers, alone) if len(m.counts) == 2], blockers, resources, alone)


def test_a_cross_usage_another_blocker_pair_contradicts_is_lowered():
    # st (a store, own R0) read 1.58 beside 2 fp01 (own R1): the pair solve gave it 0.58 of R1; but
    # st + zmm01 (R1 in full, two pumped µops) took 1.0, which a shared R1 cannot: the partial share
    # is lowered to what that mix leaves, the whole one stands
    inf = Inference(measure=lambda counts: None)
    alone = {"st": 1.0, "fp01": 0.5, "zmm01": 1.0}
    _blocker_readings(inf, [({"st": 1, "zmm01": 1}, 1.0), ({"st": 1, "fp01": 2}, 1.58)])
    usage = {"st": {"R0": 1.0, "R1": 0.58, "R2": 0.0}, "fp01": {"R0": 0.0, "R1": 0.5, "R2": 0.5},
             "zmm01": {"R0": 0.0, "R1": 1.0, "R2": 1.0}}
    _consistent(inf, usage, ["st", "fp01", "zmm01"], ["R0", "R1", "R2"], alone)
    assert usage["st"]["R1"] == pytest.approx(0.0) and usage["zmm01"]["R1"] == 1.0
    assert usage["fp01"]["R2"] == 0.5          # its pair's reading (1.58) is no contradiction of it


def test_of_two_whole_cross_usages_the_one_more_mixes_contradict_is_lowered():
    # a two-µop form (u, FP01 + FP12 at 1 cycle) read as R0 in full; so is a pumped FP12 form (z):
    # their mixes with each other and with a third FP12 form (p) contradict u's, which is lowered
    inf = Inference(measure=lambda counts: None)
    alone = {"u": 1.0, "z": 1.0, "p": 0.5, "q": 0.5}
    _blocker_readings(inf, [({"u": 1, "z": 1}, 1.5), ({"u": 1, "p": 2}, 1.5), ({"u": 2, "p": 1}, 2.2)])
    usage = {"q": {"R0": 0.5, "R1": 0.0, "R2": 0.0, "R3": 0.0},
             "u": {"R0": 1.0, "R1": 1.0, "R2": 0.0, "R3": 0.0},
             "z": {"R0": 1.0, "R1": 0.0, "R2": 1.0, "R3": 0.0},
             "p": {"R0": 0.5, "R1": 0.0, "R2": 0.0, "R3": 0.5}}
    _consistent(inf, usage, ["q", "u", "z", "p"], ["R0", "R1", "R2", "R3"], alone)
    assert usage["z"]["R0"] == 1.0 and usage["p"]["R0"] == 0.5
    assert usage["u"]["R0"] == pytest.approx(0.5)


def test_of_equal_shares_the_claim_on_more_units_is_lowered_whatever_the_names():
    # a transfer (one a cycle) read as all four ALUs for a cycle beside ALU ops, a three-part lea
    # (two a cycle) as two of them; lea beside two transfers took 2.1, which both cannot: the
    # claim on four units is lowered, though the lea's comes first by name and by count they tie
    inf = Inference(measure=lambda counts: None)
    alone = {"alu": 0.25, "b_xfer": 1.0, "a_lea": 0.5}
    _blocker_readings(inf, [({"a_lea": 1, "b_xfer": 2}, 2.1)])
    usage = {"alu": {"R0": 0.25, "R1": 0.0, "R2": 0.0},
             "b_xfer": {"R0": 1.0, "R1": 1.0, "R2": 0.0},
             "a_lea": {"R0": 0.5, "R1": 0.0, "R2": 0.5}}
    _consistent(inf, usage, ["alu", "b_xfer", "a_lea"], ["R0", "R1", "R2"], alone)
    assert usage["a_lea"]["R0"] == 0.5 and usage["b_xfer"]["R0"] == pytest.approx(0.8)


def test_units_and_ratios():
    assert units(0.25) == 4 and units(1.0) == 1 and units(0.34) == 3
    assert units(0.4) is None and units(3.0) is None
    assert ratios("f", 1.0, "b", 0.25) == [{"f": 1, "b": 4}, {"f": 1, "b": 8}]
    assert ratios("f", 0.25, "b", 1.0) == [{"f": 4, "b": 1}, {"f": 2, "b": 1}]
    # a time read a little off the grid draws the ratios its grid time does, either side of a half
    assert ratios("f", 0.2501, "b", 0.1667) == ratios("f", 0.2499, "b", 0.1666) == [{"f": 1, "b": 2}, {"f": 1, "b": 3}]
    assert ratios("f", 1.0757, "b", 0.25) == [{"f": 1, "b": 4}, {"f": 1, "b": 9}]      # off the grid: as read


def test_readings_are_stored_and_a_resumed_run_measures_only_what_is_missing(tmp_path):
    path = tmp_path / "ports.jsonl"
    calls = []

    def counted(counts):
        calls.append(counts)
        return cycles(counts)

    st = store(path)
    st.start({"forms": []}, resume=False)
    first = Inference(measure=counted, record=st.append)
    first.alone(["add", "imul", "fadd (XMM)"])             # cut short after the first step
    st.close()
    assert len(calls) == 3
    st = store(path)
    records = st.start({"forms": []}, resume=True)
    again = Inference(measure=counted, record=st.append)
    again.load(records)
    again.alone(["add", "imul", "fadd (XMM)", "load"])
    st.close()
    assert len(calls) == 4 and calls[-1] == {"load": 1}
    assert again.measured == 1


def test_streams_are_stored_read_back_and_a_paced_mix_is_no_floor_of_a_block(tmp_path):
    from cyclebench.instructions.ports.repair import readings
    path = tmp_path / "ports.jsonl"
    pair, other = {"pmul": 1, "punpck": 1}, {"pmul": 1, "pshuf": 1}
    streams = []

    def stream(counts, form):
        streams.append((dict(counts), form))
        return 1.0 if counts == pair else 0.5
    st = store(path)
    st.start({"forms": []}, resume=False)
    inf = Inference(measure=lambda counts: 1.0 if counts == pair else 0.5, record=st.append,
                    measure_stream=stream, cut=lambda counts: ["pmul"])
    inf.parts = {"pmul": 0.5, "punpck": 0.5, "pshuf": 0.5}
    assert inf.cycles(pair) == 1.0 and inf.cycles(other) == 0.5
    st.close()
    assert streams == [(pair, "pmul")]          # the mix at its slower part's pace drew none
    again = Inference(measure=lambda counts: None)
    again.load(store(path).start({}, resume=True))
    assert again.chained(pair) == {"pmul": 1.0} and again.chained(other) == {}
    # the mix its stream paced is no reading of resources a block shares
    assert [c for c, _ in readings(path)] == [other]


def test_a_readings_stability_is_stored_and_the_unstable_are_counted(tmp_path):
    """A reading the measurement flagged unstable keeps the flag in the file, and the report counts
    such readings (the command line warns with the count); a plain figure stores none."""
    path = tmp_path / "ports.jsonl"
    st = store(path)
    st.start({"forms": []}, resume=False)
    flagged = Inference(measure=lambda counts: (cycles(counts), "imul" not in counts), record=st.append)
    flagged.alone(["add", "imul"])
    st.close()
    records = store(path).start({"forms": []}, resume=True)
    assert {next(iter(r["counts"])): r.get("stable") for r in records if r.get("type") == "reading"} == \
        {"add": True, "imul": False}
    inf = Inference(measure=lambda counts: (cycles(counts), "imul" not in counts))
    _, report = inf.run(list(UOPS), seed=3)
    with_imul = sum(1 for r in inf.readings.values() if "imul" in r["counts"])
    assert with_imul >= 1 and report["unstable"] == with_imul
    _, plain = Inference(measure=cycles).run(list(UOPS), seed=3)
    assert plain["unstable"] == 0


def test_an_unstable_reading_is_set_aside_where_the_pair_read_stable_in_another_ratio():
    """A disturbed run reads slow: once the blockers are chosen, the first mix of ``shuf`` with
    each blocker reads 60% slow and flagged unstable, its other ratio true and stable.  The model
    still prices ``shuf``'s mixes as the true readings do; a pair read unstable in every ratio
    keeps its readings (they are all there is)."""
    seen: set[frozenset] = set()
    phase: list[str] = []

    def disturbed(counts):
        pair = frozenset(counts)
        if any(m.startswith("blockers") for m in phase) and "shuf (XMM)" in pair and len(pair) == 2 \
                and pair not in seen:
            seen.add(pair)
            return cycles(counts) * 1.6, False
        return cycles(counts), True

    model, report = Inference(measure=disturbed, log=phase.append).run(list(UOPS), seed=3)
    assert report["unstable"] >= 5
    rng = random.Random(5)
    errors = []
    for _ in range(300):          # with the slow readings kept: 53% within 10%, mean error 13%
        counts = {f: rng.randint(1, 4) for f in sorted({"shuf (XMM)", *rng.sample(sorted(UOPS), rng.randint(1, 4))})}
        errors.append(abs(model.cost(counts)[0] - cycles(counts)) / cycles(counts))
    assert sum(errors) / len(errors) < 0.02
    assert sum(e <= 0.10 for e in errors) >= 0.9 * len(errors)
    one = {"type": "reading", "counts": {"a": 1, "b": 2}, "cycles": 2.0, "stable": False}
    two = {"type": "reading", "counts": {"a": 1, "b": 4}, "cycles": 2.5, "stable": True}
    alone = {"type": "reading", "counts": {"a": 1, "c": 2}, "cycles": 2.0, "stable": False}
    assert trusted([one, two, alone, {"type": "model"}]) == [two, alone]


def _fabricated_runs(monkeypatch, fake: dict[str, str]) -> list:
    """``cyclebench ports`` measuring the fabricated CPU's kinds (``fake``: form -> kind) in place
    of this one; the list of the mixes it was asked for.  The CPU probes (run.PROBES) measure
    nothing either: each writes a record without its figure, as a CPU without the feature does."""
    from cyclebench.instructions.ports import run as run_mod
    from cyclebench.instructions.ports.mixes import Reading
    measured = []

    def measure_mix(session, by_name, counts, lines=False, only=None):
        measured.append(counts)     # a stream (``only``): the form's own part, no chain on this CPU
        part = {only: counts[only]} if only else counts
        return Reading(dict(counts), cycles({fake[f]: n for f, n in part.items()}), True)

    def record(path, kind, session=None, log=lambda msg: None):
        rec = run_mod.stored_record(path, kind)
        if rec is None:
            rec = {"type": kind, run_mod.PROBES[kind][0]: None, "why": "a fabricated CPU"}
            with run_mod.store(path) as st:
                st.start({}, resume=True)
                st.append(rec)
        return rec

    monkeypatch.setattr(run_mod, "measure_mix", measure_mix)
    monkeypatch.setattr(run_mod, "record", record)
    return measured


def test_a_finished_file_resumed_alone_is_solved_again_from_its_readings(tmp_path, monkeypatch, capsys):
    """``cyclebench ports --resume FILE`` with no forms takes the file's forms and seed and, on a
    finished run, solves its readings again under the rules at hand, measuring nothing."""
    fake = {"ADD_01 (R64, R64)": "add", "IMUL (R64, R64)": "imul", "ADDSS (XMM, XMM)": "fadd (XMM)",
            "MULSS (XMM, XMM)": "fmul (XMM)", "ORPS (XMM, XMM)": "pand (XMM)"}
    measured = _fabricated_runs(monkeypatch, fake)
    path = tmp_path / "ports.jsonl"
    assert main(["ports", *fake, "--seed", "3", "--results", str(path)]) == 0
    first = capsys.readouterr().out
    solved = load(path)[0].to_json()
    n = len(measured)
    assert n > len(fake)
    # a model an earlier cyclebench solved otherwise; resuming solves the readings again
    st = store(path)
    st.start({}, resume=True)
    st.append({"type": "model", "model": Model(["R0"], {f: {"R0": 1.0} for f in fake}, 6).to_json(),
               "report": {"blockers": {"R0": "ADD_01 (R64, R64)"}}})
    st.close()
    assert main(["ports", "--resume", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(measured) == n and "(0 measured now)" in out
    assert load(path)[0].to_json() == solved and out.splitlines()[1:] == first.splitlines()[1:]
    # the seed orders the blockers: another would solve the same readings otherwise
    assert main(["ports", "--resume", str(path), "--seed", "4"]) == 10
    err = capsys.readouterr().err
    assert "--seed 3" in err and "hint:" in err and len(measured) == n


def test_solve_reads_a_file_of_another_cpu_and_measures_nothing(tmp_path, monkeypatch, capsys):
    """``--resume`` refuses a file begun on another CPU (it would measure here under that CPU's
    name); ``--solve`` solves its readings under the rules at hand and measures nothing, and a file
    that lacks a reading those rules need is a clear error that leaves the file as it was."""
    import json
    fake = {"ADD_01 (R64, R64)": "add", "IMUL (R64, R64)": "imul", "ADDSS (XMM, XMM)": "fadd (XMM)",
            "MULSS (XMM, XMM)": "fmul (XMM)"}
    measured = _fabricated_runs(monkeypatch, fake)
    path = tmp_path / "ports.jsonl"
    assert main(["ports", *fake, "--seed", "5", "--results", str(path)]) == 0
    capsys.readouterr()
    solved, n = load(path)[0].to_json(), len(measured)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["meta"]["machine"].update(cpu_vendor="OtherVendor", cpu_family=99, cpu_model=99)
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    assert main(["ports", "--resume", str(path)]) == 10
    assert "another CPU" in capsys.readouterr().err
    assert main(["ports", "--solve", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(measured) == n and "(0 measured now)" in out and "measured on" in out
    assert load(path)[0].to_json() == solved
    assert main(["ports", "--solve", str(path), "--seed", "6"]) == 2
    # one mix reading taken out: the rules need it, and --solve will not measure it
    kept = path.read_text().splitlines()
    mix = next(i for i, line in enumerate(kept) if '"counts"' in line and len(json.loads(line)["counts"]) == 2)
    path.write_text("\n".join(kept[:mix] + kept[mix + 1:]) + "\n")
    before = path.read_bytes()
    assert main(["ports", "--solve", str(path)]) == 10
    err = capsys.readouterr().err
    assert "lacks a reading" in err and "hint:" in err and "Traceback" not in err
    assert len(measured) == n and path.read_bytes() == before
    assert main(["ports", "--solve", str(tmp_path / "none.jsonl")]) == 10
    assert "no file" in capsys.readouterr().err

def test_a_resumed_file_with_forms_this_catalogue_lacks_is_refused(tmp_path, capsys):
    path = tmp_path / "ports.jsonl"
    st = store(path)
    st.start({"forms": ["NOT A FORM"], "seed": 1}, resume=False)
    st.close()
    assert main(["ports", "--resume", str(path)]) == 10
    err = capsys.readouterr().err
    assert "'NOT A FORM'" in err and "hint:" in err


def test_a_file_without_a_model_is_refused_with_a_hint(tmp_path, capsys):
    path = tmp_path / "ports.jsonl"
    st = store(path)
    st.start({"forms": []}, resume=False)
    st.append({"type": "reading", "counts": {"add": 1}, "cycles": 0.25})
    st.close()
    assert main(["predict", "--model", str(path), "add rax, rbx"]) == 10
    err = capsys.readouterr().err
    assert "no model" in err and "hint:" in err


@pytest.mark.parametrize("field, value, cause", [
    ("width", "six", "front-end width 'six' is no count of instructions"),
    ("width", 0, "front-end width 0"),
    ("usage", {"ADD_01 (R64, R64)": {"R0": "0.25"}}, "usages are not all numbers"),
    ("alone", {"ADD_01 (R64, R64)": None}, "alone times are not all numbers"),
    ("probes", {"R0": 3}, "probes are not all forms"),
])
def test_a_model_record_of_the_wrong_types_is_refused_with_its_line(tmp_path, capsys, field, value, cause):
    # a file edited by hand: exit 10 with the line and the cause, never an internal error (exit 1)
    path = _fake_model_file(tmp_path)
    lines = path.read_text().splitlines()
    rec = json.loads(lines[-1])
    rec["model"][field] = value
    path.write_text("\n".join(lines[:-1] + [json.dumps(rec)]) + "\n")
    assert main(["predict", "--model", str(path), "add rax, rbx"]) == 10
    err = capsys.readouterr().err
    assert f"m.jsonl:{len(lines)} " in err and cause in err and "hint:" in err


@pytest.mark.parametrize("reading, cause", [
    ('{"type": "reading", "counts": {"ADD_01 (R64, R64)": 0}, "cycles": 0.25}', "a reading without counts"),
    ('{"type": "reading", "counts": {"ADD_01 (R64, R64)": "1"}, "cycles": 0.25}', "a reading without counts"),
    ('{"type": "reading", "counts": {"ADD_01 (R64, R64)": 1}, "cycles": "x"}', "cycles 'x' are no time"),
    ('{"type": "lines", "form": "MOV (M64, R64)", "cycles": [1]}', "a lines reading whose cycles are no time"),
    ('{"type": "reading", "counts": {"ADD_01 (R64, R64)": 1}, "cycles": 0.25, "stable": "yes"}',
     "stability 'yes' is not true or false"),
])
def test_a_reading_of_the_wrong_types_is_refused(tmp_path, capsys, reading, cause):
    path = _fake_model_file(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text() + reading + "\n")
    assert main(["predict", "--model", str(bad), "add rax, rbx"]) == 10
    assert cause in capsys.readouterr().err


def test_a_probe_record_whose_figure_is_of_the_wrong_kind_is_refused(tmp_path, capsys):
    path = _fake_model_file(tmp_path)
    for rec, kind in (('{"type": "upper", "factor": "x"}', "a finite number"),
                      ('{"type": "dealing", "deals": 1}', "true or false"),
                      ('{"type": "store_grain", "grain": 32.5}', "a count"),
                      ('{"type": "fresh", "times": {"ADDSS (XMM, XMM)": "0.5"}}', "a table of names and numbers"),
                      ('{"type": "apart", "pairs": [{"legacy": "MULSS (XMM, XMM)"}]}', "a list of legacy")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(path.read_text() + rec + "\n")
        assert main(["predict", "--model", str(bad), "add rax, rbx"]) == 10
        assert f"is not {kind}" in capsys.readouterr().err
    fine = tmp_path / "fine.jsonl"         # a figure the CPU could not give is None, with its reason
    fine.write_text(path.read_text() + '{"type": "upper", "factor": null, "why": "no AVX-512 on this CPU"}\n')
    assert main(["predict", "--model", str(fine), "add rax, rbx"]) == 0


def _fake_model_file(tmp_path, machine=None, slow=()):
    path = tmp_path / "m.jsonl"
    st = store(path)
    st.start({"forms": [], **({"machine": machine} if machine else {})}, resume=False)
    model = Model(["R0", "R1"], {"ADD_01 (R64, R64)": {"R0": 0.25}, "IMUL (R64, R64)": {"R0": 0.25, "R1": 1.0}}, 6)
    st.append({"type": "model", "model": model.to_json(), "report": {"blockers": {"R0": "ADD_01 (R64, R64)",
                                                                                  "R1": "IMUL (R64, R64)"},
                                                                     "slow_units": list(slow)}})
    st.close()
    return path


def test_predict_cli_shows_both_bounds(tmp_path, capsys):
    path = _fake_model_file(tmp_path)
    assert main(["predict", "--model", str(path), "--json", "imul rax, rbx; imul rcx, rbx; add rdx, rbx"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["resource_bound"] == pytest.approx(2.0)       # two imuls on the one-unit resource
    assert doc["chain_bound"] == pytest.approx(1.0)          # add rdx: one 1-cycle chain (assumed latency)
    assert doc["cycles"] == pytest.approx(2.0)
    assert model_load_ok(path)


def test_predict_headline_says_a_figure_without_some_forms_is_a_lower_bound(tmp_path, capsys):
    path = _fake_model_file(tmp_path)
    assert main(["predict", "--model", str(path), "imul rax, rbx; sub rcx, rdx"]) == 0
    head, *rest = capsys.readouterr().out.splitlines()
    assert head.startswith("predicted: 1.00") and "at least: 1 form not in the model" in head
    assert any("SUB" in line and "(R64, R64)" in line and "cyclebench ports" in line for line in rest)
    assert main(["predict", "--model", str(path), "imul rax, rbx; add rcx, rdx"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "predicted: 1.00 cycles per iteration"


def test_predict_says_which_cpu_its_model_describes(tmp_path, capsys):
    from cyclebench.machine.metadata import machine_metadata
    here = machine_metadata()
    other = {**here, "cpu_family": here["cpu_family"] + 1, "core": {"name": "Another core"}}
    block = "imul rax, rbx; add rdx, rbx"
    for machine, of_this, said in ((here, True, None), (other, False, "Another core"), (None, None, "unknown CPU")):
        folder = tmp_path / str(of_this)
        folder.mkdir()
        path = _fake_model_file(folder, machine)
        assert main(["predict", "--model", str(path), block]) == 0
        out = capsys.readouterr().out
        assert ("another CPU than this one" in out) == (of_this is False)
        if said:
            assert said in out.splitlines()[1]
        assert main(["predict", "--model", str(path), "--json", block]) == 0
        assert json.loads(capsys.readouterr().out)["model_of_this_cpu"] is of_this
        from cyclebench.cli.inst import _ported         # inst --ports: the column's CPU
        assert "IMUL (R64, R64)" in _ported(path)[0].usage
        assert ("not this CPU" in capsys.readouterr().err) == (of_this is False)


def test_predict_leaves_out_a_final_branch_and_says_so(tmp_path, capsys):
    """As cyclebench block measures a block (BHive's convention): the straight-line body."""
    path = _fake_model_file(tmp_path)
    assert main(["predict", "--model", str(path), "--json", "imul rax, rbx; add rcx, rbx"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["dropped"] is None
    assert main(["predict", "--model", str(path), "--json", ".L3:; imul rax, rbx; add rcx, rbx; jne .L3"]) == 0
    loop = json.loads(capsys.readouterr().out)
    assert loop["dropped"] == "jne .L3" and loop["cycles"] == body["cycles"] and not loop["unknown"]
    # a label before an instruction, as GNU as takes it; the branch is named as written
    assert main(["predict", "--model", str(path), ".L3: imul rax, rbx\n add rcx, rbx\n jne .L3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("predicted: 1.00 cycles per iteration\n")
    assert "the final conditional branch 'jne .L3' is left out" in out


def model_load_ok(path):
    model, report = load(path)
    return model.width == 6 and report["blockers"]["R1"] == "IMUL (R64, R64)"


@pytest.mark.parametrize("argv, code, words", [
    (["predict", "--model", "MISSING", "add rax, rbx"], 10, "MISSING does not exist"),
    (["predict", "--model", "M", "   "], 2, "empty"),
    (["predict", "--model", "M", "frobnicate rax"], 3, "rejected"),
    (["predict", "--model", "M", "--upper-factor", "0.5", "addss xmm1, xmm2"], 2, "not a factor of 1 or more"),
    (["predict", "--model", "M", "--upper-factor", "inf", "addss xmm1, xmm2"], 2, "not a factor of 1 or more"),
    (["ports", "--results", "X.jsonl"], 2, "no forms"),
    (["ports", "--resume", "X.jsonl"], 2, "no forms"),
    (["ports", "--sample", "-1", "--results", "X.jsonl"], 2, "at least 0"),
    (["ports", "NOT A FORM", "--results", "X.jsonl"], 2, "no form named"),
    (["inst", "IMUL (R64, R64)", "--ports", "MISSING"], 10, "does not exist"),
    (["predict", "--model", "M", "--latencies", "MISSING.jsonl", "add rax, rbx"], 10, "MISSING.jsonl does not exist"),
    (["predict", "--model", "M", "--latencies", "EMPTY.csv", "add rax, rbx"], 9, "EMPTY.csv: no header row"),
    # one instruction a line: a directive, pasted typography or hex bytes are no instruction
    (["predict", "--model", "M", ".cfi_startproc; add rax, rbx"], 3, "'.cfi_startproc' is a directive"),
    (["predict", "--model", "M", "mov rax, \u201c1\u201d"], 3, "non-ASCII character"),
    (["predict", "--model", "M", "4801d"], 3, "'4801d' is hex bytes"),
    # a straight-line block: a branch only at its end, no system call
    (["predict", "--model", "M", "add rax, rbx; jmp .L1; imul rcx, rdx"], 2, "not a basic block"),
    (["predict", "--model", "M", "add rax, rbx; syscall"], 2, "system call"),
    (["predict", "--model", "M", "jne .L1"], 2, "only its final conditional branch"),
])
def test_cli_errors(tmp_path, capsys, monkeypatch, argv, code, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "EMPTY.csv").write_text("")
    if "M" in argv:
        argv = [str(_fake_model_file(tmp_path)) if a == "M" else a for a in argv]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert words in err and "hint:" in err


def test_a_line_that_is_only_a_label_or_a_comment_is_no_instruction():
    # as a compiler prints a loop; such a line makes no bytes, so it must not take an instruction's place
    ins = decode(".L3:\n  add rax, 1  # step\n# the count\n/* the step */\n  dec rcx\n  jnz .L3\n1:")
    assert [i.mnemonic for i in ins] == [iced_x86.Mnemonic.ADD, iced_x86.Mnemonic.DEC, iced_x86.Mnemonic.JNE]


def test_chain_bound_follows_registers_and_zero_idioms():
    ins = decode("imul rax, rax; add rbx, rax")
    assert chain_bound(ins, [3.0, 1.0]) == pytest.approx(3.0)
    ins = decode("xor eax, eax; imul rax, rax")     # the zero idiom cuts the chain
    assert chain_bound(ins, [1.0, 3.0]) == pytest.approx(0.0, abs=1e-9)
    ins = decode("mov rax, [rax]; add rbx, [rcx]")    # a pointer chase carries the load-to-use time
    assert chain_bound(ins, [(1.0, 4.0), (1.0, 5.0)]) == pytest.approx(4.0)
    ins = decode("lea rax, [rax + rbx]")              # LEA's address is its data
    assert chain_bound(ins, [(1.0, 4.0)]) == pytest.approx(1.0)


def test_a_conditional_move_reads_its_destination():
    # where the condition fails it keeps the old value, so the µop reads it (Zen 4: two `cmovs
    # rbx, rcx` run 2.00 cycles an iteration; `cmovl bx, r10w; cmovs rbx, [m]; add ebx, 2` 3.00)
    assert chain_bound(decode("cmovs rbx, rcx; cmovs rbx, rcx"), [1.0, 1.0]) == pytest.approx(2.0)
    assert chain_bound(decode("cmovs rbx, rcx; mov ebx, 5; cmovs rbx, rcx"), [1.0, 1.0, 1.0]) == pytest.approx(0.0, abs=1e-9)


def test_a_reader_waits_for_the_last_writer_of_the_flags_it_reads():
    # inc keeps CF: the carry runs from adc to adc past it (Zen 4: 2.00 cycles an iteration, 3.00
    # with a third adc and a dec between them; one register for all the flags said 1.00)
    assert chain_bound(decode("adc rax, rbx; inc rcx; adc rdx, rbx"), [1.0] * 3) == pytest.approx(2.0)
    assert chain_bound(decode("adc rax, rbx; add rcx, 1; adc rdx, rbx"), [1.0] * 3) == pytest.approx(1.0)


def test_a_write_that_keeps_part_of_its_register_reads_the_rest():
    # an 8- or 16-bit GPR write merges into the full register; a 32-bit one zeroes the upper half
    assert chain_bound(decode("setnp bl; add rbx, 1"), [1.0, 1.0]) == pytest.approx(2.0)
    assert chain_bound(decode("mov bx, 1; add rbx, 1"), [1.0, 1.0]) == pytest.approx(2.0)
    assert chain_bound(decode("mov ebx, 1; add rbx, 1"), [1.0, 1.0]) == pytest.approx(0.0, abs=1e-9)
    # a legacy-SSE write keeps bits 128 and up once a YMM/ZMM register dirties the upper state;
    # its VEX form zeroes them, and with a clean upper state the SSE form merges nothing
    dirty = "vfmadd132pd zmm1, zmm2, zmm3; movaps xmm1, xmmword ptr [r14+0x40]"
    assert chain_bound(decode(dirty), [4.0, 1.0]) == pytest.approx(5.0)
    # the load does not wait for the kept part: only the merge does
    assert chain_bound(decode(dirty), [4.0, 7.0]) == pytest.approx(5.0)
    assert chain_bound(decode("mov bl, [r14]; add rbx, 1"), [5.0, 1.0]) == pytest.approx(2.0)
    assert chain_bound(decode(dirty.replace("movaps", "vmovaps")), [4.0, 1.0]) == pytest.approx(0.0, abs=1e-9)
    clean = "vfmadd132pd xmm1, xmm2, xmm3; movaps xmm1, xmmword ptr [r14+0x40]"
    assert chain_bound(decode(clean), [4.0, 1.0]) == pytest.approx(0.0, abs=1e-9)


def _latencies_of(tmp_path, form: str, latency: list[dict]) -> dict:
    """The latencies ports/latency.py reads from an inst results file holding one form's pairs."""
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.latency import from_file
    doc = {"schema": "cyclebench.inst", "schema_version": 1, "form": form, "status": "ok", "latency": latency}
    path = tmp_path / "lat.jsonl"
    header = {"cyclebench": "results", "kind": "inst", "schema": 1, "meta": {}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(doc) + "\n")
    return from_file(path, Catalogue.load())[0]


def test_the_chain_waits_for_the_operand_it_passes_through(tmp_path):
    lats = _latencies_of(tmp_path, "CVTSI2SS (XMM, R64)",
                         [{"start": "op0 (XMM)", "end": "op0 (XMM)", "value": 3.0, "bound": "exact"},
                          {"start": "op1 (R64)", "end": "op0 (XMM)", "value": 8.0, "bound": "upper"}])
    assert lats["CVTSI2SS (XMM, R64)"] == (8.0, 8.0, {0: 3.0, 1: 8.0})
    # a chain through XMM1 waits 3 cycles at the conversion, one through RBX 8
    lat = lats["CVTSI2SS (XMM, R64)"]
    assert chain_bound(decode("cvtsi2ss xmm1, rbx; addss xmm1, xmm2"), [lat, 3.0]) == pytest.approx(6.0)
    assert chain_bound(decode("cvtsi2ss xmm1, rbx; movq rbx, xmm1"), [lat, 3.0]) == pytest.approx(11.0)


def test_flags_later_than_the_register_are_charged_apart(tmp_path):
    # Emerald Rapids, as cyclebench inst measured it: add r64, imm8 0 cycles to its register (the
    # renamer adds it), 1 to the flags
    pair = lambda end, v, code="add rbx, 0x2": {"start": "op0 (R64)", "end": end, "value": v, "bound": "exact",
                                               "code": code}
    lat = _latencies_of(tmp_path, "ADD (R64, I8)", [pair("op0 (R64)", 0.0), pair("flags", 1.0)])["ADD (R64, I8)"]
    assert lat[2] == {0: 0.0, ("flags", 0): 1.0}
    assert chain_bound(decode("add rax, 0x1; add rax, 0x1"), [lat, lat]) == pytest.approx(0.0, abs=1e-9)
    # a cmov waits for the add's flags a cycle, as for its register no time
    assert chain_bound(decode("add rax, 0x1; cmovb rax, rbx"), [lat, 1.0]) == pytest.approx(2.0)
    # a register figure read on one register for both operands (a zero idiom) stands for none
    lat = _latencies_of(tmp_path, "SUB_29 (R64, R64)", [
        {"start": "op1 (R64)", "end": "op0 (R64)", "value": 0.0, "bound": "exact", "code": "{store} sub rbx, rbx"},
        {"start": "op1 (R64)", "end": "flags", "value": 1.0, "bound": "exact", "code": "{store} sub rbx, rcx"}])
    assert lat["SUB_29 (R64, R64)"][2] == {1: 1.0}


def test_a_lea_passes_its_base_and_its_index_on_in_their_own_times(tmp_path):
    # Zen 4, as cyclebench inst measured it: a three-part LEA takes 2 cycles from its base, 1 from its index
    lat = _latencies_of(tmp_path, "LEA_B_IS_D8 (R64)",
                        [{"start": "addr op1", "end": "op0 (R64)", "value": 2.0, "bound": "exact"},
                         {"start": "index op1", "end": "op0 (R64)", "value": 1.0, "bound": "exact"}])["LEA_B_IS_D8 (R64)"]
    assert lat[2] == {"base": 2.0, "index": 1.0}
    assert chain_bound(decode("lea rax, [rax+rcx*8+0x10]"), [lat]) == pytest.approx(2.0)
    assert chain_bound(decode("lea rcx, [rax+rcx*8+0x10]"), [lat]) == pytest.approx(1.0)
    assert chain_bound(decode("lea rax, [rax+rax*8+0x10]"), [lat]) == pytest.approx(2.0)


def test_a_load_waits_for_the_store_of_its_address_before_it(tmp_path):
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.latency import from_file
    pair = lambda start, end, lo, hi: {"start": start, "end": end, "value": hi, "lower": lo, "upper": hi,
                                       "bound": "exact" if lo == hi else "upper"}
    docs = [{"form": "ADDSD (XMM, M64)", "latency": [pair("op0 (XMM)", "op0 (XMM)", 3.0, 3.0),
                                                     pair("addr op1", "op0 (XMM)", 7.0, 7.0),
                                                     pair("mem op1 (M64)", "op0 (XMM)", 4.0, 11.0)]},
            {"form": "MOVSD (M64, XMM)", "latency": [pair("op1 (XMM)", "mem op0 (M64)", 1.0, 8.0)]}]
    path = tmp_path / "lat.jsonl"
    header = {"cyclebench": "results", "kind": "inst", "schema": 1, "meta": {}}
    docs = [{"schema": "cyclebench.inst", "schema_version": 1, "status": "ok", **d} for d in docs]
    path.write_text("\n".join(json.dumps(d) for d in [header] + docs) + "\n")
    lats = from_file(path, Catalogue.load())[0]
    # a pair known within a range (closed by a connector) counts at its middle
    assert lats["ADDSD (XMM, M64)"] == (3.0, 7.0, {0: 3.0, "mem": 7.5})
    assert lats["MOVSD (M64, XMM)"] == (4.5, 4.5, {1: 4.5})
    lat = [lats["ADDSD (XMM, M64)"], lats["MOVSD (M64, XMM)"]]
    # the sum is stored and loaded again next iteration: the halves of the round trip add up
    loop = "addsd xmm5, qword ptr [r14+0x10]; movsd qword ptr [r14+0x10], xmm5"
    assert chain_bound(decode(loop), lat) == pytest.approx(12.0)
    assert chain_bound(decode(loop.replace("+0x10]; movsd", "+0x18]; movsd")), lat) == pytest.approx(3.0)
    # another base register, or one the block moves, names no known place: not followed
    assert chain_bound(decode(loop.replace("[r14+0x10], xmm5", "[r13+0x10], xmm5")), lat) == pytest.approx(3.0)
    assert chain_bound(decode(loop + "; add r14, 8"), lat + [1.0]) == pytest.approx(3.0)
    # a store over part of the load's bytes counts; with no round trip, the address's latency
    part = "addsd xmm5, qword ptr [r14+0x10]; movss dword ptr [r14+0x14], xmm5"
    assert chain_bound(decode(part), [(3.0, 7.0), 1.0]) == pytest.approx(8.0)


def test_random_blocks_keep_the_values_the_model_was_measured_with():
    from cyclebench.instructions.catalogue import Catalogue
    forms = ["SHR (R64, CL)", "SHL (R64, CL)", "AND (R64, I8)", "NOT (R32)", "MOV (R64, I64)", "AND_21 (R64, R64)"]
    blocks = random_blocks(Catalogue.load(), forms, 12, random.Random(3))
    assert len(blocks) == 12
    info = iced_x86.InstructionInfoFactory()
    written = lambda ins: {iced_x86.RegisterInfo(u.register).full_register for u in info.info(ins).used_registers()
                           if u.access != iced_x86.OpAccess.READ}
    counted = 0
    for lines, init in blocks:
        if any(", cl" in ln for ln in lines):
            counted += 1
            assert "mov ecx, 1" in init          # the count the model's readings ran with
            # and nothing in the block changes it (and rcx, 2 would leave a count of 0)
            assert all(iced_x86.Register.RCX not in written(ins) for ins in decode("\n".join(lines))), lines
    assert counted >= 6


def test_a_zero_idiom_takes_only_the_front_end():
    model = Model(["R0"], {"XOR_31 (R32, R32)": {"R0": 0.25}}, 6, {"XOR_31 (R32, R32)": 0.25})
    assert predict("xor eax, eax; xor ecx, ecx; xor edx, edx", model).resource_bound == pytest.approx(0.5)
    assert predict("xor eax, ebx; xor ecx, ebx; xor edx, ebx", model).resource_bound == pytest.approx(0.75)


def test_a_form_faster_than_the_front_end_that_uses_no_resource_takes_no_share():
    # the rule the inference applies, kept when a saved model has lost the zero share
    usage = {"NOP (M32)": {"R0": 0.01}, "XOR_31 (R64, R64)": {"R1": 0.1}}
    model = Model(["R0", "R1"], usage, 6, {"NOP (M32)": 0.05, "XOR_31 (R64, R64)": 0.1})
    block = "; ".join(["nop dword ptr [rax]"] * 6 + ["xor rax, rbx", "xor rcx, rbx", "xor rdx, rbx"])
    p = predict(block, model)
    assert p.binding_resource == "front end" and p.resource_bound == pytest.approx(0.5)   # the 3 xor only
    usage["NOP (M32)"][FRONT_END] = 0.05          # a share the model names stands
    assert predict(block, model).resource_bound == pytest.approx(0.5 + 6 * 0.05)


def test_predict_takes_bytes_as_well_as_text(tmp_path):
    model = Model(["R0"], {"IMUL (R64, R64)": {"R0": 1.0}}, 6)
    from_text = predict("imul rax, rbx", model)
    from_bytes = predict(bytes.fromhex("480fafc3"), model)     # imul rax, rbx
    assert from_text.forms == from_bytes.forms == ["IMUL (R64, R64)"]
    assert from_bytes.resource_bound == pytest.approx(1.0)


def test_compiled_blocks_are_cut_at_branches_and_rebased():
    code = [(0, "mov rax,QWORD PTR [rdi+rcx*8]"), (4, "add rax,rdx"), (7, "imul rax,rsi"), (9, "jne 0"),
            (11, "mov QWORD PTR [rdi+rcx*8],rax"), (15, "add rcx,0x1"), (19, "cmp rcx,rdx"), (21, "ret")]
    blocks = basic_blocks(code)
    assert blocks == [["mov rax,QWORD PTR [rdi+rcx*8]", "add rax,rdx", "imul rax,rsi"],
                      ["mov QWORD PTR [rdi+rcx*8],rax", "add rcx,0x1", "cmp rcx,rdx"]]
    a = rebase(["mov rax,QWORD PTR [rdi+rcx*8]", "mov QWORD PTR [rdi+rcx*8],rax", "mov rdx,QWORD PTR [rsi]",
                "mov QWORD PTR [rsi+0x8],rdx", "mov QWORD PTR [rsi-0x8],rdx"])
    assert a[0].endswith("[r14+0x200]") and a[1].startswith("mov QWORD PTR [r14+0x200]")   # aliasing kept
    assert a[2].endswith("[r14+0x280]")                        # the next line past the first slot
    assert "[r14+0x288]" in a[3] and "[r14+0x278]" in a[4]      # one base: the displacements kept
    # no two bases' accesses agree in the low 10 address bits (a load would wait for the store)
    b = rebase(["mov edx,DWORD PTR [rax]", "mov DWORD PTR [rdx+0x400],edx", "mov ecx,DWORD PTR [rsi+0x3c0]",
                "mov DWORD PTR [rdi],ecx"])
    addrs = [int(x.split("[r14+")[1].split("]")[0], 16) for x in b]
    assert addrs[1] - addrs[0] != 0x400 and len({a % ALIAS for a in addrs}) == 4
    assert rebase(["add rsp,0x8", "mov rax,rbx", "add rax,rcx"]) is None


def test_port_set_notation():
    assert port_set("FP0123") == {"FP0", "FP1", "FP2", "FP3"}
    assert port_set("p0156") == {"p0", "p1", "p5", "p6"}
    assert infer_mod.key({"b": 2, "a": 1}) == "1x a + 2x b"


def test_stores_are_charged_per_distinct_cache_line():
    # a core that writes two stores a cycle to one line and one a cycle to two lines
    m = Model(["R0"], {"MOV (M64, R64)": {"R0": 0.5}}, 6, {"MOV (M64, R64)": 0.5}, {"MOV (M64, R64)": 1.0})
    assert predict("mov [r14+0x40], rax; mov [r14+0x48], rbx", m).resource_bound == pytest.approx(1.0)
    assert predict("mov [r14+0x40], rax; mov [r14+0x80], rbx", m).resource_bound == pytest.approx(2.0)
    # one store a loop iteration: the same line every time, two a cycle
    assert predict("mov [r14+0x40], rax; add rbx, rcx", m).resource_bound == pytest.approx(0.5)
    # lines 0 0 1 0, round the loop: a run of three stores to line 0 (two cycles) and one to line 1
    four = "mov [r15+0x38], rax; mov [r15+0x18], rax; mov [r15+0x48], rax; mov [r15+0x20], rax"
    assert predict(four, m).resource_bound == pytest.approx(3.0)
    assert predict("mov [rax+8], rcx; mov [rbx+8], rcx; mov rdx, [rax+0x48]", m).binding_resource == "store lines"
    assert Model.from_json(m.to_json()).lines == m.lines


def test_store_lines_are_measured_once_and_read_back(tmp_path):
    path = tmp_path / "ports.jsonl"
    calls = []
    st = store(path)
    st.start({"forms": []}, resume=False)
    inf = Inference(measure=cycles, record=st.append, measure_lines=lambda f: calls.append(f) or 1.0)
    assert inf.lines(["load"]) == {"load": 1.0}
    st.close()
    st = store(path)
    again = Inference(measure=cycles, measure_lines=lambda f: calls.append(f) or 2.0)
    again.load(st.start({"forms": []}, resume=True))
    st.close()
    assert again.lines(["load"]) == {"load": 1.0} and calls == ["load"]


def test_lea_forms_follow_the_addressing():
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.predict import form_of
    cat = Catalogue.load()
    from cyclebench.instructions.notation import lea_mode, parse_concrete
    got = [form_of(decode(t)[0], cat) for t in ("lea rax, [rbx]", "lea rax, [rdi-1]", "lea rcx, [rsi+rdi-1]")]
    assert got == ["LEA_B (R64)", "LEA_B_D8 (R64)", "LEA_B_I_D8 (R64)"]
    modes = [lea_mode(decode(t)[0]) for t in ("lea r15, [r12*8]", "lea rax, [rbx+rcx*4+8]", "lea rax, [rip+16]",
                                                "lea eax, [rbx+0x1000]")]
    assert modes == ["IS_D32", "B_IS_D8", "R_D32", "B_D32"]
    # the instruction tables name it alike: an index with no base carries a 32-bit displacement, 0 too
    assert [f.name for f in parse_concrete("lea r15, [r12*8]", cat)] == ["LEA_IS_D32 (R64)"]
    # a mode the catalogue has no form for is no form (the block is then not predicted), never another
    lea = decode("lea r15, [r12*8]")[0]
    assert form_of(lea, cat) in (None, "LEA_IS_D32 (R64)")


def test_show_names_the_units_and_the_store_lines(tmp_path, capsys):
    path = tmp_path / "m.jsonl"
    st = store(path)
    st.start({"forms": []}, resume=False)
    model = Model(["R0", "R1"], {"MOV (M64, R64)": {"R0": 0.5}, "DIVSS (XMM, XMM)": {"R1": 3.0}}, 6,
                  {"MOV (M64, R64)": 0.5, "DIVSS (XMM, XMM)": 3.0}, {"MOV (M64, R64)": 1.0})
    st.append({"type": "model", "model": model.to_json(), "report": {
        "blockers": {"R0": "MOV (M64, R64)", "R1": "DIVSS (XMM, XMM)"}, "slow_units": ["R1"],
        "measurements_per_form": 3, "readings": 9}})
    st.close()
    assert main(["ports", "--show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "R0: the bottleneck of MOV (M64, R64)" in out
    assert "measured on an unknown CPU (no machine record)" in out      # the header keeps none
    assert "R1: a unit no blocker probes, held by DIVSS (XMM, XMM)" in out
    assert "stores to distinct cache lines: MOV (M64, R64) 1.00" in out
    assert any(ln.split() == ["DIVSS", "(XMM,", "XMM)", "3.00", "3.00", "R1[DIVSS", "(XMM,", "XMM)]"]
               for ln in out.splitlines())               # its time alone, then its usage


def test_mixed_forms_get_the_registers_they_can_reach():
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.operands import register_name
    from cyclebench.instructions.ports.mixes import NotMixable, mix_code, shares
    cat = Catalogue.load()
    sse, evex, zmm, gpr = (cat.get(n) for n in ("MULSS (XMM, XMM)", "VPMAXSB_EVEX (XMM, XMM, XMM)",
                                                  "VFMADD132PD_Z (ZMM, K, ZMM, ZMM)", "ADD_01 (R64, R64)"))
    a, b = (sorted(int(register_name(r)[3:]) for r in x) for x in shares(sse, evex))
    # the EVEX form takes XMM16-31 and, of the 16 both reach, one per register operand (its first
    # instance picks from the first 16); the legacy form keeps the rest
    assert set(range(16, 32)) <= set(b) and len(b) == 16 + 3 and sorted(a + b) == list(range(32))
    a, b = shares(sse, cat.get("ADDSS (XMM, XMM)"))
    assert len(a) == len(b) == 8 and not a & b                 # a family both reach: halves
    a, b = shares(gpr, sse)
    assert len(b) == 16 and len(a) == 12                       # a family one form uses is all its own
    with pytest.raises(NotMixable, match="upper vector state"):
        mix_code({sse.name: sse, zmm.name: zmm}, {sse.name: 1, zmm.name: 1})
    code, _, _ = mix_code({sse.name: sse, evex.name: evex}, {sse.name: 2, evex.name: 1})
    assert len({ln.split()[-2] for ln in code if "mulss" in ln}) == 12      # 12 written (7 with halves)


def test_a_form_that_reads_its_destination_gets_the_registers_and_the_body_that_keep_its_copies_apart():
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.mixes import chains, mix_code, shares
    cat = Catalogue.load()
    fma, vex, sse = (cat.get(n) for n in ("VFMADD132SD (XMM, XMM, XMM)", "VPMINUD (XMM, XMM, XMM)",
                                          "SUBPS (XMM, XMM)"))
    assert chains(fma) and chains(sse) and not chains(vex)     # a legacy write keeps the upper bits
    forms = {f.name: f for f in (fma, vex, sse)}

    def written(code, mnemonic):
        regs = [ln.split()[2].rstrip(",") for ln in code if ln.split()[1] == mnemonic]
        return {r: regs.count(r) for r in regs}
    # alone: the body is a whole number of rotations, so every register carries one chain length
    # (16 copies over 14 registers wrote two of them twice: 10 cycles of a 5-cycle FMA per 16)
    code, _, u = mix_code(forms, {fma.name: 1})
    assert len(set(written(code, "vfmadd132sd").values())) == 1 and u >= 16
    # beside a form that only writes its destination, the FMA takes all the shared registers but
    # the one destination and the sources the other form needs
    a, b = shares(fma, vex)
    assert len(b) == 3 and len(a) == 13
    code, _, _ = mix_code(forms, {fma.name: 1, vex.name: 2})
    assert len(written(code, "vpminud")) == 1 and len(written(code, "vfmadd132sd")) >= 8
    # two forms that both chain: halves, as before
    a, b = shares(fma, sse)
    assert len(a) == len(b) == 8
    # an LEA that only writes its destination still gets a register for its index
    add, lea = cat.get("ADD_01 (R64, R64)"), cat.get("LEA_IS_D32 (R64)")
    code, _, _ = mix_code({add.name: add, lea.name: lea}, {add.name: 1, lea.name: 1})
    assert any(ln.startswith("lea ") and "*" in ln for ln in code)


def test_the_forms_whose_chains_may_pace_a_mix_are_the_chaining_ones_whose_registers_it_split():
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.mixes import cut, mix_code
    cat = Catalogue.load()

    def forms(*names):
        return {n: cat.get(n) for n in names}
    pmul, punpck, shuf, xor = "PMULLW (MM, MM)", "PUNPCKHWD (MM, MM)", "PACKUSWB (XMM, XMM)", "VXORPD (XMM, XMM, XMM)"
    # two MMX forms that read their destinations share eight registers: both are cut
    assert sorted(cut(forms(pmul, punpck), {pmul: 1, punpck: 1})) == sorted([pmul, punpck])
    # an XMM form beside an MMX one takes no register of its family; a VEX form that only
    # writes its destination chains through none (the legacy one beside it does); one form
    # alone is no mix
    assert cut(forms(shuf, pmul), {shuf: 1, pmul: 1}) == []
    assert cut(forms(xor, shuf), {xor: 2, shuf: 1}) == [shuf]
    assert cut(forms(pmul), {pmul: 1}) == []
    # the stream is the mix's own copies of the form, on the registers the mix dealt them
    mix, _, u = mix_code(forms(pmul, punpck), {pmul: 1, punpck: 1})
    only, _, v = mix_code(forms(pmul, punpck), {pmul: 1, punpck: 1}, only=pmul)
    assert u == v and only == [ln for ln in mix if "pmullw" in ln] and len(only) == u
    alone, _, _ = mix_code(forms(pmul), {pmul: 1})
    assert len({ln.split()[2] for ln in only}) < len({ln.split()[2] for ln in alone})


def test_a_figure_below_nought_is_no_reading_of_a_mix():
    # B - A below nought (an interrupt in A, flagged unstable) was kept as the faster of two runs,
    # and a results file holding it could not be read back
    from types import SimpleNamespace
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.mixes import measure_mix
    cat = Catalogue.load()
    form = cat.get("ADD_01 (R64, R64)")

    class Fake:
        def __init__(self, values):
            self.values = list(values)

        def measure(self, code, init, per):
            return SimpleNamespace(value=self.values.pop(0), stable=False, modes=None)
    assert measure_mix(Fake([-0.35, 0.26]), {form.name: form}, {form.name: 1}).cycles == 0.26
    assert measure_mix(Fake([0.26, -0.35]), {form.name: form}, {form.name: 1}).cycles == 0.26
    assert measure_mix(Fake([0.30, 0.26]), {form.name: form}, {form.name: 1}).cycles == 0.26
    r = measure_mix(Fake([-0.35, -0.1]), {form.name: form}, {form.name: 1})
    assert r.cycles is None and "no positive figure" in r.error


def test_a_published_draw_takes_only_forms_with_ports():
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.run import sample
    cat = Catalogue.load()
    named = {"VADDPS (XMM, XMM, XMM)", "PXOR (XMM, XMM)"}
    forms = sample(cat, 5, seed=2, among=lambda f: f.name in named)
    assert sorted(forms) == sorted(named)                     # no more than the predicate allows
    assert len(sample(cat, 6, seed=2)) == 6


def _objective(usage, mixes, known, floors, binding, width=None):
    """The solve's objective at given usages of one unknown form: each mix's over slack, its
    under slack through its best choice, and the price on usage (model.solve's terms)."""
    from cyclebench.instructions.ports.model import USAGE_PRICE
    total = USAGE_PRICE * sum(usage.values())
    for m, allowed in zip(mixes, binding):
        T = m.cycles
        loads = {r: sum(n * (usage[r] if f == "f" else known[f].get(r, 0.0)) for f, n in m.counts.items())
                 for r in usage}
        bound = max([sum(m.counts.values()) / width if width else 0.0]
                    + [n * floors[f] for f, n in m.counts.items() if f in floors])
        total += max(0.0, max((v - T) / T for v in loads.values()))
        total += max(0.0, min([(T - bound) / T] + [(T - loads[r]) / T for r in allowed]))
    return total


def test_the_solve_reaches_the_optimum_of_noisy_readings_and_repeats_it():
    # a form on r1 (0.5 cycles) and a little of r2, beside three blockers that crowd each other's
    # resources; the readings carry a few percent of noise, so no usage explains them all and the
    # optimum is a trade-off: the solve must find it (within its gap), the same every time
    from itertools import product

    from scipy.optimize import linprog

    from cyclebench.instructions.ports.model import GAP
    rs = ["r0", "r1", "r2"]
    known = {"b0": {"r0": 1.0, "r1": 0.3}, "b1": {"r1": 0.5, "r2": 0.05}, "b2": {"r2": 0.25}}
    truth = {"r0": 0.0, "r1": 0.5, "r2": 0.15}
    floors = {"f": 0.52, "b0": 1.0, "b1": 0.5, "b2": 0.25}
    rng = random.Random(7)
    mixes = [Mix({"f": 1}, 0.52)]
    for b in known:
        for nb in ((1, 3) if b == "b0" else (2,)):
            counts = {"f": 2, b: nb}
            exact = max(2 * truth[r] + nb * known[b].get(r, 0.0) for r in rs)
            mixes.append(Mix(counts, max(exact, 2 * 0.52, nb * floors[b]) * rng.uniform(0.96, 1.06)))
    binding = [None] + [{r for r, v in known[b].items() if v >= 0.1} for m in mixes[1:] for b in m.counts if b != "f"]
    runs = [solve(mixes, rs, ["f"], known=known, floors=floors, binding=binding) for _ in range(2)]
    assert runs[0] == runs[1]
    got = _objective(runs[0][0]["f"], mixes, known, floors, [set(rs)] + binding[1:])
    # brute force: every choice of what reaches each mix, a linear programme each
    best = float("inf")
    allowed = [sorted(set(rs))] + [sorted(b) for b in binding[1:]]
    for pick in product(*[a + ["bound"] for a in allowed]):
        # variables: u (3) | over slack per mix | under slack per mix
        M = len(mixes)
        c = [1e-3] * 3 + [1.0] * (2 * M)
        A, ub = [], []
        for k, (m, j) in enumerate(zip(mixes, pick)):
            T, nf = m.cycles, m.counts["f"]
            b = next((g for g in m.counts if g != "f"), None)
            bound = max(n * floors[g] for g, n in m.counts.items())
            for i, r in enumerate(rs):
                const = m.counts[b] * known[b].get(r, 0.0) if b else 0.0
                row = [0.0] * (3 + 2 * M)
                row[i], row[3 + k] = nf, -T
                A.append(row); ub.append(T - const)
                if j == r:
                    row = [0.0] * (3 + 2 * M)
                    row[i], row[3 + M + k] = -nf, -T
                    A.append(row); ub.append(const - T)
            if j == "bound":
                row = [0.0] * (3 + 2 * M)
                row[3 + M + k] = -T
                A.append(row); ub.append(bound - T)
        res = linprog(c, A_ub=A, b_ub=ub, bounds=[(0, floors["f"])] * 3 + [(0, None)] * (2 * M))
        if res.status == 0:
            best = min(best, res.fun)
    assert got <= best * (1 + GAP) + 1e-6


def test_the_solvers_own_printing_is_silenced_and_ours_is_not(capfd):
    import ctypes
    import os

    from cyclebench.instructions.ports.model import quiet
    print("before", flush=True)
    with quiet():
        libc = ctypes.CDLL(None)
        libc.printf(b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n")
        os.write(1, b"solver line\n")
        os.write(2, b"error: ours\n")
    print("after", flush=True)
    out, err = capfd.readouterr()
    assert out == "before\nafter\n"
    assert "error: ours" in err


def test_a_front_end_seen_only_at_a_probes_own_rate_bounds_no_solve(monkeypatch):
    # vector forms only: nothing runs faster than the four-pipe logic op's 4 a cycle, so the width
    # read is 4 and a mix of a load-bound logic op with it (0.75 cycle for 1 + 2) is as well the
    # front end's 3 / 4 as three µops on four pipes; the logic op's resource must explain it
    import ports_fake
    monkeypatch.setitem(ports_fake.UOPS, "pandload (XMM, M128)", [("F0", "F1", "F2", "F3"), ("L0", "L1")])
    forms = ["pand (XMM)", "fadd (XMM)", "fmul (XMM)", "shuf (XMM)", "pandload (XMM, M128)"]
    model, report = Inference(measure=cycles).run(forms, seed=1)
    assert model.width == 4
    r = next(r for r, b in report["blockers"].items() if b in ("pand (XMM)", "pandload (XMM, M128)")
             and report["alone"][b] == pytest.approx(0.25))
    assert model.usage["pandload (XMM, M128)"][r] == pytest.approx(0.25, abs=0.02)


def test_a_mix_whose_repetitions_read_two_modes_reads_the_faster(monkeypatch):
    # Zen 4: one UNPCKLPS a unit reads 0.316 or 0.43 from stretch to stretch; the best of two runs
    # both settled in the slower level, one of which saw both levels
    from cyclebench.instructions.ports import mixes
    from cyclebench.instructions.session import Measured
    monkeypatch.setattr(mixes, "mix_code", lambda forms, counts, lines=False, only=None: (["unpcklps xmm0, xmm1"], [], 1))

    def reading(value, modes):
        return Measured(value, 0.001, [value], True, [], {}, "", "", modes=modes)
    for runs, cycles in (([reading(0.430, None), reading(0.434, (0.316, 0.434))], 0.316),
                         ([reading(0.430, None), reading(0.431, None)], 0.430)):
        it = iter(runs)
        session = type("S", (), {"measure": lambda self, code, init, per=1: next(it)})()
        r = mixes.measure_mix(session, {}, {"UNPCKLPS (XMM, XMM)": 1})
        assert (r.cycles, r.stable) == (cycles, True)


def test_latencies_measured_on_another_cpu_say_so_in_their_label(tmp_path):
    from cyclebench.instructions.catalogue import Catalogue
    from cyclebench.instructions.ports.latency import from_file
    from cyclebench.machine.metadata import machine_metadata
    here = machine_metadata()
    doc = {"schema": "cyclebench.inst", "schema_version": 1, "form": "IMUL (R64, R64)", "status": "ok",
           "latency": [{"start": "op0 (R64)", "end": "op0 (R64)", "value": 3.0, "bound": "exact"}]}
    for machine, other in ((None, False), (here, False), ({**here, "cpu_vendor": "OtherVendor"}, True)):
        path = tmp_path / f"lat-{other}-{machine is None}.jsonl"
        meta = {"machine": machine} if machine else {}
        header = {"cyclebench": "results", "kind": "inst", "schema": 1, "meta": meta}
        path.write_text(json.dumps(header) + "\n" + json.dumps(doc) + "\n")
        lats, label = from_file(path, Catalogue.load())
        assert lats["IMUL (R64, R64)"] and ("on another CPU, " in label) == other


def test_a_form_of_a_unit_held_for_cycles_is_said_to_be_data_dependent(tmp_path, capsys):
    # the inference's slow units (a divider, found by its readings): the note names the forms that hold one
    path = _fake_model_file(tmp_path, slow=["R1"])
    for block, noted in (("imul rax, rbx; add rcx, rdx", ["IMUL (R64, R64)"]), ("add rcx, rdx", [])):
        assert main(["predict", "--model", str(path), "--json", block]) == 0
        notes = [n for n in json.loads(capsys.readouterr().out)["notes"] if n.startswith("data-dependent")]
        assert [n.split(" hold")[0].removeprefix("data-dependent: ") for n in notes] == [", ".join(noted)] * bool(noted)
    (tmp_path / "plain").mkdir()
    plain = _fake_model_file(tmp_path / "plain")
    assert main(["predict", "--model", str(plain), "--json", "imul rax, rbx"]) == 0
    assert not any(n.startswith("data-dependent") for n in json.loads(capsys.readouterr().out)["notes"])
