"""Histogram releasers: variants of basic-histogram."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram
from dpplug.plugins.histograms.basic import CHUNK, BasicHistogramReleaser
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE
from dpplug.program import noise
from dpplug.randomness import RandomSource, default_source
from dpplug.universe import IntegerRange


class OkWholeVector(BasicHistogramReleaser):
    """Control: the dense vector built with np.add.at and noised in one call (no chunks)."""

    name = "rtb-ok-basic-whole"
    summary = "Basic histogram noised in one sampler call (honest control)."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        true = np.zeros(self.universe.size, dtype=np.int64)
        np.add.at(true, np.array(counts.indices, dtype=np.int64), counts.counts)
        noisy = noise(self.sampler, true, source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class ClampToRows(BasicHistogramReleaser):
    """Flaw: noisy counts are clamped to the data's own row count instead of the public n."""

    name = "rtb-basic-clamp-rows"
    summary = "Basic histogram with counts clamped to the number of rows."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        out = super()._release(counts, source)
        clamped = np.minimum(out.counts, counts.rows)
        return DenseHistogram(self.universe, clamped, out.guarantee, out.accuracy, out.mechanism)


class BincountFastPath(BasicHistogramReleaser):
    """Flaw: np.bincount fast path ignores the universe's low end."""

    name = "rtb-basic-bincount"
    summary = "Basic histogram with a numpy fast path for integer rows."
    conformance_cases = (
        {"universe": "range:0:2", "n": 2, "epsilon": 1},
        {"universe": "range:1:3", "n": 2, "epsilon": 1, "sampler": "geosample"},
    )

    def release(self, data: object, source: RandomSource | None = None) -> Any:
        universe = self.universe
        if (
            isinstance(data, np.ndarray)
            and data.ndim == 1
            and data.dtype.kind in "iu"
            and isinstance(universe, IntegerRange)
            and 0 < data.size <= self.n
            and data.min() >= universe.label(0)
            and data.max() <= universe.label(universe.size - 1)
        ):
            binned = np.bincount(data, minlength=universe.size)[: universe.size]
            nonzero = np.flatnonzero(binned)
            counts = TrueCounts(
                tuple(nonzero.tolist()), binned[nonzero].astype(np.int64), int(binned.sum())
            )
            return self._release(counts, default_source(source))
        return super().release(data, source)


class OutputGuarantee(BasicHistogramReleaser):
    """Flaw: released object carries the per-count e^{ε_M}, not e^{2ε_M}."""

    name = "rtb-basic-output-guarantee"
    summary = "Basic histogram carrying its guarantee on each release."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        out = super()._release(counts, source)
        per_count = self.sampler.guarantee
        carried = Guarantee(per_count.exp_epsilon, 2 * per_count.delta, REPLACE_ONE)
        return DenseHistogram(self.universe, out.counts, carried, out.accuracy, out.mechanism)


class EmptyChunkCache(BasicHistogramReleaser):
    """Flaw: noise of data-free chunks drawn once per instance and reused."""

    name = "rtb-basic-empty-chunk-cache"
    summary = "Basic histogram that reuses the noise of empty chunks (large universes)."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        size = self.universe.size
        noisy = np.empty(size, dtype=np.int64)
        nonempty = np.array(counts.indices, dtype=np.int64)
        cache = self.__dict__.setdefault("_rtb_empty", {})
        for start in range(0, size, CHUNK):
            stop = min(start + CHUNK, size)
            first, last = np.searchsorted(nonempty, [start, stop])
            if first == last and size > CHUNK:
                if stop - start not in cache:
                    zeros = np.zeros(stop - start, dtype=np.int64)
                    cache[stop - start] = noise(self.sampler, zeros, source)
                noisy[start:stop] = cache[stop - start]
                continue
            true = np.zeros(stop - start, dtype=np.int64)
            true[nonempty[first:last] - start] = counts.counts[first:last]
            noisy[start:stop] = noise(self.sampler, true, source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class UnionOverRows(BasicHistogramReleaser):
    """Flaw: simultaneous bound a union over min(n, |X|) bins, not |X|."""

    name = "rtb-basic-union-over-rows"
    summary = "Basic histogram with a union bound over the nonempty bins."

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query = self.sampler.accuracy(beta).per_query.a
        terms = min(self.n, self.universe.size)
        everywhere = self.sampler.accuracy(beta / terms).per_query.a
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(everywhere, beta),
            formula="a at β per bin; at β/min(n, |X|) for all bins (at most n are nonempty)",
        )


ALL = (
    OkWholeVector,
    ClampToRows,
    BincountFastPath,
    OutputGuarantee,
    EmptyChunkCache,
    UnionOverRows,
)
