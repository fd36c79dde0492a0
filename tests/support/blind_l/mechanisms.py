"""Red team L's missed plugin (see the package docstring), written by the red team against the
public base classes and kept here as it was, and one of its controls."""

from __future__ import annotations

import numpy as np

from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.program import noise
from dpplug.randomness import RandomSource

SMALL_CHUNK = 4096


class ChunkBoundary(BasicHistogramReleaser):
    """FLAW: chunks of 4096 bins locate their nonempty bins with searchsorted(side='right') at
    the chunk start, so a nonempty bin at index 4096·k (k ≥ 1) is released as noise on 0."""

    name = "rtl-hist-chunk-boundary"

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        size = self.universe.size
        noisy = np.empty(size, dtype=np.int64)
        nonempty = np.array(counts.indices, dtype=np.int64)
        values = np.array(counts.counts, dtype=np.int64)
        for start in range(0, size, SMALL_CHUNK):
            stop = min(start + SMALL_CHUNK, size)
            side = "left" if start == 0 else "right"
            first = int(np.searchsorted(nonempty, start, side=side))
            last = int(np.searchsorted(nonempty, stop))
            true = np.zeros(stop - start, dtype=np.int64)
            true[nonempty[first:last] - start] = values[first:last]
            noisy[start:stop] = noise(self.sampler, true, source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class WholeVector(BasicHistogramReleaser):
    """Control: one noise() call on the whole dense vector (no chunking)."""

    name = "rtl-ok-basic-whole-vector"

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        noisy = np.asarray(noise(self.sampler, dense, source), dtype=np.int64)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )
