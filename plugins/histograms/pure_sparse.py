"""PureSparseHistogram_{M,ε,β₂} (Balcer & Vadhan, ITCS version Alg. 8, Thm 6.6, Fig. 2; full
version Alg. 6.9, Thm 6.10–6.11; docs/mechanisms.md#pure-sparse-histogram): a sparse histogram
over a huge universe with pure DP.

1. With probability 1 − β₂ release M′(D) = KH′ (:mod:`.keep_heavy`) with the approximate order
   statistics of :mod:`.order_statistics`, whose output law is within δ in total variation of
   KeepHeavy's (KH′ with exact order statistics *is* KeepHeavy).
2. Otherwise release a random histogram: x_1 … x_n iid uniform in X, each distinct one gets a
   count uniform in [0, n] (0 included), and the bins with a positive count are released.

Both outputs are in canonical order.

**Privacy (mixing, full version Lemma 3.2).** KeepHeavy is e^ε-DP with e^ε = L², L the sampler's
exact per-count bound. Its outputs lie in R = H_{n,n}(X) (at most n bins, counts in [1, n]), and
step 2 gives every h ∈ R probability at least

    p_min = n! / ((n+1)^n · |X|^n):

for h with k ≥ 1 bins S, the first k draws can be S in any of k! orders and the other n − k
draws can fall in S, and each bin of S must then get its count: at least
k!/((n+1)^k·|X|^n), which decreases in k; the empty histogram has at least (n+1)^{−n}, which is
larger since n! ≤ |X|^n. (The paper's (6|X|)^{−n} is smaller.) The mixture is then pure e^ε-DP
whenever δ ≤ ((e^ε − 1)/(e^ε + 1)) · (β₂/(1 − β₂)) · p_min, and δ is set to exactly that value;
the condition is checked exactly in the tests.

**Accuracy (Thm 6.6).** With BasicHistogram_{M,X} (a₁, β₃) per query and (a₂, β₃) for all of
X: (a₁, δ + 2β₂ + 2β₃) per query on counts > 2a₂ and (2a₂, δ + 2β₂ + β₃) simultaneously. δ takes
the place of β₁, the failure probability of the ITCS version's sampling of Q (none here: the
distinct-element sampler of App. A is exact). β₂ = β/6 (rounded down into 1/ℕ) as in Fig. 2, so
for GeoSample the declared a's are at most Fig. 2's. For FastSample, γ = β/(4|X|) (Fig. 2).
"""

from __future__ import annotations

from functools import lru_cache, partial
from math import factorial
from typing import Any

from gmpy2 import mpq

from dpplug.errors import BadParameter
from dpplug.guarantee import Accuracy, ErrorBound, Guarantee
from dpplug.histograms import SparseHistogram
from dpplug.kinds import HistogramReleaser, TrueCounts
from dpplug.params import Schema, unit_fraction
from dpplug.plugins.histograms.keep_heavy import Released, kh_prime
from dpplug.plugins.histograms.order_statistics import approximate_order_statistics, bits_for
from dpplug.plugins.histograms.sampler_choice import (
    REPLACE_ONE,
    build_sampler,
    releaser_params,
    require_bounded,
)
from dpplug.program import Program, Uniform, run
from dpplug.randomness import RandomSource


def random_histogram(size: int, n: int) -> Program[Released]:
    """Step 2: n iid uniform labels, a uniform count in [0, n] for each distinct one."""
    labels = set()
    for _ in range(n):
        labels.add((yield Uniform(size)) - 1)
    released = []
    for label in sorted(labels):
        count = (yield Uniform(n + 1)) - 1
        if count > 0:
            released.append((label, count))
    return tuple(released)


class PureSparseHistogramReleaser(HistogramReleaser):
    name = "pure-sparse-histogram"
    summary = "At most n noisy bins over a huge universe, pure DP (KH′ mixed with a random one)."
    reference = "Balcer & Vadhan, Differential Privacy on Finite Computers: Alg. 6.9 / Thm 6.10"
    schema = Schema(releaser_params("fastsample"))
    conformance_cases = (
        {"universe": "range:0:7", "n": 2, "epsilon": 2, "sampler": "geosample"},
        {"universe": "bytes:2", "n": 3, "epsilon": 1},
    )

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.universe = self.params["universe"]
        self.n = n = self.params["n"]
        size = self.universe.size
        if size < 4 * n:
            raise BadParameter(
                f"pure-sparse-histogram needs |X| ≥ 4n (Balcer–Vadhan Thm 6.10), but |X| = "
                f"{size} and n = {n}; declare a larger universe or use basic-histogram"
            )
        beta = self.params["beta"]
        plugins = self.registry_in_use()
        self.sampler = build_sampler(self.name, self.params, plugins, gamma=beta / (4 * size))
        require_bounded(self.name, self.sampler, n)
        self.beta2 = unit_fraction(beta / 6)
        exp_epsilon = self.sampler.guarantee.exp_epsilon ** 2
        self.min_probability = mpq(factorial(n), (n + 1) ** n * size**n)
        self.delta = (
            (exp_epsilon - 1) / (exp_epsilon + 1) * self.beta2 / (1 - self.beta2)
            * self.min_probability
        )
        self.bits = bits_for(n, n + 1, self.delta)
        self.derived = {
            "sampler": repr(self.sampler),
            "beta2": self.beta2,
            "delta_bits": int(self.delta.denominator).bit_length(),
            "precision_bits": self.bits,
        }

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.sampler.guarantee.exp_epsilon ** 2, 0, REPLACE_ONE)

    def _accuracy(self, beta: Any) -> Accuracy:
        spare = beta - self.delta - 2 * self.beta2
        if spare <= 0:
            raise BadParameter(
                f"pure-sparse-histogram cannot promise β = {beta}: its mixing alone fails with "
                f"probability 2β₂ = {2 * self.beta2}; ask for a larger β or build it with a "
                f"smaller beta"
            )
        size = self.universe.size
        per_query = self.sampler.accuracy(spare / 2).per_query.a
        heavy = self.sampler.accuracy(spare / 2 / size).per_query.a
        everywhere = self.sampler.accuracy(spare / size).per_query.a
        return Accuracy(
            ErrorBound(per_query, beta),
            ErrorBound(2 * everywhere, beta),
            threshold=2 * heavy,
            formula="Thm 6.6: (a₁, δ+2β₂+2β₃) on counts > 2a₂; (2a₂, δ+2β₂+β₃) for all bins",
        )

    def program(self, counts: TrueCounts) -> Program[Released]:
        """The release as a program (sampled by :meth:`release`; its law is computable)."""
        coin = yield Uniform(int(1 / self.beta2))
        if coin == 1:
            return (yield from random_histogram(self.universe.size, self.n))
        cdf = lru_cache(maxsize=None)(partial(_empty_cdf, self.sampler))
        order = partial(approximate_order_statistics, cdf, self.n, bits=self.bits)
        return (
            yield from kh_prime(
                self.sampler,
                self.universe.size,
                counts.indices,
                [int(c) for c in counts.counts],
                lambda m, k: order(m=m, k=k),
            )
        )

    def _release(self, counts: TrueCounts, source: RandomSource) -> SparseHistogram:
        released = run(partial(self.program, counts), source)
        return SparseHistogram(
            self.universe,
            tuple(i for i, _ in released),
            tuple(c for _, c in released),
            self.guarantee,
            self.accuracy(self.params["beta"]),
            repr(self),
        )


def _empty_cdf(sampler: Any, v: int) -> int:
    return 0 if v < 0 else int(sampler.scaled_cdf(v, 0))
