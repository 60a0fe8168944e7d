"""The agreement report (instructions/agreement.py) on a fixture: counts add up, causes are given."""
from types import SimpleNamespace

from cyclebench.instructions.agreement import (CANNOT_RUN, FIGURES, NOT_IN_CATALOGUE, agreement,
                                               summary_lines, targets)
from cyclebench.instructions.catalogue import normalize_name
from cyclebench.instructions.published import read_csv

CSV = '''instruction,family,latency,throughput
"AND (R64, R64)",BASE,1,0.25
"AND (AL, I8)",BASE,1,0.33
"AND (M16, I8)",BASE,"[5;≤11]",0.52
"ADC (R64, R64)",BASE,1,0.50
"VPXOR (XMM, XMM, XMM)",AVX,"[0;1]",0.25 / 0.25
"VPANDQ (ZMM, K, ZMM, ZMM)",AVX512EVEX,"[1;2]",0.50 / 1.00
"OR (R8L, I8)",BASE,1,0.25
"NOSUCH (R64)",BASE,1,1
"SLOW (YMM, M256)",AVX,"≤8",0.50
"LATER (R64)",BASE,1,1
"PMOVX (XMM, XMM)",SSE4,2,0.50
"MOVE (XMM, XMM)",AVX,1,0.25
'''
EVIDENCE = '''instruction,family,latency,throughput
"PMOVX (XMM, XMM)",SSE4,1,0.50
"AND (AL, I8)",BASE,1,0.33
'''


class FakeCatalogue:
    def __init__(self, forms):
        self.forms = forms

    def get(self, name):
        return next((f for f in self.forms if f.name == normalize_name(name)), None)

    def __iter__(self):
        return iter(self.forms)


def form(name, unsupported=None, rmw=False, cf=False):
    mem = SimpleNamespace(kind="mem", read=True, write=True, bits=16) if rmw else None
    return SimpleNamespace(name=name, base_name=name, unsupported=unsupported, offered=unsupported is None,
                           reason=unsupported, memory_operand=mem,
                           flags_read=frozenset({"CF"}) if cf else frozenset())


def doc(name, lats, tp, tp_bound="exact", carried=(), notes=(), status="ok", label=None):
    pairs = [{"start": "a", "end": "b", "value": v, "bound": "exact", "stable": True, "linear": True,
              "label": label} for v in lats]
    return {"form": name, "status": status, "latency": pairs, "notes": list(notes),
            "throughput": {"value": tp, "bound": tp_bound, "carried": list(carried), "stable": True,
                           "linear": True}}


def test_counts_add_up_and_every_mismatch_has_a_cause(tmp_path):
    p = tmp_path / "ref.csv"
    p.write_text(CSV, encoding="utf-8")
    records = read_csv(str(p))
    cat = FakeCatalogue([form("AND (R64, R64)"), form("AND (AL, I8)"), form("AND (M16, I8)", rmw=True),
                         form("ADC (R64, R64)", cf=True), form("VPXOR (XMM, XMM, XMM)"),
                         form("VPANDQ (ZMM, K, ZMM, ZMM)", unsupported="lacks AVX512F"),
                         form("OR (R8, I8)"), form("SLOW (YMM, M256)"), form("LATER (R64)"),
                         form("PMOVX (XMM, XMM)"), form("MOVE (XMM, XMM)")])
    tg = targets(records, cat)
    status = {t.published.name: t.status for t in tg}
    assert status["VPANDQ (ZMM, K, ZMM, ZMM)"] == CANNOT_RUN       # never a mismatch
    assert status["NOSUCH (R64)"] == NOT_IN_CATALOGUE
    assert status["OR (R8L, I8)"] == "runnable"                   # R8l is the catalogue's R8
    docs = {d["form"]: d for d in [
        doc("AND (R64, R64)", [1.0], 0.25),
        doc("AND (AL, I8)", [1.0], 1.0, "upper", carried=["rax"]),
        doc("AND (M16, I8)", [5.0, 10.0], 1.0),
        doc("ADC (R64, R64)", [1.0, 1.0], 0.5, "upper", carried=["flags"]),
        doc("VPXOR (XMM, XMM, XMM)", [0.9, 1.0], 0.25),
        doc("OR (R8, I8)", [1.0], 0.26),
        doc("SLOW (YMM, M256)", [7.0], 370.0),
        doc("PMOVX (XMM, XMM)", [1.0], 0.5),
        doc("MOVE (XMM, XMM)", [0.0], 0.25, label="move eliminated"),
    ]}
    (tmp_path / "ev.csv").write_text(EVIDENCE, encoding="utf-8")
    evidence = read_csv(str(tmp_path / "ev.csv"))
    a = agreement(tg, docs, "ref.csv", "Zen 3", evidence=evidence, evidence_label="ev.csv")
    c = a["counts"]
    assert sum(c.values()) == a["published_forms"] == len(records) == 12
    assert c["compared"] == 9 and c[CANNOT_RUN] == 1 and c[NOT_IN_CATALOGUE] == 1
    assert c["not measured (not in the results)"] == 1
    for f in FIGURES:
        fc = a["figures"][f]
        assert fc["compared"] + fc.get("not comparable", 0) == c["compared"]
        misses = [m for m in a["mismatches"] if m["figure"] == f]
        assert fc["compared"] - fc["match"] == len(misses)
        assert sum(e[f].get("compared", 0) for e in a["by_extension"].values()) == fc["compared"]
    assert sum(a["causes"].values()) == len(a["mismatches"])
    causes = {(m["form"], m["figure"]): m["cause"] for m in a["mismatches"]}
    assert causes[("AND (AL, I8)", "throughput")] == "implicit fixed register chain"   # evidence agrees with published
    assert causes[("PMOVX (XMM, XMM)", "latency_max")].startswith("microarchitecture differs: ev.csv reads 1")
    assert causes[("AND (M16, I8)", "throughput")].startswith("memory RMW convention")
    assert causes[("VPXOR (XMM, XMM, XMM)", "latency_min")].startswith("published 0 (no dependency)")
    assert causes[("MOVE (XMM, XMM)", "latency_max")] == "zero idiom / eliminated move"
    assert causes[("SLOW (YMM, M256)", "throughput")].startswith("data-dependent")
    assert ("ADC (R64, R64)", "throughput") not in causes           # 0.50 = 0.50
    assert ("SLOW (YMM, M256)", "latency_max") not in causes        # 7 is within the bound ≤8
    text = "\n".join(summary_lines(a))
    assert "ref.csv (published) vs Zen 3 (measured here)" in text
    assert f"{a['figures']['throughput']['match']}/{a['figures']['throughput']['compared']}" in text


def test_xed_iform_suffix_and_low_byte_spellings_find_the_catalogue_form(tmp_path):
    p = tmp_path / "ref.csv"
    p.write_text('instruction,family,latency,throughput\n"SHLD_IMMB (R64, R64, 0)",BASE,1,1\n'
                 '"SHL (R8l, 0)",BASE,1,0.5\n"SHLD_IMMB (R64, R64, CL)",BASE,1,1\n', encoding="utf-8")
    cat = FakeCatalogue([form("SHLD (R64, R64, 0)"), form("SHL (R8, 0)")])
    status = {t.published.name: t.status for t in targets(read_csv(str(p)), cat)}
    assert status == {"SHLD_IMMB (R64, R64, 0)": "runnable", "SHL (R8L, 0)": "runnable",
                      "SHLD_IMMB (R64, R64, CL)": NOT_IN_CATALOGUE}


def test_a_latency_no_faster_than_the_forms_own_issue_rate_is_issue_bound(tmp_path):
    from cyclebench.instructions.agreement import ISSUE_BOUND_CAUSE, cause
    p = tmp_path / "ref.csv"
    p.write_text('instruction,family,latency,throughput\n"RCL (R64, 0)",BASE,2,4.00\n', encoding="utf-8")
    rec = read_csv(str(p))["RCL (R64, 0)"]
    slow = doc("RCL (R64, 0)", [4.0], 4.0)                    # the chain ran at the issue interval
    assert cause(slow, rec, form("RCL (R64, 0)"), "latency_max") == ISSUE_BOUND_CAUSE
    fast = doc("RCL (R64, 0)", [4.0], 1.0)                    # copies issue every cycle: a real 4
    assert cause(fast, rec, form("RCL (R64, 0)"), "latency_max") == "unexplained"


