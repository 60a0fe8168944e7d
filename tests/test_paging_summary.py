"""The paging study's verdicts on fabricated records: a finding "holds" or "does not hold here" by
its stated criterion, a verdict on flagged figures says so, and published figures are labelled."""
from cyclebench.studies.paging import analysis as an
from cyclebench.studies.paging import summary as summ


def rec(exp, routine, params, cycles, spread=0.01, report=None, its=(100, 200)):
    return {"experiment": exp, "routine": routine, "params": params,
            "result": {"per_iteration": {"median": cycles, "relative_spread": spread},
                       "per_iteration_ns": {"median": cycles / 3}, "stable": True, "iterations": list(its),
                       "report": report or {}}}


def bs(layout, kind, page, cycles, depth=2, spread=0.01):
    return rec("tree", "blackscholes", {"input": "simlarge", "layout": layout, "kind": kind, "page": page},
               cycles, spread, {"depth": depth})


def findings(records):
    s, t, rd = an.splitstack(records), an.tree(records), an.random_access(records)
    return {"splitstack": s, "tree": t, "random": rd, "hugepages": an.hugepages(records, rd, t),
            "instructions": an.instructions(records)}


def test_reference_findings_hold_by_their_criteria():
    records = [rec("splitstack", "splitstack", {"bench": "fib", "arg": 30, "build": b, "signals": "on"}, c,
                   report={"calls_per_iteration": 10, "morestack_calls": 100, "segments_allocated": 1})
               for b, c in (("normal", 100.0), ("split", 115.0))]
    records += [bs("soa", "plain", 4096, 100.0)]
    records += [bs("soa", "tree", pg, c) for pg, c in ((4096, 110.0), (8192, 117.0), (16384, 105.0), (32768, 102.0))]
    records += [bs("soa", "tree3", pg, c, depth=3) for pg, c in ((4096, 120.0), (8192, 120.0), (16384, 103.0), (32768, 130.0))]
    records += [rec("random", "chase", {"size": sz, "elements": n, "kind": k}, c, report={"depth": 1})
                for sz, n, k, c in (("small", 1024, "plain", 5.0), ("small", 1024, "tree", 9.0),
                                    ("large", 1 << 26, "plain", 600.0), ("large", 1 << 26, "tree", 700.0))]
    text = "\n".join(ln for sec in summ.sections(findings(records)) for ln in sec.lines)
    assert "+15.0%" in text and "published for an Intel i7-7700" in text
    for line in text.splitlines():
        if "about 15%" in line or "17% at 8 KB" in line or "32 KB the best" in line or "3% for 16 KB" in line \
                or "large arrays is expensive" in line:
            assert "**holds here**" in line and "flagged as noisy" not in line, line
    assert "256 MiB one (120x)" in text


def test_a_finding_that_fails_says_so_and_flags_carry():
    records = [bs("soa", "plain", 4096, 100.0), bs("soa", "tree", 8192, 101.0, spread=0.2),
               bs("soa", "tree", 16384, 140.0), bs("soa", "tree3", 16384, 130.0, depth=3)]
    text = "\n".join(ln for sec in summ.sections(findings(records)) for ln in sec.lines)
    worst = next(ln for ln in text.splitlines() if "17% at 8 KB" in ln)
    assert "**does not hold here**" in worst and "flagged as noisy" in worst and "16 KiB at +40.0%" in worst
    nob = next(ln for ln in text.splitlines() if "3% for 16 KB" in ln)
    assert "**does not hold here**" in nob and "+30.0%" in nob
    assert "Fib overhead of split stacks (15%, published): not measured" in text
    assert summ.flagged_counts(findings(records)) == (1, 4)


def test_page_sizes_within_noise_give_no_verdict():
    records = [bs("soa", "plain", 4096, 100.0), bs("soa", "tree", 8192, 112.0, spread=0.2),
               bs("soa", "tree", 16384, 110.0), bs("soa", "tree", 32768, 109.0)]
    text = "\n".join(ln for sec in summ.sections(findings(records)) for ln in sec.lines)
    worst = next(ln for ln in text.splitlines() if "17% at 8 KB" in ln)
    best = next(ln for ln in text.splitlines() if "32 KB the best" in ln)
    assert "**not resolved here**" in worst and "**not resolved here**" in best
