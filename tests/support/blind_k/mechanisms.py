"""Red team K's missed plugins (see the package docstring), written by the red team against the
public base classes and kept here as they were, with typed signatures, and two of its controls."""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

import numpy as np

from dpplug.kinds import Prevalences, TrueCounts
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram
from dpplug.kinds.query_releaser.queries import Declaration, LabelCounts, SparseQuery
from dpplug.kinds.set_union_selector import UnitSets, canonical_labels
from dpplug.kinds.set_union_selector.thresholded_gaussian import GaussianKeeps
from dpplug.plugins.anonymized.prevalence import (
    large_counts,
    prevalence,
    small_cumulative,
    smoothed_totals,
)
from dpplug.plugins.anonymized.privhist import PrivHist, _capped, _high_privacy
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.queries.independent import IndependentLaplace, IndependentSession
from dpplug.plugins.set_union.common import one_draw
from dpplug.plugins.set_union.policy_laplace import PolicyLaplace, descend, grid_for
from dpplug.plugins.set_union.weighted import WeightedGaussian
from dpplug.program import Noise, Program, noise, run
from dpplug.randomness import RandomSource

#: Universes from this size on take RtkHistShiftNoise's other path.
SPARSE_FROM = 1 << 12


class ShiftNoise(BasicHistogramReleaser):
    """FLAW: on universes of 4096 labels or more, every bin gets the noise of an empty bin
    shifted by its count (c + M(0, U)), which is not M(c, U) for a clamped sampler."""

    name = "rtk-hist-shift-noise"
    summary = "A noisy count for every label; large universes noised as empty bins plus counts."
    reference = "Balcer & Vadhan Alg. 5.1 (red team K variant)"

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        size = self.universe.size
        if size < SPARSE_FROM:
            return super()._release(counts, source)
        noisy = np.asarray(noise(self.sampler, np.zeros(size, dtype=np.int64), source))
        noisy = noisy.astype(np.int64).copy()
        if len(counts.indices):
            noisy[np.array(counts.indices, dtype=np.int64)] += np.asarray(counts.counts)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class SortedLabels(BasicHistogramReleaser):
    """FLAW: the dense vector is laid out in sorted label order (by the labels' text) but
    returned against the universe's own index order, so each count is attributed to another
    label."""

    name = "rtk-hist-sorted-labels"
    summary = "A noisy count for every label of a declared universe, laid out in sorted order."
    reference = "Balcer & Vadhan Alg. 5.1 (red team K variant)"

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        size = self.universe.size
        if size > SPARSE_FROM:
            return super()._release(counts, source)
        order = sorted(range(size), key=lambda i: repr(self.universe.label(i)))
        rank = {index: position for position, index in enumerate(order)}
        dense = np.zeros(size, dtype=np.int64)
        for index, count in zip(counts.indices, counts.counts, strict=True):
            dense[rank[index]] = count
        noisy = np.asarray(noise(self.sampler, dense, source), dtype=np.int64)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class PrivhistBoundaries(PrivHist):
    """FLAW: HIGHPRIVACY's boundaries S are built from the true large counts instead of the
    noisy ones, so past √(100N/ε₃) a released count sits exactly on a true count."""

    name = "rtk-anon-privhist-boundaries"
    summary = "PRIVHIST (LOWPRIVACY / HIGHPRIVACY) from prevalences, sub-linear time."
    reference = "Suresh 2019, PRIVHIST (red team K variant)"

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        pairs = prevalences.pairs
        (noisy_total,) = yield Noise(self.total_sampler, [prevalences.items])
        total = max(int(noisy_total), 0)
        if total == 0:
            return self.histogram({}, 0)
        t, m = self.split_point(total), self.fake_counts(total)
        at_t, at_t1 = prevalence(pairs, t) + m, prevalence(pairs, t + 1) + m
        (moved,) = yield Noise(self.split_sampler, [at_t1])
        small = small_cumulative(pairs, t, at_t + at_t1 - int(moved))
        large = large_counts(pairs, t, int(moved))
        noisy = yield Noise(self.split_sampler, [*small.tolist(), *large])
        noisy_small, noisy_large = list(noisy[:t]), list(noisy[t:])
        if not self.high_privacy:
            return self.histogram(self._low_privacy(noisy_small, noisy_large, t, m), total)
        capped = _capped(pairs, 2 * total)
        boundaries = self.boundaries(total, t, large)
        totals = smoothed_totals(capped, boundaries)
        assert self.smoothing_sampler is not None
        noisy_totals = yield Noise(self.smoothing_sampler, totals.tolist())
        return self.histogram(_high_privacy(noisy_totals, boundaries), total)


