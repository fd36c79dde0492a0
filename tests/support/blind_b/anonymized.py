"""Anonymized-histogram releasers: variants of sorted-histogram."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds import AccuracyScope, Prevalences
from dpplug.param_types import INTEGER
from dpplug.params import Param, Schema, epsilon_param
from dpplug.plugins.anonymized.sampler_choice import BETA_PARAM, SAMPLER_PARAM
from dpplug.plugins.anonymized.sorted_histogram import MAX_LENGTH, SortedHistogram


class OkSortedFromCounts(SortedHistogram):
    """Control: the padded vector built from the expanded counts with np.sort (same law)."""

    name = "rtb-ok-sorted-expanded"
    summary = "Sorted histogram with the padded vector built by sorting (honest control)."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        if prevalences.counts > self.length:
            return super().padded(prevalences)  # refuses
        expanded = [r for r, phi in prevalences.pairs for _ in range(phi)]
        vector = np.zeros(self.length, dtype=np.int64)
        vector[: len(expanded)] = np.sort(np.array(expanded, dtype=np.int64))[::-1]
        return vector


class SqrtUnionBound(SortedHistogram):
    """Flaw: union bound over ⌈√(2d)⌉ noises instead of d."""

    name = "rtb-sorted-sqrt-union"
    summary = "Sorted histogram with a union bound over distinct counts."

    def _accuracy(self, beta: Any) -> Accuracy:
        terms = math.isqrt(2 * self.length - 1) + 1  # ⌈√(2d)⌉
        bound = ErrorBound(self.sampler.accuracy(beta / terms).per_query.a, beta)
        return Accuracy(bound, bound, formula="a at β/⌈√(2d)⌉ (union bound over distinct counts)")


class PaddedCache(SortedHistogram):
    """Flaw: padded vector cached keyed by the number of labels."""

    name = "rtb-sorted-padded-cache"
    summary = "Sorted histogram that caches padded vectors."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        cache = self.__dict__.setdefault("_rtb_padded", {})
        key = prevalences.counts
        if key not in cache:
            cache[key] = super().padded(prevalences)
        return cache[key]


class TotalScope(SortedHistogram):
    """Flaw: declares scope TOTAL with the per-rank bound a(β/d)."""

    name = "rtb-sorted-total-scope"
    summary = "Sorted histogram whose accuracy is stated for the released total."
    accuracy_scope = AccuracyScope.TOTAL


class ChunkedPadding(SortedHistogram):
    """Flaw: pads to the next multiple of 64 labels (≤ d), not d."""

    name = "rtb-sorted-chunked-padding"
    summary = "Sorted histogram that pads to whole blocks of 64 entries."

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        full = super().padded(prevalences)  # refuses more than d labels
        used = min(self.length, -(-max(prevalences.counts, 1) // 64) * 64)
        return full[:used]


class DataLengthDefault(SortedHistogram):
    """Flaw: length may be omitted and then defaults to the data's number of labels."""

    name = "rtb-sorted-length-default"
    summary = "Sorted histogram whose length defaults to the number of labels."
    schema = Schema(
        (
            epsilon_param("ε for sorted-ℓ₁ distance 1 (one count ±1).", high=16),
            Param(
                "length",
                INTEGER,
                "Public number d of sorted counts released; 0 (default): the number of labels.",
                low=0,
                high=MAX_LENGTH,
                default=0,
                example="1000",
            ),
            SAMPLER_PARAM,
            BETA_PARAM,
        )
    )

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        if self.length:
            return super().padded(prevalences)
        vector = np.zeros(prevalences.counts, dtype=np.int64)
        position = 0
        for r, phi in reversed(prevalences.pairs):
            vector[position : position + phi] = r
            position += phi
        return vector

    def _accuracy(self, beta: Any) -> Accuracy:
        if self.length:
            return super()._accuracy(beta)
        bound = ErrorBound(self.sampler.accuracy(beta).per_query.a, beta)
        return Accuracy(bound, bound, formula="a at β per rank (length from the data)")


ALL = (
    OkSortedFromCounts,
    SqrtUnionBound,
    PaddedCache,
    TotalScope,
    ChunkedPadding,
    DataLengthDefault,
)
