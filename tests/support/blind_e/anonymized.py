"""Broken anonymized-histogram releasers (each class docstring's first line states its flaw)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dpplug.guarantee import Accuracy, ErrorBound
from dpplug.kinds import Prevalences
from dpplug.plugins.anonymized.sorted_histogram import SortedHistogram


class IntRowsAsCounts(SortedHistogram):
    """Flaw: a list of ints is read as a list of counts (a convenience), not as rows of int labels.

    ``release([5, 2, 2])`` was meant as "three labels with counts 5, 2, 2"; but rows of int
    labels are valid data, and one row added (say the label 5) then adds a count of 5: the
    sorted-ℓ₁ distance of neighbouring row datasets is up to the largest int label.
    """

    name = "rte-sorted-int-rows-as-counts"
    summary = "Sorted histogram that reads a list of ints as the counts themselves."

    def prevalences(self, data: object) -> Prevalences:
        if isinstance(data, list) and data and all(type(x) is int and x >= 0 for x in data):
            return self.check_prevalences(dict(Counter(x for x in data if x)))
        return super().prevalences(data)


class RoundingDiscount(SortedHistogram):
    """Flaw: declares the sampler's a at β/d minus one ("rounding to an integer gains a unit").

    The union bound over the d noises is right, but the author subtracted one for the final
    rounding: at small lengths (d = 1 exactly) Pr[|error| > a − 1] exceeds β.
    """

    name = "rte-sorted-rounding-discount"
    summary = "Sorted histogram declaring one less than its union bound."

    def _accuracy(self, beta: Any) -> Accuracy:
        a = self.sampler.accuracy(beta / self.length).per_query.a
        bound = ErrorBound(max(a - 1, 0), beta)
        return Accuracy(bound, bound, formula="a at β/d, less one for the rounding")


#: Release accuracies by β, shared by every instance "since they only depend on β".
_ACCURACY_BY_BETA: dict[Any, Accuracy] = {}


class SharedReleaseAccuracy(SortedHistogram):
    """Flaw: the accuracy a release carries is memoised per β across instances (ignores d, ε).

    release_accuracy() is cached in a module-level table keyed by β, so a release of an
    instance with a larger length or smaller ε carries the bound of the first instance built.
    """

    name = "rte-sorted-shared-accuracy"
    summary = "Sorted histogram caching its release accuracy per β for all instances."

    def release_accuracy(self) -> Accuracy:
        beta = self.params["beta"]
        found = _ACCURACY_BY_BETA.get(beta)
        if found is None:
            found = _ACCURACY_BY_BETA[beta] = self.accuracy(beta)
        return found
