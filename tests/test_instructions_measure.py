"""Instruction characterisation: facts that hold on any modern x86-64 core, plus the bound
arithmetic and dependency breakers checked with a fake measurement (no timing)."""
from types import SimpleNamespace

import pytest

from cyclebench.instructions import Catalogue, latency_pairs
from cyclebench.instructions import connectors as C
from cyclebench.instructions import memory_chain as M
from cyclebench.instructions.characterize import (Session, characterize, measure_pair,
                                                  measure_throughput, value_init, value_pattern)
from settle import settled, unsettled

FAST = dict(n_measurements=10, budget=0.5)
# a fact checked on the figure: measure() may re-run an unstable measurement for longer
SETTLE = dict(n_measurements=10, budget=2.0)


@pytest.fixture(scope="module")
def cat():
    return Catalogue.load()


@pytest.fixture(scope="module")
def session():
    return Session(**FAST)


def _pair(form, text):
    return next(p for p in latency_pairs(form) if str(p) == text)


# ------------------------------------------------------------------------------ on the real CPU

@pytest.mark.measured
def test_latency_chain_is_dependent_unroll_does_not_change_it(cat):
    form = cat.get("IMUL (R64, R64)")
    pair = _pair(form, "op1 (R64) -> op0 (R64)")

    def run():
        docs = [measure_pair(Session(unroll=u, **FAST), form, pair) for u in (10, 40)]
        return [d["value"] for d in docs], [x for u, d in zip((10, 40), docs) for x in unsettled(f"unroll {u}", d)]

    values = settled(run)
    assert min(values) >= 0.95                      # a latency is at least one cycle
    assert abs(values[0] - values[1]) <= 0.05 * max(values), values


@pytest.mark.measured
@pytest.mark.parametrize("name", ["ADD_01 (R64, R64)", "IMUL (R64, R64)"])
def test_throughput_at_most_latency_for_single_uop_alu_forms(cat, session, name):
    def run():
        doc = characterize(cat.get(name), session)
        assert doc["status"] == "ok"
        slowest = _entry(doc, doc["latency_max"]["pair"])
        return doc, unsettled("throughput", doc["throughput"]) + unsettled("latency", slowest)

    doc = settled(run)
    assert doc["throughput"]["value"] <= doc["latency_max"]["value"] * 1.05, doc
    assert doc["uops"] is None and doc["ports"] is None and doc["uops_reason"]


def _entry(doc, pair: str) -> dict:
    return next(p for p in doc["latency"] if f"{p['start']} -> {p['end']}" == pair)


@pytest.mark.measured
def test_spot_values_any_modern_core(cat):
    # add r64: 1 cycle (the calibration's own assumption); imul r64, r64: 3 cycles since the P6
    def run():
        session = Session(**SETTLE)
        add = characterize(cat.get("ADD_01 (R64, R64)"), session, throughput=False)
        imul = characterize(cat.get("IMUL (R64, R64)"), session, throughput=False)
        e_add, e_imul = _entry(add, add["latency_max"]["pair"]), _entry(imul, imul["latency_max"]["pair"])
        # op -> flags goes through a cmov connector whose latency the reference loop pins down
        flags = next(p for p in add["latency"] if p["end"] == "flags")
        refs = [r for r in session.refs.values() if "cycles" in r]
        left = (unsettled("add latency", e_add) + unsettled("imul latency", e_imul)
                + unsettled("add -> flags", flags)
                + [f"connector reference loop ({r.get('code', '?')})" for r in refs if not r.get("stable")])
        return (e_add, e_imul, flags, session.refs), left

    e_add, e_imul, flags, refs = settled(run)
    assert e_add["value"] == pytest.approx(1.0, abs=0.06), e_add
    assert e_imul["value"] == pytest.approx(3.0, abs=0.15), e_imul
    assert flags["method"] == "chain + connector", flags
    # the connector's reference loop measured cleanly: the step's latency is exact
    assert flags["bound"] == "exact", (flags, refs)
    assert flags["value"] == pytest.approx(1.0, abs=0.06), flags


def test_skipped_form_has_a_reason(cat, session):
    doc = characterize(cat.get("HLT"), session)
    assert doc["status"] == "skipped" and "privileged" in doc["reason"]


# ------------------------------------------------------------------------------ no timing

class Fake:
    """measure() stand-in: cycles per copy by the exact code, else by a substring of it."""

    def __init__(self, table, default=1.0, nonlinear=()):
        self.table, self.default, self.calls, self.nonlinear = table, default, [], nonlinear

    def __call__(self, code, init=None, **kw):
        self.calls.append((code, init))
        v = self.table.get(code) or next((v for k, v in self.table.items() if k in code), self.default)
        ev = SimpleNamespace(value=v, uncertainty=0.001, samples=[v] * 3)
        linear = not any(k in code for k in self.nonlinear)
        return SimpleNamespace(events={"cycles": ev}, stable=True, warnings=[] if linear else ["not linear"],
                               stability={"stable": True, "linearity": {"linear": linear}},
                               backend={"name": "tsc", "reason": "no hardware PMU: test"})


def test_connector_bounds_exact_and_upper(cat):
    fake = Fake({"{load} vmovq xmm1, rbx": 9.0, "cmp rbx, 0\ncmovc rbx, rbx": 2.0,
                 "vmovq xmm1, rbx\nvmovq rbx, xmm1": 6.0, "cmovc": 4.0})
    s = Session(measure_fn=fake)
    # imul -> flags closed by cmovc into a scratch register and a movsx back (imul writes op0):
    # the reference loops (cmp + cmovc, movsx + movsx) take 2 cycles -> exact
    d = measure_pair(s, cat.get("IMUL (R64, R64)"), _pair(cat.get("IMUL (R64, R64)"), "op0 (R64) -> flags"))
    assert d["bound"] == "exact" and d["value"] == pytest.approx(2.0)
    assert d["connector"]["steps"] == ["cmov", "movsx"]
    # GPR -> XMM closed by vmovq r64, xmm: the reference round trip is 6 cycles -> only bounds
    movq = cat.get("VMOVQ (XMM, R64)")
    d = measure_pair(s, movq, latency_pairs(movq)[0])
    assert d["bound"] == "upper" and d["value"] == pytest.approx(8.0) and d["lower"] == pytest.approx(4.0)


def test_an_upper_bound_below_a_cycle_is_no_dependency(cat):
    from cyclebench.instructions.characterize import BELOW_A_CYCLE
    fake = Fake({"{load} vmovq xmm1, rbx": 1.5, "vmovq xmm1, rbx\nvmovq rbx, xmm1": 6.0})
    movq = cat.get("VMOVQ (XMM, R64)")
    # the loop (1.5) is at least the pair plus the connector (>= 1): the pair is at most 0.5
    d = measure_pair(Session(measure_fn=fake), movq, latency_pairs(movq)[0])
    assert d["value"] == 0.0 and d["bound"] == "exact" and d["label"] == BELOW_A_CYCLE
    assert d["bound_read"] == pytest.approx(0.5)


