"""Step 5 of the inference (infer.py): the blockers' cross usages made to fit every mix of two blockers."""
from __future__ import annotations

from .model import Mix
from .ratios import units

OVERLOAD = 0.1             # two blockers' cross usages above their mix's time by this share: one is no share


def consistent(usage: dict[str, dict[str, float]], pairs: list[Mix], blockers: list[str], resources: list[str],
               alone: dict[str, float]) -> None:
    """Each cross usage (a blocker's use of another's resource) is solved from one pair's mixes;
    it must fit every other mix of two blockers (``pairs``: their good readings) too.  Where two
    blockers' uses of a third's resource add up to more than their mix took (by
    :data:`OVERLOAD`), one of them is no share of that resource (a store beside an FP01 op reads
    1.58 where the two take 1 and 1 alone: a partial interference of that pair, not a pipe they
    share).  The usage that is the smallest share of its blocker's time is lowered first (a
    whole pipe's worth is the surer reading), of equals the one that asks more unit-cycles of
    the resource, then the one the most mixes contradict, to what those mixes leave, until none
    is contradicted; ``usage`` in place.  (Zen 4: beside ALU ops ``ucomiss`` reads as all four ALUs for a cycle, a
    three-part ``lea`` as two of them; ``lea`` beside two ``ucomiss`` contradicts the two, and
    by count and name alone one blocker draw had lowered the ``lea``'s.)"""
    own = dict(zip(blockers, resources))
    width = {r: units(alone[b]) or 1 for b, r in own.items()}
    while True:
        against: dict[tuple[str, str], list[float]] = {}     # (blocker, resource) -> its ceilings
        for m in pairs:
            (a, na), (b, nb) = m.counts.items()
            for r in resources:
                if r in (own[a], own[b]) or na * usage[a][r] + nb * usage[b][r] <= m.cycles * (1 + OVERLOAD):
                    continue
                for (f, n), (g, k) in (((a, na), (b, nb)), ((b, nb), (a, na))):
                    if usage[f][r] > 0:
                        against.setdefault((f, r), []).append(max(0.0, (m.cycles - k * usage[g][r]) / n))
        if not against:
            return
        # of equal shares, the one that asks more unit-cycles of the resource (usage x its
        # units): one instruction's µop holds one unit, so a claim of several is the likelier
        # partial interference (a transfer's hold on every ALU); then the most contradicted
        f, r = min(against, key=lambda x: (round(usage[x[0]][x[1]] / alone[x[0]], 1),
                                           -round(usage[x[0]][x[1]] * width[x[1]], 2), -len(against[x]), x))
        usage[f][r] = min(against[f, r])
