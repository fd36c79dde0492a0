"""Broken histogram releasers (red team A). Each class docstring states its flaw."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from dpplug.errors import BadData
from dpplug.guarantee import Accuracy
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram, SparseHistogram
from dpplug.plugins.histograms.basic import CHUNK, BasicHistogramReleaser
from dpplug.plugins.histograms.stability import StabilityHistogramReleaser
from dpplug.randomness import RandomSource


class ConsistentTotal(BasicHistogramReleaser):
    """basic-histogram made consistent with the number of rows.

    FLAW (neighbouring relation the adapters rely on): the last label's count is replaced by
    (rows − the other noisy counts), clamped to [0, n], "so that a release sums to the dataset's
    size, public in Balcer–Vadhan's model". Under replace-one (n rows fixed) this is
    post-processing and the declared e^ε holds; but the OpenDP adapter maps one row ADDED or
    REMOVED through the replace-one guarantee, and then the release determines the number of
    rows whenever the last count is not clamped: infinite privacy loss.
    """

    name = "rta-consistent-total"
    summary = "basic-histogram whose counts sum to the number of rows (consistency)."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        dense = super()._release(counts, source)
        noisy = dense.counts.copy()
        rest = counts.rows - int(noisy[:-1].sum())
        noisy[-1] = min(max(rest, 0), self.n)
        return DenseHistogram(
            self.universe, noisy, dense.guarantee, dense.accuracy, dense.mechanism
        )


class ReusedOutputBuffer(BasicHistogramReleaser):
    """basic-histogram that writes every release into one output buffer.

    FLAW (aliasing of returned arrays with internal buffers): the dense output (8 bytes per
    label) is allocated once per releaser and every release writes into it and returns it, so
    every DenseHistogram released by one instance shares ``counts``: a later release silently
    rewrites the counts of every earlier one the caller still holds (and may publish).
    """

    name = "rta-reused-output-buffer"
    summary = "basic-histogram without a fresh 8·|X|-byte output array per release."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        dense = super()._release(counts, source)
        buffer: npt.NDArray[np.int64] | None = self.__dict__.get("_buffer")
        if buffer is None:
            buffer = self.__dict__["_buffer"] = np.empty(self.universe.size, dtype=np.int64)
        buffer[:] = dense.counts
        return DenseHistogram(
            self.universe, buffer, dense.guarantee, dense.accuracy, dense.mechanism
        )


class PrescanRows(StabilityHistogramReleaser):
    """stability-histogram that pre-checks rows for missing labels.

    FLAW (one-shot iterators): ``release`` first walks the rows to refuse ``None`` labels with a
    friendly message, then hands the same object to the usual validation. A generator or any
    one-shot iterator is exhausted by the pre-check, so the release is the release of an EMPTY
    dataset: nothing is released whatever the data, against a declared accuracy that promises
    every count above t + a within a.
    """

    name = "rta-prescan-rows"
    summary = "stability-histogram with an early, friendly check for None labels."

    def release(self, data: object, source: RandomSource | None = None) -> SparseHistogram:
        if isinstance(data, Iterable) and not isinstance(data, Mapping | str | bytes):
            for row in data:
                if row is None:
                    raise BadData(f"{self.name}: a row has no label (None); drop or fill it first")
        released: SparseHistogram = super().release(data, source)
        return released


class PerBinAccuracyAttached(BasicHistogramReleaser):
    """basic-histogram whose releases carry the per-bin bound as their simultaneous bound.

    FLAW (the returned object's declared number): ``releaser.accuracy(β)`` is right, but each
    release's ``accuracy.simultaneous`` (what a caller reads off the histogram it holds) is the
    per-bin a at β, which is not a bound for all |X| bins at once: on 64 labels all bins are
    within it with probability far below 1 − β.
    """

    name = "rta-per-bin-accuracy-attached"
    summary = "basic-histogram whose releases state each bin's accuracy."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        dense = super()._release(counts, source)
        accuracy = dense.accuracy
        attached = Accuracy(
            accuracy.per_query, accuracy.per_query, accuracy.threshold, "each bin within a at β"
        )
        return DenseHistogram(
            self.universe, dense.counts, dense.guarantee, attached, dense.mechanism
        )


class ChunkTail(BasicHistogramReleaser):
    """basic-histogram that noises huge universes in place, a chunk of 2^20 bins at a time.

    FLAW (sizes: universes beyond 2^20 labels): the dense vector of true counts is noised in
    place chunk by chunk, but the loop runs over whole chunks only, so for |X| > 2^20 not a
    multiple of 2^20 the last |X| mod 2^20 labels are released WITHOUT noise (their true
    counts).
    """

    name = "rta-chunk-tail"
    summary = "basic-histogram noising huge universes in place, chunk by chunk."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        size = self.universe.size
        dense = np.zeros(size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        if size <= CHUNK:
            dense = self.sampler.sample(dense, source)
        else:
            for start in range(0, size - size % CHUNK, CHUNK):
                dense[start : start + CHUNK] = self.sampler.sample(
                    dense[start : start + CHUNK], source
                )
        return DenseHistogram(
            self.universe, dense, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )
