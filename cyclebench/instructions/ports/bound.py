"""The interface of the predictor's bounds beside the model's resource loads.

predict.predict() takes its ``floors`` (predict.Loaded.bounds: the readings' pair and shared floors,
the probes' floors) as :class:`Bound` instances and calls every method of each; every default
leaves the prediction as it is, so a new rule is one subclass that overrides what it bounds.
"""
from __future__ import annotations


class Bound:
    """One rule of the predictor beside the model's resources."""

    def delayed(self, instructions, forms: list[str], latency: list) -> list:
        """The per-instruction latencies (as dataflow.chain_bound takes them) with this rule's
        delays, for the chain bound and the simulation; by default ``latency`` itself."""
        return latency

    def floor(self, counts: dict[str, int]) -> tuple[float, str | None]:
        """(cycles, label) an iteration takes at least, from the block's instances per form;
        (0, None) where the rule does not apply."""
        return 0.0, None

    def floor_of(self, instructions, counts: dict[str, int]) -> tuple[float, str | None]:
        """:meth:`floor` for a rule that also reads the instructions; by default :meth:`floor`.
        predict() takes it as one more resource load, both where it reads which resources are
        full (crowding.py) and in the final loads."""
        return self.floor(counts)

    def beside(self, model, instructions, forms: list[str]) -> float:
        """Cycles the block's other work adds to a floor that applies (:meth:`floor_of` not 0)."""
        return 0.0

    def describe(self) -> str:
        """One line for ``cyclebench ports --show``: what the bound holds (by default the first
        line of its class's docstring)."""
        return (type(self).__doc__ or type(self).__name__).strip().splitlines()[0]

    def dispatch(self, instructions, slots: list[float]) -> tuple[float, str | None]:
        """(cycles, label) an iteration's dispatch groups take, ``slots`` each instruction's
        dispatch slots as the resource bound charges them; taken with the final loads only."""
        return 0.0, None

    def overlapping(self, model, counts: dict[str, int], units: dict[str, int]) -> dict[str, set[str]]:
        """Resource -> the forms of the block whose usage of it runs beside other forms' usage
        rather than after it: the final loads and the simulation leave it out; by default none."""
        return {}

    def stands_for(self) -> frozenset[str]:
        """Resources of the model this bound charges in their place: the final loads leave their
        usages out (the crowding rules still read them)."""
        return frozenset()
