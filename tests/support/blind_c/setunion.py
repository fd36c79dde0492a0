"""Broken set-union selectors (rtc-*) of red team C."""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

from dpplug.kinds.set_union_selector import UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.base import _key
from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps
from dpplug.plugins.set_union.common import one_draw
from dpplug.plugins.set_union.weighted import WeightedGaussian
from dpplug.program import run
from dpplug.randomness import RandomSource


class DistributedWeightOffByOne(WeightedGaussian):
    """FLAW: round_weight (the distributed route: Beam/Spark sum it per label) reads
    weights[items − 2] instead of weights[items − 1], so a unit of t ≥ 2 labels gives each
    the weight of t − 1 labels: its ℓ₂ contribution exceeds the calibrated G (δ broken)."""

    name = "rtc-wg-distributed-weight"
    summary = "Weighted Gaussian set union with a distributed (per-label sum) route."
    reference = "Gopi et al. 2020 (red team C)"

    def round_weight(self, round_index: int, items: int) -> int:
        return self.calibration.rounds[round_index].weights[max(items - 2, 0)]


class PopularBound(WeightedGaussian):
    """FLAW: a unit with more than Δ₀ labels keeps the Δ₀ labels most units hold (global
    popularity) instead of a uniform choice: one unit's bounding depends on the other units,
    so adding a unit changes others' contributions (sensitivity unbounded)."""

    name = "rtc-wg-popular-bound"
    summary = "Weighted Gaussian set union that bounds units to their most popular labels."
    reference = "Gopi et al. 2020 (red team C)"

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        popularity = Counter(label for _, labels in units for label in labels)
        d0 = self.max_partitions

        def bound(labels: tuple[Any, ...]) -> tuple[Any, ...]:
            if len(labels) <= d0:
                return labels
            ranked = sorted(labels, key=lambda x: (-popularity[x], _key(x)))
            return tuple(canonical_labels(ranked[:d0]))

        sets = [bound(labels) for _, labels in units]
        released: set[Any] = set()
        for certificate in self.calibration.rounds:
            weights = certificate.weights
            totals: dict[Any, int] = {}
            for labels in sets:
                remaining = [label for label in labels if label not in released]
                if remaining:
                    w = weights[len(remaining) - 1]
                    for label in remaining:
                        totals[label] = totals.get(label, 0) + w
            if not totals:
                break
            candidates = canonical_labels(totals)
            draw = GaussianKeeps(
                certificate.sigma2,
                tuple(certificate.threshold - totals[label] for label in candidates),
            )
            keeps = run(partial(one_draw, draw), source)
            released.update(label for label, keep in zip(candidates, keeps, strict=True) if keep)
        return canonical_labels(released)


class UnitsNeededOneItem(WeightedGaussian):
    """FLAW: units_needed(β, items) ignores items and answers for single-label units (the
    largest weight G), so for units of t > 1 labels (weight ⌊G/√t⌋) it declares far too few."""

    name = "rtc-wg-units-needed"
    summary = "Weighted Gaussian set union (Gopi et al.)."
    reference = "Gopi et al. 2020 (red team C)"

    def _units_needed(self, beta: Any, items: int) -> int:
        return super()._units_needed(beta, 1)
