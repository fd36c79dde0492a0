"""BasicHistogram_{M,A} (Balcer & Vadhan, full version Alg. 5.1, Thm 5.2–5.3; ITCS version
Alg. 3, Thm 5.1, Fig. 1; docs/mechanisms.md#basic-histogram): a noisy count M(c_x, U) for every
label x of the declared universe.

The universe is the declared, data-independent set A of the paper (declare a smaller universe to
release fewer bins). Replacing one row changes two counts by one each, so with a sampler whose
guarantee is e^{ε_M} for one count the release is e^{2ε_M}-DP (and (2ε_M, 2δ_M) for an
approximate sampler, by composition). Each bin is (a, β)-accurate with the sampler's (a, β);
all |X| bins at once with the sampler's a at β/|X| (union bound), which for GeoSample is Fig. 1's
⌈(9/(2ε))·ln(|X|/β)⌉.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.histograms import DenseHistogram
from dpplug.kinds import HistogramReleaser, TrueCounts
from dpplug.params import Schema
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE, build_sampler, releaser_params
from dpplug.randomness import RandomSource

#: The largest universe a dense release materialises.
MAX_DENSE_BINS = 10**8


class BasicHistogramReleaser(HistogramReleaser):
    name = "basic-histogram"
    summary = "A noisy count for every label of a declared universe (dense, pure DP)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 5.1 / Thm 5.2"
    schema = Schema(releaser_params("fixedpoint-geometric"))
    conformance_cases = (
        {"universe": "range:0:2", "n": 2, "epsilon": 1},
        {"universe": 'labels:["a", "b", "c", "d"]', "n": 3, "epsilon": 1, "sampler": "geosample"},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe = self.params["universe"]
        self.n = self.params["n"]
        if self.universe.size > MAX_DENSE_BINS:
            raise BadParameter(
                f"basic-histogram releases every label, and the universe has "
                f"{self.universe.size} > {MAX_DENSE_BINS}; declare a smaller universe, or use "
                f"pure-sparse-histogram or compact-histogram"
            )
        gamma = self.params["beta"] / (2 * self.universe.size)  # Fig. 1 (FastSample)
        self.sampler = build_sampler(self.name, self.params, self.registry_in_use(), gamma=gamma)
        self.derived = {"sampler": repr(self.sampler)}

    @property
    def guarantee(self) -> Guarantee:
        per_count = self.sampler.guarantee
        return Guarantee(per_count.exp_epsilon**2, 2 * per_count.delta, REPLACE_ONE)

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query = self.sampler.accuracy(beta).per_query.a
        everywhere = self.sampler.accuracy(beta / self.universe.size).per_query.a
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(everywhere, beta),
            formula=f"{self.sampler.name}'s a at β per bin; at β/|X| for all bins (union bound)",
        )

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        dense = np.zeros(self.universe.size, dtype=np.int64)
        dense[list(counts.indices)] = counts.counts
        return DenseHistogram(
            self.universe,
            self.sampler.sample(dense, source),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )
