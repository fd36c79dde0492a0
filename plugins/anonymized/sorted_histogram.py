"""The sorted-histogram baseline (Hay, Rastogi, Miklau, Suciu, "Boosting the accuracy of
differentially private histograms through consistency", VLDB 2010, the unattributed histogram
S̄; Suresh 2019, §3.1; docs/mechanisms.md#sorted-histogram): the counts sorted non-increasing
and padded with zeros to a public length d, two-sided geometric noise on each of the d entries,
then the closest non-increasing sequence (PAVA) rounded to non-negative integers.

One count changing by one (sorted-ℓ₁ distance 1) moves the padded sorted vector in one entry by
one, so the noisy vector, and everything computed from it, is ε-DP with the sampler's exact
e^ε. The length d must be public: padding to the number of labels would release it, so there
is no default, and data with more than d labels is refused before anything is drawn.

Accuracy, per rank and for all ranks at once: the fit is order-preserving and commutes with
adding constants, so it moves no entry farther from the true sorted vector (non-increasing)
than the largest noise, and rounding to the nearest integer keeps an integer interval; hence
every released count is within the sampler's a at β/d of the true count of its rank, except with
probability β (union bound over the d noises). Cost: O(d) draws and exact integer PAVA.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from dpplug.errors import BadData
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee, Neighbouring, Relation
from dpplug.kinds import AccuracyScope, AnonymizedHistogramReleaser, Prevalences
from dpplug.kinds.anonymized_histogram_releaser.outputs import AnonymizedHistogram
from dpplug.param_types import INTEGER
from dpplug.params import Param, Schema, epsilon_param
from dpplug.plugins.anonymized.pava import pava_blocks, rounded_runs
from dpplug.plugins.anonymized.sampler_choice import BETA_PARAM, SAMPLER_PARAM, geometric_sampler
from dpplug.program import Noise, Program, run
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

#: The longest padded vector a release materialises.
MAX_LENGTH = 10**7


class SortedHistogram(AnonymizedHistogramReleaser):
    name = "sorted-histogram"
    summary = "Sorted counts padded to a public length, geometric noise, PAVA (Hay et al. 2010)."
    reference = (
        "Hay, Rastogi, Miklau, Suciu 2010, Boosting the accuracy of differentially private "
        "histograms through consistency (unattributed histograms); Suresh 2019, §3.1"
    )
    accuracy_scope = AccuracyScope.SORTED_COUNTS
    schema = Schema(
        (
            epsilon_param("ε for sorted-ℓ₁ distance 1 (one count ±1).", high=16),
            Param(
                "length",
                INTEGER,
                "Public number d of sorted counts released (at least the number of labels).",
                low=1,
                high=MAX_LENGTH,
                example="1000",
            ),
            SAMPLER_PARAM,
            BETA_PARAM,
        )
    )
    conformance_cases = ({"epsilon": 1, "length": 6}, {"epsilon": 2, "length": 8})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.length = self.params["length"]
        self.sampler = geometric_sampler(
            self.name, self.params["sampler"], self.params["epsilon"], self.registry_in_use()
        )
        self.derived = {"sampler": repr(self.sampler)}

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.sampler.guarantee.exp_epsilon, 0, Neighbouring(Relation.SORTED_L1))

    def _accuracy(self, beta: Any) -> Accuracy:
        bound = ErrorBound(self.sampler.accuracy(beta / self.length).per_query.a, beta)
        formula = (
            f"{self.sampler.name}'s a at β/d, d = {self.length} "
            "(union bound; PAVA is ℓ∞-non-expansive)"
        )
        return Accuracy(bound, bound, formula=formula)

    def padded(self, prevalences: Prevalences) -> np.ndarray[Any, Any]:
        """The true counts sorted non-increasing and padded with zeros to the length d."""
        if prevalences.counts > self.length:
            raise BadData(
                f"the data has {prevalences.counts} labels but {self.name} was built for "
                f"length = {self.length}; build it with a larger public length"
            )
        vector = np.zeros(self.length, dtype=np.int64)
        position = 0
        for r, phi in reversed(prevalences.pairs):
            vector[position : position + phi] = r
            position += phi
        return vector

    def program(self, prevalences: Prevalences) -> Program[AnonymizedHistogram]:
        """One noise request on the padded vector (refused before it when there are more
        labels than d); the rest is post-processing."""
        noisy = yield Noise(self.sampler, self.padded(prevalences).tolist())
        counts: dict[int, int] = {}
        for value, length in rounded_runs(pava_blocks(noisy, [1] * len(noisy))):
            if value:
                counts[value] = counts.get(value, 0) + length
        return self.histogram(counts, sum(r * phi for r, phi in counts.items()))

    def exact_structure(self) -> ServedDraws:
        """Every draw is served (the release runs :meth:`program`)."""
        return ServedDraws()

    def _release(self, prevalences: Prevalences, source: RandomSource) -> AnonymizedHistogram:
        return run(partial(self.program, prevalences), source)