def test_memory_steps_may_be_free(cat):
    # Zen 2+ rename memory: a store/load pair may cost ~1 cycle, so their lower bound is 0
    assert C.lower_bound("store_g64") == 0 and C.lower_bound("load_v128") == 0
    assert C.lower_bound("store_g64", 1.0) == 0                 # renamed: the round trip is ~free
    # through the store queue (a 9-cycle round trip) a store and a load each take a cycle at least
    assert C.lower_bound("store_v128", 9.0) == 1 and C.lower_bound("load_v128", 9.0) == 1
    assert C.lower_bound("alu") == 1


def test_connectors_per_kind():
    rbx, xmm1, k1 = (C.port_for_register(r) for r in ("rbx", "xmm1", "k1"))
    mem = C.Port("MEM", bits=64, mem="[r14+0x40]")
    assert C.connect(C.Port("FLAGS"), rbx, {"rbx"}).lines == ["cmovc rbx, rbx"]
    # a register the form also writes: the flag goes through a scratch register, so that the loop
    # does not run through the form's own register -> register chain as well (bts rbx, 0)
    written = C.port_for_register("rbx")
    written.written = True
    assert C.connect(C.Port("FLAGS"), written, {"rbx"}).lines == ["cmovc r13, r13", "movsx ebx, r13w"]
    assert C.connect(rbx, C.Port("FLAGS"), {"rbx"}).lines == ["cmp rbx, 0"]
    assert C.connect(xmm1, rbx, {"rbx"}).lines == ["vmovq rbx, xmm1"]
    assert C.connect(rbx, mem, {"rbx"}).lines == ["mov qword ptr [r14+0x40], rbx"]
    assert C.connect(mem, xmm1, set()).lines == ["vmovq xmm1, qword ptr [r14+0x40]"]
    mask = C.port_for_register("k1", is_mask=True)
    assert C.connect(C.port_for_register("zmm2"), mask, set()).lines == ["vpcmpuq k1, zmm2, zmm31, 5"]
    addr = C.connect(xmm1, C.Port("ADDR", mem="[r14+0x40]"), {"rbx"})
    assert addr.lines[1:] == ["add r14, r13", "sub r14, r13"] and addr.steps == ["vec2gpr", "alu", "alu"]
    with pytest.raises(C.NoConnector):
        C.connect(C.port_for_register("st(1)"), rbx, set())


def test_pointer_connectors_keep_the_address(cat):
    # a string instruction's pointer (scasq reads [rdi]): a connector that overwrote it with a
    # flag, as a written register's does, made the copies fault at address 0
    rdi = C.port_for_register("rdi")
    rdi.written = rdi.address = True
    flags = C.connect(C.Port("FLAGS"), rdi, {"rdi", "rax"})
    assert flags.lines == ["cmovc r13, r13", "add rdi, r13", "sub rdi, r13"]
    assert flags.steps == ["cmov", "alu", "alu"]
    fake = Fake({}, default=16.0)
    doc = characterize(cat.get("SCASQ"), Session(measure_fn=fake))
    codes = {(p["start"], p["end"]): p["code"] or "" for p in doc["latency"]}
    assert "add rdi, r13" in codes["rdi", "flags"] and "movsx edi" not in codes["rdi", "flags"]


def test_throughput_breakers(cat):
    fake = Fake({}, default=16.0)
    s = Session(measure_fn=fake)
    adc = measure_throughput(s, cat.get("ADC_11 (R64, R64)"))
    assert adc["breakers"] == ["test r13, r13"]        # flags: uops.info's breaker
    assert adc["bound"] == "upper" and adc["value"] == pytest.approx(16.0 / adc["copies"])
    port_free = measure_throughput(s, cat.get("ADC_11 (R64, R64)"), breakers="zero idiom")
    assert port_free["breakers"] == ["xor r13d, r13d"]
    assert "r13" not in adc["code"].replace("test r13, r13", "")   # the copies leave it alone
    mul = measure_throughput(s, cat.get("MUL (R64)"))
    assert "xor eax, eax" in mul["breakers"]
    div = measure_throughput(s, cat.get("DIV (R64)"))
    assert "mov rax, 0x7fffffffffffffff" in div["breakers"] and "xor edx, edx" in div["breakers"]
    imul = measure_throughput(s, cat.get("IMUL (R64, R64)"))
    assert imul["breakers"] == [] and imul["bound"] == "exact"
    assert len({line.split(",")[0] for line in imul["code"].splitlines()}) >= 10   # rotating dests


def test_operand_values(cat):
    init = value_init(["paddd xmm1, xmm2"])
    assert init[0] == "mov r15, 0x3ff0000000000000" and init[-1] == "vzeroupper"
    # 1.0 per element: a division chain x/1 never drifts into denormals (a slow path)
    assert value_pattern(cat.get("VDIVPS (YMM, YMM, YMM)")) == 0x3F8000003F800000
    assert value_pattern(cat.get("VDIVPD (YMM, YMM, YMM)")) == 0x3FF0000000000000
    assert value_pattern(cat.get("VPSHUFD (YMM, YMM, I8)")) == 0x3FF0000000000000
    assert "vpbroadcastq zmm3, r15" in value_init(["vpaddq zmm3, zmm3, zmm4"])
    assert value_init(["add rax, rbx"]) == []


def test_a_figure_that_is_not_linear_in_the_copies_is_noted(cat):
    # only the throughput code (16 copies, rotating destinations) has "imul rdx, rcx"
    fake = Fake({}, default=3.0, nonlinear=("imul rdx, rcx",))
    doc = characterize(cat.get("IMUL (R64, R64)"), Session(measure_fn=fake))
    assert doc["throughput"]["linear"] is False and doc["throughput"]["warnings"] == ["not linear"]
    assert all(p["linear"] is True for p in doc["latency"])
    assert any("changed with the number of copies (" in n and "throughput" in n for n in doc["notes"])
    clean = characterize(cat.get("IMUL (R64, R64)"), Session(measure_fn=Fake({}, default=3.0)))
    assert not any("number of copies" in n for n in clean["notes"])


