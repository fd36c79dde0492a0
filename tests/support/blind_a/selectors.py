"""Broken partition selectors (red team A). Each class docstring states its flaw."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from dpplug.errors import BadData, NotSupported
from dpplug.kinds import Selection
from dpplug.plugins.partition.keep_table import GRID_BITS
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.plugins.partition.truncated_geometric_thresholding import (
    TruncatedGeometricThresholding,
)
from dpplug.randomness import RandomSource, default_source

#: Draws a decider takes from its source at once.
DECIDER_BLOCK = 1024


class CycledDecider(OptimalPartitionSelection):
    """optimal-partition-selection whose scalar decider draws in blocks.

    FLAW (state across calls / joint law of the decider): ``decider`` fetches 1,024 63-bit draws
    at once to amortise the per-partition call, and on reaching the end of the block it wraps
    around instead of refilling. Partition i and partition i + 1024 decided by one decider (as
    PipelineDP's filter does, one decider per worker) share their uniform: each decision alone
    has the declared π(n), but (kept, dropped) for two 1-unit partitions 1024 apart is impossible
    while with 2 units for the first it has probability π(2) − π(1) ≈ e^ε·δ > δ.
    """

    name = "rta-cycled-decider"
    summary = "optimal-partition-selection with a block-buffered scalar decider."

    def decider(self, source: RandomSource | None = None) -> Callable[[int], bool]:
        block = default_source(source).bits_array(GRID_BITS, DECIDER_BLOCK)
        values, saturation, shift = self.table.values, self.table.saturation, self.pre_threshold - 1
        position = 0

        def decide(units: int) -> bool:
            nonlocal position
            if not isinstance(units, int) or units < 0:
                raise BadData(f"unit counts must be non-negative ints, got {units!r}")
            draw = int(block[position])
            position = (position + 1) % DECIDER_BLOCK
            return draw < values[min(max(units - shift, 0), saturation)]

        return decide


class PublicThresholdEverywhere(TruncatedGeometricThresholding):
    """truncated-geometric-thresholding whose public-partition rule is an OR.

    FLAW (public partitions): with a ``public`` mask, a partition is released when it passes the
    private threshold OR its noisy count reaches τ_pub, for every partition, not only the public
    ones. A non-public partition with one unit is then released with probability
    Pr[1 + X ≥ τ_pub] (≈ 1/2 for τ_pub = 1) instead of about δ, while without that unit it is
    absent and never released: a hockey-stick divergence of about 1/2 against the declared δ.
    """

    name = "rta-public-threshold-everywhere"
    summary = "k-TSGD thresholding with public partitions (τ_pub), noisy counts released."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None and self.public_threshold is None:
            raise NotSupported(f"{self.name} needs public_threshold to release public partitions")
        flat = unit_counts.reshape(-1)
        noise = self.noise.sample(np.zeros(flat.size, dtype=np.int64), source)
        noisy = flat + noise
        kept = (flat >= self.pre_threshold) & (noisy - (self.pre_threshold - 1) >= self.k + 1)
        if public is not None:
            assert self.public_threshold is not None
            kept = kept | (noisy >= self.public_threshold)
        shape = unit_counts.shape
        return Selection(kept.reshape(shape), np.where(kept, noisy, 0).reshape(shape))


#: Batches from this size on use the narrow gather index.
NARROW_FROM = 4096


class NarrowIndex(OptimalPartitionSelection):
    """optimal-partition-selection with a uint16 gather index for large batches.

    FLAW (sizes / large batches): from 4,096 partitions on, the table index is cast to uint16
    ("the table has fewer than 2^16 entries, a narrow index halves the gather's memory
    traffic") BEFORE it is capped at the saturation, so unit counts wrap modulo 2^16: a partition
    with 65,536 units is never kept while one with 65,535 always is.
    """

    name = "rta-narrow-index"
    summary = "optimal-partition-selection with a narrow (uint16) table index for big batches."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None or unit_counts.size < NARROW_FROM:
            return super()._select(unit_counts, source, public)
        flat = self._shifted(unit_counts.reshape(-1))
        index = np.minimum(flat.astype(np.uint16), self.table.saturation)
        draws = source.bits_array(GRID_BITS, flat.size)
        kept = draws < self.table.grid[index]
        return Selection(kept.reshape(unit_counts.shape))


class MemoryOrder(OptimalPartitionSelection):
    """optimal-partition-selection that walks the unit counts in memory order.

    FLAW (input forms): ``np.ravel(order="K")`` avoids a copy of transposed or Fortran-ordered
    arrays, but the keep mask is reshaped in C order, so for such inputs partition (i, j) gets
    the decision drawn for another partition: a partition with 0 units can be kept with
    probability 1 (the decision of a saturated one).
    """

    name = "rta-memory-order"
    summary = "optimal-partition-selection without copies of non-contiguous inputs."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None:
            return super()._select(unit_counts, source, public)
        flat = self._shifted(np.ravel(unit_counts, order="K"))
        return Selection(self.table.keep(flat, source).reshape(unit_counts.shape))


class RenoisedCounts(TruncatedGeometricThresholding):
    """truncated-geometric-thresholding that re-noises the counts it releases.

    FLAW (budget per partition): the noisy count that passed the threshold is biased upwards,
    so a kept partition is released with a FRESH k-TSGD noise on its count. The keep decision
    and the released count are then two (ε_c, δ_c) releases of the same count: up to e^{2ε_c}
    per partition, against the declared (ε_c, δ_c) (and the declared output law is the
    builtin's, where the released count is the one that passed).
    """

    name = "rta-renoised-counts"
    summary = "k-TSGD thresholding with an unbiased (re-noised) count for kept partitions."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        selection = super()._select(unit_counts, source, public)
        assert selection.noisy_counts is not None
        fresh = self.noise.sample(np.zeros(unit_counts.size, dtype=np.int64), source)
        recount = np.maximum(unit_counts.reshape(-1) + fresh, 1)  # a kept partition has a unit
        noisy = np.where(selection.keep.reshape(-1), recount, 0).reshape(unit_counts.shape)
        return Selection(selection.keep, noisy)
