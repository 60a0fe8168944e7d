"""The memset study's part of summary.md: its Machine, Method and Caveats lines, and its findings
(does the reference's main finding hold, where glibc stands, stores and branches, the rep stosb
cut-over). The framework adds the facts every study shares (study/summary.py)."""
from __future__ import annotations

from cyclebench.study.base import Section
from cyclebench.machine.uarch import core_name
from cyclebench.study.facts import RunFacts

from .analysis import BASE, NEW, OLD, TIE_CYCLES, TIE_PCT


def glibc_threshold(facts: RunFacts) -> int | None:
    return (facts.prepared.get("glibc") or {}).get("x86_rep_stosb_threshold")


def machine_lines(facts: RunFacts) -> list[str]:
    g = facts.prepared.get("glibc") or {}
    return [f"- C library: {g.get('version')}; `x86_rep_stosb_threshold` {g.get('x86_rep_stosb_threshold')} B "
            f"({g.get('x86_rep_stosb_threshold_source')})."]


def method_lines(cfg) -> list[str]:
    return [
        "- Every routine passed its correctness check first. Each figure is net core cycles per call: a "
        "pass of calls through an indirect call minus the same pass calling an empty function (measured in "
        "the same runner process, repetition by repetition), the mean of the fastest 10% of the "
        "repetitions, as in the reference.",
        "- Fixed-size figures are *serialized* (an lfence after every call, in both passes), so each call is "
        "timed in isolation like the reference's single-call timings. Random-size, threshold and predictor "
        "figures run calls *back to back*, the reference's loop over one array: what a loop of calls pays, "
        "mispredictions included.",
        f"- Random-size tests replay {cfg.random_calls:,} seeded argument sets (the reference's count); "
        "\"clear L1\" rows evict the destination's L1d sets before every call, in both passes."]


def caveat_lines(cfg) -> list[str]:
    out = ["- Serialized fixed-size figures repeat within about 3% or half a cycle; random-size figures of "
           "small sizes moved by up to about 3 cycles per call between runs (each runner process gets another "
           f"address layout); this run pooled {cfg.random_processes} process(es) per random-size row.",
           "- The kernels are reconstructions from the reference's text, not Microsoft's code.",
           "- \"Clear L1\" evicts only the L1d sets the destination can occupy, before every call; the "
           "reference does not say how it cleared L1, and the eviction noise limits those rows."]
    if cfg.name == "quick":
        out.append("- This was a `--quick` run: a subset of sizes, rows and thresholds, fewer repetitions. "
                   "Run without `--quick` for the full grid.")
    return out


def misses_text(facts: RunFacts) -> str:
    """Where branch mispredictions are counted in this run, or why they are not."""
    if facts.counted("branch-misses"):
        return ("Branch mispredictions per call were counted by the hardware PMU on the random-size rows "
                "(random_sizes.csv, branch_misses_per_call).")
    why = facts.prepared.get("pmu") or "the random-size experiment, where they are counted, was not run"
    return f"Branch mispredictions per call were not counted in this run: {why}."


def sections(s: dict, facts: RunFacts) -> list[Section]:
    return [Section("Does the reference's main finding hold? (new design vs old, random sizes)", _new_vs_old(s)),
            Section("Where glibc stands", _glibc(s)),
            Section("Stores and branches", _stores(s, facts)),
            Section("rep stosb cut-over", _threshold(s, facts))]


def _new_vs_old(s: dict) -> list[str]:
    nv = s.get("new_vs_old")
    if not nv:
        return ["- Not measured in this run (the random experiment or one of nt_old/new_sse was left out)."]
    verdict = ("holds" if nv["ours_median_pct"] > TIE_PCT and nv["new_faster_rows"] >= 0.75 * nv["rows"]
               else "holds only partly" if nv["ours_median_pct"] > 0 else "does not hold")
    L = [f"- It **{verdict}** on this CPU. The new design (`{NEW}`) is faster than the old (`{OLD}`) in "
         f"{nv['new_faster_rows']} of {nv['rows']} random-size rows; median improvement "
         f"**{nv['ours_median_pct']:+.1f}%** (range {nv['ours_min_pct']:+.1f}% to {nv['ours_max_pct']:+.1f}%) "
         f"against the reference's median {nv['reference_median_pct']:.1f}% on the same rows."]
    if nv["small_rows"]:
        L.append(f"- Small sizes (max size <= 1 KiB, {nv['small_rows']} rows): new faster in "
                 f"{nv['small_new_faster_rows']}, median **{nv['small_ours_median_pct']:+.1f}%** vs the "
                 f"reference's {nv['small_reference_median_pct']:.1f}%.")
    if nv.get("ours_gross_median_pct") is not None:
        L.append(f"- Counting the call overhead too (the reference timed whole calls), the median is "
                 f"{nv['ours_gross_median_pct']:+.1f}%.")
    hl = s.get("highlighted")
    if hl:
        L.append(f"- The reference's highlighted test (256..512 B, granularity 16): old {hl['old']:.1f}, new "
                 f"{hl['new']:.1f} cycles, **{hl['ours_pct']:+.1f}%** (reference {hl['reference_pct']:.2f}%).")
    if s.get("fixed_new_vs_old"):
        parts = [f"{b['band']}: new faster at {b['new_faster']}, old faster at {b['old_faster']} of {b['sizes']} "
                 f"sizes (median {b['median_pct']:+.0f}%)" for b in s["fixed_new_vs_old"] if b["median_pct"] is not None]
        L.append("- Fixed sizes with trained predictors (serialized calls; the reference found new ahead under "
                 "256 B, the two comparable or old ahead from 256 to about 800 B, and rep stosb ahead above): "
                 + "; ".join(parts) + ".")
    return L


