"""Does the cost grow linearly with the copies? The check behind every differenced figure.

Each repetition runs configuration A (U copies) and B (2U copies). Differencing assumes
cost = overhead + copies * c. Then the overhead implied by a repetition, 2A - B, is the harness's
fixed cost: small and never negative. On a 2-vCPU KVM guest it was 70-450 cycles plus at most about 5 per
loop iteration; bench/linearity.py prints it for a set of snippets. Two things break the
assumption:

- B costs more per copy than A (2A - B < 0). Example: a working set or a count of taken branches
  that fits a cache, a TLB or the branch target buffer at U copies and not at 2U.
- A costs far more per copy than B, more than any harness overhead could explain. Example: the
  front end or the branch predictor behaves differently at the two code sizes.

In both cases B - A is not U times the cost of one copy. The figure can look perfectly stable and
still be wrong, so the result carries a warning.

The same holds repetition by repetition (:func:`paired`): code that runs at one of two speeds, the
speed holding for a stretch of runs of the copies, can run A at one and B at the other. Zen 4
guest: `ucomiss xmm1, xmm2; movss [r14+0x40], xmm3; nop` ran 1.0 or 2.0 cycles a copy, A and B
each switching on their own, and a run whose A read 2.0 and B 1.0 gave B - A = 0.02 cycles a copy,
tight and "stable". Only the repetitions whose A and B agree measure the copies.
"""
from __future__ import annotations

from dataclasses import dataclass

from .stats import median, quartiles

FIXED_OVERHEAD = 2000       # cycles per run the harness may add (reads, serialisation, late init)
LOOP_OVERHEAD = 8           # cycles per loop iteration (counter, back edge)
MIN_SHARE = 0.02            # below 2% of B - A, a negative overhead is rounding
EXCESS_SHARE = 0.10         # above the allowance, a positive overhead must also be 10% of B - A
NOISE_IQRS = 3              # and beyond three interquartile ranges of its own repetitions


@dataclass
class Linearity:
    """Whether A and B cost in proportion to their copies, and the overhead the difference removes."""
    linear: bool
    overhead: float          # median over repetitions of 2A - B, in cycles
    overhead_iqr: float
    allowance: float         # the largest overhead the harness explains
    per_copy_a: float        # gross cycles per copy of A and of B
    per_copy_b: float
    reason: str = ""

    def to_dict(self) -> dict:
        return {"linear": self.linear, "overhead_cycles": self.overhead, "overhead_iqr": self.overhead_iqr,
                "allowance_cycles": self.allowance, "per_copy_a": self.per_copy_a,
                "per_copy_b": self.per_copy_b, "reason": self.reason}


def check(a: list[float], b: list[float], unroll: int, loop: int) -> Linearity:
    """``a``, ``b``: cycles of configuration A (``unroll`` copies, per loop iteration ``loop``
    times) and B (twice the copies), one value per repetition."""
    overheads = [2 * x - y for x, y in zip(a, b)]
    med = median(overheads)
    q1, q3 = quartiles(overheads)
    noise = NOISE_IQRS * (q3 - q1)
    work = median(y - x for x, y in zip(a, b))
    copies = unroll * max(loop, 1)
    pa, pb = median(a) / copies, median(b) / (2 * copies)
    allowance = FIXED_OVERHEAD + LOOP_OVERHEAD * loop
    reason = ""
    if med < -max(noise, MIN_SHARE * abs(work)):
        reason = "B costs more per copy than A"
    elif med > max(noise, allowance) and med > EXCESS_SHARE * abs(work):
        reason = "A costs more per copy than the harness overhead explains"
    return Linearity(not reason, med, q3 - q1, allowance, pa, pb, reason)


def paired(a: list[float], b: list[float], loop: int) -> list[int]:
    """Positions of the repetitions whose A and B ran at one speed per copy: the overhead 2A - B
    they imply is within the harness's allowance either way, give or take EXCESS_SHARE of their
    own B - A (an interrupt in A or B moves it by its own cost, a change of speed by the copies')."""
    allowance = FIXED_OVERHEAD + LOOP_OVERHEAD * loop
    return [i for i, (x, y) in enumerate(zip(a, b)) if abs(2 * x - y) <= allowance + EXCESS_SHARE * abs(y - x)]


UNPAIRED_PREFIX = "A and B ran at different speeds per copy"


def unstable_advice(reasons: list[str]) -> str:
    """The hint for an unstable figure: A and B at different speeds alone is the code's doing
    (two speeds, a capacity effect), which a quieter host does not mend."""
    if reasons and all(r.startswith(UNPAIRED_PREFIX) for r in reasons):
        return "the code's speed per copy differs between A and B: try a smaller --unroll and compare"
    return "re-run on a quieter machine"


def unpaired_reason(left: int, total: int) -> str:
    return (f"{UNPAIRED_PREFIX} in {left} of {total} repetitions (2A - B beyond any "
            "harness overhead): B - A of such a repetition is not the cost of the copies")


def warning(lin: Linearity, unroll: int, value: float) -> str:
    return (f"the cost per copy changes with the number of copies: {unroll} copies took {lin.per_copy_a:.3f} "
            f"cycles each, {2 * unroll} copies {lin.per_copy_b:.3f} ({lin.reason}), so the difference "
            f"({value:.3f}) is not the cost of one copy; a cache, TLB, branch-predictor or front-end capacity "
            "effect. Check with a smaller --unroll (e.g. 50) and compare")
