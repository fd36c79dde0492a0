# ruff: noqa: E402, E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Partition selectors (rtd-ps-*)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpplug.errors import BadData
from dpplug.plugins.partition.keep_table import GRID_BITS
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.randomness import RandomSource, default_source


class PreSaturation(OptimalPartitionSelection):
    """Flaw: saturation ignores the pre-threshold shift, so kept_from and the accuracy threshold are too low when pre_threshold > 1."""

    name = "rtd-ps-presat"
    summary = "Optimal selection; saturation read off the keep table."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.saturation = self.table.saturation
        self.derived["always_kept_from"] = self.saturation


class DeciderLe(OptimalPartitionSelection):
    """Flaw: the scalar decider keeps iff draw <= v(n) (not <), so π(n) is one grid unit high and π(0) = 2^-63 > 0."""

    name = "rtd-ps-decider-le"
    summary = "Optimal selection with a streamlined per-partition decider."

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        draw = default_source(source).bits
        values, saturation, shift = self.table.values, self.table.saturation, self.pre_threshold - 1

        def decide(units: int) -> bool:
            if isinstance(units, bool) or not isinstance(units, int) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            index = min(max(units - shift, 0), saturation)
            return draw(GRID_BITS) <= values[index]

        return decide


class InPlaceShift(OptimalPartitionSelection):
    """Flaw: the pre-threshold shift is applied in place, overwriting the caller's int64 unit counts (repeat calls shift again)."""

    name = "rtd-ps-inplace-shift"
    summary = "Optimal selection without a copy of the unit counts (10^6 partitions)."

    def _shifted(self, units: Any) -> Any:
        if isinstance(units, np.ndarray):
            np.subtract(units, self.pre_threshold - 1, out=units)
            np.maximum(units, 0, out=units)
            return units
        return super()._shifted(units)


class OkDecider(OptimalPartitionSelection):
    """Honest control: optimal selection whose decider goes through the vectorised keep table, one element at a time."""

    name = "rtd-ok-ps-decider"
    summary = "Optimal selection, decider via the keep table."

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        rng = default_source(source)

        def decide(units: int) -> bool:
            if isinstance(units, bool) or not isinstance(units, int) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            shifted = np.array([max(int(units) - (self.pre_threshold - 1), 0)], dtype=np.int64)
            return bool(self.table.keep(shifted, rng)[0])

        return decide


from gmpy2 import mpq

from dpplug.exact import exp_lower
from dpplug.plugins.partition.budget import EXP_BITS, Budget, _root_complement_lower

#: The most coordinates the budget is split over.
MAX_SPLIT = 64


class L0Cap(OptimalPartitionSelection):
    """Flaw: the (ε, δ) split is capped at 64 coordinates ("larger ℓ₀ would overflow the table") while the guarantee still states ℓ₀: for ℓ₀ > 64 it composes per_partition 64 times, not ℓ₀."""

    name = "rtd-ps-l0-cap64"
    summary = "Optimal selection with the budget split capped at 64 partitions."

    def _budget(self) -> Budget:
        full = Budget.from_params(self.params)
        c = min(full.coordinates, MAX_SPLIT)
        return Budget(
            c,
            exp_lower(self.params["epsilon"] / c, EXP_BITS),
            _root_complement_lower(self.params["delta"], c),
            full.neighbouring,
        )


class OkUnionSplit(OptimalPartitionSelection):
    """Honest control: δ split as δ/c (union bound, below 1 − (1 − δ)^{1/c}), composed exactly as the built-in does."""

    name = "rtd-ok-ps-union-split"
    summary = "Optimal selection with a conservative δ/c split."

    def _budget(self) -> Budget:
        full = Budget.from_params(self.params)
        return Budget(
            full.coordinates,
            full.exp_epsilon,
            mpq(self.params["delta"]) / full.coordinates,
            full.neighbouring,
        )
