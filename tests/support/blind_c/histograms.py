"""Broken histogram releasers (rtc-*) of red team C."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import dpplug
from dpplug.exact import exp_lower
from dpplug.guarantee import Neighbouring, Relation
from dpplug.kinds import DenseHistogram, TrueCounts
from dpplug.kinds.histogram_releaser.outputs import SparseHistogram
from dpplug.param_types import INTEGER, OPTIONS, RATIONAL, UNIVERSE
from dpplug.plugins.histograms.stability import StabilityHistogramReleaser
from dpplug.program import noise
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

#: Releases of more nonempty bins than this take the numpy path.
VECTOR_BINS = 64


class VectorThresholdStability(StabilityHistogramReleaser):
    """FLAW: releases of more than 64 nonempty bins take a numpy path that keeps bins with
    noisy count ≥ t instead of > t, so a bin of count 1 appears w.p. Pr[M(1) ≥ t], far above
    the declared δ = Pr[M(1) > t]."""

    name = "rtc-stab-vector-ge"
    summary = "Stability histogram with a vectorised threshold for many bins."
    reference = "Balcer & Vadhan Alg. 5.4 (red team C)"

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        if len(counts.indices) <= VECTOR_BINS:
            return super()._release(counts, source)
        noisy = noise(self.sampler, counts.counts, source)
        index = np.array(counts.indices, dtype=object)
        kept = np.flatnonzero(noisy >= self.threshold)
        return SparseHistogram(
            self.universe,
            tuple(int(i) for i in index[kept]),
            tuple(int(c) for c in noisy[kept]),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )


class BonferroniStability(StabilityHistogramReleaser):
    """FLAW: the threshold grows with the number k of nonempty bins (t + ⌈log₂ k⌉ − 1 for
    k ≥ 4, 'so false bins stay rare'): a data-dependent threshold, so one row moved to an
    empty label (k → k + 1) changes which counts are released (δ broken)."""

    name = "rtc-stab-bonferroni"
    summary = "Stability histogram whose threshold adapts to the number of candidate bins."
    reference = "Balcer & Vadhan Alg. 5.4 (red team C)"

    def threshold_for(self, bins: int) -> int:
        if bins < 4:
            return int(self.threshold)
        return int(self.threshold) + math.ceil(math.log2(bins)) - 1

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        t = self.threshold_for(len(counts.indices))
        noisy = noise(self.sampler, counts.counts, source)
        kept = [(i, int(c)) for i, c in zip(counts.indices, noisy, strict=True) if c > t]
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in kept),
            tuple(c for _, c in kept),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )


class OptionsGeometricHistogram(dpplug.HistogramReleaser):
    """FLAW: sampler_options are merged over the releaser's own choices, so an 'epsilon' (or
    'n') in them silently replaces ε/2, while the guarantee is still declared from the
    releaser's ε (e^ε rounded down), not from the sampler actually run."""

    name = "rtc-geohist-options"
    summary = "GeoSample noise on every label of a small universe; sampler options accepted."
    reference = "Balcer & Vadhan 2018, Alg. 5.1 (red team C)"
    schema = dpplug.Schema(
        (
            dpplug.Param("universe", UNIVERSE, "The public labels.", example='"range:0:9"'),
            dpplug.Param("n", INTEGER, "The public bound on rows.", low=1, high=10**4),
            dpplug.Param(
                "epsilon", RATIONAL, "ε for one row replaced.", low=0, high=4, low_open=True
            ),
            dpplug.Param("sampler_options", OPTIONS, "Further geosample parameters.", default=""),
        )
    )
    conformance_cases = ({"universe": "range:0:2", "n": 2, "epsilon": 1},)

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe, self.n = self.params["universe"], self.params["n"]
        if self.universe.size > 10**4:
            raise dpplug.BadParameter(
                f"universe has {self.universe.size} labels: pass at most 10^4"
            )
        options = {"n": self.n, "epsilon": self.params["epsilon"] / 2}
        options.update(self.params["sampler_options"])
        self.sampler = self.registry_in_use().create("geosample", **options)
        if self.sampler.n < self.n:
            raise dpplug.BadParameter("sampler_options n must be at least the releaser's n")

    @property
    def guarantee(self) -> dpplug.Guarantee:
        return dpplug.Guarantee(
            exp_lower(self.params["epsilon"], 32), 0, Neighbouring(Relation.REPLACE_ONE)
        )

    def _accuracy(self, beta: Any) -> dpplug.Accuracy:
        per_bin = self.sampler.accuracy(beta).per_query
        everywhere = self.sampler.accuracy(beta / self.universe.size).per_query.a
        return dpplug.Accuracy(per_bin, dpplug.ErrorBound(everywhere, beta), 0, "union bound")

    def exact_structure(self) -> ServedDraws:
        return ServedDraws()

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        noisy = np.minimum(noise(self.sampler, dense, source), self.n)
        return DenseHistogram(self.universe, noisy, self.guarantee, self.accuracy(0.05), repr(self))
