"""Broken anonymized-histogram releasers (red team A). Each class docstring states its flaw."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.errors import BadData
from dpplug.kinds import Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram, Estimate
from dpplug.plugins.anonymized.pava import pava_blocks, round_non_negative
from dpplug.plugins.anonymized.privhist import PrivHist
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.program import Program
from dpplug.randomness import RandomSource, default_source

#: From this many counts on, release_prevalences takes the run-length path.
RUNS_FROM = 1024


class RunLengthNoise(SortedHistogram):
    """sorted-histogram with an O(#pairs) path for large prevalence inputs.

    FLAW (the prevalence form, large inputs): from 1,024 counts on, ``release_prevalences`` (the
    route PipelineDP's central release takes) draws ONE noise per run of equal counts (and one
    for the zero padding) instead of one per entry, "since equal counts are fitted together by
    PAVA anyway". The released prevalences then keep the runs' exact multiplicities: for
    {1: 5000} and {1: 5001} (d = 10,000) a released φ = 5000 is possible only for the first.
    """

    name = "rta-run-length-noise"
    summary = "sorted-histogram in O(#pairs) for large prevalence inputs (one noise per run)."

    def release_prevalences(
        self, prevalences: object, source: RandomSource | None = None
    ) -> AnonymizedHistogram:
        checked = self.check_prevalences(prevalences)
        rng = default_source(source)
        if checked.counts < RUNS_FROM:
            return self._release(checked, rng)
        if checked.counts > self.length:
            raise BadData(
                f"the data has {checked.counts} labels but {self.name} was built for "
                f"length = {self.length}; build it with a larger public length"
            )
        runs = [(r, phi) for r, phi in reversed(checked.pairs)]
        if self.length > checked.counts:
            runs.append((0, self.length - checked.counts))
        noisy = self.sampler.sample([r for r, _ in runs], rng)
        sums = [phi * int(v) for (_, phi), v in zip(runs, noisy, strict=True)]
        counts: dict[int, int] = {}
        for s, w, _ in pava_blocks(sums, [phi for _, phi in runs]):
            value = round_non_negative(mpq(s, w))
            if value:
                counts[value] = counts.get(value, 0) + int(w)
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


@dataclass(frozen=True)
class _CuratedHistogram(AnonymizedHistogram):
    """A release that also remembers how many labels the data had, for its support estimate."""

    labels_seen: int = field(default=0, repr=False, compare=False)

    def support_size(self) -> Estimate:
        return Estimate(
            float(self.labels_seen), 1.0, None, False, "the data's number of labels (exact)"
        )


class ExactSupport(SortedHistogram):
    """sorted-histogram whose releases estimate the support size exactly.

    FLAW (the returned object's estimators): the release is the builtin's, but the object it
    returns remembers the data's true number of labels and ``support_size()`` returns it ("the
    curator knows it; PAVA's rounding only biases it"). That estimator is not post-processing:
    it reveals whether a count of 1 appeared, with probability 1.
    """

    name = "rta-exact-support"
    summary = "sorted-histogram with an unbiased support-size estimate."

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        released = yield from super().program(prevalences)
        values = {f.name: getattr(released, f.name) for f in dataclasses.fields(released)}
        return _CuratedHistogram(**values, labels_seen=prevalences.counts)


class KeepsLargestCounts(SortedHistogram):
    """sorted-histogram that takes more labels than its length by keeping the largest counts.

    FLAW (sizes / declared accuracy): data with more labels than the public length d is not
    refused but truncated to its d largest counts. The release stays private (truncation is
    1-Lipschitz in sorted ℓ₁), but the declared accuracy (every rank within a, all ranks at
    once) is false: rank d + 1's true count is released as 0 with probability 1.
    """

    name = "rta-keeps-largest-counts"
    summary = "sorted-histogram that degrades gracefully when the data has more than d labels."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        vector = np.zeros(self.length, dtype=np.int64)
        position = 0
        for r, phi in reversed(prevalences.pairs):
            take = min(phi, self.length - position)
            vector[position : position + take] = r
            position += take
            if position == self.length:
                break
        return vector


class FreeSmoothing(PrivHist):
    """PrivHist that treats its ε₃ smoothing block as free.

    FLAW (budget): for ε ≤ 1 the smoothing block (H4) draws fresh noise with ε₃, but ε₂ is set
    to ε − ε₁ ("the smoothing reuses the noisy large counts, so it is post-processing"). The
    declared guarantee is the true product of the three blocks, e^{ε(1 + smoothing_share)},
    above the ε the caller asked for: 2/3 instead of 1/2 at ε = 1/2.
    """

    name = "rta-free-smoothing"
    summary = "PrivHist with the whole ε − ε₁ for the split block."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.high_privacy:
            eps1, _, eps3 = self.epsilons
            eps2 = self.epsilon - eps1
            self.split_sampler = type(self.split_sampler)(epsilon=eps2)
            self.epsilons = (eps1, eps2, eps3)
            self.derived = {"epsilons": self.epsilons, "sampler": repr(self.split_sampler)}


class NarrowPadding(SortedHistogram):
    """sorted-histogram that pads into an int32 vector.

    FLAW (counts near 2^31): the padded vector is built as ``np.repeat(...).astype(np.int32)``
    ("d ≤ 10^7 entries: int32 halves the memory"), but counts go up to 10^12 items, and the
    cast wraps silently: the count 2^31 becomes −2^31. The neighbours {2^31 − 1: 1} and
    {2^31: 1} (sorted-ℓ₁ distance 1) have noise requests 2^32 − 1 apart, so their releases are
    almost surely distinguishable (likelihood ratio about e^{2^30·ε}).
    """

    name = "rta-narrow-padding"
    summary = "sorted-histogram with a compact (int32) padded vector."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        if prevalences.counts > self.length:
            raise BadData(
                f"the data has {prevalences.counts} labels but {self.name} was built for "
                f"length = {self.length}; build it with a larger public length"
            )
        values = [r for r, _ in reversed(prevalences.pairs)] + [0]
        times = [phi for _, phi in reversed(prevalences.pairs)] + [self.length - prevalences.counts]
        return np.repeat(np.array(values, dtype=np.int64), times).astype(np.int32)
