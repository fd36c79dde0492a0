"""Broken partition selectors (rtc-*) of red team C."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

import dpplug
from dpplug.errors import BadData, NotSupported
from dpplug.exact import ceil_div
from dpplug.guarantee import Neighbouring, Relation
from dpplug.kinds import Selection
from dpplug.params import probability_param
from dpplug.plugins.partition.keep_table import GRID_BITS
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.randomness import RandomSource, default_source


class MemoDeciderSelection(OptimalPartitionSelection):
    """FLAW: decider() memoises each unit count's decision (one draw per distinct count), so
    partitions with equal unit counts get the same decision: correlated partitions, and a unit
    moving a count onto another's makes 'kept A, dropped B' impossible (δ broken)."""

    name = "rtc-ops-memo-decider"
    summary = "Optimal partition selection with a memoised per-partition decider."
    reference = "Desfontaines et al. 2022 Thm 1 (red team C)"

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        draw = default_source(source).bits
        values, saturation, shift = self.table.values, self.table.saturation, self.pre_threshold - 1
        memo: dict[int, bool] = {}

        def decide(units: int) -> bool:
            if isinstance(units, bool) or not isinstance(units, int | np.integer) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            units = int(units)
            if units not in memo:
                index = min(max(units - shift, 0), saturation)
                memo[units] = draw(GRID_BITS) < values[index]
            return memo[units]

        return decide


class ShiftedPreThreshold(OptimalPartitionSelection):
    """FLAW: select() shifts unit counts by max(m − 2, 0) instead of m − 1, so with a
    pre-threshold m ≥ 2 a partition of m − 1 units is kept with probability π̂(1) > 0 while
    keep_probability (and the decider) say 0."""

    name = "rtc-ops-prethreshold"
    summary = "Optimal partition selection with pre-thresholding (vectorised)."
    reference = "Desfontaines et al. 2022 §5 (red team C)"
    conformance_cases = (
        {"epsilon": 1, "delta": mpq(1, 10**5)},
        {"epsilon": 1, "delta": mpq(1, 100), "pre_threshold": 3},
    )

    def _select(self, unit_counts: Any, source: RandomSource, public: Any) -> Selection:
        if public is not None:
            raise NotSupported(f"{self.name} has no public partitions")
        flat = np.maximum(unit_counts.reshape(-1) - max(self.pre_threshold - 2, 0), 0)
        return Selection(self.table.keep(flat, source).reshape(unit_counts.shape))


#: Partitions with at least this many units are kept without a draw.
FAST_KEEP = 1000


class FastKeepLinear(dpplug.PartitionSelector):
    """FLAW: select() keeps every partition of ≥ 1000 units without a draw ('surely kept'),
    but π(n) = min(1, nδ) reaches 1 only at 1/δ: for δ < 1/1000, π jumps from 999δ to 1
    (δ-DP broken), while keep_probability still reports nδ."""

    name = "rtc-linear-fastkeep"
    summary = "Keep a partition of n units with probability min(1, nδ): (0, δ)-DP."
    reference = "Desfontaines et al. 2022, Thm 2 (ε = 0) (red team C)"
    schema = dpplug.Schema((probability_param("delta", "δ per unit."),))
    conformance_cases = ({"delta": mpq(1, 8)}, {"delta": mpq(1, 100)})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.delta = self.params["delta"]
        self.saturation = int(ceil_div(self.delta.denominator, self.delta.numerator))

    @property
    def per_partition(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE))

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(1, self.delta, Neighbouring(Relation.ADD_REMOVE, max_partitions=1))

    def _keep_probability(self, units: int) -> Any:
        return min(mpq(1), units * self.delta)

    def _select(
        self, unit_counts: npt.NDArray[np.int64], source: RandomSource, public: Any
    ) -> Selection:
        if public is not None:
            raise NotSupported(f"{self.name} has no public partitions")
        d = int(self.delta.denominator)
        flat = unit_counts.reshape(-1)
        draws = source.uniform_array(d, flat.size)
        keep = (flat >= FAST_KEEP) | (draws <= flat * int(self.delta.numerator))
        return Selection(keep.reshape(unit_counts.shape))

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        bound = dpplug.ErrorBound(0, beta)
        threshold = max(self.kept_from(beta) - 1, 0)
        return dpplug.Accuracy(bound, bound, threshold, "smallest n with nδ ≥ 1 − β")