def test_an_unstable_figure_is_reported_apart_from_the_rate(tmp_path):
    p = tmp_path / "ref.csv"
    p.write_text('instruction,family,latency,throughput\n"AND (R64, R64)",BASE,1,0.25\n'
                 '"ADC (R64, R64)",BASE,1,0.50\n', encoding="utf-8")
    cat = FakeCatalogue([form("AND (R64, R64)"), form("ADC (R64, R64)")])
    noisy = doc("ADC (R64, R64)", [1.0], 0.9)
    noisy["throughput"]["stable"] = False
    a = agreement(targets(read_csv(str(p)), cat), {"AND (R64, R64)": doc("AND (R64, R64)", [1.0], 0.25),
                                                    "ADC (R64, R64)": noisy}, "ref.csv", "here")
    tp = a["figures"]["throughput"]
    assert tp["compared"] == 1 and tp["match"] == 1 and tp["unsettled"] == 1
    assert "1/1 (100.0%), 1 unsettled" in tp["rate"] and not a["mismatches"]


def test_a_memory_pair_bound_against_a_figure_without_memory_pairs(tmp_path):
    from cyclebench.instructions.agreement import MEMORY_PAIR_CAUSE, cause
    p = tmp_path / "ref.csv"
    p.write_text('instruction,family,latency,throughput\n"VPTESTNMD (K, XMM, M128)",AVX512EVEX,3,0.50\n'
                 '"VPANDQ (ZMM, K, ZMM, M512)",AVX512EVEX,"[1;≤12]",0.50\n', encoding="utf-8")
    recs = read_csv(str(p))
    d = doc("VPTESTNMD (K, XMM, M128)", [3.0, 12.0], 0.5)
    d["latency"][1].update(start="addr op2", bound="upper")
    f = form("VPTESTNMD (K, XMM, M128)")
    assert cause(d, recs["VPTESTNMD (K, XMM, M128)"], f, "latency_max") == MEMORY_PAIR_CAUSE
    d["latency"][0]["value"] = 4.0                       # our register pair disagrees too: not this cause
    assert cause(d, recs["VPTESTNMD (K, XMM, M128)"], f, "latency_max") != MEMORY_PAIR_CAUSE
    # a published figure with a ≤ memory pair counts memory pairs: a bound against a bound
    d = doc("VPANDQ (ZMM, K, ZMM, M512)", [1.0, 13.0], 0.5)
    d["latency"][1].update(start="mem op3 (M512)", bound="upper")
    assert cause(d, recs["VPANDQ (ZMM, K, ZMM, M512)"], form("VPANDQ (ZMM, K, ZMM, M512)"),
                 "latency_max").startswith("bound only (upper bound): ours ≤13.00, published ≤12")


def test_pairs_the_published_method_does_not_measure_are_not_compared(tmp_path):
    from cyclebench.instructions.agreement import ours, published_pair
    # uops.info has no chain from memory into a mask register, nor from a mask register to memory
    assert not published_pair({"start": "addr op3", "end": "op0 (K)"})
    assert not published_pair({"start": "mem op3 (M256)", "end": "op0 (K)"})
    assert not published_pair({"start": "op1 (K)", "end": "mem op0 (M32)"})
    assert published_pair({"start": "addr op0", "end": "mem op0 (M32)"})
    assert published_pair({"start": "mem op2 (M256)", "end": "op0 (YMM)"})
    # divide/square root: the address but not the memory value, nothing from or to the write mask
    assert not published_pair({"start": "mem op2 (M512)", "end": "op0 (ZMM)"}, "VSQRTPD_Z (ZMM, K, M512)")
    assert not published_pair({"start": "op1 (K)", "end": "op0 (ZMM)"}, "VDIVPS_Z (ZMM, K, ZMM, ZMM)")
    assert published_pair({"start": "addr op2", "end": "op0 (ZMM)"}, "VSQRTPD_Z (ZMM, K, M512)")
    assert published_pair({"start": "mem op2 (M512)", "end": "op0 (ZMM)"}, "VADDPD_Z (ZMM, K, ZMM, M512)")
    # a string instruction's pointers: only as an address, into what is read through them
    assert not published_pair({"start": "rsi", "end": "rdi"}, "CMPSQ")
    assert not published_pair({"start": "op0 (AL)", "end": "rsi"}, "LODSB")
    assert published_pair({"start": "rsi", "end": "op0 (AL)"}, "LODSB")
    assert published_pair({"start": "rdi", "end": "flags"}, "SCASB")
    d = doc("VPTESTNMD (K, XMM, M128)", [3.0, 12.0], 0.5)
    d["latency"][0].update(start="op1 (XMM)", end="op0 (K)")
    d["latency"][1].update(start="addr op2", end="op0 (K)", bound="upper")
    assert ours(d, "latency_max") == (3.0, "exact")         # the address pair is shown, not compared
    d["latency"][1].update(stable=False)
    from cyclebench.instructions.agreement import unsettled
    assert not unsettled(d, "latency_max")                  # nor does its stability count


