"""BasicHistogram_{M,A} (Balcer & Vadhan, full version Alg. 5.1, Thm 5.2–5.3; ITCS version
Alg. 3, Thm 5.1, Fig. 1; docs/mechanisms.md#basic-histogram): a noisy count M(c_x, U) for every
label x of the declared universe.

The universe is the declared, data-independent set A of the paper (declare a smaller universe to
release fewer bins). Replacing one row changes two counts by one each, so with a sampler whose
guarantee is e^{ε_M} for one count the release is e^{2ε_M}-DP (and (2ε_M, 2δ_M) for an
approximate sampler, by composition). Each bin is (a, β)-accurate with the sampler's (a, β).
All |X| bins at once (a union bound over the worst dataset, tighter than Thm 5.3's a at β/|X|):
every label's upward tail Pr[M(0, U) > a] once, and what a nonempty bin adds to it (its
downward tail, which only bins of more than a rows have) against the n rows, so about
n/(a + 1) bins count twice where every nonempty bin did
(:func:`~.error_bounds.dense_simultaneous`). With FastSample the uniform mixture, γ = β/(2|X|)
per bin as in Fig. 1, takes up to β/2 of that and the geometric part gets the rest. A sampler
without a scaled CDF gets the union bound of Thm 5.3 (for GeoSample Fig. 1's
⌈(9/(2ε))·ln(|X|/β)⌉).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.kinds import HistogramReleaser, TrueCounts
from dpplug.kinds.histogram_releaser.outputs import DenseHistogram
from dpplug.params import Schema
from dpplug.plugins.histograms.error_bounds import dense_simultaneous
from dpplug.plugins.histograms.sampler_choice import REPLACE_ONE, build_sampler, releaser_params
from dpplug.program import noise
from dpplug.randomness import RandomSource
from dpplug.structures import ServedDraws

#: The largest universe a dense release materialises (8 bytes per label in the output).
MAX_DENSE_BINS = 10**8
#: Bins per sampler call: bounds the release's working memory beyond its output.
CHUNK = 1 << 20


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
        self.sampler = build_sampler(
            self.name, self.params, self.registry_in_use(), gamma=(gamma, "β/(2|X|)")
        )
        self.derived = {"sampler": repr(self.sampler)}

    @property
    def guarantee(self) -> Guarantee:
        per_count = self.sampler.guarantee
        return Guarantee(per_count.exp_epsilon**2, 2 * per_count.delta, REPLACE_ONE)

    def _accuracy(self, beta: Any) -> Accuracy:
        per_query = self.sampler.accuracy(beta).per_query.a
        size = self.universe.size
        if self.sampler.d is None:  # no scaled CDF: the union bound of Thm 5.3
            everywhere = self.sampler.accuracy(beta / size).per_query.a
            how = "at β/|X| for all bins (union bound)"
        else:
            everywhere = dense_simultaneous(self.sampler, size, self.n, beta)
            how = (
                "for all bins the smallest a with |X|·Pr[M(0) > a] + n·max_c (f(c, a) − "
                "Pr[M(0) > a])/c ≤ β (f: two-sided tail)"
            )
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(everywhere, beta),
            formula=f"{self.sampler.name}'s a at β per bin; {how}",
        )

    def exact_structure(self) -> ServedDraws:
        """Every draw is served (its noise is asked through :func:`dpplug.program.noise`)."""
        return ServedDraws()

    def _release(self, counts: TrueCounts, source: RandomSource) -> DenseHistogram:
        """The sampler runs on :data:`CHUNK` bins at a time, so the memory beyond the output
        (8 bytes per bin) is bounded whatever the universe; the bins are independent, so the
        law is that of one call on all of them."""
        size = self.universe.size
        noisy = np.empty(size, dtype=np.int64)
        nonempty = np.array(counts.indices, dtype=np.int64)
        for start in range(0, size, CHUNK):
            stop = min(start + CHUNK, size)
            first, last = np.searchsorted(nonempty, [start, stop])
            true = np.zeros(stop - start, dtype=np.int64)
            true[nonempty[first:last] - start] = counts.counts[first:last]
            noisy[start:stop] = noise(self.sampler, true, source)
        return DenseHistogram(
            self.universe, noisy, self.guarantee, self.accuracy(self.params["beta"]), repr(self)
        )
