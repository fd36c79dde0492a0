# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Anonymized-histogram releasers (rtd-anon-*)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.errors import BadData
from dpplug.kinds import Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.plugins.anonymized.pava import pava_blocks, round_non_negative
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.program import Noise, Program, run
from dpplug.randomness import RandomSource

HEAVY = 1 << 20


class NoisyTotal(SortedHistogram):
    """Flaw: the released total is a second, separately noised count of the items at the full ε (not split): the release is (2ε)-DP while declaring ε."""

    name = "rtd-anon-noisy-total"
    summary = "Sorted histogram with an unbiased noisy total."

    def _release(self, prevalences: Prevalences, source: RandomSource) -> AnonymizedHistogram:
        fitted = run(partial(self.program, prevalences), source)
        noisy = int(self.sampler.sample(np.array([prevalences.items], dtype=np.int64), source)[0])
        return self.histogram(fitted.prevalences, max(noisy, 0))


class HeavyExact(SortedHistogram):
    """Flaw: counts of at least 2^20 are released exactly, without noise ("noise is negligible there"): a ±1 change of a heavy count is seen with certainty."""

    name = "rtd-anon-heavy-exact"
    summary = "Sorted histogram that skips noise on heavy counts."

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        padded = self.padded(prevalences).tolist()
        heavy = [c for c in padded if c >= HEAVY]
        light = padded[len(heavy) :]
        noisy = yield Noise(self.sampler, light)
        counts: dict[int, int] = {}
        for c in heavy:
            counts[c] = counts.get(c, 0) + 1
        for s, w, length in pava_blocks(noisy, [1] * len(noisy)):
            value = round_non_negative(mpq(s, w))
            if value:
                counts[value] = counts.get(value, 0) + length
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


class PrevalenceNoise(SortedHistogram):
    """Flaw: noise is added to the prevalence vector φ_1..φ_d at the sampler's ε, but one count ±1 moves φ_r and φ_{r±1}: ℓ₁ sensitivity 2, e^ε is L²."""

    name = "rtd-anon-prevalence-noise"
    summary = "Noisy prevalences φ_r for r up to a public length (compact form)."

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        phi = [0] * self.length
        for r, f in prevalences.pairs:
            if r > self.length:
                raise BadData(f"a count of {r} exceeds length = {self.length}")
            phi[r - 1] = f
        noisy = yield Noise(self.sampler, phi)
        counts = {r + 1: int(v) for r, v in enumerate(noisy) if v > 0}
        return self.histogram(counts, sum(r * f for r, f in counts.items()))


class OkSortedRepeat(SortedHistogram):
    """Honest control: the sorted histogram with its padded vector built by np.repeat (same law)."""

    name = "rtd-ok-sorted-repeat"
    summary = "Sorted histogram, padded vector by np.repeat."

    def padded(self, prevalences: Prevalences) -> Any:
        if prevalences.counts > self.length:
            raise BadData(
                f"the data has {prevalences.counts} labels but {self.name} was built for "
                f"length = {self.length}; build it with a larger public length"
            )
        pairs = list(reversed(prevalences.pairs))
        body = (
            np.repeat(
                np.array([r for r, _ in pairs], dtype=np.int64),
                np.array([f for _, f in pairs], dtype=np.int64),
            )
            if pairs
            else np.zeros(0, dtype=np.int64)
        )
        return np.concatenate([body, np.zeros(self.length - body.size, dtype=np.int64)])
