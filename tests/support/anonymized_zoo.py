"""Known-broken anonymized-histogram releasers, each registered as a plugin the way a third party
would, and each required to fail a named conformance contract (see
test_anonymized_conformance.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gmpy2 import mpq

import dpplug
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds import Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.plugins.anonymized import PrivHist, SortedHistogram
from dpplug.plugins.anonymized.sampler_choice import geometric_sampler
from dpplug.program import Noise
from dpplug.randomness import RandomSource


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


class SharperMovePrivHist(PrivHist):
    """Draws Z^b, its second noise request (which moves counts across T | T + 1 and is never
    released), with 6/5 of ε₂: a count crossing T | T + 1 then costs more than ε₂. The audit
    sees only releases, in which Z^b hides behind the other noise; the coupled check sees the
    request's ratio."""

    name = "zoo-sharper-move-privhist"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        sharper = self.epsilons[1] * mpq(6, 5)
        registry = self.registry_in_use()
        self.move_sampler = geometric_sampler(self.name, self.params["sampler"], sharper, registry)

    def program(self, prevalences: Prevalences) -> Any:
        inner = super().program(prevalences)
        draw = next(inner)
        try:
            draw = inner.send((yield draw))  # N, as PrivHist draws it
            draw = inner.send((yield Noise(self.move_sampler, draw.counts)))
            while True:
                draw = inner.send((yield draw))
        except StopIteration as stop:
            return stop.value


class LeakyBranchPrivHist(PrivHist):
    """When the noisy total N is exactly 1, releases whether the data has a count of 1 instead
    of its noisy histogram: one branch that post-processes the data, not the noise. The
    coupled check finds neighbours whose paired transcripts give different outputs."""

    name = "zoo-leaky-branch-privhist"

    def program(self, prevalences: Prevalences) -> Any:
        release = yield from super().program(prevalences)
        if release.total != 1:
            return release
        return self.histogram({1: 1} if dict(prevalences.pairs).get(1) else {}, 1)


class UncheckedPrevalences(PrivHist):
    """Takes prevalences without validating them (a negative φ_r goes into the noise)."""

    name = "zoo-unchecked-prevalences"

    def check_prevalences(self, prevalences: object) -> Prevalences:
        assert isinstance(prevalences, dict)
        return Prevalences(tuple(sorted(prevalences.items())))


class ReleasesBesideItsProgram(PrivHist):
    """Runs PrivHist's program but releases the true total beside it: the exact check replays
    the real release through its served noise requests, not the program, so the total leaks as
    an infinite likelihood ratio."""

    name = "zoo-releases-beside-its-program"

    def _release(self, prevalences: Prevalences, source: RandomSource) -> AnonymizedHistogram:
        release = super()._release(prevalences, source)
        return self.histogram(release.prevalences, prevalences.items)


class SortsCallersRows(SortedHistogram):
    """Sorts the caller's rows in place before counting them."""

    name = "zoo-sorts-callers-rows"

    def prevalences(self, data: object) -> Prevalences:
        if isinstance(data, list):
            data.sort()
        return super().prevalences(data)


#: Each broken releaser, the contract that must catch it, and words its diagnosis must contain.
ZOO: dict[type[dpplug.Mechanism], tuple[str, str]] = {
    UnpaddedSortedHistogram: ("exact-privacy", "likelihood ratio ∞"),
    OverclaimingSortedHistogram: ("exact-privacy", "exceeds e^ε"),
    NoUnionBoundSortedHistogram: ("accuracy", "the largest error over the ranks exceeds"),
    GlobalRandomSortedHistogram: ("hygiene", "randomness comes from somewhere other than"),
    ExactTotalPrivHist: ("audit", "more than the declared ε"),
    SharperMovePrivHist: ("exact-privacy", "exceeds e^ε"),
    LeakyBranchPrivHist: ("exact-privacy", "likelihood ratio ∞ for {} and {1}"),
    UncheckedPrevalences: ("bad-input", "release_prevalences("),
    ReleasesBesideItsProgram: ("exact-privacy", "likelihood ratio ∞"),
    SortsCallersRows: ("hygiene", "changed the caller's data"),
}


@dpplug.hookimpl
def register_anonymized_histogram_releasers(register: Any) -> None:
    for mechanism in ZOO:
        register(mechanism)
