"""Broken anonymized-histogram releasers (rtc-*) of red team C."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from gmpy2 import mpq

from dpplug.errors import BadData
from dpplug.kinds import Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.plugins.anonymized.pava import pava_blocks, round_non_negative
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram
from dpplug.program import Noise, Program


class TrueTotalSorted(SortedHistogram):
    """FLAW: the release's `total` field is the true number of items Σ r·φ_r (the caller's
    'n'), not the sum of the released counts: the exact number of rows leaks."""

    name = "rtc-sorted-true-total"
    summary = "Sorted histogram (Hay et al.) that reports the dataset's size as its total."
    reference = "Hay et al. 2010 (red team C)"

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        noisy = yield Noise(self.sampler, self.padded(prevalences).tolist())
        counts: dict[int, int] = {}
        for s, w, length in pava_blocks(noisy, [1] * len(noisy)):
            value = round_non_negative(mpq(s, w))
            if value:
                counts[value] = counts.get(value, 0) + length
        return self.histogram(counts, prevalences.items)


#: Each label's count is capped here before noise ("contribution bound").
COUNT_CAP = 10**6


class CappedSorted(SortedHistogram):
    """FLAW: counts are capped at 10^6 before noise (harmless for privacy), but the declared
    per-rank accuracy is unchanged: a count of 2·10^6 is released near 10^6, far outside a."""

    name = "rtc-sorted-capped"
    summary = "Sorted histogram with each count capped at 10^6 (keeps PAVA sums small)."
    reference = "Hay et al. 2010 (red team C)"

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        return np.minimum(super().padded(prevalences), COUNT_CAP)


class HashedRowsSorted(SortedHistogram):
    """FLAW: rows are tallied by a 32-bit label id (hash(label) mod 2^32) to save memory, so
    labels that collide (e.g. the ints x and x + 2^32) are merged into one count on the rows
    route only; the mapping and prevalences routes are right."""

    name = "rtc-sorted-hashed-rows"
    summary = "Sorted histogram that tallies rows by compact 32-bit label ids."
    reference = "Hay et al. 2010 (red team C)"

    def prevalences(self, data: object) -> Prevalences:
        if isinstance(data, (Mapping, str | bytes)) or not isinstance(data, Iterable):
            return super().prevalences(data)
        try:
            tally = Counter(hash(label) & 0xFFFFFFFF for label in data)
        except TypeError as exc:
            raise BadData(f"rows must be hashable labels ({exc})") from None
        return Prevalences.of_counts(tally.values())