def test_zero_idiom_and_eliminated_move_report_zero_with_label(cat):
    # a chain faster than one cycle per copy carries no dependency: latency 0, labelled
    fake = Fake({"vpxor xmm1, xmm1, xmm1": 0.25, "mov rbx, rbx": 0.2}, default=1.0)
    vpxor = characterize(cat.get("VPXOR (XMM, XMM, XMM)"), Session(measure_fn=fake), throughput=False)
    same = [p for p in vpxor["latency"] if p["same_register"]]
    assert [(p["value"], p["label"]) for p in same] == [(0.0, "dependency broken")]
    assert same[0]["cycles_per_copy"] == 0.25 and same[0]["start"].startswith("same register")
    apart = [p for p in vpxor["latency"] if not p["same_register"]]      # distinct registers: 1
    assert apart and all(p["value"] == 1.0 and p["label"] is None for p in apart)
    mov = characterize(cat.get("MOV_89 (R64, R64)"), Session(measure_fn=fake), throughput=False)
    assert mov["latency_max"]["value"] == 0.0
    assert [(p["label"], p["same_register"]) for p in mov["latency"]] == [("move eliminated", True)]


@pytest.mark.measured
def test_zero_idiom_measured(cat, session):
    doc = characterize(cat.get("VPXOR (XMM, XMM, XMM)"), session, throughput=False)
    def run():
        doc = characterize(cat.get("VPXOR (XMM, XMM, XMM)"), session, throughput=False)
        same = next(p for p in doc["latency"] if p["same_register"])
        return same, unsettled("vpxor same-register chain", same)

    same = settled(run)
    assert (same["value"], same["label"]) == (0.0, "dependency broken"), same


def test_fixed_register_throughput_does_not_chain(cat):
    # AND AL, imm8 reads and writes AL: a full-width zero idiom before each copy breaks the chain
    # (and the flags with it: no second breaker)
    fake = Fake({}, default=16.0)
    tp = measure_throughput(Session(measure_fn=fake), cat.get("AND (AL, I8)"))
    assert tp["carried"] == ["rax"] and tp["breakers"] == ["xor eax, eax"]
    assert tp["code"].count("xor eax, eax") == tp["copies"] == tp["code"].count("and al, 0x2")
    adc = measure_throughput(Session(measure_fn=fake), cat.get("ADC (AL, I8)"))
    assert adc["breakers"] == ["xor eax, eax"]


@pytest.mark.measured
def test_fixed_register_throughput_measured(cat):
    # a chain through AL would cost a cycle per copy; broken, the copies overlap
    def run():
        tp = measure_throughput(Session(**SETTLE), cat.get("AND (AL, I8)"))
        return tp, unsettled("and al, imm8 throughput", tp)

    tp = settled(run)
    assert tp["value"] < 0.75, tp


def test_rmw_memory_copies_one_width_apart_with_the_line_alternative(cat):
    fake = Fake({"[r14+0x42]": 32 * 0.56, "[r14+0x80]": 32.0}, default=32.0)   # per 32 copies
    tp = measure_throughput(Session(measure_fn=fake), cat.get("AND (M16, I8)"))
    assert "word ptr [r14+0x40]" in tp["code"] and "word ptr [r14+0x42]" in tp["code"]
    assert tp["value"] == pytest.approx(0.56) and tp["copies"] == 32   # the memory chain spans 32 copies
    alt = tp["alternative"]
    assert alt["stride"] == 64 and alt["value"] == pytest.approx(1.0) and "[r14+0x80]" in alt["code"]
    assert "one cache line per copy: 1.00" in tp["note"]


def test_masked_access_takes_the_common_path_and_is_marked_data_dependent(cat):
    class ByValue(Fake):          # a masked load: every lane off (sign bits clear) takes a slow path
        def __call__(self, code, init=None, **kw):
            self.default = len(code.splitlines()) * (0.5 if "0xffffffffffffffff" in (init or "") else 370.0)
            return super().__call__(code, init, **kw)
    form = cat.get("VPMASKMOVD (YMM, YMM, M256)")
    doc = characterize(form, Session(measure_fn=ByValue({})))
    measured = [p for p in doc["latency"] if p["init"]]
    assert measured and all("0xffffffffffffffff" in p["init"] for p in measured)   # latencies: same values
    tp = doc["throughput"]
    assert tp["value"] == pytest.approx(0.5) and tp["data_dependent"] is True
    assert sorted(v["value"] for v in tp["values"]) == pytest.approx([0.5, 370.0])
    assert any(n.startswith("data-dependent throughput: 0.50") for n in doc["notes"])
    plain = characterize(cat.get("IMUL (R64, R64)"), Session(measure_fn=Fake({}, default=3.0)))
    assert "values" not in plain["throughput"]


def test_connector_latency_never_negative_when_memory_is_renamed(cat):
    # the store+load reference loop goes through the store queue (9 cycles: a step costs >= 1),
    # but this chain ran at 0.5 per copy: renaming bypassed the load, so it may cost 0 here
    fake = Fake({"mov dword ptr [r14+0x40], ": 9.0}, default=0.5)
    form = cat.get("ADD (M32, R32)")
    pair = next(p for p in latency_pairs(form) if p.start.kind == "op" and p.end.kind == "mem")
    d = measure_pair(Session(measure_fn=fake), form, pair)
    assert d["value"] >= 0 and d["connector"]["latency_lower"] == 0


def test_flags_connector_reads_a_flag_the_form_writes(cat):
    # adox writes only OF: a cmovc connector would not depend on it (the chain would read 0)
    form = cat.get("ADOX (R32, R32)")
    d = measure_pair(Session(measure_fn=Fake({}, default=2.0)), form, _pair(form, "op0 (R32) -> flags"))
    assert d["connector"]["code"].startswith("cmovo ")
    adc = cat.get("ADC_11 (R64, R64)")
    d = measure_pair(Session(measure_fn=Fake({}, default=2.0)), adc, _pair(adc, "op0 (R64) -> flags"))
    assert d["connector"]["code"].startswith("cmovc ")


def test_a_chain_that_runs_at_the_issue_rate_is_an_upper_bound():
    from cyclebench.instructions.characterize import ISSUE_BOUND, mark_issue_bound

    def doc(chain, tp, tp_bound="exact", carried=(), label=None):
        return {"latency": [{"value": chain, "bound": "exact", "label": label}],
                "throughput": {"value": tp, "bound": tp_bound, "carried": list(carried)}}
    slow = doc(4.0, 4.0)                              # RCL (R64, 0) here: chain 4 = throughput 4
    assert mark_issue_bound(slow) and slow["latency"][0]["bound"] == "upper"
    assert slow["latency"][0]["label"] == ISSUE_BOUND
    for exact in (doc(3.0, 1.0),                      # IMUL: copies issue every cycle, the 3 is real
                  doc(1.0, 1.0),                      # no real dependency is shorter than a cycle
                  doc(4.0, 4.0, tp_bound="upper"),    # the throughput itself was a chain
                  doc(4.0, 4.0, carried=["flags"]),
                  doc(0.0, 4.0, label="dependency broken")):
        assert not mark_issue_bound(exact) and exact["latency"][0]["bound"] == "exact"


# ------------------------------------------------------------------------------ pinned mask steps

