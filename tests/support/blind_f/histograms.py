# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Broken (and honest) histogram releasers, subclasses of the built-in stability histogram."""

from __future__ import annotations

from typing import Any

from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import SparseHistogram
from dpplug.plugins.histograms.error_bounds import dropping_simultaneous
from dpplug.plugins.histograms.sampler_choice import build_sampler
from dpplug.plugins.histograms.stability import StabilityHistogramReleaser
from dpplug.program import noise
from dpplug.randomness import RandomSource

#: From this n on, the releaser takes the "fast path" sampler.
LARGE_N = 10_000


class AccuracyAtThreshold(StabilityHistogramReleaser):
    """FLAW: the per-query bound is declared for counts above t, not t + a (counts just above t drop)."""

    name = "rtf-h-accuracy-at-threshold"
    summary = "Stability histogram whose per-query accuracy covers every released-threshold count."

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query = self.sampler.accuracy(beta).per_query.a
        everywhere = dropping_simultaneous(self.sampler, self.n, self.threshold, beta)
        if everywhere is None:
            everywhere = self.sampler.accuracy(beta / self.n).per_query.a + self.threshold
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(min(everywhere, self.n), beta),
            threshold=int(self.threshold),
            formula=f"t = {self.threshold}; a at β on counts > t",
        )

    def covered_above(self, beta: Any) -> int:
        return int(self.threshold)


class LargeNFullEpsilon(StabilityHistogramReleaser):
    """FLAW: for n ≥ 10^4 the noise sampler is built at the whole ε, not ε/2 (declared from ε/2)."""

    name = "rtf-h-large-n-full-epsilon"
    summary = "Stability histogram with a separate noise sampler for large n."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._noise_sampler = self.sampler
        if self.n >= LARGE_N:
            self._noise_sampler = build_sampler(
                self.name,
                self.params,
                self.registry_in_use(),
                epsilon_share=1,
                gamma=(self.params["delta"] / 2, "δ/2"),
            )

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        noisy = noise(self._noise_sampler, counts.counts, source)
        pairs = zip(counts.indices, noisy, strict=True)
        kept = [(i, int(c)) for i, c in pairs if c > self.threshold]
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in kept),
            tuple(c for _, c in kept),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )


class SafeAboveThreshold(StabilityHistogramReleaser):
    """FLAW: bins whose TRUE count exceeds t are always released (noisy count floored at t + 1)."""

    name = "rtf-h-safe-above-threshold"
    summary = "Stability histogram that never hides a bin already above the threshold."

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        noisy = noise(self.sampler, counts.counts, source)
        t = int(self.threshold)
        kept = []
        for i, c, true in zip(counts.indices, noisy, counts.counts, strict=True):
            if int(c) > t:
                kept.append((i, int(c)))
            elif int(true) > t:
                kept.append((i, t + 1))
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in kept),
            tuple(c for _, c in kept),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )


class OkStabilityGeoSample(StabilityHistogramReleaser):
    """CONTROL: the stability histogram with GeoSample and its own cases (no change to the law)."""

    name = "rtf-ok-stability-geosample"
    summary = "Stability histogram, GeoSample cases."
    conformance_cases = (
        {"universe": "range:0:2", "n": 4, "epsilon": 2, "delta": 0.25, "sampler": "geosample"},
        {"universe": "range:0:3", "n": 3, "epsilon": 3, "delta": 0.3, "sampler": "geosample"},
    )


class CoinAtThreshold(StabilityHistogramReleaser):
    """FLAW: a bin whose noisy count equals t is kept on a fair coin (drawn outside the served noise)."""

    name = "rtf-h-coin-at-threshold"
    summary = "Stability histogram with a randomized tie rule at the threshold."

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        noisy = noise(self.sampler, counts.counts, source)
        t = int(self.threshold)
        kept = []
        for i, c in zip(counts.indices, noisy, strict=True):
            if int(c) > t or (int(c) == t and source.bits(1) == 1):
                kept.append((i, int(c)))
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in kept),
            tuple(c for _, c in kept),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )
