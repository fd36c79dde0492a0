# ruff: noqa: E501  (kept as the red team wrote it: one-line flaw docstrings)
"""Broken (and honest) anonymized-histogram releasers, subclasses of the built-ins."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.kinds import Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.plugins.anonymized.pava import pava_blocks, round_non_negative
from dpplug.plugins.anonymized.privhist import PrivHist
from dpplug.plugins.anonymized.sampler_choice import geometric_sampler
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.program import Noise, Program, run
from dpplug.randomness import RandomSource


class TrueRunBlocks(SortedHistogram):
    """FLAW: PAVA starts from the runs of equal TRUE counts as merged blocks, a data-dependent fit."""

    name = "rtf-a-true-run-blocks"
    summary = "Sorted histogram whose isotonic fit pre-merges runs of equal counts."

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        padded = self.padded(prevalences)
        noisy = yield Noise(self.sampler, padded.tolist())
        # Equal true counts are equal in the fit: merge each run first (sums, weights = lengths)
        sums: list[Any] = []
        weights: list[Any] = []
        start = 0
        for end in range(1, len(padded) + 1):
            if end == len(padded) or padded[end] != padded[start]:
                sums.append(sum(int(v) for v in noisy[start:end]))
                weights.append(end - start)
                start = end
        # expand: each fitted block covers the runs it merged
        counts: dict[int, int] = {}
        blocks = pava_blocks(sums, weights)
        for s, w, _ in blocks:
            value = round_non_negative(mpq(s, w))
            if value:
                counts[value] = counts.get(value, 0) + int(w)
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))


class AllOnesFastPath(SortedHistogram):
    """FLAW: data whose counts are all 1 releases only a noisy label count (always all ones)."""

    name = "rtf-a-all-ones-fast-path"
    summary = "Sorted histogram with a one-noise fast path for all-distinct data."

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        if len(prevalences.pairs) == 1 and prevalences.pairs[0][0] == 1:
            (noisy,) = yield Noise(self.sampler, [prevalences.pairs[0][1]])
            labels = min(max(int(noisy), 0), self.length)
            return self.histogram({1: labels} if labels else {}, labels)
        return (yield from super().program(prevalences))


class HighPrivacyOverspend(PrivHist):
    """FLAW: in the HIGHPRIVACY branch ε₂ = ε − ε₁ (as in LOWPRIVACY), so ε₃ is spent on top of ε."""

    name = "rtf-a-privhist-overspend"
    summary = "PrivHist with the LOWPRIVACY budget split in both branches."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.high_privacy:
            eps1, _, eps3 = self.epsilons
            eps2 = self.epsilon - eps1
            self.split_sampler = geometric_sampler(
                self.name, self.params["sampler"], eps2, self.registry_in_use()
            )
            self.epsilons = (eps1, eps2, eps3)
            self.derived = {"epsilons": self.epsilons, "sampler": repr(self.split_sampler)}


class OkSortedRepeat(SortedHistogram):
    """CONTROL: the sorted histogram with the padded vector built by np.repeat (same law)."""

    name = "rtf-ok-sorted-repeat"
    summary = "Sorted histogram, padded vector by np.repeat."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        if prevalences.counts > self.length:
            return super().padded(prevalences)  # the refusal, worded by the built-in
        pairs = list(reversed(prevalences.pairs))
        values = np.repeat(
            np.array([r for r, _ in pairs], dtype=np.int64),
            np.array([phi for _, phi in pairs], dtype=np.int64),
        )
        out = np.zeros(self.length, dtype=np.int64)
        out[: values.size] = values
        return out

    def _release(self, prevalences: Prevalences, source: RandomSource) -> AnonymizedHistogram:
        return run(partial(self.program, prevalences), source)
