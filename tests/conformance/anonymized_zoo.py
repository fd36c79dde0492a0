"""Known-broken anonymized-histogram releasers, each registered as a plugin the way a third party
would, and each required to fail a named conformance contract (see
test_anonymized_conformance.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

import dpplug
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds import Prevalences
from dpplug.plugins.anonymized import PrivHist, SortedHistogram


class UnpaddedSortedHistogram(SortedHistogram):
    """Noise on the nonzero sorted counts only, so the number of labels shows (the incorrect
    algorithm of Suresh 2019, §4.1)."""

    name = "zoo-unpadded-sorted-histogram"

    def padded(self, prevalences: Prevalences) -> Any:
        return super().padded(prevalences)[: prevalences.counts]


class OverclaimingSortedHistogram(SortedHistogram):
    """Declares e^ε' = 1 + (e^ε − 1)/2 for noise calibrated to e^ε."""

    name = "zoo-overclaiming-sorted-histogram"

    @property
    def guarantee(self) -> Guarantee:
        bound = 1 + (self.sampler.guarantee.exp_epsilon - 1) / 2
        return Guarantee(bound, 0, Neighbouring(Relation.SORTED_L1))


class NoUnionBoundSortedHistogram(SortedHistogram):
    """Claims every rank within the sampler's a at β, forgetting the union bound over d."""

    name = "zoo-no-union-bound-sorted-histogram"

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(self.sampler.accuracy(beta).per_query.a, beta)
        return Accuracy(bound, bound, formula="a at β (no union bound)")


class GlobalRandomSortedHistogram(SortedHistogram):
    """Rounds with numpy's global generator: randomness outside the RandomSource."""

    name = "zoo-global-random-sorted-histogram"

    def program(self, prevalences: Prevalences) -> Any:
        release = yield from super().program(prevalences)
        jitter = int(np.random.default_rng().integers(0, 2))
        return self.histogram(release.prevalences, release.total + jitter)


class ExactTotalPrivHist(PrivHist):
    """Releases the true number of items as N."""

    name = "zoo-exact-total-privhist"

    def program(self, prevalences: Prevalences) -> Any:
        inner = super().program(prevalences)
        draw = next(inner)
        try:
            draw = inner.send(tuple(draw.counts))  # no noise on the total
            while True:
                draw = inner.send((yield draw))
        except StopIteration as stop:
            return stop.value


class UncheckedPrevalences(PrivHist):
    """Takes prevalences without validating them (a negative φ_r goes into the noise)."""

    name = "zoo-unchecked-prevalences"

    def check_prevalences(self, prevalences: object) -> Prevalences:
        assert isinstance(prevalences, dict)
        return Prevalences(tuple(sorted(prevalences.items())))


#: Each broken releaser and the contract that must catch it.
ZOO = {
    UnpaddedSortedHistogram: "exact-privacy",
    OverclaimingSortedHistogram: "exact-privacy",
    NoUnionBoundSortedHistogram: "accuracy",
    GlobalRandomSortedHistogram: "hygiene",
    ExactTotalPrivHist: "audit",
    UncheckedPrevalences: "bad-input",
}


@dpplug.hookimpl
def register_anonymized_histogram_releasers(register: Any) -> None:
    for mechanism in ZOO:
        register(mechanism)
