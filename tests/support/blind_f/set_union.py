"""Broken (and honest) set-union selectors, subclasses of the built-in weighted Gaussian."""

from __future__ import annotations

from functools import partial
from typing import Any

from gmpy2 import isqrt, mpz

from dpplug.kinds.set_union_selector import UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps
from dpplug.plugins.set_union.common import one_draw
from dpplug.plugins.set_union.weighted import WeightedGaussian
from dpplug.program import run
from dpplug.randomness import RandomSource


class ConfidentKeep(WeightedGaussian):
    """FLAW: labels whose total clears the threshold by one noise s.d. are kept without a draw."""

    name = "rtf-u-confident-keep"
    summary = "Weighted Gaussian that skips the draw for labels already one σ above T."

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        certificate = self.calibration.rounds[0]
        weights = certificate.weights
        totals: dict[Any, int] = {}
        for labels in sets:
            w = weights[len(labels) - 1]
            for label in labels:
                totals[label] = totals.get(label, 0) + w
        sd = int(isqrt(mpz(certificate.sigma2.numerator) // mpz(certificate.sigma2.denominator)))
        released = [x for x in totals if totals[x] >= certificate.threshold + sd]
        candidates = canonical_labels(x for x in totals if totals[x] < certificate.threshold + sd)
        if candidates:
            draw = GaussianKeeps(
                certificate.sigma2,
                tuple(certificate.threshold - totals[label] for label in candidates),
            )
            keeps = run(partial(one_draw, draw), source)
            released.extend(x for x, keep in zip(candidates, keeps, strict=True) if keep)
        return canonical_labels(released)


class WholePoolShuffle(WeightedGaussian):
    """FLAW: Δ₀-bounding draws each swap from the whole pool, so the kept subset is not uniform."""

    name = "rtf-u-whole-pool-shuffle"
    summary = "Weighted Gaussian whose bounding shuffle draws from every position."

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        if len(labels) <= self.max_partitions:
            return labels
        pool = list(labels)
        for i in range(self.max_partitions):
            j = source.uniform(len(pool)) - 1
            pool[i], pool[j] = pool[j], pool[i]
        return tuple(canonical_labels(pool[: self.max_partitions]))


class OkTailShuffle(WeightedGaussian):
    """CONTROL: Δ₀-bounding by a partial Fisher–Yates from the end of the pool (still uniform)."""

    name = "rtf-ok-tail-shuffle"
    summary = "Weighted Gaussian bounding from the pool's end."

    def bound(self, labels: tuple[Any, ...], source: RandomSource) -> tuple[Any, ...]:
        if len(labels) <= self.max_partitions:
            return labels
        pool = list(labels)
        last = len(pool) - 1
        for i in range(self.max_partitions):
            j = source.uniform(last - i + 1) - 1
            pool[last - i], pool[j] = pool[j], pool[last - i]
        return tuple(canonical_labels(pool[len(pool) - self.max_partitions :]))
