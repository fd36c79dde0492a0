"""Broken histogram releasers (each class docstring's first line states its flaw)."""

from __future__ import annotations

import hashlib
from typing import Any

from gmpy2 import mpq

from dpplug.guarantee import Guarantee
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import SparseHistogram
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE
from dpplug.plugins.histograms.stability import StabilityHistogramReleaser
from dpplug.randomness import RandomSource, SeededSource


class FewRowsShortcut(StabilityHistogramReleaser):
    """Flaw: data with at most t rows is released empty without drawing (a data-dependent exit).

    "No bin of a dataset of at most t rows can have a count above t, so nothing can pass the
    threshold": but its noisy counts can. Under replace-one (rows fixed) both neighbours take
    the same branch; one row added or removed, which the adapters rely on, crosses it.
    """

    name = "rte-stab-few-rows-exit"
    summary = "Stability histogram that skips the noise when the data has at most t rows."

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        if counts.rows <= self.threshold:
            return SparseHistogram(
                self.universe,
                (),
                (),
                self.guarantee,
                self.accuracy(self.params["beta"]),
                repr(self),
            )
        return super()._release(counts, source)


class PureOnlyBasic(BasicHistogramReleaser):
    """Flaw: the guarantee drops the sampler's δ (written for pure samplers; any sampler accepted).

    L² is right for every sampler, but a sampler with δ > 0 (truncated-geometric,
    discrete-gaussian through ``sampler``) makes the release (2ε_M, 2δ_M)-DP, declared as pure.
    """

    name = "rte-basic-pure-only"
    summary = "Basic histogram declaring δ = 0 whatever its sampler."

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.sampler.guarantee.exp_epsilon**2, 0, REPLACE_ONE)


class DataSeededDefault(StabilityHistogramReleaser):
    """Flaw: without a source, the release is seeded from a digest of the data ("reproducible").

    The author wanted re-runs on the same data to give the same histogram; the default source
    is then a deterministic function of the data, so the release is too.
    """

    name = "rte-stab-data-seeded"
    summary = "Stability histogram whose default randomness is seeded from the data."

    def release(self, data: object, source: RandomSource | None = None) -> Any:
        counts = self.true_counts(data)
        if source is None:
            text = repr((counts.indices, counts.counts.tolist())).encode()
            seed = int.from_bytes(hashlib.sha256(text).digest()[:8], "little")
            source = SeededSource(seed)
        return self._release(counts, source)


class ZeroCountDelta(StabilityHistogramReleaser):
    """Flaw: declares δ = Pr[M(0, U) > t] instead of Pr[M(1, U) > t].

    The threshold t is right (from F(1, ·)), but the declared δ reads the scaled CDF at the
    count of an empty bin, which understates the probability that a bin of count 1 shows.
    """

    name = "rte-stab-zero-count-delta"
    summary = "Stability histogram whose declared δ is read at count 0."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        d = self.sampler.d
        assert d is not None
        self.delta = mpq(d - self.sampler.scaled_cdf(self.threshold, 0), d)
