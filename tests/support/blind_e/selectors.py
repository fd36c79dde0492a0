"""Broken partition selectors (each class docstring's first line states its flaw)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gmpy2 import mpq

from dpplug.errors import NotSupported
from dpplug.guarantee import Guarantee, Neighbouring
from dpplug.kinds import Selection
from dpplug.param_types import INTEGER
from dpplug.params import Param, Schema
from dpplug.plugins.partition.budget import SELECTOR_PARAMS
from dpplug.plugins.partition.optimal import OptimalPartitionSelection
from dpplug.plugins.partition.truncated_geometric_thresholding import (
    TruncatedGeometricThresholding,
)
from dpplug.pmf import Pmf
from dpplug.randomness import RandomSource


class LeakyDroppedCounts(TruncatedGeometricThresholding):
    """Flaw: Selection.noisy_counts keeps the noisy count of dropped partitions (not 0).

    The author returns the whole noisy vector and relies on the keep mask; the documented
    contract is that dropped entries are 0, so a caller releasing the nonzero noisy counts
    releases every partition with its noisy count, without the threshold.
    """

    name = "rte-tgt-leaky-dropped"
    summary = "k-TSGD thresholding whose noisy counts include dropped partitions."

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None:
            return super()._select(unit_counts, source, public)
        flat = unit_counts.reshape(-1)
        noisy = flat + self.noise.sample(np.zeros(flat.size, dtype=np.int64), source)
        kept = (flat >= self.pre_threshold) & (noisy - (self.pre_threshold - 1) >= self.k + 1)
        return Selection(kept.reshape(unit_counts.shape), noisy.reshape(unit_counts.shape))


class PublicTrueCount(TruncatedGeometricThresholding):
    """Flaw: public partitions are released iff their TRUE count reaches τ_pub (not the noisy one).

    §5's public branch written with the unit counts instead of the noisy counts: a public
    partition's membership in the release is a deterministic function of its true count.
    """

    name = "rte-tgt-public-true-count"
    summary = "k-TSGD thresholding with public partitions thresholded on their true counts."
    conformance_cases = (
        *TruncatedGeometricThresholding.conformance_cases,
        {"epsilon": 1, "delta": mpq(1, 10**4), "public_threshold": 2},
    )

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        if public is not None and self.public_threshold is None:
            raise NotSupported(f"{self.name} needs public_threshold to release public partitions")
        flat = unit_counts.reshape(-1)
        noisy = flat + self.noise.sample(np.zeros(flat.size, dtype=np.int64), source)
        kept = (flat >= self.pre_threshold) & (noisy - (self.pre_threshold - 1) >= self.k + 1)
        if public is not None:
            kept = np.where(public.reshape(-1), flat >= self.public_threshold, kept)
        shape = unit_counts.shape
        return Selection(kept.reshape(shape), np.where(kept, noisy, 0).reshape(shape))


class ShiftedReleasedCounts(TruncatedGeometricThresholding):
    """Flaw: releases the pre-threshold-shifted noisy count n − m + 1 + X instead of n + X.

    The count compared with k + 1 is the one released, so with a pre-threshold m > 1 every
    released count is m − 1 too low (its law declared accordingly): the declared error bound a
    (the noise's) no longer holds.
    """

    name = "rte-tgt-shifted-counts"
    summary = "k-TSGD thresholding releasing the shifted count it thresholds."

    def _output_pmf(self, units: int) -> Pmf:
        lowest = self._lowest_kept_noise(units)
        shift = self.pre_threshold - 1
        law: dict[int, Any] = {0: mpq(0)}
        for x, p in self.noise.pmf(0).items():
            out = units - shift + x if lowest is not None and x >= lowest else 0
            law[out] = law.get(out, mpq(0)) + p
        return Pmf(law)

    def _select(
        self,
        unit_counts: npt.NDArray[np.int64],
        source: RandomSource,
        public: npt.NDArray[np.bool_] | None,
    ) -> Selection:
        selection = super()._select(unit_counts, source, public)
        assert selection.noisy_counts is not None
        shifted = np.where(selection.keep, selection.noisy_counts - (self.pre_threshold - 1), 0)
        if public is not None:
            shifted = np.where(public, selection.noisy_counts, shifted)
        return Selection(selection.keep, shifted)


class ContributionsClaim(OptimalPartitionSelection):
    """Flaw: states ℓ∞ = max_contributions in its guarantee while calibrated for unit steps.

    A parameter for units that add several rows to a partition is written into the guarantee's
    relation, but the keep table is the one for counts one apart.
    """

    name = "rte-opt-linf-claim"
    summary = "Optimal selection stating a per-partition contribution bound it does not pay for."
    schema = Schema(
        (
            *SELECTOR_PARAMS,
            Param(
                "max_contributions",
                INTEGER,
                "ℓ∞: how many rows one unit may add to one partition.",
                low=1,
                high=1 << 10,
                default=1,
            ),
        )
    )

    @property
    def guarantee(self) -> Guarantee:
        base = super().guarantee
        relation = base.neighbouring
        return Guarantee(
            base.exp_epsilon,
            base.delta,
            Neighbouring(
                relation.relation,
                max_partitions=relation.max_partitions,
                max_contributions=self.params["max_contributions"],
            ),
        )
