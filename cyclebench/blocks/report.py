"""Plain-text views of block results: one block, and a bulk run's summary (share measured
cleanly, the reasons for the rest, the rate)."""
from __future__ import annotations

from collections import Counter

from .measure import clean, why_not_clean


def single_text(doc: dict) -> str:
    mem = doc.get("memory") or {}
    lines = [f"block: {doc['text']}",
             f"  {doc['instructions']} instructions, {len(doc['hex']) // 2} bytes"
             + (f"; final branch '{doc['dropped_branch']}' dropped (not measured)" if doc.get("dropped_branch") else "")]
    if doc.get("cycles") is not None:
        unc = f" ± {doc['uncertainty']:.3f}" if doc.get("uncertainty") is not None else ""
        lines.append(f"cycles per iteration: {doc['cycles']:.3f}{unc}  ({doc['label']}; "
                     f"{doc['copies']} copies x {doc['iterations']} iterations per run"
                     + ("; a chain through the flags runs from copy to copy, so the loop's end writes none"
                        if doc.get("keeps_flags") else "") + ")")
    else:
        lines.append(f"cycles per iteration: < {doc['upper_bound']:.3g} (below the resolution)")
    lines.append(f"pages mapped: {doc['pages_mapped']}" + (" (aliased: several virtual pages share one physical page)"
                                                          if doc.get("aliased") else ""))
    lines.append(f"memory: {mem.get('loads', 0)} loads, {mem.get('stores', 0)} stores"
                 + (f", {mem['unknown_addresses']} with addresses the block computes" if mem.get("unknown_addresses") else ""))
    if doc.get("mapping_dependent"):
        lines.append("depends on the mapping: " + "; ".join(doc["mapping_notes"]))
    for name, p in (doc.get("predictions") or {}).items():
        if isinstance(p, float) and doc.get("cycles"):
            lines.append(f"{name}: {p:.3f} ({100 * (p - doc['cycles']) / doc['cycles']:+.1f}%)")
        else:
            lines.append(f"{name}: no prediction ({p})")
    for w in doc.get("warnings", []):
        lines.append(f"warning: {w}")
    if not doc.get("stable", True):
        lines.append("warning: unstable measurement (noisy host): re-run on a quieter machine")
    return "\n".join(lines)


def reasons(docs: list[dict]) -> Counter:
    """Why blocks were not measured cleanly, grouped (addresses and offsets stripped)."""
    import re
    out = Counter()
    for d in docs:
        why = why_not_clean(d)
        if why:
            out[re.sub(r"'[^']*'|0x[0-9a-f]+|\b\d+\b", "…", why)[:110]] += 1
    return out


def bulk_summary(docs: list[dict], measured: int, seconds: float) -> str:
    n = len(docs)
    ok = sum(clean(d) for d in docs)
    dep = sum(clean(d) and d.get("mapping_dependent", False) for d in docs)
    lines = [f"{n} blocks: {ok} measured cleanly ({100 * ok / n:.1f}%), {n - ok} not"
             + (f"; {dep} of the measured depend on the mapping (docs/block.md)" if dep else "")]
    if measured:
        lines.append(f"{measured} blocks in {seconds:.1f} s this run: {60 * measured / seconds:.0f} blocks/min")
    for why, k in reasons(docs).most_common(12):
        lines.append(f"  {k:5d}  {why}")
    return "\n".join(lines)
