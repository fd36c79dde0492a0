# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Broken (and honest) partition selectors, subclasses of the built-in optimal selector."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadData
from dpplug.exact import exp_lower
from dpplug.guarantee import Accuracy, ErrorBound, Neighbouring, Relation
from dpplug.plugins.partition.budget import EXP_BITS, Budget, _root_complement_lower
from dpplug.plugins.partition.keep_table import GRID_BITS
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.randomness import RandomSource, default_source

_CASES = (
    {"epsilon": 1, "delta": mpq(1, 10**5)},
    {"epsilon": mpq(1, 2), "delta": mpq(1, 1000), "max_partitions_contributed": 2},
    {"epsilon": 2, "delta": mpq(1, 100), "pre_threshold": 3, "replace_one": True},
)


class ReplaceOnePlusOne(OptimalPartitionSelection):
    """FLAW: replace-one splits the budget over ℓ₀ + 1 partitions (a replaced unit "moves"), not 2ℓ₀."""

    name = "rtf-p-replace-l0-plus-one"
    summary = "Optimal selection with bounded DP over ℓ₀ + 1 coordinates."
    conformance_cases = _CASES

    def _budget(self) -> Budget:
        l0, replace = self.params["max_partitions_contributed"], self.params["replace_one"]
        coordinates = l0 + 1 if replace else l0
        relation = Relation.REPLACE_ONE if replace else Relation.ADD_REMOVE
        return Budget(
            coordinates,
            exp_lower(self.params["epsilon"] / coordinates, EXP_BITS),
            _root_complement_lower(self.params["delta"], coordinates),
            Neighbouring(relation, max_partitions=l0, max_contributions=1),
        )


class AccuracyShiftTwice(OptimalPartitionSelection):
    """FLAW: accuracy threshold subtracts the pre-threshold again from kept_from (already shifted)."""

    name = "rtf-p-accuracy-shift-twice"
    summary = "Optimal selection whose accuracy threshold is stated relative to the pre-threshold."
    conformance_cases = _CASES

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(0, beta)
        shift = self.pre_threshold - 1
        return Accuracy(
            bound,
            bound,
            threshold=max(self.kept_from(beta) - 1 - shift, 0),
            formula="smallest n with π(n) ≥ 1 − β, past the pre-threshold",
        )


class LazyDecider(OptimalPartitionSelection):
    """FLAW: the strict-time decider skips its draw when π is 0 or 1, so the draw count leaks counts."""

    name = "rtf-p-lazy-decider"
    summary = "Optimal selection whose scalar decider saves the draw for certain outcomes."
    conformance_cases = _CASES

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        draw = default_source(source).bits
        values, saturation, shift = self.table.values, self.table.saturation, self.pre_threshold - 1

        def decide(units: int) -> bool:
            if isinstance(units, bool) or not isinstance(units, int) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            index = min(max(units - shift, 0), saturation)
            if index == 0:
                return False
            if index == saturation:
                return True
            return bool(draw(GRID_BITS) < values[index])

        return decide


class UnshiftedKeepProbability(OptimalPartitionSelection):
    """FLAW: keep_probability (and so kept_from, accuracy) ignores the pre-threshold select applies."""

    name = "rtf-p-keepprob-unshifted"
    summary = "Optimal selection whose declared π is read before the pre-threshold."
    conformance_cases = _CASES

    def _keep_probability(self, units: int) -> Any:
        return self.table.probability(int(units))


class OkGenericDecider(OptimalPartitionSelection):
    """CONTROL: the optimal selector with the base class's generic decider (select on one count)."""

    name = "rtf-ok-optimal-generic-decider"
    summary = "Optimal selection, decider through select()."
    conformance_cases = _CASES

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        rng = default_source(source)

        def decide(units: int) -> bool:
            import numpy as np

            from dpplug.data import integer_scalar
            from dpplug.kinds.sampler.base import UNBOUNDED_COUNT

            count = integer_scalar(units, 0, UNBOUNDED_COUNT, "a partition's unit count")
            return bool(self.select(np.array([count], dtype=np.int64), rng).keep[0])

        return decide


class HalfDeltaPerPartition(OptimalPartitionSelection):
    """FLAW: per_partition states δ_c/2 ("δ per direction"); the whole guarantee keeps the true δ."""

    name = "rtf-p-per-partition-half-delta"
    summary = "Optimal selection whose per-partition δ is split by direction."
    conformance_cases = _CASES

    @property
    def per_partition(self) -> Any:
        from dpplug.guarantee import COUNT_SENSITIVITY_1, Guarantee

        return Guarantee(self.budget.exp_epsilon, self.achieved_delta / 2, COUNT_SENSITIVITY_1)

    @property
    def guarantee(self) -> Any:
        from dpplug.guarantee import COUNT_SENSITIVITY_1, Guarantee

        whole = Guarantee(self.budget.exp_epsilon, self.achieved_delta, COUNT_SENSITIVITY_1)
        return self.budget.compose(whole)