def test_mask_connectors_follow_the_vector_width():
    k1 = C.port_for_register("k1")
    for reg, bits in (("xmm2", 128), ("ymm2", 256), ("zmm2", 512)):
        v = C.port_for_register(reg)
        assert C.connect(v, k1, set()).steps == [f"vec2k{bits}"]
        assert C.connect(k1, v, set()).steps == [f"k2vec{bits}"]
        # each width has its own reference loop: Zen 4's vpcmpuq takes 3, 4, 5 cycles by width
        loop = C.REFERENCES[C.reference_of(f"k2vec{bits}")][0]
        assert f"vpcmpuq k1, {reg[0]}mm1, {reg[0]}mm31, 5" in loop
    mask = C.port_for_register("k1", is_mask=True)
    assert C.connect(C.port_for_register("rbx"), mask, {"rbx"}).steps == ["gpr2vec", "vec2k128"]


def test_the_vector_to_mask_step_compares_two_registers():
    # a compare of a register with itself has a constant result, which a core may take as an idiom
    # that waits for nothing (Zen 4 does for vpcmpgtq k, x, x): the chain's register is compared with
    # register 31, zeroed in the connector's init, so that every lane reads "not less than"
    k1, mask = C.port_for_register("k1"), C.port_for_register("k1", is_mask=True)
    for end in (C.port_for_register("ymm2"), C.port_for_register("rbx")):
        for start in (k1, mask):
            try:
                conn = C.connect(end, start, {"rbx"})
            except C.NoConnector:
                continue
            compares = [line for line in conn.lines if line.startswith("vpcmp")]
            for line in compares:
                regs = [r.strip() for r in line.split(",")[1:3]]
                assert regs[0] != regs[1] and regs[1].endswith("mm31"), line
            assert not compares or C.ZERO_INIT in conn.init
    loops = [C.REFERENCES[f"vec2k{b}"][0] for b in (128, 256, 512)] + [C.PINNING[f"vec2k{b}"][0] for b in (128, 256, 512)]
    for loop in loops:
        first = loop.split("; ")[0]
        assert first.split(",")[1].strip() != first.split(",")[2].strip(), loop


def test_pinned_latency_is_the_loop_minus_the_closing_instruction():
    assert C.pinned(4.0, 1.0) == 3.0
    assert C.pinned(6.14, 1.0) == 5.0           # a loop's fraction belongs to no single step
    assert C.pinned(6.5, 1.0) == 5.5            # far from a whole count: kept as measured
    assert C.pinned(4.0, 0.3) is None           # the closing move was eliminated: no pin
    assert C.pinned(1.2, 1.0) is None           # the step would read below a cycle
    assert C.partner_of_pinned("k2vec256") == "vec2k256" and C.partner_of_pinned("vec2k128") == "vec2k128"
    assert C.partner_of_pinned("vec2gpr") is None


def _mask_fake(closing=1.0, plain=6.12, pinned=6.14, chain=7.0):
    return Fake({"vpcmpuq k1, zmm1, zmm31, 5\nvpmovm2q zmm1, k1": plain,
                 "vpcmpuq k1, zmm1, zmm31, 5\nvmovdqu64 zmm1{k1}, zmm1": pinned,
                 "vmovdqu64 zmm1{k1}, zmm1": closing, "vpsllvq": chain})


def test_mask_pair_is_exact_when_the_mask_step_is_pinned(cat):
    s = Session(measure_fn=_mask_fake())
    assert s.step_bounds("vec2k512") == (5.0, 5.0) and s.step_bounds("k2vec512") == (1.0, 1.0)
    form = cat.get("VPSLLVQ_Z (ZMM, K, ZMM, ZMM)")
    d = measure_pair(s, form, _pair(form, "op1 (K) -> op0 (ZMM)"))
    assert d["connector"]["steps"] == ["vec2k512"]
    assert d["bound"] == "exact" and d["value"] == pytest.approx(2.0)


def test_mask_pair_stays_a_bound_when_the_pin_fails(cat):
    # the closing masked move carried no dependency (0.3 per copy): nothing to subtract
    s = Session(measure_fn=_mask_fake(closing=0.3))
    assert s.step_bounds("vec2k512") == (1.0, pytest.approx(5.12))
    form = cat.get("VPSLLVQ_Z (ZMM, K, ZMM, ZMM)")
    d = measure_pair(s, form, _pair(form, "op1 (K) -> op0 (ZMM)"))
    assert d["bound"] == "upper" and d["value"] == pytest.approx(6.0)
    assert d["lower"] == pytest.approx(7.0 - 5.12)


def test_exact_connector_chain_rounds_to_the_whole_cycle(cat):
    # uops.info rounds a chain's cycles (int(cycles + .2)): a 512-bit mask loop's fraction is no step's
    form = cat.get("VPSLLVQ_Z (ZMM, K, ZMM, ZMM)")
    for chain, expected in ((7.13, 2.0), (6.85, 2.0), (7.5, 2.5)):
        d = measure_pair(Session(measure_fn=_mask_fake(chain=chain)), form, _pair(form, "op1 (K) -> op0 (ZMM)"))
        assert d["bound"] == "exact" and d["value"] == pytest.approx(expected)


# ------------------------------------------------------------------------------ memory chains