def _same_register_doc(cycles_per_copy, tp, self_pair=None):
    """A three-operand form: two distinct-register pairs of 2 cycles and the all-same-register
    instance, which ran at ``cycles_per_copy`` and reads 0 (dependency broken)."""
    d = doc("VPSUBUSB (YMM, YMM, YMM)", [2.0, 2.0], tp)
    d["latency"][0].update(start="op1 (YMM)", end="op0 (YMM)")
    d["latency"][1].update(start="op2 (YMM)", end="op0 (YMM)")
    if self_pair is not None:
        d["latency"].append({"start": "op0 (YMM)", "end": "op0 (YMM)", "value": self_pair, "bound": "exact",
                             "stable": True, "linear": True, "label": None})
    d["latency"].append({"start": "same register (op0=op1=op2)", "end": "op0 (YMM)", "value": 0.0,
                         "bound": "exact", "stable": True, "linear": True, "label": "dependency broken",
                         "same_register": True, "cycles_per_copy": cycles_per_copy,
                         "method": "chain (same register)"})
    return d


def test_a_same_register_instance_counts_only_where_uops_info_would_time_it():
    from cyclebench.instructions.agreement import cause, ours, single_issue, unsettled
    # renamed away (faster than distinct registers issue): uops.info times it too, [0;2]
    fast = _same_register_doc(0.167, 0.5)
    assert ours(fast, "latency_min") == (0.0, "exact")
    # dependency broken but still on its units, as fast as distinct registers: uops.info has no
    # same-register run, so the published figure is 2; ours is still measured and kept in the doc
    slow = _same_register_doc(0.5, 0.5)
    assert ours(slow, "latency_min") == (2.0, "exact") and ours(slow, "latency_max") == (2.0, "exact")
    assert slow["latency"][-1]["value"] == 0.0
    recs = {"VPSUBUSB (YMM, YMM, YMM)": SimpleNamespace(latency=SimpleNamespace(
        lo=1.0, hi=1.0, lo_upper_bound=False, hi_upper_bound=False), throughput=None)}
    # a mismatch on such a form is not put down to the zero idiom that was left out
    assert cause(slow, recs["VPSUBUSB (YMM, YMM, YMM)"], form("VPSUBUSB (YMM, YMM, YMM)"),
                 "latency_min") != "zero idiom / eliminated move"
    slow["latency"][-1]["stable"] = False
    assert not unsettled(slow, "latency_min")              # nor does its stability count
    # a register the form reads and writes makes one instance a chain: the same register beats it
    rw = _same_register_doc(0.5, 0.5, self_pair=2.0)
    assert single_issue(rw) == 2.0 and ours(rw, "latency_min") == (0.0, "exact")
    # the 5% margin: 0.48 against 0.5 is not faster
    assert ours(_same_register_doc(0.48, 0.5), "latency_min") == (2.0, "exact")
    assert ours(_same_register_doc(0.47, 0.5), "latency_min") == (0.0, "exact")