class ComplementSession(IndependentSession):
    """Independent answers; a query whose weights and an earlier query's add up to one on every
    label of the declared universe is answered as 1 minus that earlier answer."""

    def __init__(
        self, declaration: Declaration, counts: LabelCounts, scale: Any, source: RandomSource
    ) -> None:
        super().__init__(declaration, counts, scale, source)
        self._asked: list[tuple[dict[Any, int], int]] = []

    def _answer(self, query: SparseQuery) -> int:
        universe = self.declaration.universe
        mine = {label: w for label, w in zip(query.labels, query.weights, strict=True) if w}
        if universe is not None:
            labels = [universe.label(i) for i in range(universe.size)]
            for other, released in self._asked:
                if all(mine.get(x, 0) + other.get(x, 0) == query.grid for x in labels):
                    answer = int(self.scale - released)  # n·W·(1 − Q(D))
                    self._asked.append((mine, answer))
                    return answer
        answer = super()._answer(query)
        self._asked.append((mine, answer))
        return answer


class Complement(IndependentLaplace):
    """FLAW: a query complementary to an earlier one over a declared universe is answered as
    1 − that answer, which is only right when the data has exactly n rows (n only bounds
    them)."""

    name = "rtk-query-complement"
    summary = "Each sparse query with its own discrete Laplace noise; complements answered free."
    reference = "Dwork, McSherry, Nissim, Smith 2006 (red team K variant)"

    def _start(self, counts: LabelCounts, source: RandomSource) -> ComplementSession:
        return ComplementSession(self.declaration(), counts, self.noise_scale, source)


class DataGrid(PolicyLaplace):
    """FLAW: every unit spends the grid G of the largest unit present in the data (finer
    weights for small units) instead of Δ₀'s, so one unit joining can change every label's
    total."""

    name = "rtk-su-data-grid"
    summary = "Policy Laplace set union with the weight grid fitted to the units present."
    reference = "Gopi et al. 2020, policy Laplace (red team K variant)"

    def _totals(self, sets: list[tuple[Any, ...]]) -> dict[Any, int]:
        largest = max((len(labels) for labels in sets), default=1)
        grid = min(grid_for(largest), self.policy.grid)
        totals: dict[Any, int] = {}
        for labels in sets:
            descend(totals, labels, grid, self.policy.cutoff)
        return totals


class PerBin(BasicHistogramReleaser):
    """Control: the basic histogram with one noise request per label, in universe order (the
    same law: the bins are independent)."""

    name = "rtk-ok-hist-per-bin"
    summary = "A noisy count for every label of a declared universe, one request per label."
    reference = "Balcer & Vadhan Alg. 5.1 (red team K control)"

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        size = self.universe.size
        if size > SPARSE_FROM:
            return super()._release(counts, source)
        true = dict(zip(counts.indices, counts.counts, strict=True))
        noisy = np.array(
            [int(noise(self.sampler, np.array([true.get(i, 0)]), source)[0]) for i in range(size)],
            dtype=np.int64,
        )
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )


class CounterTotals(WeightedGaussian):
    """Control: the weighted Gaussian with each round's totals summed by a Counter over the
    unit sets (the same totals, the same served draws)."""

    name = "rtk-ok-su-counter"
    summary = "Weighted Gaussian set union (totals summed with a Counter)."
    reference = "Gopi et al. 2020, weighted Gaussian (red team K control)"

    def _select(self, units: UnitSets, source: RandomSource) -> list[Any]:
        sets = [self.bound(labels, source) for _, labels in units]
        released: set[Any] = set()
        for certificate in self.calibration.rounds:
            totals: Counter[Any] = Counter()
            for labels in sets:
                remaining = tuple(x for x in labels if x not in released)
                if remaining:
                    totals.update(dict.fromkeys(remaining, certificate.weights[len(remaining) - 1]))
            if not totals:
                break
            candidates = canonical_labels(totals.keys())
            draw = GaussianKeeps(
                certificate.sigma2, tuple(certificate.threshold - totals[x] for x in candidates)
            )
            keeps = run(partial(one_draw, draw), source)
            released.update(x for x, keep in zip(candidates, keeps, strict=True) if keep)
        return canonical_labels(released)