def test_memory_chain_fill_goes_between_the_value_and_memory():
    mem = C.Port("MEM", bits=256, mem="[r14+0x40]")
    ymm = C.port_for_register("ymm1")
    store = C.connect(ymm, mem, set())
    f = M.filled(store, ymm, mem, set())
    assert f.lines == ["vpand ymm1, ymm1, ymm1"] * M.FILL_VEC + ["vmovdqu ymmword ptr [r14+0x40], ymm1"]
    assert f.steps == ["vand256"] * M.FILL_VEC + ["store_v256"]
    # a narrow store is a 32-bit vmovd; the fill ANDs the whole register (a VEX xmm AND would clear
    # the upper lanes of the form's output)
    m8 = C.Port("MEM", bits=8, mem="[r14+0x40]")
    f = M.filled(C.connect(ymm, m8, set()), ymm, m8, set())
    assert f.lines[-2:] == ["vpand ymm1, ymm1, ymm1", "vmovd dword ptr [r14+0x40], xmm1"]
    zmm17 = C.port_for_register("zmm17")
    assert M.filled(C.connect(zmm17, mem, set()), zmm17, mem, set()).lines[0] == "vpandd zmm17, zmm17, zmm17"
    # a wide register closed from memory: uops.info's 128-bit load and ANDs at that width
    m512 = C.Port("MEM", bits=512, mem="[r14+0x40]")
    for reg, load, andd in (("zmm1", "vmovdqu xmm1", "vpand xmm1"), ("zmm17", "vmovdqu64 xmm17", "vpandd xmm17")):
        z = C.port_for_register(reg)
        f = M.filled(C.connect(m512, z, set()), m512, z, set())
        assert f.lines[0] == f"{load}, xmmword ptr [r14+0x40]" and f.lines[1] == f"{andd}, {reg.replace('z', 'x')}, {reg.replace('z', 'x')}"
        assert f.steps == ["load_v128"] + ["vand128"] * M.FILL_VEC
    # a GPR loaded back from memory: add/sub pairs with a free register after the load
    m32 = C.Port("MEM", bits=32, mem="[r14+0x40]")
    ecx = C.port_for_register("ecx")
    f = M.filled(C.connect(m32, ecx, {"rcx"}), m32, ecx, {"rcx", "r13"})
    assert f.lines[0] == "mov ecx, dword ptr [r14+0x40]" and f.lines[1:3] == ["add rcx, r12", "sub rcx, r12"]
    assert f.steps == ["load_g32"] + ["alu"] * 2 * M.FILL_GPR
    # the address: more value-preserving add/sub pairs on the base register
    addr = C.Port("ADDR", mem="[r14+0x40]")
    f = M.filled(C.connect(ymm, addr, set()), ymm, addr, set())
    assert f.lines[-2:] == ["add r14, r13", "sub r14, r13"] and f.steps.count("alu") == 2 + 2 * M.FILL_GPR
    # a GPR the form wrote in part (8 or 16 bits) is first moved whole into another register,
    # and stored from that one: reading it merged, or storing it again, waits for the merge
    m16 = C.Port("MEM", bits=16, mem="[r14+0x40]")
    bx = C.port_for_register("bx")
    f = M.filled(C.connect(bx, m16, {"rbx"}), bx, m16, {"rbx"})
    assert f.lines == ["movsx r13d, bx", "add r13, r12", "sub r13, r12", "add r13, r12",
                       "mov word ptr [r14+0x40], r13w"]
    assert f.steps == ["movsx", "alu", "alu", "alu", "store_g16"] and "movsx" in C.REFERENCES
    # from BH (the store names BL, its 64-bit register's low byte): no REX, so no R8..R15
    m8 = C.Port("MEM", bits=8, mem="[rdi+0x40]")
    bh = C.port_for_register("bh")
    f = M.filled(C.connect(bh, m8, {"rbx", "rdi"}), bh, m8, {"rbx", "rdi"})
    assert f.lines[0] == "movsx edx, bh" and f.lines[-1] == "mov byte ptr [rdi+0x40], dl"
    # a 32-bit write zero-extends (nothing to merge): the add/sub fill on the register itself
    ebx = C.port_for_register("ebx")
    f = M.filled(C.connect(ebx, m16, {"rbx"}), ebx, m16, {"rbx"})
    assert f.lines[0] == "add rbx, r13" and f.steps[0] == "alu"
    # no fill for a mask register or for a chain that does not go through memory
    k1 = C.port_for_register("k1")
    assert M.filled(C.connect(k1, C.Port("MEM", bits=64, mem="[r14+0x40]"), set()), k1,
                    C.Port("MEM", bits=64, mem="[r14+0x40]"), set()) is None
    assert M.filled(C.connect(ymm, k1, set()), ymm, k1, set()) is None


def _store_fake(plain, filled):
    return Fake({"vpsubw ymm1{k1}, ymm2, ymmword ptr [r14+0x40]\nvmovdqu": plain,
                 "vpsubw ymm1{k1}, ymm2, ymmword ptr [r14+0x40]\nvpand": filled,
                 "vmovdqu ymmword ptr [r14+0x40], ymm1\nvmovdqu ymm1, ymmword ptr [r14+0x40]": 10.0,
                 "vpand ymm1, ymm1, ymm1": 1.0})


@pytest.mark.parametrize("plain, filled, expected, chosen", [
    (12.0, 16.0, 10.0, "filled"),      # Zen 4: the round trip is a cycle shorter behind five ANDs
    (12.0, 18.0, 11.0, None),          # the fill did not help: the plain chain's bound stands
    (12.0, 4.0, 11.0, None),           # faster than the fill's own five cycles: not a reading
])
def test_memory_pair_keeps_the_lower_of_the_plain_and_filled_bounds(cat, plain, filled, expected, chosen):
    form = cat.get("VPSUBW (YMM, K, YMM, M256)")
    d = measure_pair(Session(measure_fn=_store_fake(plain, filled)), form,
                     _pair(form, "mem op3 (M256) -> op0 (YMM)"))
    assert d["bound"] == "upper" and d["value"] == pytest.approx(expected)
    assert d["connector"].get("chosen") == chosen
    assert d["lower"] <= d["value"]


# ------------------------------------------------------------------------------ copies per run

class ByCopies(Fake):
    """Cycles per copy by the number of copies in the snippet (one instruction per line)."""

    def __init__(self, per_copy):
        super().__init__({})
        self.per_copy = per_copy

    def __call__(self, code, init=None, **kw):
        n = len(code.splitlines())
        self.default = n * self.per_copy.get(n, self.per_copy["else"])
        return super().__call__(code, init, **kw)


def test_throughput_keeps_the_faster_of_16_and_4_copies(cat):
    from cyclebench.instructions.throughput import FEW_COPIES, measure_throughput
    form = cat.get("VPTESTNMD (K, XMM, M128)")
    tp = measure_throughput(Session(measure_fn=ByCopies({FEW_COPIES: 0.50, "else": 0.58})), form)
    assert tp["value"] == pytest.approx(0.50) and tp["copies"] == FEW_COPIES
    # a copy under a cycle with 4: 8 copies are not tried
    assert tp["by_copies"] == {"16": pytest.approx(0.58), str(FEW_COPIES): pytest.approx(0.50)}
    assert len(tp["code"].splitlines()) == FEW_COPIES
    # within noise of each other: the full count stays
    tp = measure_throughput(Session(measure_fn=ByCopies({FEW_COPIES: 0.495, "else": 0.50})), form)
    assert tp["copies"] == 16 and tp["value"] == pytest.approx(0.50)
    # 8 copies, uops.info's other count, when it is the fastest
    tp = measure_throughput(Session(measure_fn=ByCopies({8: 0.67, "else": 1.0})), cat.get("VCOMPRESSPD (XMM, K, XMM)"))
    assert tp["copies"] == 8 and tp["value"] == pytest.approx(0.67) and len(tp["code"].splitlines()) == 8
    assert set(tp["by_copies"]) == {"16", str(FEW_COPIES), "8"}
    # read-modify-write memory keeps its 32 copies (each address chains through a store-forward)
    rmw = measure_throughput(Session(measure_fn=ByCopies({FEW_COPIES: 0.1, "else": 1.0})),
                             cat.get("AND (M32, I8)"))
    assert rmw["copies"] == 32 and "by_copies" not in rmw and rmw["one_address"]["value"] == pytest.approx(1.0)


def test_read_modify_write_shows_one_address_repeated_beside_the_figure(cat):
    """uops.info's count 1 for a read-modify-write form: one copy on one address, measured and shown,
    never kept (it reproduces only some published figures of locked forms)."""
    from cyclebench.instructions.throughput import measure_throughput
    tp = measure_throughput(Session(measure_fn=ByCopies({1: 6.2, "else": 7.5})), cat.get("AND (M32, I8)"))
    assert tp["copies"] == 32 and tp["value"] == pytest.approx(7.5)
    assert tp["one_address"] == {"value": pytest.approx(6.2), "stable": True, "copies": 32, "with": pytest.approx(7.5)}


class ByProcess(Fake):
    """Cycles per copy of the full-count copies by run: one runner process after another."""

    def __init__(self, per_copy, readings):
        super().__init__({})
        self.per_copy, self.readings = per_copy, list(readings)

    def __call__(self, code, init=None, **kw):
        n = len(code.splitlines())
        self.default = n * (self.readings.pop(0) if n == 16 and self.readings else self.per_copy)
        return super().__call__(code, init, **kw)


def test_throughput_keeps_the_fastest_process(cat):
    from cyclebench.instructions.fastest import PROCESSES
    from cyclebench.instructions.throughput import measure_throughput
    form = cat.get("VPEXPANDB (XMM, XMM)")
    # the first process settles at 1.04 (off the port grid, in both placements), a later one at
    # 0.67: every more process runs, the fastest is kept, all are shown
    tp = measure_throughput(Session(measure_fn=ByProcess(1.04, [1.04, 1.04, 1.04, 0.667] + [1.04] * 9)), form)
    assert tp["value"] == pytest.approx(0.667) and tp["copies"] == 16
    assert len(tp["by_process"]) == PROCESSES + 1 and min(tp["by_process"]) == pytest.approx(0.667)
    # a figure on the port grid (1.00: one µop a cycle) is not searched over processes
    tp = measure_throughput(Session(measure_fn=ByProcess(1.0, [1.0, 0.667] + [1.0] * 9)), form)
    assert "by_process" not in tp and tp["value"] == pytest.approx(1.0)
    # within noise of each other: the first reading stands
    tp = measure_throughput(Session(measure_fn=ByProcess(0.70, [0.70] + [0.69] * 9)), form)
    assert tp["value"] == pytest.approx(0.70)


# ------------------------------------------------------------------------------ isolated pairs

def test_breakers_cover_the_other_read_written_operands(cat):
    from cyclebench.instructions.instantiate import chain, instantiate
    from cyclebench.instructions.isolate import breakers
    xadd = cat.get("XADD (R32, R32)")
    pair = _pair(xadd, "op1 (R32) -> op1 (R32)")
    inst = chain(xadd, pair)
    other = inst.regs[0]                       # the destination, read and written, not on this pair
    assert breakers(xadd, inst, pair, None, set()) == [f"mov {other}, 0"]
    adc = cat.get("ADC_13 (R64, R64)")         # the carry flag is read and written: broken by a test
    pair = _pair(adc, "op0 (R64) -> op0 (R64)")
    lines = breakers(adc, chain(adc, pair), pair, None, {"rbx", "rcx"})
    assert len(lines) == 1 and lines[0].startswith("test ")
    for name, text in (("VFMADD231PS (XMM, XMM, XMM)", "op1 (XMM) -> op0 (XMM)"),   # nothing else carried
                       ("DIV (R64)", None)):                                          # uops.info: none
        form = cat.get(name)
        pair = _pair(form, text) if text else latency_pairs(form)[0]
        assert breakers(form, chain(form, pair) or instantiate(form), pair, None, set()) == []


def test_a_pair_alone_in_its_loop_keeps_the_lower_figure(cat):
    from cyclebench.instructions.isolate import INDEPENDENT
    xadd = cat.get("XADD (R32, R32)")
    # the pair's chain runs at the other operand's pace until that is broken: no dependency left
    d = measure_pair(Session(measure_fn=Fake({"mov e": 0.5}, default=1.0)), xadd, _pair(xadd, "op1 (R32) -> op1 (R32)"))
    assert d["value"] == 0.0 and d["label"] == INDEPENDENT and d["isolated"]["without"] == pytest.approx(1.0)
    # breaking the others changes nothing: the first figure stands, the experiment is kept beside it
    d = measure_pair(Session(measure_fn=Fake({}, default=1.0)), xadd, _pair(xadd, "op1 (R32) -> op1 (R32)"))
    assert d["value"] == pytest.approx(1.0) and d["label"] is None and d["isolated"]["breakers"]


class UnstableFirst(Fake):
    """The first reading of each snippet containing ``key`` is unstable (a burst on the host)."""

    def __init__(self, table, key):
        super().__init__(table)
        self.key, self.seen = key, set()

    def __call__(self, code, init=None, **kw):
        r = super().__call__(code, init, **kw)
        if self.key in code and code not in self.seen:
            self.seen.add(code)
            r.stable = False
        return r


def test_an_unstable_reference_reading_is_measured_again(cat):
    fake = _mask_fake()
    s = Session(measure_fn=UnstableFirst(fake.table, "vmovdqu64 zmm1{k1}, zmm1"))
    assert s.step_bounds("vec2k512") == (5.0, 5.0)          # pinned on the second reading
    assert s.refs["pin:vec2k512"]["stable"]


class RcrCopies(Fake):
    """Fake, with the throughput copies of rcr at 3 cycles each however many there are."""

    def __call__(self, code, init=None, **kw):
        out = super().__call__(code, init, **kw)
        if "\nrcr" in code and "\nadd " not in code:
            out.events["cycles"].value = 3.0 * code.count("rcr ")
        return out


class StepsAdd(RcrCopies):
    """RcrCopies, with a chain followed by one-cycle steps (add, sub, cmc) taking a cycle more for each."""

    def __call__(self, code, init=None, **kw):
        out = super().__call__(code, init, **kw)
        lines = code.splitlines()
        if code not in self.table and len(lines) > 2:
            out.events["cycles"].value += sum(ln.startswith(("add ", "sub ", "cmc")) for ln in lines)
        return out


def test_an_issue_bound_chain_is_measured_again_past_the_issue_interval(cat):
    from cyclebench.instructions.characterize import FILLED
    form = cat.get("RCR (R32, 0)")
    # alone the chain runs at the form's issue interval (3); with 8 one-cycle steps, 10: 2 each
    fake = RcrCopies({"add rbx, rcx\nsub rbx, rcx": 2.0, "\nadd ": 10.0}, default=3.0)
    doc = characterize(form, Session(measure_fn=fake))     # the copies: 3 each
    pair = next(p for p in doc["latency"] if p["start"] == p["end"] == "op0 (R32)")
    assert pair["label"] == FILLED and pair["value"] == pytest.approx(2.0) and pair["bound"] == "exact"
    assert pair["filled"]["without"] == pytest.approx(3.0) and pair["filled"]["steps"] == 8
    # a chain the steps do not shorten stays an issue-bound upper bound
    doc = characterize(form, Session(measure_fn=RcrCopies({"add rbx, rcx\nsub rbx, rcx": 2.0, "\nadd ": 11.0}, default=3.0)))
    pair = next(p for p in doc["latency"] if p["start"] == p["end"] == "op0 (R32)")
    assert pair["label"] == "issue-bound" and pair["bound"] == "upper"


def test_a_latency_only_run_checks_its_chains_against_the_issue_interval(cat):
    """Without the throughput a chain at the form's issue interval would stand as its latency: a
    latency-only run reads the copies for the check alone, fills past the interval as a full run
    does, and keeps no throughput figure; a form whose chains take a cycle reads no copies."""
    from cyclebench.instructions.characterize import FILLED
    fake = RcrCopies({"add rbx, rcx\nsub rbx, rcx": 2.0, "\nadd ": 10.0}, default=3.0)
    doc = characterize(cat.get("RCR (R32, 0)"), Session(measure_fn=fake), throughput=False)
    pair = next(p for p in doc["latency"] if p["start"] == p["end"] == "op0 (R32)")
    assert pair["label"] == FILLED and pair["value"] == pytest.approx(2.0) and pair["bound"] == "exact"
    assert doc["throughput"] is None and any("no figure of this latency-only run" in n for n in doc["notes"])
    plain = Fake({}, default=1.0)
    doc = characterize(cat.get("ADD_01 (R64, R64)"), Session(measure_fn=plain), throughput=False)
    assert doc["throughput"] is None and not any("latency-only" in n for n in doc["notes"])
    assert all(p["label"] is None for p in doc["latency"] if p.get("value") is not None)


class ByPlacement(Fake):
    """Cycles per copy by the code's alignment offset (16 or more copies), 1.0 for fewer."""

    def __init__(self, per_offset):
        super().__init__({})
        self.per_offset, self.offsets = per_offset, []

    def __call__(self, code, init=None, **kw):
        n = len(code.splitlines())
        self.offsets.append(kw.get("alignment_offset", 0))
        self.default = n * (self.per_offset[kw.get("alignment_offset", 0)] if n > 4 else 1.0)
        return super().__call__(code, init, **kw)


def test_throughput_off_the_port_grid_is_measured_in_a_second_placement(cat):
    from cyclebench.instructions.fastest import SHIFT, on_port_grid
    from cyclebench.instructions.throughput import measure_throughput
    assert on_port_grid(0.25) and on_port_grid(2 / 3) and on_port_grid(4 / 3)
    assert not on_port_grid(0.78) and not on_port_grid(1.54)
    form = cat.get("VEXPANDPD (XMM, XMM)")
    fake = ByPlacement({0: 0.78, SHIFT: 2 / 3})
    tp = measure_throughput(Session(measure_fn=fake), form)
    assert tp["value"] == pytest.approx(2 / 3) and tp["by_placement"] == {"0": pytest.approx(0.78),
                                                                       str(SHIFT): pytest.approx(2 / 3)}
    fake = ByPlacement({0: 0.5, SHIFT: 0.25})       # on the grid: one placement only
    tp = measure_throughput(Session(measure_fn=fake), form)
    assert tp["value"] == pytest.approx(0.5) and "by_placement" not in tp and SHIFT not in fake.offsets


def test_denormals_are_not_the_common_path(cat):
    from cyclebench.instructions.throughput import measure_throughput
    from cyclebench.instructions.values import DENORMALS, with_values

    class ByValues(Fake):
        def __call__(self, code, init=None, **kw):
            self.default = len(code.splitlines()) * (0.2 if f"{DENORMALS:#x}" in (init or "") else 0.5)
            return super().__call__(code, init, **kw)

    s = Session(measure_fn=ByValues({}))
    form = cat.get("VGETMANTPD (YMM, K, M64_1to4, I8)")
    tp, note = with_values(s, form, measure_throughput(s, form), {})
    assert tp["value"] == pytest.approx(0.5) and tp["pattern"] != DENORMALS
    assert note and "0.20" in note and "without denormals" in note


def test_a_throughput_below_the_resolution_is_a_bound_never_a_cost(cat):
    """measure() gives an upper bound where B - A is within the noise: the table shows that bound,
    never the value beside it (which may be negative)."""
    class Below(Fake):
        def __call__(self, code, init=None, **kw):
            r = super().__call__(code, init, **kw)
            r.events["cycles"].upper_bound = 4.0 * 16        # per run of the copies
            return r
    d = measure_throughput(Session(measure_fn=Below({}, default=-4.74 * 16)), cat.get("IMUL (R64, R64)"))
    assert d["bound"] == "upper" and d["value"] > 0 and "below the resolution" in d["note"]
    assert d["value"] * d["copies"] == pytest.approx(64.0)


def test_a_chain_as_long_as_a_throughput_with_breakers_is_filled_too(cat):
    from cyclebench.instructions.characterize import FILLED
    form = cat.get("RCR (R32, I8)")      # the flags carried between the copies: test r, r breaks them
    fake = RcrCopies({"add rbx, rcx\nsub rbx, rcx": 2.0, "\ncmc\ncmc\ncmc": 10.0, "cmc\ncmc": 2.0,
                      "\nadd ": 10.0}, default=3.0)
    doc = characterize(form, Session(measure_fn=fake))
    assert doc["throughput"]["bound"] == "upper" and doc["throughput"]["carried"] == ["flags"]
    pair = next(p for p in doc["latency"] if p["start"] == p["end"] == "op0 (R32)")
    assert pair["label"] == FILLED and pair["value"] == pytest.approx(2.0) and pair["filled"]["step"] == "alu"
    flags = next(p for p in doc["latency"] if p["start"] == p["end"] == "flags")
    assert flags["label"] == FILLED and flags["value"] == pytest.approx(2.0) and flags["filled"]["step"] == "cmc"
    # steps that do not shorten it leave the exact chain alone: nothing was marked (a loop with
    # steps after the chain runs the chain and its steps: the fill and unlinked.py read 3 again)
    doc = characterize(form, Session(measure_fn=StepsAdd({"add rbx, rcx\nsub rbx, rcx": 2.0}, default=3.0)))
    pair = next(p for p in doc["latency"] if p["start"] == p["end"] == "op0 (R32)")
    assert pair["bound"] == "exact" and pair["value"] == pytest.approx(3.0) and not pair.get("label")


class RmwCopies(Fake):
    """Fake, with the throughput copies of a memory rcr at 4 cycles each."""

    def __call__(self, code, init=None, **kw):
        out = super().__call__(code, init, **kw)
        if code.count("rcr ") > 1:
            out.events["cycles"].value = 4.0 * code.count("rcr ")
        return out


