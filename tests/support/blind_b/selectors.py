"""Partition selectors: variants of optimal-partition-selection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import BadData
from dpplug.exact import smallest_at_least
from dpplug.guarantee import Guarantee, Neighbouring, Relation
from dpplug.kinds import Selection
from dpplug.plugins.partition.keep_table import GRID_BITS
from dpplug.plugins.partition.laplace import LaplaceThresholding
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.randomness import RandomSource, default_source

_CASES = (
    {"epsilon": 1, "delta": mpq(1, 10**5)},
    {"epsilon": mpq(1, 2), "delta": mpq(1, 1000), "max_partitions_contributed": 2},
    {"epsilon": 2, "delta": mpq(1, 100), "pre_threshold": 3},
)


class OkLoopDecider(OptimalPartitionSelection):
    """Control: the decider written as a plain loop over a copied table, same 63-bit draw."""

    name = "rtb-ok-optimal-decider"
    summary = "Optimal partition selection with a hand-written per-partition decider."
    conformance_cases = _CASES

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        rng = default_source(source)
        values = [int(v) for v in self.table.values]
        last, shift = len(values) - 1, self.pre_threshold - 1

        def decide(units: int) -> bool:
            if not isinstance(units, int) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            index = units - shift
            if index <= 0:
                index = 0
            if index > last:
                index = last
            return rng.bits(GRID_BITS) < values[index]

        return decide


class SaturationShortcutDecider(OptimalPartitionSelection):
    """Flaw: decider's 'always kept' fast path compares unshifted units with the table
    saturation."""

    name = "rtb-optimal-decider-shortcut"
    summary = "Optimal partition selection with a fast path for saturated partitions."
    conformance_cases = _CASES

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        draw = default_source(source).bits
        values, saturation, shift = self.table.values, self.table.saturation, self.pre_threshold - 1

        def decide(units: int) -> bool:
            if not isinstance(units, int) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            if units >= saturation:  # always kept from the saturation on
                return True
            return draw(GRID_BITS) < values[max(units - shift, 0)]

        return decide


class IdCachedSelection(OptimalPartitionSelection):
    """Flaw: select() memoised by (id, shape) of the validated array."""

    name = "rtb-optimal-id-cache"
    summary = "Optimal partition selection that memoises repeated selections of one array."
    conformance_cases = _CASES

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        cache = self.__dict__.setdefault("_rtb_cache", {})
        key = (id(unit_counts), unit_counts.shape)
        if key not in cache:
            cache.clear()
            cache[key] = super()._select(unit_counts, source, public)
        return cache[key]


class FloatKeptFrom(LaplaceThresholding):
    """Flaw: kept_from compares float(π(n)) ≥ 1.0 − float(β)."""

    name = "rtb-laplace-float-kept-from"
    summary = "Laplace thresholding with a float accuracy threshold search."

    def kept_from(self, beta: Any) -> int:
        target = 1.0 - float(beta)
        return smallest_at_least(
            lambda n: float(self.keep_probability(n)) >= target, 0, self.saturation, True
        )


class BulkUnsort(OptimalPartitionSelection):
    """Flaw: huge calls decided in sorted order and put back with the permutation, not its
    inverse."""

    name = "rtb-optimal-bulk-unsort"
    summary = "Optimal partition selection with a cache-friendly path for huge calls."
    conformance_cases = _CASES

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None or unit_counts.size <= 1 << 18:
            return super()._select(unit_counts, source, public)
        flat = unit_counts.reshape(-1)
        order = np.argsort(flat, kind="stable")
        kept_sorted = self.table.keep(self._shifted(flat[order]), source)
        kept = kept_sorted[order]  # should be: kept[order] = kept_sorted
        return Selection(kept.reshape(unit_counts.shape))


class BoundedRelabel(OptimalPartitionSelection):
    """Flaw: states replace-one (bounded DP) with the add/remove budget split over ℓ₀ (needs
    2ℓ₀)."""

    name = "rtb-optimal-bounded-relabel"
    summary = "Optimal partition selection stated for bounded DP."
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5)},
        {"epsilon": mpq(1, 2), "delta": mpq(1, 1000), "max_partitions_contributed": 2},
    )

    @property
    def guarantee(self) -> Guarantee:
        split = super().guarantee
        hood = split.neighbouring
        return Guarantee(
            split.exp_epsilon,
            split.delta,
            Neighbouring(
                Relation.REPLACE_ONE,
                max_partitions=hood.max_partitions,
                max_contributions=hood.max_contributions,
            ),
        )


ALL = (
    OkLoopDecider,
    SaturationShortcutDecider,
    IdCachedSelection,
    FloatKeptFrom,
    BulkUnsort,
    BoundedRelabel,
)
