"""The accuracy figures bench/ports_accuracy.py prints: a predictor's error over measured blocks
(the share within 10%, MAPE, median), which bound set the model's misses, and one line per block
(--rows). A row is (measured, predicted, resource bound, chain bound, llvm-mca, text, the bound
that set the figure, the binding resource, simulated, the models' spread), as
ports_accuracy.record makes it."""
from __future__ import annotations

import statistics

from cyclebench.measurement.stats import share_interval


def errors(pairs):
    e = [abs(p - m) / m for p, m in pairs if p is not None and m]
    if not e:
        return "no blocks"
    near = sum(x <= 0.10 for x in e)
    low, high = share_interval(near, len(e))
    return (f"{near / len(e):5.1%} within 10% ({near} of {len(e)} blocks; 95% interval {low:.1%}-{high:.1%}), "
            f"MAPE {100 * statistics.mean(e):5.1f}%, median {100 * statistics.median(e):4.1f}%")


def bound(p):
    """Which bound set a prediction: the simulation (above both bounds), the chains, the front end,
    a form alone, or a resource."""
    if p.simulation_binds():
        return "the simulation"
    if p.chain_bound >= p.resource_bound:
        return "dependency chains"
    b = p.binding_resource or ""
    return "front end" if b == "front end" else "a form alone" if b.endswith(" alone") else "a resource"


def causes(rows):
    """Blocks the model misses by more than 10%, by the bound that set the figure."""
    out = {}
    for m, p, _, _, _, _, kind, _, _, _ in rows:
        if abs(p - m) / m > 0.10:
            k = f"{kind}, {'over' if p > m else 'under'}"
            out[k] = out.get(k, 0) + 1
    return ", ".join(f"{k}: {n}" for k, n in sorted(out.items(), key=lambda x: -x[1])) or "none"


def report(name, ours, mca, rows):
    print(f"{name}:")
    print(f"  cyclebench model: {errors(ours)}")
    print(f"  llvm-mca-16:      {errors(mca)}")
    print(f"  model misses over 10%, by the bound that set the figure: {causes(rows)}")
    if rows:
        print(f"  by memory access: {by_memory(rows)}")
    if any(r[9] for r in rows):
        print(f"  model misses over 10%, by how far the models' figures stand apart: {by_spread(rows)}")


def values_report(ours, flags):
    """The blocks whose runs met denormal operands or results (``flags``, parallel
    to ``ours``: MXCSR's flags after a run, measurement/evaluate.fp_flags_warning), and the others'
    figures: a cost of the values, which no model of instructions has, told apart."""
    n = sum(map(bool, flags))
    if n:
        print(f"  {n} of {len(ours)} met denormal operands or results (MXCSR's flags after their runs: a cost "
              f"of the values where met in every copy); the others: "
              f"{errors([o for o, f in zip(ours, flags) if not f])}")


def touches_memory(text: str) -> bool:
    """A block (its instructions' text, ``;``-separated, Intel syntax) that reads or writes memory:
    an operand in brackets, outside a LEA (an address computed, nothing accessed) and a NOP."""
    return any("[" in i and not i.split()[0].lower().startswith(("lea", "nop"))
               for i in (x.strip() for x in text.split(";")) if i)


def by_memory(rows):
    """The model's share within 10% of the blocks with no memory operand and of those with one:
    where loads' levels differ from process to process (docs/methods.md, "Two modes"), the second
    holds the misses the readings make, the first what the model itself misses."""
    out = []
    for label, want in (("no memory operand", False), ("with one", True)):
        band = [(m, p) for m, p, *_, text, _, _, _, _ in rows if touches_memory(text) == want]
        if band:
            near = sum(abs(p - m) <= 0.10 * m for m, p in band)
            out.append(f"{label} {near} of {len(band)} within 10% ({near / len(band):.0%})")
    return ", ".join(out)


SPREADS = ((0.03, "within 3%"), (0.10, "3-10%"), (float("inf"), "over 10%"))


def by_spread(rows):
    """Several models: the misses among the blocks whose models' figures stand within 3%, 3-10%
    and over 10% apart (ensemble.spread), to show whether the spread marks the less certain."""
    out = []
    for i, (top, label) in enumerate(SPREADS):
        low = SPREADS[i - 1][0] if i else -1.0
        band = [(m, p) for m, p, *_, sp in rows if low < sp <= top]
        if band:
            miss = sum(abs(p - m) / m > 0.10 for m, p in band)
            out.append(f"{label} {miss} of {len(band)} ({miss / len(band):.0%})")
    return ", ".join(out)


def print_rows(rows):
    for m, p, res, ch, q, text, _, binding, sim, _ in rows:
        miss = " MISS" if abs(p - m) / m > 0.10 else ""
        print(f"  measured {m:6.2f} predicted {p:6.2f} (resources {res:.2f} [{binding}], chains {ch:.2f}, "
              f"simulated {sim:.2f}) "
              f"llvm-mca {q if q is None else round(q, 2)}{miss}: {text}")