def test_an_exact_latency_also_matches_by_uops_infos_whole_cycle_reading():
    from cyclebench.instructions.agreement import whole_reading
    assert whole_reading(4.38, "exact", 4.0, False)          # int(4.38 + .2) = 4
    assert whole_reading(0.85, "exact", 1.0, False)          # int(1.05) = 1
    assert not whole_reading(4.85, "exact", 4.0, False)      # reads 5
    assert not whole_reading(4.38, "upper", 4.0, False)      # a bound is no reading of an exact figure
    assert not whole_reading(0.6, "exact", 0.5, False)       # a fraction is no whole-cycle figure


def test_a_bound_matches_a_published_bound_by_uops_infos_whole_cycle_reading():
    from cyclebench.instructions.agreement import whole_reading
    # movbe eax, [m] through a store and a load: at most 7.70 here, uops.info publishes <=7
    assert whole_reading(7.70, "upper", 7.0, True)           # int(7.90) = 7
    assert whole_reading(6.41, "upper", 6.0, True)
    assert whole_reading(4.38, "exact", 5.0, True)           # below the bound however read
    assert not whole_reading(7.85, "upper", 7.0, True)       # int(8.05) = 8
    assert not whole_reading(10.0, "upper", 8.0, True)


def test_a_throughput_that_matches_the_published_port_figure_says_so():
    from cyclebench.instructions.agreement import cause
    tp = SimpleNamespace(lo=0.33, hi=0.33, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(throughput=tp, throughput_text="0.50 / 0.33", latency=None)
    doc = {"throughput": {"value": 0.50, "bound": "exact", "carried": [], "stable": True}, "notes": []}
    assert cause(doc, rec, None, "throughput").startswith("published measurement differs from its own port figure")
    doc["throughput"]["value"] = 0.80                 # matches neither: nothing is claimed
    assert cause(doc, rec, None, "throughput") == "unexplained"
    rec.throughput_text = "0.33"                      # no port figure published
    doc["throughput"]["value"] = 0.50
    assert cause(doc, rec, None, "throughput") == "unexplained"


def test_a_throughput_that_varies_between_processes_says_so():
    from cyclebench.instructions.agreement import PROCESS_CAUSE, cause
    tp = SimpleNamespace(lo=0.67, hi=0.67, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(throughput=tp, throughput_text="0.67", latency=None)
    doc = {"throughput": {"value": 0.85, "bound": "exact", "carried": [], "stable": True,
                          "by_process": [1.0, 0.85, 1.0, 1.0]}, "notes": []}
    assert cause(doc, rec, None, "throughput").startswith(PROCESS_CAUSE + ": the same copies read 0.85 to 1.00")
    doc["throughput"]["by_process"] = [0.95, 0.96, 0.95, 0.95]    # within the tolerance: no claim
    assert cause(doc, rec, None, "throughput") == "unexplained"



def test_flag_linked_copies_name_the_breaker_that_reproduces_the_published_figure():
    from cyclebench.instructions.causes import PORT_FREE_CAUSE, cause
    tp = SimpleNamespace(lo=0.33, hi=0.33, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(throughput=tp, throughput_text="0.33", latency=None)
    doc = {"throughput": {"value": 0.50, "bound": "upper", "carried": ["flags"], "stable": True,
                          "port_free_breakers": {"value": 0.334, "with": 0.50, "breakers": ["xor r13d, r13d"]}},
           "notes": []}
    of_reader = form("ADOX (R64, R64)")
    assert cause(doc, rec, of_reader, "throughput").startswith(PORT_FREE_CAUSE + ": 0.50 a copy with")
    doc["throughput"]["port_free_breakers"]["value"] = 0.45      # reproduces nothing: no claim
    assert cause(doc, rec, of_reader, "throughput") == "bound only (upper bound)"


def test_a_read_modify_write_figure_below_the_published_one_names_its_addresses():
    from types import SimpleNamespace

    from cyclebench.instructions import Catalogue
    from cyclebench.instructions.agreement import cause
    form = Catalogue.load().get("SAR (M8, 0)")
    rec = SimpleNamespace(name="SAR (M8, 0)", latency=None, throughput=SimpleNamespace(hi=0.56, hi_upper_bound=False),
                          throughput_text="0.56")
    tp = {"value": 0.50, "bound": "exact", "copies": 32, "carried": [], "stable": True, "alternative": {"value": 1.0},
          "word_apart": {"value": 0.50}, "operand_width_apart": {"value": 0.89}}
    why = cause({"throughput": tp, "latency": [], "notes": []}, rec, form, "throughput")
    assert why.startswith("memory RMW rate of this core") and "one 8-byte word apart 0.50" in why and "0.89" in why


def test_a_largest_latency_below_a_published_shift_count_figure_names_the_count():
    from cyclebench.instructions.causes import COUNT_CAUSE, cause
    from cyclebench.instructions.session import COUNT_NOTE
    lat = SimpleNamespace(lo=0.0, hi=16.0, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(latency=lat, throughput=None, throughput_text="")
    d = doc("SAR (R32, CL)", [0.0, 1.0], 0.5, notes=[COUNT_NOTE])
    assert cause(d, rec, None, "latency_max") == COUNT_CAUSE
    d["notes"] = []                                   # no count in CL: nothing is claimed
    assert cause(d, rec, None, "latency_max") == "unexplained"


def test_a_throughput_that_published_siblings_with_the_same_uops_read_says_so():
    from cyclebench.instructions.causes import SPREAD_CAUSE, spread_cause

    def rec(name, text, ports="1*FP01+1*FP12"):
        hi = float(text.split("/")[-1])
        return SimpleNamespace(name=name, ports_text=ports, throughput_text=text,
                               throughput=SimpleNamespace(hi=hi, hi_upper_bound=False))
    mine = rec("VPEXPANDQ (YMM, YMM)", "0.67 / 0.67")
    records = {r.name: r for r in (mine, rec("VPEXPANDB (YMM, YMM)", "0.67 / 1.00"),
                                   rec("VPEXPANDB (ZMM, ZMM)", "0.67 / 1.33"),
                                   rec("VPERMQ (YMM, YMM, I8)", "0.50 / 1.00", ports="1*FP12"))}
    why = spread_cause(mine, records, 1.0)
    assert why.startswith(SPREAD_CAUSE) and "VPEXPANDB (YMM, YMM)" in why and "0.67 to 1.00" in why
    assert spread_cause(mine, records, 1.33) is None      # only the 512-bit sibling reads that
    assert spread_cause(mine, records, 0.80) is None      # no sibling reads ours: no claim


def test_a_largest_latency_below_an_exact_published_memory_chain_says_so():
    from cyclebench.instructions.causes import MEMORY_CHAIN_CAUSE, cause
    lat = SimpleNamespace(lo=5.0, hi=12.0, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(latency=lat, throughput=None, throughput_text="")
    d = doc("BTS (M64, I8)", [5.0, 8.0, 11.0], 2.0)
    for p, (s, e, b) in zip(d["latency"], [("addr op0", "flags", "exact"), ("mem op0 (M64)", "mem op0 (M64)", "exact"),
                                           ("addr op0", "mem op0 (M64)", "upper")]):
        p.update(start=s, end=e, bound=b)
    why = cause(d, rec, None, "latency_max")
    assert why.startswith(MEMORY_CHAIN_CAUSE) and "8.00 cycles a copy" in why
    lat.hi_upper_bound = True                         # a published bound: not this cause
    assert not cause(d, rec, None, "latency_max").startswith(MEMORY_CHAIN_CAUSE)


def test_the_match_column_is_the_reports_rule(tmp_path):
    # inst --compare's ✓/✗ and the agreement report read one rule (comparing.match): a published
    # bound is matched at or below it, a latency by uops.info's whole-cycle reading, and a
    # throughput 8% off is no match at the report's 7% (it was at the column's old 10%)
    from cyclebench.instructions.compare import compare_published
    p = tmp_path / "ref.csv"
    p.write_text(CSV, encoding="utf-8")
    records = read_csv(str(p))
    docs = [doc("SLOW (YMM, M256)", [5.0, 7.9], 0.50),           # ≤8: 7.9 reads as 7
            doc("AND (M16, I8)", [5.0, 11.1], 0.52),             # [5;≤11]: 11.1 reads as 11
            doc("PMOVX (XMM, XMM)", [2.16], 0.50),               # 2.16 reads as 2
            doc("LATER (R64)", [1.0], 1.08),                     # 8% above 1
            doc("MOVE (XMM, XMM)", [1.0], 0.27)]                 # 0.02 cycles off: within 0.05
    rows = compare_published(docs, records)["rows"]
    assert [rows[d["form"]]["match"] for d in docs] == ["✓", "✓", "✓", "✗ tp", "✓"]
    cat = FakeCatalogue([form(d["form"]) for d in docs])
    rep = agreement(targets(records, cat), {d["form"]: d for d in docs}, "ref", "here")
    by_form = {r["form"]: r for r in rep["rows"] if r.get("status") == "compared"}
    for d in docs:
        assert by_form[d["form"]]["latency_max"]["match"] is rows[d["form"]]["lat_ok"]
        assert by_form[d["form"]]["throughput"]["match"] is rows[d["form"]]["tp_ok"]


def test_a_fewer_count_kept_whose_full_count_reads_the_published_figure_says_so():
    from cyclebench.instructions.causes import COPY_COUNT_CAUSE, cause
    tp = SimpleNamespace(lo=0.58, hi=0.58, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(throughput=tp, throughput_text="0.58", latency=None)
    doc = {"throughput": {"value": 0.509, "bound": "exact", "carried": [], "stable": True, "copies": 4,
                          "by_copies": {"16": 0.617, "4": 0.509}, "by_process": [0.617, 0.585, 0.579, 0.583]},
           "notes": []}
    why = cause(doc, rec, None, "throughput")
    assert why.startswith(COPY_COUNT_CAUSE + ": 4 copies read 0.51 a copy, 16 copies 0.58 to 0.62")
    doc["throughput"]["by_copies"]["16"] = 0.70        # the full count reads another figure: no claim
    doc["throughput"]["by_process"] = [0.70, 0.71]
    assert cause(doc, rec, None, "throughput") == "unexplained"
    doc["throughput"].update(copies=16, value=0.66, by_copies={"16": 0.66, "4": 0.58}, by_process=[])
    assert cause(doc, rec, None, "throughput") == "unexplained"     # the full count kept: no claim


def test_a_locked_form_whose_single_copy_reads_the_published_figure_says_so():
    from cyclebench.instructions import Catalogue
    from cyclebench.instructions.agreement import cause
    form = Catalogue.load().get("ADC_LOCK (M16, R16)")
    rec = SimpleNamespace(name="ADC_LOCK (M16, R16)", latency=None,
                          throughput=SimpleNamespace(hi=6.20, hi_upper_bound=False), throughput_text="6.20")
    tp = {"value": 7.55, "bound": "upper", "copies": 32, "carried": ["flags"], "stable": True,
          "alternative": {"value": 7.55}, "one_address": {"value": 6.09, "stable": True, "copies": 32, "with": 7.55}}
    why = cause({"throughput": tp, "latency": [], "notes": []}, rec, form, "throughput")
    assert why.startswith("memory RMW convention (copies' addresses): one copy on one address") and "6.09" in why
    tp["one_address"]["value"] = 7.5          # reproduces nothing: the rate of this core
    assert cause({"throughput": tp, "latency": [], "notes": []}, rec, form, "throughput").startswith(
        "memory RMW rate of this core")


def test_a_data_dependent_throughput_names_the_values_that_read_the_published_figure():
    from cyclebench.instructions.causes import cause
    tp_pub = SimpleNamespace(lo=59.0, hi=59.0, lo_upper_bound=False, hi_upper_bound=False)
    rec = SimpleNamespace(latency=None, throughput=tp_pub, throughput_text="59.00")
    tp = {"value": 101.0, "bound": "exact", "copies": 12, "carried": [], "stable": True,
          "values": [{"pattern": 0, "values": "the null selector", "value": 101.0},
                     {"pattern": 0, "values": "a valid selector", "value": 59.1}]}
    d = {"throughput": tp, "latency": [], "notes": ["data-dependent throughput: ..."]}
    why = cause(d, rec, None, "throughput")
    assert why.startswith("data-dependent") and "101.00 with the null selector" in why
    assert why.endswith("the published 59 is the reading with a valid selector")
    tp["values"][1]["value"] = 80.0
    assert cause(d, rec, None, "throughput").endswith("none reads the published 59")
