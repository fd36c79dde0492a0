# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Set-union selectors (rtd-su-*)."""

from __future__ import annotations

from functools import partial
from typing import Any

from dpplug.kinds.set_union_selector import UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps
from dpplug.plugins.set_union.common import one_draw
from dpplug.plugins.set_union.weighted import WeightedGaussian
from dpplug.program import run
from dpplug.randomness import RandomSource


class InsertionOrder(WeightedGaussian):
    """Flaw: released labels are listed in the order of the first (canonically ordered) unit holding them, not canonically: adding a unit reorders the output."""

    name = "rtd-su-insertion-order"
    summary = "Weighted Gaussian, labels listed as the units bring them."

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        released = set(super()._select(units, source))
        order: dict[Any, None] = {}
        for _, labels in units:
            for label in labels:
                if label in released:
                    order.setdefault(label, None)
        return list(order)


class UnboundedWeights(WeightedGaussian):
    """Flaw: the Δ₀ bound caps the weight index (w for min(t, Δ₀) labels) but every one of a unit's labels still gets that weight: ℓ₂ sensitivity grows with the unit's item count."""

    name = "rtd-su-unbounded-weights"
    summary = "Weighted Gaussian with bounding folded into the weights."

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [labels for _, labels in units]
        released: set[Any] = set()
        for certificate in self.calibration.rounds:
            weights = certificate.weights
            totals: dict[Any, int] = {}
            for labels in sets:
                remaining = [label for label in labels if label not in released]
                if remaining:
                    w = weights[min(len(remaining), self.max_partitions) - 1]
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


#: The largest item count the weight table covers.
WEIGHT_ITEMS = 8


class WeightTable8(WeightedGaussian):
    """Flaw: a unit's per-label weight is read at min(t, 8) ("the weight table stops at 8 items"), so a unit with t > 8 bounded labels has ℓ₂ norm w_8·√t > G."""

    name = "rtd-su-weight-table8"
    summary = "Weighted Gaussian with a short weight table."

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        released: set[Any] = set()
        for certificate in self.calibration.rounds:
            weights = certificate.weights
            totals: dict[Any, int] = {}
            for labels in sets:
                remaining = [label for label in labels if label not in released]
                if remaining:
                    w = weights[min(len(remaining), WEIGHT_ITEMS) - 1]
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
