"""Samplers (broken: rtg-*, honest: rtg-ok-*)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from gmpy2 import mpq, mpz

from dpplug.enclosure import Enclosure
from dpplug.exact import EXACT_BITS, smallest_reaching
from dpplug.guarantee import COUNT_SENSITIVITY_1, Guarantee
from dpplug.plugins.samplers.discrete_laplace import DiscreteLaplace
from dpplug.plugins.samplers.geosample import GeoSample
from dpplug.plugins.samplers.truncated_geometric import TruncatedGeometric


class SignClampLaplace(DiscreteLaplace):
    """FLAW: the vectorised path clamps outputs at 0 whenever the batch holds no negative count
    ("counts are non-negative"), a data-dependent branch: c = 0 vs c = −1 differ by far more
    than e^ε at output 0."""

    name = "rtg-dlap-sign-clamp"
    summary = (
        "Discrete Laplace; outputs of all-non-negative batches clamped at 0 (post-processing)."
    )

    def _sample(self, counts, source):  # type: ignore[no-untyped-def]
        noisy = super()._sample(counts, source)
        if counts.size and counts.min() >= 0:  # counts are non-negative: so are their releases
            noisy = np.maximum(noisy, 0)
        return noisy


class TelescopingLaplace(DiscreteLaplace):
    """FLAW: a batch draws size + 1 geometrics and uses consecutive differences G[i+1] − G[i]
    as the noises (half the draws); each marginal is exact but neighbouring elements share a
    geometric, so one count changing shifts the whole chain: loss 2ε on a 2-element batch."""

    name = "rtg-dlap-telescoping"
    summary = "Discrete Laplace with n + 1 geometrics per batch (differences of a chain)."

    def _sample(self, counts, source):  # type: ignore[no-untyped-def]
        chain = self._geometric(counts.size + 1, source)
        return counts + chain[1:] - chain[:-1]


class ApproxKTruncatedGeometric(TruncatedGeometric):
    """FLAW: k from the float closed form k = ⌈ln((L−1)/((L+1)δ))/ln L⌉, which drops the −2 of
    Pr[X = k] = (L−1)/((L+1)L^k − 2); k is then one too small for some δ, the true δ′ = Pr[X = k]
    exceeds δ, and the guarantee still states the δ asked for."""

    name = "rtg-tg-approx-k"
    summary = "k-TSGD with k from the closed form (float), guarantee at the δ asked for."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        delta = self.params["delta"]
        big_l = float(self.a) / float(self.b)
        k = max(
            1, math.ceil(math.log((big_l - 1) / ((big_l + 1) * float(delta))) / math.log(big_l))
        )
        self.k = k
        self._d = mpz(self._s(0)(mpq) + self._s(1)(mpq))
        self.d = int(self._d)
        self.delta = mpq(delta)  # "Pr[X = k] ≤ δ by the choice of k"
        self.derived = {"exp_epsilon": self.exp_epsilon, "k": self.k, "achieved_delta": self.delta}
        self._g_enclosure = lru_cache(maxsize=1 << 14)(lambda j: self._g(j)(Enclosure.of))
        exact = lambda j: self._g(j)(mpq)  # noqa: E731
        short = self._d.bit_length() <= EXACT_BITS
        self._g_exact = lru_cache(maxsize=1 << 10)(exact) if short else exact
        self.__dict__.pop("_boundaries", None)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(self.exp_epsilon, self.params["delta"], COUNT_SENSITIVITY_1)


class MemoGeoSample(GeoSample):
    """CONTROL: M(c, u) = clamp(c + j*(u), 0, n) with j*(u) memoised by u (j* depends on u
    alone), written as a dictionary cache; the law is GeoSample's."""

    name = "rtg-ok-geo-u-memo"
    summary = "GeoSample with the inverse CDF j*(u) memoised per u."

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._memo: dict[int, int] = {}

    def _output(self, count: int, u: int) -> int:
        j = self._memo.get(u)
        if j is None:
            j = smallest_reaching(self._g_exact, self._g_enclosure, -self.n, self.n, u)
            if len(self._memo) < 1 << 16:
                self._memo[u] = j
        return min(max(count + j, 0), self.n)


#: Batches from this size take the bulk path (pipelines send millions of counts).
BULK = 1 << 16


class BulkTelescopingLaplace(DiscreteLaplace):
    """FLAW: only on the bulk path (batches of at least 2^16 counts) the noises are differences
    of consecutive geometrics of one chain, G[i+1] − G[i] (half the draws): exact marginals, but
    adjacent counts share a geometric, so one count changing costs up to 2ε."""

    name = "rtg-dlap-bulk-telescoping"
    summary = "Discrete Laplace; large batches draw n + 1 geometrics (a chain)."

    def _sample(self, counts, source):  # type: ignore[no-untyped-def]
        if counts.size < BULK:
            return super()._sample(counts, source)
        chain = self._geometric(counts.size + 1, source)
        return counts + chain[1:] - chain[:-1]