def _glibc(s: dict) -> list[str]:
    L = []
    rr = s.get("random_vs_glibc")
    if rr:
        wins = [r for r in rr if r["pct"] is not None and r["pct"] >= TIE_PCT]
        losses = [r for r in rr if r["pct"] is not None and r["pct"] <= -TIE_PCT]
        first = sum(r["rank_glibc"] == 1 for r in rr)
        L.append(f"- Random sizes: glibc's memset is the fastest implementation in {first} of {len(rr)} rows. The "
                 f"best implementation here beats it by {TIE_PCT:.0f}% or more in {len(wins)} rows and loses by "
                 f"{TIE_PCT:.0f}% or more in {len(losses)}.")
        L += _extremes(wins, losses, lambda r: r["label"])
    fx = s.get("fixed_vs_glibc")
    if fx:
        desc = "; ".join((_size(a["from"]) if a["from"] == a["to"] else f"{_size(a['from'])}..{_size(a['to'])}")
                         + f": {a['verdict']}" for a in s["fixed_segments"])
        L.append(f"- Fixed sizes (serialized calls, trained predictors), the best implementation here vs glibc "
                 f"by size (a win or loss is {TIE_PCT:.0f}% and {TIE_CYCLES} cycles or more, else a tie): {desc}.")
        wins = [f for f in fx if f["verdict"] == "win" and f["pct"] is not None]
        losses = [f for f in fx if f["verdict"] == "loss" and f["pct"] is not None]
        L += _extremes(wins, losses, lambda f: _size(f["size"]))
    return L or ["- Not measured in this run."]


def _stores(s: dict, facts: RunFacts) -> list[str]:
    L = []
    cmp = s.get("stores_vs_reference")
    if cmp:
        same_new = sum(c["new"][0] >= c["ref_new"][0] and c["new"][1] <= c["ref_new"][1] for c in cmp)
        same_old = sum(c["old"][0] >= c["ref_old"][0] and c["old"][1] <= c["ref_old"][1] for c in cmp)
        L.append(f"- Executed stores per call (exact, by single-stepping every dst alignment) fall inside the "
                 f"reference's min-max for the new design at {same_new} of {len(cmp)} sizes and for the old at "
                 f"{same_old} of {len(cmp)} (table in `stores.txt`).")
    bm = s.get("branch_misses")
    if bm:
        parts = [f"`{n}` {v['median_per_call']:.2f}" for n, v in sorted(bm.items(), key=lambda kv: kv[0] != BASE)]
        L.append("- **Branch mispredictions per call**, counted by the hardware PMU (median over the "
                 f"random-size rows): {'; '.join(parts)}. Conditional branches executed and taken are exact "
                 "(`stores.txt`).")
    else:
        L.append(f"- {misses_text(facts)} Conditional branches executed and taken are exact (`stores.txt`).")
    if s.get("learn"):
        parts = [f"`{r['routine']}` {r['sizes']}: {r['penalty']:+.1f}" for r in s["learn"]]
        L.append("- What unpredictable sizes cost (the same distribution replayed from a short array the "
                 "predictors learn vs the reference's 50,000): " + "; ".join(parts) + " cycles per call. "
                 f"A positive figure means the predictors of this core ({core_name(facts.machine)}) learned "
                 "the short replayed sequence, so random-size tests need the reference's long arrays.")
    return L


def _threshold(s: dict, facts: RunFacts) -> list[str]:
    if not s.get("threshold"):
        return ["- Not measured in this run."]
    g = facts.prepared.get("glibc") or {}
    L = []
    for c in s["threshold"]:
        extra = []
        if c["at_800"] is not None:
            extra.append(f"800 B (reference): {c['at_800']:.1f}")
        if c["at_glibc"] is not None:
            extra.append(f"{glibc_threshold(facts)} B (glibc's threshold): {c['at_glibc']:.1f}")
        L.append(f"- `{c['kernel']}`, {c['stream']}: best threshold **{c['best']} B** "
                 f"({c['best_cycles']:.1f} cycles per call); " + "; ".join(extra) + ".")
    L.append(f"- glibc's `x86_rep_stosb_threshold` here: {glibc_threshold(facts)} B "
             f"({g.get('x86_rep_stosb_threshold_source')}).")
    return L


def _extremes(wins: list, losses: list, where) -> list[str]:
    """The biggest win and the biggest loss against glibc, one summary line each."""
    out = []
    for kind, rows, pick in (("win", wins, max), ("loss", losses, min)):
        if rows:
            r = pick(rows, key=lambda x: x["pct"])
            out.append(f"  - Biggest {kind}: {where(r)}: `{r['best']}` {r['best_cycles']:.1f} vs glibc "
                       f"{r['glibc']:.1f} cycles ({r['pct']:+.0f}%).")
    return out


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"