def test_a_chain_through_read_modify_written_memory_is_filled_past_the_round_trip(cat):
    """Every link of a memory form's flags chain goes through its one address: the store
    forwarded to the next link's load bounds it (4.44 a link), not the pair; ten cmc steps
    after it outlast that bound and leave the pair (2)."""
    from cyclebench.instructions.characterize import FILLED
    form = cat.get("RCR (M16, I8)")
    fake = RmwCopies({"\ncmc\ncmc\ncmc": 12.0, "cmc\ncmc": 2.0}, default=4.444)
    doc = characterize(form, Session(measure_fn=fake))
    flags = next(p for p in doc["latency"] if p["start"] == p["end"] == "flags")
    assert flags["label"] == FILLED and flags["value"] == pytest.approx(2.0) and flags["bound"] == "exact"
    assert flags["filled"]["step"] == "cmc" and flags["filled"]["steps"] == 10
    assert flags["filled"]["without"] == pytest.approx(4.444)
    # a pair into memory is never filled: the memory round trip is its chain
    assert not any(p.get("filled") for p in doc["latency"] if p["end"].startswith("mem "))


def test_narrow_read_modify_write_copies_are_also_measured_one_word_apart(cat):
    form = cat.get("SAR (M8, 0)")
    # 32 copies: one byte apart 28 cycles (they share 8-byte words), one word apart 16, one line 32
    fake = Fake({"[r14+0x41]": 28.0, "[r14+0x48]": 16.0}, default=32.0)
    tp = measure_throughput(Session(measure_fn=fake), form)
    assert tp["stride"] == 8 and tp["value"] == pytest.approx(0.5) and tp["code"].count("\n") == 31
    assert tp["operand_width_apart"]["value"] == pytest.approx(28.0 / 32)
    assert tp["alternative"]["value"] == pytest.approx(1.0)
    # no faster one word apart: uops.info's addresses stay; 8-byte operands have no such copies
    tp = measure_throughput(Session(measure_fn=Fake({"[r14+0x41]": 16.0}, default=16.0)), form)
    assert "stride" not in tp and tp["word_apart"]["value"] == pytest.approx(0.5)
    tp = measure_throughput(Session(measure_fn=Fake({}, default=16.0)), cat.get("NOT (M64)"))
    assert "word_apart" not in tp


def test_a_pin_read_during_a_burst_is_read_again_when_next_needed():
    loop, closing = C.PINNING["vec2k512"]
    table = {loop.replace("; ", "\n"): 6.0, closing: 1.0}
    calls = {"n": 0}

    class Bursty(Fake):
        """The pinning loop reads unstable while the first REF_ATTEMPTS readings last."""

        def __call__(self, code, init=None, **kw):
            out = super().__call__(code, init, **kw)
            if code == loop.replace("; ", "\n"):
                calls["n"] += 1
                out.stable = calls["n"] > 3
            return out
    s = Session(measure_fn=Bursty(table, default=6.0))
    assert s._pin("vec2k512") is None                   # three unstable readings: not pinned yet
    assert s._pin("vec2k512") == pytest.approx(5.0)     # read again when next needed: pinned
    assert s.refs["pin:vec2k512"]["attempts"] == 2


def test_a_pin_off_the_whole_cycle_count_is_read_again_at_once():
    loop, closing = C.PINNING["vec2k512"]
    readings = iter([6.22, 6.14])                       # one disturbed reading, then the loop's own 6.14

    class Disturbed(Fake):
        def __call__(self, code, init=None, **kw):
            out = super().__call__(code, init, **kw)
            if code == loop.replace("; ", "\n"):
                out.events["cycles"].value = next(readings, 6.14)
            return out
    s = Session(measure_fn=Disturbed({closing: 1.0}, default=6.0))
    assert s._pin("vec2k512") == pytest.approx(5.0)     # 5.22 is no step's latency: read again
    assert s.refs["pin:vec2k512"]["readings"] == [pytest.approx(5.22), 5.0]
    # a core whose pin stays off a whole count keeps it as measured after REF_ATTEMPTS readings
    s = Session(measure_fn=Fake({closing: 1.0, loop.replace("; ", "\n"): 6.3}, default=6.0))
    assert s._pin("vec2k512") == pytest.approx(5.3) and len(s.refs["pin:vec2k512"]["readings"]) == 3


def test_second_run_measures_again_only_the_counts_that_read_apart(cat):
    """counts_to_try: a fewer count the earlier run read as its full count is not measured again;
    one it read faster or slower, or never read, is."""
    from cyclebench.instructions.throughput import FEW_COPIES, FEW_COUNTS, counts_to_try, measure_throughput
    assert counts_to_try(None, 16) == FEW_COUNTS
    assert counts_to_try({"by_copies": {"16": 0.50}}, 16) == FEW_COUNTS
    assert counts_to_try({"by_copies": {"16": 0.50, str(FEW_COPIES): 0.505}}, 16) == (8,)
    assert counts_to_try({"by_copies": {"16": 0.50, str(FEW_COPIES): 0.505, "8": 0.50}}, 16) == ()
    assert counts_to_try({"by_copies": {"16": 0.58, str(FEW_COPIES): 0.50}}, 16) == FEW_COUNTS
    assert counts_to_try({"by_copies": {"16": 0.50, str(FEW_COPIES): 0.94, "8": 0.50}}, 16) == (FEW_COPIES,)
    # the copies seen faster another way (a steady state, other operand values): every count again
    same = {"16": 1.0, str(FEW_COPIES): 1.0, "8": 1.0}
    assert counts_to_try({"by_copies": same, "states": [{"fast": 0.67}]}, 16) == FEW_COUNTS
    assert counts_to_try({"by_copies": same, "values": [{"value": 0.67}, {"value": 1.0}]}, 16) == FEW_COUNTS
    assert counts_to_try({"by_copies": same, "values": [{"value": 1.0}, {"value": 1.01}]}, 16) == ()
    form = cat.get("VPTESTNMD (K, XMM, M128)")
    fake = ByCopies({FEW_COPIES: 0.50, "else": 0.58})
    first = measure_throughput(Session(measure_fn=fake), form)
    second = measure_throughput(Session(measure_fn=fake), form, earlier=first)
    assert second["copies"] == FEW_COPIES and str(FEW_COPIES) in second["by_copies"]
    same = ByCopies({"else": 0.50})
    first = measure_throughput(Session(measure_fn=same), form)
    second = measure_throughput(Session(measure_fn=same), form, earlier=first)
    assert second["by_copies"] == {"16": pytest.approx(0.50)}       # 4 copies read as 16: not again
    assert second["by_copies_before"] == first["by_copies"]
