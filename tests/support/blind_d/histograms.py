# ruff: noqa: E402, E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Histogram releasers (rtd-hist-*)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.exact import smallest_at_least
from dpplug.guarantee import Guarantee, Neighbouring, Relation
from dpplug.kinds import TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram
from dpplug.plugins.histograms.basic import BasicHistogramReleaser
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE, build_sampler, require_bounded
from dpplug.plugins.histograms.stability import StabilityHistogramReleaser
from dpplug.randomness import RandomSource


class EmptyShortcut(BasicHistogramReleaser):
    """Flaw: an empty dataset is released as exact zeros without noise (data-dependent early exit); breaks add/remove to and from the empty dataset."""

    name = "rtd-hist-empty-shortcut"
    summary = "Basic histogram that skips the sampler when there are no rows."

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        if counts.rows == 0:  # nothing to protect
            return DenseHistogram(
                self.universe,
                np.zeros(self.universe.size, dtype=np.int64),
                self.guarantee,
                self.accuracy(self.params["beta"]),
                repr(self),
            )
        return super()._release(counts, source)


class BinaryFastPath(BasicHistogramReleaser):
    """Flaw: over a 2-label universe it spends the full ε on each count ("the two counts are complementary") and declares e^ε = L, but a replaced row moves both counts: e^ε is L²."""

    name = "rtd-hist-binary-fastpath"
    summary = "Basic histogram with a full-budget path for binary universes."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.universe.size == 2:
            self.sampler = build_sampler(
                self.name,
                self.params,
                self.registry_in_use(),
                epsilon_share=1,
                gamma=(self.params["beta"] / 4, "β/(2|X|)"),
            )
            self.derived = {"sampler": repr(self.sampler)}

    @property
    def guarantee(self) -> Guarantee:
        per_count = self.sampler.guarantee
        if self.universe.size == 2:
            return Guarantee(per_count.exp_epsilon, per_count.delta, REPLACE_ONE)
        return Guarantee(per_count.exp_epsilon**2, 2 * per_count.delta, REPLACE_ONE)


class StabilityThreshold(StabilityHistogramReleaser):
    """Flaw: the per-query accuracy is declared on counts above t instead of t + a (bins just above t are dropped half the time)."""

    name = "rtd-hist-stab-acc-threshold"
    summary = "Stability histogram, per-query bound on counts above the threshold."

    def covered_above(self, beta: Any) -> int:
        return int(self.threshold)


class StabilitySmallSampler(StabilityHistogramReleaser):
    """Flaw: t and δ are computed from a sampler built with n = 1 ("only a count of 1 matters"), whose clamping hides the tail above 1: δ is declared 0."""

    name = "rtd-hist-stab-small-sampler"
    summary = "Stability histogram with a cheap threshold computation."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        small = dict(self.params)
        small["n"] = 1
        probe = build_sampler(
            self.name, small, self.registry_in_use(), gamma=(self.params["delta"] / 2, "δ/2")
        )
        d = require_bounded(self.name, probe, 1)
        floor = d - d * self.params["delta"]
        self.threshold = smallest_at_least(lambda z: probe.scaled_cdf(z, 1), 0, 1, floor)
        self.delta = mpq(d - probe.scaled_cdf(self.threshold, 1), d)
        self.derived = {"sampler": repr(self.sampler), "threshold": self.threshold}


class OkStabilityAddRemove(StabilityHistogramReleaser):
    """Honest control: the stability histogram stated for one row added or removed, each count noised at the full ε (one count changes by one, or a bin of count 1 appears: δ)."""

    name = "rtd-ok-stab-addremove"
    summary = "Stability histogram for add/remove neighbours, full ε per count."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.sampler = build_sampler(
            self.name,
            self.params,
            self.registry_in_use(),
            epsilon_share=1,
            gamma=(self.params["delta"] / 2, "δ/2"),
        )
        d = require_bounded(self.name, self.sampler, self.n)
        floor = d - d * self.params["delta"]
        self.threshold = smallest_at_least(
            lambda z: self.sampler.scaled_cdf(z, 1), 0, self.n, floor
        )
        self.delta = mpq(d - self.sampler.scaled_cdf(self.threshold, 1), d)
        self.derived = {"sampler": repr(self.sampler), "threshold": self.threshold}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(
            self.sampler.guarantee.exp_epsilon, self.delta, Neighbouring(Relation.ADD_REMOVE)
        )


from dpplug.kinds.histogram_releaser.outputs import SparseHistogram


class MechanismText(StabilityHistogramReleaser):
    """Flaw: the release's mechanism text carries a debug note with the number of nonempty bins (true support size) — a field no probe of the counts reads."""

    name = "rtd-hist-stab-mechanism-text"
    summary = "Stability histogram with a descriptive mechanism field."

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        h = super()._release(counts, source)
        return SparseHistogram(
            h.universe,
            h.indices,
            h.counts,
            h.guarantee,
            h.accuracy,
            f"{h.mechanism} [t={self.threshold}, {len(counts.indices)} candidate bins]",
        )
